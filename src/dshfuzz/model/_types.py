"""The session-log model: what a DSH log *is*, logically and physically.

Invariant: reading never refuses and never loses input. A line that is not JSON,
JSON that is not an object, a header that is not a header and an event missing
or mistyping any field are all represented here; rules report on them later.
Field accessors therefore return :data:`MISSING` for an absent key and the raw
JSON value (of whatever type) otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Iterator, Literal, Protocol

from dshfuzz.contracts import MISSING

from ._limits import LimitHit
from ._zstd import FrameDecodeError, decode_frame, recover_torn_frame

JsonValue = Any
"""Any value ``JSON.parse`` can return: dict, list, str, int, float, bool or None."""


ENVELOPE_KEYS: Final = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable")
"""The seven event-envelope keys the official writer may emit (S:1193-1209)."""

SURFACE_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/result"})
"""The surface-eligible event types of format v0 (S:219)."""

CHUNK_ROW_TYPES: Final = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
"""Packed storage-row types produced by ``packChunkRuns`` (S:727-1035)."""

Compression = Literal["none", "zstd"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One physical-layer observation made while reading a file.

    ``code`` is a stable, dotted identifier (``line.not-json``, ``row.malformed``,
    ``frame.torn-tail`` ...); ``message`` is the human reason. Every coordinate that
    is known is filled: 1-based ``line``, event ``seq``, 0-based ``frame`` index and
    byte ``offset`` into the file.
    """

    code: str
    message: str
    line: int | None = None
    seq: int | None = None
    frame: int | None = None
    offset: int | None = None


class Event:
    """One logical session event, exactly as stored (or as expanded from a packed row).

    ``raw`` is the parsed JSON value of the event; for a well-formed event it is a
    dict whose key order is the stored order. Accessors return :data:`MISSING`
    when a key is absent, and the stored value (possibly of the wrong type) when
    present. Physical coordinates: ``line`` is the 1-based line of the row that
    holds the event, ``row`` its 0-based index among event rows (header excluded),
    ``member`` its position inside a packed row (``None`` for a plain row), and
    ``frame`` the 0-based zstd frame (``None`` for plain JSONL). The reader builds
    the first member of a packed row at once, an ordinary event, and makes the others
    ``PackedMember`` events, whose ``raw`` is built from the row when first read.
    """

    __slots__ = ("raw", "line", "row", "member", "frame")

    def __init__(
        self,
        raw: JsonValue,
        line: int | None = None,
        row: int | None = None,
        member: int | None = None,
        frame: int | None = None,
    ) -> None:
        self.raw = raw
        self.line = line
        self.row = row
        self.member = member
        self.frame = frame

    def _get(self, key: str) -> JsonValue:
        raw = self.raw
        if type(raw) is dict:
            return raw.get(key, MISSING)
        return MISSING

    @property
    def is_object(self) -> bool:
        return type(self.raw) is dict

    @property
    def type(self) -> JsonValue:
        return self._get("type")

    @property
    def seq(self) -> JsonValue:
        return self._get("seq")

    @property
    def time(self) -> JsonValue:
        return self._get("time")

    @property
    def data(self) -> JsonValue:
        return self._get("data")

    @property
    def surfaceOp(self) -> JsonValue:  # noqa: N802 - the wire name
        return self._get("surfaceOp")

    @property
    def sourceEventSeqs(self) -> JsonValue:  # noqa: N802 - the wire name
        return self._get("sourceEventSeqs")

    @property
    def ignorable(self) -> JsonValue:
        return self._get("ignorable")

    @property
    def extra_keys(self) -> dict[str, JsonValue]:
        """Envelope keys outside the official seven, verbatim and in stored order."""
        raw = self.raw
        if type(raw) is not dict:
            return {}
        return {k: v for k, v in raw.items() if k not in ENVELOPE_KEYS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.raw == other.raw

    def __hash__(self) -> int:  # events are mutable JSON; identity hashing would mislead
        raise TypeError("Event is unhashable")

    def __repr__(self) -> str:
        return f"Event(type={self.type!r}, seq={self.seq!r}, line={self.line!r})"


class SessionHeader:
    """The first line of a log. ``raw`` may be any JSON value (or :data:`MISSING`
    when the line did not parse); accessors follow the :class:`Event` convention."""

    __slots__ = ("raw", "line", "frame")

    def __init__(self, raw: JsonValue, line: int = 1, frame: int | None = None) -> None:
        self.raw = raw
        self.line = line
        self.frame = frame

    def _get(self, key: str) -> JsonValue:
        raw = self.raw
        if type(raw) is dict:
            return raw.get(key, MISSING)
        return MISSING

    @property
    def is_object(self) -> bool:
        return type(self.raw) is dict

    type = property(lambda self: self._get("type"))
    version = property(lambda self: self._get("version"))
    id = property(lambda self: self._get("id"))
    createdAt = property(lambda self: self._get("createdAt"))  # noqa: N815 - the wire name
    cwd = property(lambda self: self._get("cwd"))
    parentSession = property(lambda self: self._get("parentSession"))  # noqa: N815
    seedLength = property(lambda self: self._get("seedLength"))  # noqa: N815
    origin = property(lambda self: self._get("origin"))
    delegationDepth = property(lambda self: self._get("delegationDepth"))  # noqa: N815
    agentPreset = property(lambda self: self._get("agentPreset"))  # noqa: N815

    # an __eq__ without a __hash__ leaves __hash__ None: a header's JSON is mutable, so it is unhashable
    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionHeader) and self.raw == other.raw

    def __repr__(self) -> str:
        return f"SessionHeader({self.raw!r})"


RowKind = Literal["event", "packed", "malformed-packed", "not-json", "empty"]


class TextSource(Protocol):
    """Bytes addressable by offset: a plain file, or the plaintext of a zstd file's frames. A
    slice of a file in memory may be a view of it, not a copy."""

    def __getitem__(self, span: slice, /) -> bytes | memoryview: ...


class Line:
    """One physical line (split on ``\\n`` only), 1-based, without its terminator.

    ``text`` is the decoded line; ``value`` the parsed JSON value or :data:`MISSING`
    when it did not parse (``error`` then says why). ``terminated`` is false only for
    a final line with no ``\\n`` (a torn JSONL tail). ``frame`` is the zstd frame the
    line starts in; ``offset`` its byte offset in the file (plain JSONL) or in the
    concatenated plaintext of the frames (zstd).

    The reader does not keep the text of a parsed line: it keeps ``size`` and a
    ``source`` to slice the bytes from (the file, or the frames, decoded again on
    demand), so a log costs its parsed values and not their text a second time.
    A line built with a ``text`` simply holds it.
    """

    __slots__ = ("number", "value", "error", "terminated", "frame", "offset", "size", "_text", "_source")

    def __init__(
        self,
        number: int,
        text: str | None,
        value: JsonValue = MISSING,
        error: str | None = None,
        terminated: bool = True,
        frame: int | None = None,
        offset: int | None = None,
        size: int = 0,
        source: TextSource | None = None,
    ) -> None:
        self.number = number
        self.value = value
        self.error = error
        self.terminated = terminated
        self.frame = frame
        self.offset = offset
        self._text = text
        self._source = source
        self.size = len(text.encode("utf-8", "surrogatepass")) if text is not None else size

    @property
    def data(self) -> bytes:
        """The line's bytes as stored (in the file, or in the frames' plaintext)."""
        if self._source is None or self.offset is None:
            return (self._text or "").encode("utf-8", "surrogatepass")
        return bytes(self._source[self.offset : self.offset + self.size])

    @property
    def text(self) -> str:
        if self._text is not None:
            return self._text
        return self.data.decode("utf-8", errors="replace")

    # an __eq__ without a __hash__ leaves __hash__ None: a line's parsed value is mutable, so it is unhashable
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Line):
            return NotImplemented
        return (self.number, self.text, self.value, self.error, self.terminated, self.frame, self.offset) == (
            other.number, other.text, other.value, other.error, other.terminated, other.frame, other.offset
        )

    def __repr__(self) -> str:
        return f"Line(number={self.number!r}, size={self.size!r}, error={self.error!r}, frame={self.frame!r}, offset={self.offset!r})"


@dataclass(slots=True)
class Row:
    """One stored event row: a plain event or a packed chunk row.

    ``events`` are indices into :attr:`SessionLog.events` of the events this row
    expands to (one for a plain row, ``len(texts|args)`` for a packed one, none for
    a row that could not be decoded).
    """

    line: int
    kind: RowKind
    value: JsonValue
    events: range = range(0)
    error: str | None = None
    frame: int | None = None


FrameStatus = Literal["complete", "torn", "corrupt", "skippable", "not-record-aligned", "over-limit"]


@dataclass(slots=True)
class Frame:
    """One zstd frame as found in the file (0-based ``index``; byte ``offset``/``size``).

    ``data`` is the frame's bytes exactly as found in the file, sliced from ``source`` (the
    file's bytes, which a streamed read may read on demand); ``content`` its
    plaintext, decoded again on each access (the reader does not keep it): a
    complete frame's decoded bytes, the records recovered from a torn tail, or
    nothing for a frame that does not decode. ``lines`` are the 1-based line
    numbers the frame produced. An ``over-limit`` frame is the one at which a
    reader limit stopped reading (:attr:`SessionLog.limit`); it and everything
    after it are unread, and its ``content`` is empty.
    """

    index: int
    offset: int
    size: int
    status: FrameStatus
    content_size: int | None = None
    has_checksum: bool = False
    block_types: tuple[str, ...] = ()
    lines: range = range(0)
    error: str | None = None
    source: TextSource = field(default=b"", repr=False, compare=False)

    @property
    def data(self) -> bytes | memoryview:
        return self.source[self.offset : self.offset + self.size]

    @property
    def content(self) -> bytes:
        if self.status in ("skippable", "over-limit"):
            return b""
        if self.status == "torn":
            return recover_torn_frame(self.data)
        try:
            return decode_frame(self.data)
        except FrameDecodeError:
            return b""


@dataclass(slots=True)
class TornTail:
    """An incomplete end of file, as the official reader treats it.

    ``truncate_to`` is the byte offset the official writer would cut back to;
    ``recovered_lines`` the complete records recovered from inside the torn part
    and ``recovered_events`` the events they hold (the official ``recoveredEvents``).
    """

    truncate_to: int
    recovered_lines: int = 0
    recovered_events: int = 0
    frame: int | None = None
    line: int | None = None


@dataclass(slots=True)
class SessionLog:
    """A whole session log: logical view (header + events in physical order) over
    the physical layer (lines, rows, zstd frames) with reading diagnostics.

    ``refusal`` is the error with which the official byte layer (``readPrefix``)
    would refuse the file, or ``None`` when it reads it; ``committed_events`` is the
    length of the event prefix it would keep (``events[:committed_events]``).

    ``limit`` is set when a reader limit stopped reading: the model is then the
    prefix before the offending frame or line, and ``refusal``, ``torn`` and
    ``committed_events`` describe that prefix only.

    ``lossy_suspects`` are the line numbers that :func:`may_hold_lossy_number`
    could not clear as the reader passed them (ranges, possibly running past the
    last line read); ``None`` for a log the reader did not build, whose lines a
    consumer must screen itself.
    """

    header: SessionHeader | None
    events: list[Event] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    torn: TornTail | None = None
    compression: Compression = "none"
    path: str | None = None
    size: int = 0
    refusal: Diagnostic | None = None
    committed_events: int = 0
    limit: LimitHit | None = None
    lossy_suspects: list[range] | None = None

    @property
    def format_version(self) -> JsonValue:
        return self.header.version if self.header is not None else MISSING

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)
