"""Mutable log drafts, one per :class:`~dshfuzz.mutators.Level`, and the lowering between them.

A log is lowered in one direction only, and a mutator edits the draft of its own
level, so every edit is expressed where the incident happened:

``EventDraft`` (header + logical events + batch cuts)
  -> ``RowDraft`` (per batch, the storage rows: chunk runs packed as the official writer does)
  -> ``LineDraft`` (per frame, the physical lines; frame 0 holds the header line)
  -> ``FrameDraft`` (per frame, the encoded bytes: a zstd frame, or plain JSONL text)
  -> ``ByteDraft`` (the whole file).

Unmutated, the chain reproduces the official writer's layout: the header line
alone in frame 0, then one checksummed frame (without a content-size field) per
append batch. An edit that cannot apply to a given log raises :class:`Inapplicable`.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any, Protocol, TypeGuard

from dshfuzz.contracts import seq_refs
from dshfuzz.model import (
    Compression,
    JsonDecodeError,
    JsonValue,
    SessionLog,
    compress_frame,
    dumpb,
    dumps,
    loads,
    pack_chunk_runs,
)

__all__ = [
    "LOSSY_NUMBERS",
    "ByteDraft",
    "EventDraft",
    "FrameDraft",
    "Inapplicable",
    "LineDraft",
    "RowDraft",
    "as_draft",
    "copy_json",
    "seq_refs",
    "type_of",
]


LOSSY_NUMBERS: dict[str, bytes] = {
    "\u2063dshfuzz-literal-negative-zero\u2063": b"-0",
    "\u2063dshfuzz-literal-infinity\u2063": b"1e400",
    "\u2063dshfuzz-literal-negative-infinity\u2063": b"-1e400",
}
"""Marker strings an event-level edit puts where a number JSON.parse does not round-trip belongs:
:meth:`RowDraft.lower` writes each as its literal (``dumpb`` writes ``-0.0`` as ``0`` and a
non-finite number as ``null``, as ``JSON.stringify`` does). No generated log holds one."""

_LOSSY_PREFIX = "\u2063dshfuzz-literal-".encode()
_LOSSY_MARKERS = tuple((dumpb(marker), literal) for marker, literal in LOSSY_NUMBERS.items())


def _row_bytes(row: JsonValue) -> bytes:
    text = dumpb(row)
    if _LOSSY_PREFIX in text:
        for marker, literal in _LOSSY_MARKERS:
            text = text.replace(marker, literal)
    return text


class Inapplicable(Exception):
    """The log lacks what the edit needs (its precondition does not hold)."""


def type_of(value: JsonValue) -> str | None:
    """The ``type`` of an event or row when it is a string (damaged logs hold anything)."""
    kind = value.get("type") if type(value) is dict else None
    return kind if type(kind) is str else None


def copy_json(value: JsonValue) -> JsonValue:
    """A deep copy of a JSON value (drafts never alias their source log)."""
    try:
        return _copy_containers(value)
    except RecursionError:
        raise Inapplicable("a value is nested too deeply to edit") from None


def _copy_containers(value: JsonValue) -> JsonValue:
    # JSON scalars are immutable, so only dicts and lists need copying: ~3x faster than deepcopy.
    kind = type(value)
    if kind is dict:
        return {key: _copy_containers(item) for key, item in value.items()}
    if kind is list:
        return [_copy_containers(item) for item in value]
    return value


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int


@dataclass(slots=True)
class EventDraft:
    """The logical log: header value, events (raw JSON, ``seq == index`` when valid)
    and ``cuts``, the ascending end indices of the append batches."""

    header: JsonValue
    events: list[JsonValue]
    cuts: list[int]

    @classmethod
    def of(cls, header: JsonValue, events: list[JsonValue], batches: list[int] | None = None) -> EventDraft:
        """A detached draft; ``batches`` are batch end indices (one batch when omitted)."""
        n = len(events)
        cuts = sorted({c for c in (batches or ()) if type(c) is int and 0 < c < n} | ({n} if n else set()))
        return cls(copy_json(header), [copy_json(e) for e in events], cuts)

    @property
    def format_version(self) -> int | None:
        version = self.header.get("version") if type(self.header) is dict else None
        return version if _is_int(version) and 0 <= version <= 3 else None

    def batches(self) -> list[list[JsonValue]]:
        out, start = [], 0
        for end in self.cuts:
            if end > start:
                out.append(self.events[start:end])
            start = end
        return out

    def objects(self) -> list[int]:
        """Indices of the events that are JSON objects (a damaged log may hold others)."""
        return [i for i, e in enumerate(self.events) if type(e) is dict]

    def of_type(self, *types: str) -> list[int]:
        """Indices of the events whose ``type`` is one of ``types``."""
        wanted = set(types)
        return [i for i, e in enumerate(self.events) if type_of(e) in wanted]

    def referenced(self) -> set[object]:
        """Every seq some event cites (provenance, ranges, shadowed or title seqs)."""
        return {c[k] for e in self.events for c, k in seq_refs(e) if type(c[k]) is int}

    def insert(self, index: int, event: JsonValue) -> None:
        """Insert ``event`` at ``index`` as seq ``index``, renumbering later events and every
        reference to them (and ``header.seedLength`` when the insert lands inside the seed)."""
        self._shift(index, +1)
        if self._seed_length() > index:
            self.header["seedLength"] += 1
        if type(event) is dict:
            event["seq"] = index
        self.events.insert(index, event)
        self.cuts = [c + 1 if c > index or (c == index == len(self.events) - 1) else c for c in self.cuts]
        if not self.cuts:
            self.cuts = [len(self.events)]

    def remove(self, index: int) -> JsonValue:
        """Remove the event at ``index`` and renumber the rest; references to it are dropped
        from seq lists. :class:`Inapplicable` when a range endpoint names it."""
        for e in self.events:
            for container, key in seq_refs(e):
                if container[key] == index and type(container) is dict:
                    raise Inapplicable(f"seq {index} is a range endpoint of seq {e.get('seq')}")
        for e in self.events:
            for container, _ in list(seq_refs(e)):
                if type(container) is list and index in container:
                    container[:] = [s for s in container if s != index]
        event = self.events.pop(index)
        self._shift(index + 1, -1)
        if self._seed_length() > index:
            self.header["seedLength"] -= 1
        self.cuts = [c - 1 if c > index else c for c in self.cuts]
        self.cuts = sorted({c for c in self.cuts if c > 0})
        return event

    def truncate(self, end: int) -> None:
        """Keep only the events before ``end`` (references only point backwards)."""
        self.check_truncate(end)
        del self.events[end:]
        self.cuts = sorted({min(c, end) for c in self.cuts if min(c, end) > 0})
        if self.events and (not self.cuts or self.cuts[-1] != end):
            self.cuts.append(end)

    def check_truncate(self, end: int) -> None:
        """Raise :class:`Inapplicable` when :meth:`truncate` at ``end`` would cut into the inherited seed."""
        if self._seed_length() > end:
            raise Inapplicable(f"truncating at seq {end} would cut into the inherited seed")

    def _seed_length(self) -> int:
        seed = self.header.get("seedLength") if type(self.header) is dict else None
        return seed if _is_int(seed) else 0

    def _shift(self, first: int, delta: int) -> None:
        for e in self.events:
            if type(e) is not dict:
                continue
            if _is_int(e.get("seq")) and e["seq"] >= first:
                _renumber_repair_id(e, e["seq"] + delta)
                e["seq"] += delta
            for container, key in seq_refs(e):
                if _is_int(container[key]) and container[key] >= first:
                    container[key] += delta
            if e.get("type") == "session/title-llm-request":
                _renumber_title_request(e, first, delta)

    def lower(self) -> RowDraft:
        """The storage rows of this draft, which hands them its events (plain events pass
        through ``pack_chunk_runs`` as the same objects): a draft is lowered once, when its
        edit is done, and is not used after (``run_edit``), so nothing is copied."""
        return RowDraft(self.header, [pack_chunk_runs(b) for b in self.batches()])


def _dict(value: object) -> dict[str, Any]:
    return value if type(value) is dict else {}


def _renumber_repair_id(event: dict[str, Any], seq: int) -> None:
    """Keep the loader's crash repair of a tool/result naming its own seq
    (``interrupted-tool-result-<callId>-<seq>``, which the released migration requires exactly)
    when the event moves to ``seq``."""
    if event.get("type") != "tool/result":
        return
    message = _dict(_dict(event.get("data")).get("message"))
    call_id = _dict(message.get("source")).get("callId")
    if type(call_id) is str and message.get("id") == f"{_REPAIR_PREFIX}{call_id}-{event['seq']}":
        message["id"] = f"{_REPAIR_PREFIX}{call_id}-{seq}"


_REPAIR_PREFIX = "interrupted-tool-result-"
_TITLE_FRAME = "Generate the session title from this JSON array of human messages:\n"


def _renumber_title_request(event: dict[str, Any], first: int, delta: int) -> None:
    """Shift the seqs a session/title-llm-request's framed prompt names (the JSON array of the
    messages its messageSeqs cite, which the released migration re-renders and compares), when
    the prompt is exactly that frame."""
    messages = _dict(event.get("data")).get("messages")
    for message in messages if type(messages) is list else ():
        content = _dict(message).get("content")
        for block in content if type(content) is list else ():
            text = _dict(block).get("text")
            if type(text) is not str or not text.startswith(_TITLE_FRAME):
                continue
            try:
                cited = loads(text[len(_TITLE_FRAME):])
            except JsonDecodeError:
                continue
            if type(cited) is not list or dumps(cited) != text[len(_TITLE_FRAME):]:
                continue
            for item in cited:
                if type(item) is dict and _is_int(item.get("seq")) and item["seq"] >= first:
                    item["seq"] += delta
            block["text"] = _TITLE_FRAME + dumps(cited)


@dataclass(slots=True)
class RowDraft:
    """Per append batch, the storage rows (plain events and packed chunk rows)."""

    header: JsonValue
    batches: list[list[JsonValue]]

    def lower(self) -> LineDraft:
        try:
            frames = [[dumpb(self.header)]]
            frames += [[_row_bytes(row) for row in batch] for batch in self.batches]
        except ValueError as why:  # JSON.stringify would throw too: nesting past the serialiser's depth
            raise Inapplicable(f"the log cannot be re-encoded: {why}") from None
        return LineDraft(frames)


@dataclass(slots=True)
class LineDraft:
    """Per frame, the physical lines (without ``\\n``); ``frames[0]`` is the header frame.

    ``torn`` marks a final line written without its terminator (a torn JSONL tail).
    """

    frames: list[list[bytes]]
    torn: bool = False

    def locate(self, line: int) -> tuple[int, int]:
        """``(frame, index)`` of the 0-based physical ``line``."""
        for f, lines in enumerate(self.frames):
            if line < len(lines):
                return f, line
            line -= len(lines)
        raise IndexError(line)

    @property
    def count(self) -> int:
        return sum(len(lines) for lines in self.frames)

    def lower(self, compression: Compression) -> FrameDraft:
        texts = [b"".join(line + b"\n" for line in lines) for lines in self.frames]
        if self.torn and texts and texts[-1].endswith(b"\n"):
            texts[-1] = texts[-1][:-1]
        if compression == "zstd":
            return FrameDraft([compress_frame(t) for t in texts if t], "zstd")
        return FrameDraft([t for t in texts if t], "none")


@dataclass(slots=True)
class FrameDraft:
    """Per frame, its encoded bytes (for ``none``: the frame's JSONL text)."""

    frames: list[bytes]
    compression: Compression

    def lower(self) -> ByteDraft:
        return ByteDraft(bytearray(b"".join(self.frames)), self.compression)


@dataclass(slots=True)
class ByteDraft:
    """The whole file."""

    data: bytearray
    compression: Compression = "none"


class GeneratedLike(Protocol):
    """A generated log as :func:`as_draft` reads it: a header value, event values and batch end indices."""

    @property
    def header(self) -> JsonValue: ...

    @property
    def events(self) -> Iterable[JsonValue]: ...

    @property
    def batches(self) -> Iterable[int]: ...


DraftSource = EventDraft | SessionLog | GeneratedLike
"""What a mutator edits: a draft, a read log or a generated one."""


def as_draft(log: DraftSource) -> EventDraft:
    """A detached :class:`EventDraft` of ``log``.

    Accepts an :class:`EventDraft`, a generated log (``.header``, ``.events``,
    ``.batches`` as batch end indices) or a read :class:`~dshfuzz.model.SessionLog`,
    whose zstd frames give the batches (a JSONL file records none, so it is cut
    after every ``turn/end``, where the agent loop commits).
    """
    if isinstance(log, EventDraft):
        return EventDraft.of(log.header, log.events, log.cuts)
    if isinstance(log, SessionLog):
        raws = [e.raw for e in log.events]
        header = log.header.raw if log.header is not None else None
        if log.compression == "zstd":
            cuts = [i + 1 for i, e in enumerate(log.events[:-1]) if e.frame != log.events[i + 1].frame]
        else:
            cuts = [i + 1 for i, e in enumerate(raws) if type(e) is dict and e.get("type") == "turn/end"]
        return EventDraft.of(header, raws, cuts)
    return EventDraft.of(log.header, list(log.events), list(log.batches))
