"""Shrink a failing log to a 1-minimal log with the same signature.

Hypothesis has already shrunk the *plan* that produced the log; this stage works
on the log itself, so it also minimises logs that came from elsewhere (corpus,
user files, a 200k-event production log). ``still_fails(example)`` must hold on
entry; it is never re-checked there (on a huge log one predicate call costs
seconds), and when no candidate keeps the signature the input comes back unchanged.

The log is parsed once into *units*: the physical lines after the header (one
event row, one packed chunk row, or an opaque line that is not JSON), and, in a
``.jsonl.zstd`` log, every frame that does not decode as a whole (torn, corrupt,
skippable) or would inflate past the reader's limits (``DEFAULT_LIMITS``: a zstd bomb is
never decoded past them) as one opaque unit. A candidate is a subset of the units, rendered in
the input's own container: kept lines of a decoded frame are re-compressed as one
frame, opaque frames are copied byte for byte, so framing defects survive.

Removing units renumbers the survivors by *shifting* — each integer seq drops by
the number of removed seqs below it — so a deliberate gap or duplicate in the
input stays a gap or duplicate. Every seq reference (``contracts.seq_refs``:
``sourceEventSeqs``, replace ranges, compaction spans, title ``messageSeqs``) is
shifted the same way and the header's ``seedLength`` with them; references to
removed events are dropped from seq lists, and a range endpoint that was removed
moves inwards to the nearest surviving surface event, so a replace whose range
lost its first nodes still covers the rest. Turn numbers (``data.turn``) shift by
the removed ``turn/start`` events below them, and step numbers (``data.step``) by
the removed ``step/start`` events of their turn, since both must count up by one.
Only lines that mention a seq, turn or step at or above the first removed one are
re-serialised: renumbering is one linear pass.

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

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from dshfuzz.contracts import seq_refs
from dshfuzz.model import (
    DEFAULT_LIMITS,
    FrameDecodeError,
    FrameLayout,
    FrameLimitError,
    InflationBudget,
    JsonDecodeError,
    RowDecodeError,
    compress_frame,
    decode_storage_record,
    dumpb,
    loads,
    scan_frames,
)

from ._judge import Example, StillFails

__all__ = ["StillFails", "ddmin", "minimise"]

Predicate = Callable[[Example], bool]



COARSE_WINDOWS = 8
"""Turn blocks are first cut in eight windows: each costs an eighth of a judgement of the log."""

BYTE_SHRINK_LIMIT = 64 * 1024
"""Opaque units larger than this are kept or dropped whole, never shrunk byte by byte:
ddmin over n one-byte pieces costs at least n predicate calls and n-sized copies each."""

_BLOCK_OPENERS = frozenset({"agent/inbox/spliced", "turn/start"})


def ddmin(
    items: Sequence[Any],
    test: Callable[[Sequence[Any]], bool],
    *,
    key: Callable[[Any], Any] | None = None,
    first: FirstHolding | None = None,
    width: int = 1,
) -> list[Any]:
    """Zeller's ddmin: a 1-minimal subsequence of ``items`` for which ``test`` holds.

    ``test(items)`` is assumed to hold (never called on ``items`` itself, nor on the empty
    sequence). Complements are tried before subsets, which removes large chunks first on
    the long logs campaigns produce. Every candidate costs one linear copy of the current list.

    ``key`` says which items are interchangeable: consecutive items with equal keys must
    give ``test`` the same answer whichever of them a candidate holds (the minimiser's
    identical units render to the same bytes). A maximal run of them is then one item to
    the complement search; the final pass tries to drop a run whole, then keeps the fewest
    of it that hold, found by halving. A run of ``n`` costs ``O(log n)`` tests instead of
    ``n``, and one test per run still makes the result 1-minimal: removing any one item of
    a run is the same candidate as removing any other (see :func:`_one_minimal_runs`).

    ``first`` asks about up to ``width`` candidates at once and answers the index of the
    first that holds (a checker that starts a process per question answers many for the
    price of one). Where ddmin would test candidates in a row until one holds, it asks
    about the next ``width`` of them together; since it then takes the first that holds,
    the result is the one the tests one at a time give, whatever ``width`` is.
    """
    ask = _Ask(test, first, max(1, width))
    if key is None:
        return _one_minimal(_complements(list(items), ask), ask)
    runs = _complements(_runs(items, key), ask.over(_flat))
    return _one_minimal_runs(_runs(_flat(runs), key), ask, key)


FirstHolding = Callable[[Sequence[Any]], "int | None"]
"""Asks about several candidates at once: the index of the first that holds, or ``None``."""


@dataclass(frozen=True, slots=True)
class _Ask:
    """ddmin's questions: one candidate (``test``), or the first of a row that holds, asked
    ``width`` at a time through ``first`` when there is one."""

    test: Callable[[Sequence[Any]], bool]
    first: FirstHolding | None = None
    width: int = 1

    def __call__(self, candidate: Sequence[Any]) -> bool:
        return self.test(candidate)

    def first_of(self, candidates: Iterable[Sequence[Any]]) -> int | None:
        """The index of the first of ``candidates`` that holds, taken lazily: ``width`` at a
        time through ``first``, else one at a time."""
        it = iter(candidates)
        done = 0
        while group := list(itertools.islice(it, self.width if self.first is not None else 1)):
            if self.first is not None and len(group) > 1:
                found = self.first(group)
            else:
                found = 0 if self.test(group[0]) else None
            if found is not None:
                return done + found
            done += len(group)
        return None

    def over(self, view: Callable[[Any], Sequence[Any]]) -> _Ask:
        """The same questions about ``view`` of each candidate."""
        first = self.first
        return _Ask(
            lambda c: self.test(view(c)),
            None if first is None else (lambda group: first([view(c) for c in group])),
            self.width,
        )


def _complements(current: list[Any], test: _Ask) -> list[Any]:
    """ddmin's search by complements: drop the first of ``n`` chunks that can go, ``n``
    doubling while none can, until single items remain."""
    n = 2
    while len(current) >= 2:
        bounds = _chunk_bounds(len(current), n)  # n >= 2 chunks: no complement is empty
        found = test.first_of(current[:lo] + current[hi:] for lo, hi in bounds)
        if found is not None:
            lo, hi = bounds[found]
            current, n = current[:lo] + current[hi:], max(n - 1, 2)
            continue
        if n >= len(current):
            break
        n = min(len(current), n * 2)
    return current


def _runs(items: Sequence[Any], key: Callable[[Any], Any]) -> list[list[Any]]:
    """``items`` as maximal runs of consecutive items with equal keys."""
    runs: list[list[Any]] = []
    last: Any = None
    for item in items:
        k = key(item)
        if runs and k == last:
            runs[-1].append(item)
        else:
            runs.append([item])
            last = k
    return runs


def _flat(runs: Sequence[Sequence[Any]]) -> list[Any]:
    return [item for run in runs for item in run]


def _narrow(current: list[Any], test: _Ask, windows: int, *, from_end: bool = False) -> list[Any]:
    """The smallest window reached by repeatedly keeping the first of ``windows`` contiguous
    chunks that holds alone (``current`` itself when none does); ``from_end`` tries the
    chunks last to first. When a test costs in proportion to its size and the cause is
    local, this finds it for about one test of ``current`` in all, where halving by
    complements costs about two."""
    while len(current) >= 2:
        bounds = _chunk_bounds(len(current), min(windows, len(current)))
        order = list(reversed(bounds)) if from_end else bounds
        found = test.first_of(current[lo:hi] for lo, hi in order)
        if found is None:
            return current
        lo, hi = order[found]
        current = current[lo:hi]
    return current


def _chunk_bounds(length: int, n: int) -> list[tuple[int, int]]:
    """``n`` contiguous chunks of ``range(length)`` whose sizes differ by at most one."""
    return [
        (length * i // n, length * (i + 1) // n) for i in range(n) if length * i // n < length * (i + 1) // n
    ]


def _one_minimal(current: list[Any], test: _Ask) -> list[Any]:
    """Remove single items until none can go."""
    i = 0
    while i < len(current) and len(current) > 1:
        found = test.first_of(current[:j] + current[j + 1 :] for j in range(i, len(current)))
        if found is None:
            break
        i += found
        current = current[:i] + current[i + 1 :]
    return current


def _one_minimal_runs(runs: list[list[Any]], test: _Ask, key: Callable[[Any], Any]) -> list[Any]:
    """:func:`_one_minimal` over runs of interchangeable items: drop a run whole, or else keep
    the fewest of it that hold (:func:`_fewest`), then go on to the next run.

    The invariant that makes one test per run enough: which items of a run a candidate
    keeps does not matter, only how many (``key``'s promise), so every single-item removal
    from a run is one and the same candidate, the run kept one shorter. A run left at ``k``
    items was seen to fail at ``k - 1`` (or dropped whole, at 0) with the other runs as they
    are, so no single item of it can go; as with :func:`_one_minimal`, a later removal may
    free an earlier item, and the minimiser repeats its fine stage until nothing changes.
    Runs that meet when the run between them goes merge, and the merged run is tried again.

    Dropping runs in a row is asked about together, up to and including the first run of
    several items (whose failed drop is followed by halving it, which depends on the answer).
    """
    total = sum(map(len, runs))
    i = 0
    while i < len(runs) and total > 1:
        if len(runs) > 1:

            def drops(start: int = i) -> Iterator[list[Any]]:
                for j in range(start, len(runs)):
                    yield _flat(runs[:j] + runs[j + 1 :])
                    if len(runs[j]) > 1:
                        return

            found = test.first_of(drops())
            if found is not None:
                i += found
                total -= len(runs[i])
                del runs[i]
                if 0 < i < len(runs) and key(runs[i - 1][0]) == key(runs[i][0]):
                    runs[i - 1 : i + 1] = [runs[i - 1] + runs[i]]
                    i -= 1
                continue
            # no drop held up to the first run of several items: the single ones before it stay
            i = next((j for j in range(i, len(runs)) if len(runs[j]) > 1), len(runs))
            if i == len(runs):
                break
        run = runs[i]
        if len(run) > 1:

            def holds(
                k: int,
                before: list[list[Any]] = runs[:i],
                run: list[Any] = run,
                after: list[list[Any]] = runs[i + 1 :],
            ) -> bool:
                return test(_flat([*before, run[:k], *after]))

            kept = _fewest(len(run), holds)
            runs[i] = run[:kept]
            total -= len(run) - kept
        i += 1
    return _flat(runs)


def _fewest(n: int, holds: Callable[[int], bool]) -> int:
    """The fewest ``k`` in ``1..n`` items of a run for which ``holds(k)``, given that it holds
    at ``n`` and not at 0: first ``n - 1`` (a run already minimal costs one test), then
    halving between the counts known to fail and to hold. The answer holds and one fewer was
    seen to fail (or is 0); in between, a predicate that is not monotonic may leave a
    smaller count untried."""
    if not holds(n - 1):
        return n
    fails, hold = 0, n - 1
    while hold - fails > 1:
        mid = (fails + hold) // 2
        if holds(mid):
            hold = mid
        else:
            fails = mid
    return hold


@dataclass(slots=True)
class _Unit:
    """One removable piece: a line (``text`` with its own newline, if any) or an opaque frame.

    ``value`` is the line's parsed JSON; ``seqs`` the seqs it holds (one event, or a packed
    row's members); ``top`` the largest seq it holds or cites; ``anchors`` the range
    endpoints it cites; ``turn``/``step`` its ``data.turn``/``data.step`` when integers;
    ``frame`` the index of the zstd frame it came from; ``whole`` marks an opaque frame
    over the reader's limits, which only goes or stays whole (its bytes are not shrunk:
    each candidate would inflate up to the limit again).
    """

    text: bytes
    value: Any = None
    seqs: range = range(0)
    top: int = -1
    anchors: tuple[int, ...] = ()
    turn: int | None = None
    step: int | None = None
    frame: int | None = None
    opaque_frame: bool = False
    whole: bool = False

    @property
    def opaque(self) -> bool:
        """Neither an event nor a row: only its bytes can shrink."""
        return self.opaque_frame or not isinstance(self.value, dict)

    @property
    def kind(self) -> str | None:
        """The event's type when it is a string (a confused one, a list say, is no kind)."""
        kind = self.value.get("type") if isinstance(self.value, dict) else None
        return kind if isinstance(kind, str) else None


@dataclass(slots=True)
class _Layout:
    """A log split into its header and units; ``render`` builds a candidate from kept units.

    In a zstd log each unit remembers its frame (``header_frame`` holds the header line),
    so that kept lines are re-framed where they were.
    """

    example: Example
    header: bytes
    header_value: Any
    units: list[_Unit]
    zstd: bool
    header_frame: int | None = None

    def render(self, keep: Sequence[int], replaced: dict[int, bytes] | None = None) -> Example:
        """The candidate holding the units at ``keep`` (ascending), renumbered for the rest;
        ``replaced`` substitutes the bytes of some opaque units."""
        kept = sorted(keep)
        removal = self._removal(kept)
        texts = [self._text(i, removal, replaced) for i in kept]
        header = self._header_text(removal.seqs)
        if not self.zstd:
            return replace(self.example, data=header + b"".join(texts))
        return replace(self.example, data=self._frames(header, kept, texts))

    def _removal(self, kept: list[int]) -> _Removal:
        kept_set = set(kept)
        seqs: list[int] = []
        turns: list[int] = []
        steps: dict[int, list[int]] = {}
        for i, unit in enumerate(self.units):
            if i not in kept_set:
                seqs.extend(unit.seqs)
                if unit.turn is not None and unit.kind == "turn/start":
                    turns.append(unit.turn)
                elif unit.turn is not None and unit.step is not None and unit.kind == "step/start":
                    steps.setdefault(unit.turn, []).append(unit.step)
        steps = {turn: sorted(numbers) for turn, numbers in steps.items()}
        if not seqs:
            return _Removal(seqs, sorted(turns), steps, [])
        surface = [u.seqs[0] for u in (self.units[i] for i in kept) if u.seqs and "surfaceOp" in u.value]
        return _Removal(sorted(seqs), sorted(turns), steps, sorted(surface))

    def _text(self, i: int, removal: _Removal, replaced: dict[int, bytes] | None) -> bytes:
        unit = self.units[i]
        if replaced is not None and i in replaced:
            return replaced[i]
        if unit.opaque or not removal.touches(unit):
            return unit.text
        newline = b"\n" if unit.text.endswith(b"\n") else b""
        fresh = loads(unit.text.decode("utf-8", errors="surrogateescape"))
        _renumber(fresh, removal)
        return dumpb(fresh) + newline

    def _header_text(self, removed: list[int]) -> bytes:
        """The header, its ``seedLength`` shifted like a seq."""
        seed = self.header_value.get("seedLength") if isinstance(self.header_value, dict) else None
        if not removed or type(seed) is not int or seed <= removed[0]:
            return self.header
        newline = b"\n" if self.header.endswith(b"\n") else b""
        return dumpb({**self.header_value, "seedLength": seed - bisect.bisect_left(removed, seed)}) + newline

    def _frames(self, header: bytes, kept: list[int], texts: list[bytes]) -> bytes:
        groups: list[tuple[int | None, bool, list[bytes]]] = []
        if self.header_frame is not None:
            groups.append((self.header_frame, False, [header]))
        for i, text in zip(kept, texts):
            unit = self.units[i]
            if unit.opaque_frame or not groups or groups[-1][1] or groups[-1][0] != unit.frame:
                groups.append((unit.frame, unit.opaque_frame, [text]))
            else:
                groups[-1][2].append(text)
        return b"".join(
            b"".join(parts) if opaque else compress_frame(b"".join(parts)) for _, opaque, parts in groups
        )


@dataclass(frozen=True, slots=True)
class _Removal:
    """What a candidate removed: the seqs, the turn numbers (of removed ``turn/start``
    events) and per turn the step numbers (of removed ``step/start`` events), ascending;
    and the old seqs of the surviving surface events."""

    seqs: list[int]
    turns: list[int]
    steps: dict[int, list[int]]
    surface: list[int]

    def touches(self, unit: _Unit) -> bool:
        """Whether ``unit`` mentions a seq, turn or step that shifts (otherwise its text stays)."""
        if self.seqs and unit.top >= self.seqs[0]:
            return True
        if unit.turn is None:
            return False
        steps = self.steps.get(unit.turn)
        return bool(self.turns and unit.turn >= self.turns[0]) or bool(
            steps and unit.step is not None and unit.step >= steps[0]
        )


def _renumber(event: Any, removal: _Removal) -> None:
    """Shift ``event``'s own seq (or packed ``seq0``), its turn and every seq it cites, in place."""
    removed = removal.seqs
    for key in ("seq", "seq0"):
        seq = event.get(key)
        if type(seq) is int:
            event[key] = seq - bisect.bisect_left(removed, seq)
    data = event.get("data")
    if isinstance(data, dict) and type(data.get("turn")) is int:
        if type(data.get("step")) is int:
            data["step"] = _shift(data["step"], removal.steps.get(data["turn"], []))
        data["turn"] = _shift(data["turn"], removal.turns)
    lists: dict[int, list[Any]] = {}
    for container, key in list(seq_refs(event)):
        value = container[key]
        if type(value) is not int:
            continue
        if isinstance(container, list):
            lists[id(container)] = container
        else:
            container[key] = _endpoint(value, removed, removal.surface, forward=key == "start")
    for refs in lists.values():
        refs[:] = [_shift(v, removed) for v in refs if type(v) is not int or not _is_removed(v, removed)]


def _is_removed(value: int, removed: list[int]) -> bool:
    k = bisect.bisect_left(removed, value)
    return k < len(removed) and removed[k] == value


def _shift(value: Any, removed: list[int]) -> Any:
    return value - bisect.bisect_left(removed, value) if type(value) is int else value


def _endpoint(value: int, removed: list[int], surface: list[int], *, forward: bool) -> int:
    """A range endpoint's new seq: shifted, or moved inwards onto the nearest surviving
    surface event when its own event was removed (unchanged when there is none)."""
    if _is_removed(value, removed):
        k = bisect.bisect_right(surface, value) if forward else bisect.bisect_left(surface, value) - 1
        if not 0 <= k < len(surface):
            return value
        value = surface[k]
    shifted: int = _shift(value, removed)
    return shifted


_ROW_PAYLOADS: dict[object, str] = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}
"""A packed chunk row's member payload list: member ``k`` is event ``seq0 + k``."""


def _parse(text: bytes) -> Any:
    """The JSON value of a line for *analysis* (orjson, falling back to the exact parser for
    what orjson refuses); lines that change are re-parsed exactly before they are rewritten.
    A line over the reader's line limit is not parsed (``None``: opaque), as the reader does
    not parse it either (the exact parser would take seconds on it)."""
    if len(text) > DEFAULT_LIMITS.line_bytes:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            return loads(text.decode("utf-8", errors="surrogateescape"))
        except JsonDecodeError:
            return None


def _unit_of(text: bytes, frame: int | None) -> _Unit:
    value = _parse(text)
    if not isinstance(value, dict):
        return _Unit(text, value, frame=frame)
    seqs = range(0)
    kind = value.get("type")
    payload = _ROW_PAYLOADS.get(kind) if isinstance(kind, str) else None  # a confused type may be a list
    if payload is not None:
        data, seq0 = value.get("data"), value.get("seq0")
        members = data.get(payload) if isinstance(data, dict) else None
        if type(seq0) is int and isinstance(members, list):
            seqs = range(seq0, seq0 + len(members))
    elif type(value.get("seq")) is int:
        seqs = range(value["seq"], value["seq"] + 1)
    refs = [(c, k) for c, k in seq_refs(value) if type(c[k]) is int]
    top = max([*(c[k] for c, k in refs), seqs[-1] if seqs else -1])
    anchors = tuple(c[k] for c, k in refs if isinstance(c, dict))
    data = value.get("data")
    turn, step = (data.get("turn"), data.get("step")) if isinstance(data, dict) else (None, None)
    turn, step = (turn if type(turn) is int else None), (step if type(step) is int else None)
    return _Unit(text, value, seqs, top, anchors, turn, step, frame)


def _split_lines(content: bytes) -> list[bytes]:
    """Lines with their own newline; a final line without one stays unterminated."""
    parts = content.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _layout(example: Example) -> _Layout:
    if example.compression != "zstd":
        lines = _split_lines(example.data)
        header = lines[0] if lines else b""
        return _Layout(
            example, header, _parse(header), [_unit_of(line, None) for line in lines[1:]], zstd=False
        )
    data = example.data
    units: list[_Unit] = []
    header, header_frame = b"", None
    budget = InflationBudget(DEFAULT_LIMITS, len(data))
    for index, frame in enumerate(scan_frames(data)):  # the frames cover the file: the last runs to its end
        raw = data[frame.offset : frame.end]
        try:
            content = _inflate(budget, frame, raw)
        except FrameLimitError:
            units.append(_Unit(raw, frame=index, opaque_frame=True, whole=True))
            continue
        if content is None:
            units.append(_Unit(raw, frame=index, opaque_frame=True))
            continue
        lines = _split_lines(content)
        if header_frame is None and not units and lines:
            header, header_frame, lines = lines[0], index, lines[1:]
        units.extend(_unit_of(line, index) for line in lines)
    return _Layout(example, header, _parse(header), units, zstd=True, header_frame=header_frame)


def _inflate(budget: InflationBudget, frame: FrameLayout, raw: bytes) -> bytes | None:
    """The frame's plaintext within the reader's inflation budget, or ``None`` for one that is
    not a whole, valid frame (torn, corrupt, skippable). Raises :class:`FrameLimitError` for a
    frame that declares or inflates to more than the budget allows: a zstd bomb stays an opaque
    unit, kept or dropped whole, and is never decoded past the limit."""
    if not (frame.complete and frame.kind == "zstd" and frame.error is None):
        return None
    try:
        return budget.inflate(raw, len(raw), frame.content_size)
    except FrameDecodeError:
        return None


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
