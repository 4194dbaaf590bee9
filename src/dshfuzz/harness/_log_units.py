"""A log as removable *units* (:func:`_layout`), and a candidate rendered from the units
it keeps (:meth:`_Layout.render`), renumbered for the rest: what the minimiser's stages
remove from.

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
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
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
    compress_frame,
    dumpb,
    loads,
    scan_frames,
)

from ._example import Example


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
