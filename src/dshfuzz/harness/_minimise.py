"""Shrink a failing log to a 1-minimal log with the same signature.

Hypothesis has already shrunk the *plan* that produced the log; this stage works
on the log itself, so it also minimises logs that came from elsewhere (corpus,
user files, a 200k-event production log). ``still_fails(example)`` must hold on
entry; it is never re-checked there (on a huge log one predicate call costs
seconds), and when no candidate keeps the signature the input comes back unchanged.

The log is parsed once into *units* (the lines after the header, and the opaque frames
of a ``.jsonl.zstd`` log); a candidate is a subset of them, its survivors renumbered by
shifting (:mod:`._log_units`). Every step is a :func:`ddmin` (:mod:`._ddmin`).

Order of attack, each step kept only when the signature survives:

1. coarse: ddmin over *turn blocks* (a ``turn/end`` and what follows it up to the
   next turn's inbox splice or ``turn/start``), after narrowing to a window: the
   blocks after the first cut in eight, each eighth tried alone -- completed with the
   first block (the session's set-up: the initial request header, the first inbox
   splice) and the blocks holding the range endpoints its replaces name -- then the
   eighths of the first window that keeps the signature, and so on (last to first
   when the log ends in an opaque unit: a torn or garbled tail lives at the end). On
   a long log with a local defect the first calls are small, so the search costs
   about one judgement of the whole log (halving by complements costs about two); a
   defect that needs distant blocks falls through to plain ddmin over all blocks;
2. steps: ddmin over whole steps (``step/start`` to ``step/end``), step numbers
   shifting like turns;
3. packed chunk rows become one line per event, in the same frames (verdict-preserving
   for event-level defects); the result stays in the input's container, since the
   caller keeps the example's compression;
4. fine: ddmin over the remaining units, ending in a pass that removes single
   units until none can go (1-minimality over units). A maximal run of identical units
   (the same bytes in the same frame: bare newlines, a repeated garbled line or frame)
   is one unit to it: dropped whole, or else halved down to the fewest of it that keep
   the signature (a limit may need "more than 4096 lines"), so ten thousand bare
   newlines cost a few dozen calls, not ten thousand. This keeps 1-minimality with one
   test per run: a candidate renders the same bytes whichever units of a run it keeps
   (they remove the same seqs, turns and steps, and the survivors are renumbered
   alike), so removing one unit of a run is one candidate, whichever unit it is;
5. bytes: every opaque unit (a torn or garbled line, an undecodable frame) of at most
   ``BYTE_SHRINK_LIMIT`` bytes is shrunk by ddmin over its bytes, a run of one byte
   value being one piece as in step 4 (a larger unit, or a frame over the limits, is
   only kept or dropped whole), then steps 4 and 5 repeat until neither changes the
   log (1-minimality over units and over the bytes of opaque units).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dshfuzz.model import RowDecodeError, decode_storage_record, dumpb

from ._ddmin import _Ask, _narrow, ddmin
from ._example import Example, StillFails
from ._log_units import _ROW_PAYLOADS, _Layout, _layout, _Unit

__all__ = ["StillFails", "ddmin", "minimise"]


Predicate = Callable[[Example], bool]


COARSE_WINDOWS = 8
"""Turn blocks are first cut in eight windows: each costs an eighth of a judgement of the log."""

BYTE_SHRINK_LIMIT = 64 * 1024
"""Opaque units larger than this are kept or dropped whole, never shrunk byte by byte:
ddmin over n one-byte pieces costs at least n predicate calls and n-sized copies each."""

_BLOCK_OPENERS = frozenset({"agent/inbox/spliced", "turn/start"})


def _blocks(layout: _Layout) -> list[list[int]]:
    """Unit indices grouped into turn blocks: a block closes with a ``turn/end`` and what
    follows it (compaction) until the next turn's inbox splice or ``turn/start``."""
    blocks: list[list[int]] = [[]]
    closed = False
    for i, unit in enumerate(layout.units):
        kind = unit.kind
        if closed and kind in _BLOCK_OPENERS:
            blocks.append([])
            closed = False
        blocks[-1].append(i)
        closed = closed or kind == "turn/end"
    return [b for b in blocks if b]


def _step_blocks(layout: _Layout) -> tuple[list[int], list[list[int]]]:
    """The units outside any step, and the steps: each ``step/start`` up to its ``step/end``."""
    outside: list[int] = []
    steps: list[list[int]] = []
    open_step = False
    for i, unit in enumerate(layout.units):
        if unit.kind == "step/start":
            steps.append([])
            open_step = True
        (steps[-1] if open_step else outside).append(i)
        open_step = open_step and unit.kind != "step/end"
    return outside, steps


class _Search:
    """The question "does it still fail?" over one kind of candidate description (unit sets
    of one layout, the bytes of one unit), rendered to logs by ``render``. ``best`` is the
    last candidate that kept the signature: ddmin only ever accepts a smaller one, so it is
    the search's result."""

    def __init__(self, render: Callable[[Any], Example], still_fails: StillFails) -> None:
        self.render = render
        self.still_fails = still_fails
        self.best: Example | None = None

    def test(self, described: Any) -> bool:
        candidate = self.render(described)
        if self.still_fails(candidate):
            self.best = candidate
            return True
        return False

    def _first(self, described: Sequence[Any]) -> int | None:
        first = self.still_fails.first
        assert first is not None
        candidates = [self.render(d) for d in described]
        found = first(candidates)
        if found is not None:
            self.best = candidates[found]
        return found

    def ddmin(
        self, items: Sequence[Any], view: Callable[[Any], Any], *, key: Callable[[Any], Any] | None = None
    ) -> list[Any]:
        """:func:`ddmin` over ``items``, a subset of them described to ``render`` by ``view``."""
        ask = self.ask(view)
        return ddmin(items, ask.test, key=key, first=ask.first, width=ask.width)

    def ask(self, view: Callable[[Any], Any]) -> _Ask:
        """The search's questions about ``view`` of each candidate."""
        first = None if self.still_fails.first is None else self._first
        return _Ask(self.test, first, self.still_fails.width).over(view)


def _coarse(current: Example, still_fails: StillFails) -> Example:
    """Step 1 of the module docstring: narrow to a window of turn blocks, then ddmin over blocks."""
    layout = _layout(current)
    blocks = _blocks(layout)
    if len(blocks) < 3:
        return current
    search = _Search(layout.render, still_fails)
    closure = _Closure(layout, blocks)

    def units(chosen: Sequence[int]) -> list[int]:
        return [i for b in chosen for i in blocks[b]]

    rest = list(range(1, len(blocks)))
    torn = bool(layout.units) and layout.units[-1].opaque  # a torn or garbled tail lives in the last block
    window = _narrow(rest, search.ask(lambda w: units(closure.of(w))), COARSE_WINDOWS, from_end=torn)
    if len(window) < len(rest):
        search.ddmin(closure.of(window), units)
    else:
        search.ddmin(range(len(blocks)), units)
    return search.best if search.best is not None else current


class _Closure:
    """A window of blocks completed with the first block (the session's set-up) and,
    transitively, the blocks holding the events its range endpoints name (a replace
    cannot lose both ends of its range)."""

    def __init__(self, layout: _Layout, blocks: list[list[int]]) -> None:
        self.units = layout.units
        self.blocks = blocks
        self.block_of = {
            seq: b for b, block in enumerate(blocks) for i in block for seq in layout.units[i].seqs
        }

    def of(self, window: Sequence[int]) -> list[int]:
        chosen = {0, *window}
        todo = list(chosen)
        while todo:
            for i in self.blocks[todo.pop()]:
                for seq in self.units[i].anchors:
                    b = self.block_of.get(seq)
                    if b is not None and b not in chosen:
                        chosen.add(b)
                        todo.append(b)
        return sorted(chosen)


def _steps(current: Example, still_fails: StillFails) -> Example:
    """ddmin over whole steps (the units outside steps kept): step numbers shift like turns,
    so a turn that lost a step still counts its steps up by one."""
    layout = _layout(current)
    outside, steps = _step_blocks(layout)
    if len(steps) < 2:
        return current
    search = _Search(layout.render, still_fails)
    search.ddmin(range(len(steps)), lambda chosen: sorted([*outside, *(i for s in chosen for i in steps[s])]))
    return search.best if search.best is not None else current


def _fine(current: Example, still_fails: StillFails) -> Example:
    """ddmin over single units, a run of identical units as one (:func:`_same_unit`), then
    the log without any (1-minimal over units)."""
    layout = _layout(current)
    search = _Search(layout.render, still_fails)
    if len(layout.units) > 1:
        units = layout.units
        search.ddmin(range(len(units)), list, key=lambda i: _same_unit(units[i]))
    if layout.units:
        search.test([])
    return search.best if search.best is not None else current


def _same_unit(unit: _Unit) -> tuple[bool, bytes, int | None]:
    """What makes units interchangeable to :meth:`_Layout.render`: the same bytes in the same
    frame. Of a run of such units a candidate renders the same whichever it keeps: they
    remove the same seqs, turns and steps and are renumbered alike. An opaque frame is its
    own group in the output whatever its index, so only its bytes count."""
    return unit.opaque_frame, unit.text, None if unit.opaque_frame else unit.frame


def _bytes(current: Example, still_fails: StillFails) -> Example:
    """ddmin over the bytes of each opaque unit, the other units kept as they are."""
    layout = _layout(current)
    everything = list(range(len(layout.units)))
    for i, unit in enumerate(layout.units):
        if not unit.opaque or unit.whole or not 2 <= len(unit.text) <= BYTE_SHRINK_LIMIT:
            continue
        def render(text: bytes, i: int = i) -> Example:
            return layout.render(everything, {i: text})

        search = _Search(render, still_fails)
        pieces = [unit.text[k : k + 1] for k in range(len(unit.text))]
        shrunk = b"".join(search.ddmin(pieces, b"".join, key=bytes))  # equal bytes are interchangeable
        if shrunk != unit.text and search.best is not None:
            return _bytes(search.best, still_fails)
    return current


def _unpack(current: Example, still_fails: StillFails) -> Example:
    """Packed chunk rows as one line per event, in the same frames (verdict-preserving for
    event-level defects, and it lets single chunk events go)."""
    layout = _layout(current)
    members: dict[int, bytes] = {}
    for i, unit in enumerate(layout.units):
        if unit.kind in _ROW_PAYLOADS and unit.text.endswith(b"\n"):
            try:
                members[i] = b"".join(dumpb(m) + b"\n" for m in decode_storage_record(unit.value))
            except RowDecodeError:
                continue
    if not members:
        return current
    candidate = layout.render(range(len(layout.units)), members)
    return candidate if still_fails(candidate) else current


def minimise(example: Example, still_fails: Predicate | StillFails) -> bytes:
    """The smallest log (bytes) for which ``still_fails`` holds, by the steps above."""
    asked = still_fails if isinstance(still_fails, StillFails) else StillFails(still_fails)
    current = _unpack(_steps(_coarse(example, asked), asked), asked)
    while True:
        shrunk = _bytes(_fine(current, asked), asked)
        if shrunk.data == current.data:
            return current.data
        current = shrunk
