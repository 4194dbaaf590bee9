"""Reading a session log into the model, exactly as far as the official reader sees it.

``parse_log`` never raises and never drops input: every line becomes a
:class:`Line`, every terminated line after the header a :class:`Row` (kinds
``event``, ``packed``, ``malformed-packed``, ``not-json``, ``empty``), and every
stored event an :class:`Event`, in physical order. A final line without ``\\n``
is a torn tail: it stays a ``Line`` (``terminated=False``) and yields no row.

Alongside the lenient model the reader replays the official byte layer
(``readPrefix``: ``scanZstdFrames``, per-frame decode, ``SessionLogScanner``,
SPJ:180-300 and 921-1019) and records its verdict: ``SessionLog.refusal`` (the
first error it would throw, with the official message), ``committed_events``
(the event prefix it would keep) and ``torn`` (its torn-tail marker).

Coordinates: ``Line.offset`` is the byte offset of the line in the file for plain
JSONL and in the concatenated plaintext of the frames for zstd; line numbers are
1-based over that same text. Lines split on ``\\n`` only (``\\r`` stays in the line).

Bounds: reading stops at the first frame or line beyond the :class:`Limits`
(``SessionLog.limit``), and the model keeps only what the rules need. A line
keeps its offset and size, not its text (``Line.text`` slices the file, or
decodes its frames again); a frame keeps its compressed bytes, not its
plaintext; a packed row's members are built from the row when first read.
A run of empty lines is read as one (``_Reader.blanks``): it is the run of newlines where it
starts, found in one C-level match; a streamed read keeps it as one record a table, and its
lines share one ``line.empty`` diagnostic.
Each block of plaintext is screened once, as it is read, for numbers that
``JSON.parse`` cannot give back losslessly (``SessionLog.lossy_suspects``), so
that no consumer has to read the lines again to look for them.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby, islice
from operator import attrgetter
from os import PathLike
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from dshfuzz.contracts import MISSING, js_string

from ._budget import InflationBudget
from ._file import FileBytes
from ._json import JsonDecodeError, loads, may_hold_lossy_number, screen_numbers
from ._limits import DEFAULT_LIMITS, LimitHit, Limits, json_depth
from ._rows import PackedMember, PackedRun, RowDecodeError, is_safe_integer, packed_head, validate_storage_row
from ._types import (
    CHUNK_ROW_TYPES,
    Compression,
    Diagnostic,
    Event,
    Frame,
    Line,
    Row,
    SessionHeader,
    SessionLog,
    TextSource,
    TornTail,
)
from . import _stream
from ._stream import EMPTY_LINE, MAX_CELL, RowConsumer, StreamedEvents, StreamedLog
from ._zstd import (
    ZSTD_MAGIC,
    FrameDecodeError,
    FrameKind,
    FrameLayout,
    FrameLimitError,
    iter_frames,
    recover_torn_frame,
)

__all__ = ["compression_by_name", "parse_events", "parse_log", "read_log", "sniff_compression", "stream_log"]

_ZSTD_PREFIX = "corrupt Zstandard session log: "
_BLOCK = 1024 * 1024
_NEWLINES = re.compile(b"\n+")
_SKIPPABLE_BASE = 0x184D2A50
_UNALIGNED = "complete frame does not end on a record boundary (the official scanner joins it to the next frame)"


def sniff_compression(data: bytes | FileBytes) -> Compression:
    """``"zstd"`` when ``data`` starts with a zstd or skippable frame magic, else ``"none"``."""
    if len(data) >= 4:
        magic = int.from_bytes(data[:4], "little")
        if magic == ZSTD_MAGIC or magic & 0xFFFFFFF0 == _SKIPPABLE_BASE:
            return "zstd"
    return "none"


def read_log(path: str | PathLike[str], *, limits: Limits = DEFAULT_LIMITS) -> SessionLog:
    """Read a log file; raises only ``OSError`` (unreadable file).

    The official backend decides the encoding by configuration, which follows the
    suffix: ``.jsonl.zstd`` is zstd and ``.jsonl`` plain; any other name is sniffed.
    """
    name = str(path)
    return parse_log(Path(path).read_bytes(), compression=compression_by_name(name), path=name, limits=limits)


def compression_by_name(name: str) -> Compression | None:
    """The encoding the official backend configures for a log file named ``name``: zstd for
    ``.jsonl.zstd``, none for ``.jsonl``, and ``None`` (sniff the bytes) for any other name."""
    if name.endswith(".jsonl.zstd"):
        return "zstd"
    if name.endswith(".jsonl"):
        return "none"
    return None


def parse_log(
    data: bytes,
    *,
    compression: Compression | None = None,
    path: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> SessionLog:
    """Build the model of a log from its bytes. Never raises on any input.

    Reading stops at the first frame or line beyond ``limits``
    (:attr:`SessionLog.limit` says which and where); the model then holds the
    prefix before it.
    """
    source = _owned(data)
    if compression is None:
        compression = sniff_compression(source)
    log = SessionLog(header=None, compression=compression, path=path, size=len(source), lossy_suspects=[])
    _read(source, _Reader(log, limits))
    return log


def stream_log(
    data: bytes | FileBytes,
    consumer: RowConsumer,
    *,
    compression: Compression | None = None,
    path: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> StreamedLog:
    """Read a log as :func:`parse_log` does, handing each row's events to ``consumer`` as they
    are read (``consumer.row(first, stop, head)``, once ``log.events[first:stop]`` holds them) and
    keeping none: the :class:`~dshfuzz.model.StreamedLog` returned holds the physical layer
    compactly and ``len(log.events)`` events it no longer has. ``data`` may be
    a :class:`~dshfuzz.model.FileBytes`, so that the file is read as it goes, never held whole
    (its frames and lines then read it again when asked). Never raises on any input (an
    exception out of ``consumer`` propagates, and so does an ``OSError`` reading a file)."""
    data = _owned(data)
    if compression is None:
        compression = sniff_compression(data)
    log = StreamedLog.empty(compression, path, len(data))
    reader = _Reader(log, limits)
    reader.consumer = consumer
    reader.emit = reader.begin_stream
    reader.add_line = log.lines.staged.extend
    reader.add_row = log.rows.staged.extend
    reader.settle = log.rows.settle
    reader.settle_at = _stream._BATCH
    _read(data, reader)
    if reader.emit == reader.begin_stream:
        consumer.begin(log)  # no row held an event
    return log


def parse_events(
    data: bytes,
    *,
    compression: Compression | None = None,
    path: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[StreamedLog, list[Event]]:
    """:func:`parse_log`'s events, each as it builds it, and the log of a streamed read of the
    same bytes (its header, limit, refusal and compact physical layer): for a reader of the events
    alone, which need not pay for a line and a row object a line (a run of empty lines costs one
    record). Never raises on any input."""
    keep = _KeepEvents()
    return stream_log(data, keep, compression=compression, path=path, limits=limits), keep.events


class _KeepEvents:
    """The consumer of :func:`parse_events`: it keeps every event handed over, in order."""

    __slots__ = ("events", "log")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.log: StreamedLog | None = None

    def begin(self, log: StreamedLog) -> None:
        self.log = log

    def row(self, first: int, stop: int, head: Event) -> None:
        if stop - first == 1:
            self.events.append(head)
        else:
            assert self.log is not None, "the read began"
            row = self.log.events  # the row's events alone: read by position, not sliced
            self.events.extend([row[i] for i in range(first, stop)])


def _owned(data: bytes | FileBytes) -> bytes | FileBytes:
    """``data`` as the reader keeps it: a file read as it goes, or bytes of its own."""
    return data if isinstance(data, FileBytes) else bytes(data)


def _read(data: bytes | FileBytes, reader: _Reader) -> None:
    # The cyclic collector is process-wide, so its state is the caller's: reading allocates
    # many acyclic containers, and a program that reads large logs may pause the collector
    # around the read (the CLI does: `dshfuzz.cli.cyclic_gc_paused`); a library call never does.
    if reader.log.compression == "zstd":
        _read_zstd(data, reader)
    else:
        reader.set_source(data)
        reader.feed(data, None)
        reader.finish_plain()


def _read_zstd(data: bytes | FileBytes, reader: _Reader) -> None:
    log = reader.log
    streamed = reader.emit is not None
    # The official scan walks every frame header before decoding anything (SPJ:503-566).
    layouts = _Layouts(iter_frames(data))
    if layouts.first_error is not None:
        index, lay = layouts.first_error
        reader.refuse(_structural_code(str(lay.error)), _ZSTD_PREFIX + str(lay.error), frame=index, offset=lay.offset)
    if not layouts.whole_frame:
        reader.refuse("log.empty", "empty or header-less Zstandard session log", offset=0)
    complete_end: int | None = None
    budget = InflationBudget(reader.limits, len(data))
    plaintext = _Plaintext(log.frames)
    reader.set_source(plaintext)
    # a frame slices the file when asked: a view of bytes in memory, or a read of a file on disk
    whole: TextSource = memoryview(data) if streamed and isinstance(data, bytes) else data
    if isinstance(log, StreamedLog):
        log.frames.source = whole
    for index, lay in enumerate(layouts):
        frame = Frame(index, lay.offset, lay.size, "complete", lay.content_size, lay.has_checksum, lay.block_types)
        frame.source = whole
        log.frames.append(frame)
        if lay.kind == "skippable":
            frame.status, frame.error = "skippable", lay.error
            log.diagnostics.append(Diagnostic("frame.skippable", _ZSTD_PREFIX + str(lay.error), frame=index, offset=lay.offset))
            continue
        if lay.kind == "invalid" or lay.error is not None:
            frame.status, frame.error = "corrupt", lay.error
            log.diagnostics.append(Diagnostic(_structural_code(str(lay.error)), _ZSTD_PREFIX + str(lay.error), frame=index, offset=lay.offset))
            if lay.kind == "invalid":
                continue
        if not lay.complete:
            complete_end = reader.close_complete_frames(complete_end)
            frame.status = "torn"
            try:
                content = budget.inflate(frame.data, lay.size, lay.content_size, recover_torn_frame)
            except FrameLimitError as over:
                _over_limit(reader, frame, budget.hit(lay, index, over))
                break
            reader.begin_torn(lay.offset, index)
            first = reader.line_number + 1
            plaintext.add(reader.stream_offset, index)
            reader.allow_lines_through(lay.end)
            reader.feed(content, index)
            reader.torn_lines = reader.line_number + 1 - first
            log.diagnostics.append(
                Diagnostic("frame.torn", f"incomplete final frame at byte {lay.offset}", frame=index, offset=lay.offset)
            )
            continue
        try:
            content = budget.inflate(frame.data, lay.size, lay.content_size)
        except FrameLimitError as over:
            _over_limit(reader, frame, budget.hit(lay, index, over))
            break
        except FrameDecodeError as exc:
            frame.status, frame.error = "corrupt", str(exc)
            message = f"{_ZSTD_PREFIX}frame at byte {lay.offset} failed validation"
            log.diagnostics.append(Diagnostic("frame.corrupt", f"{message} ({exc})", frame=index, offset=lay.offset))
            reader.refuse("frame.corrupt", message, frame=index, offset=lay.offset)
            continue
        if index == 0 and (not content or content.find(b"\n") != len(content) - 1):
            message = _ZSTD_PREFIX + "first frame is not exactly one header line"
            log.diagnostics.append(Diagnostic("frame.header-not-alone", message, frame=0, offset=0))
            reader.refuse("frame.header-not-alone", message, frame=0, offset=0)
        if content and not content.endswith(b"\n"):
            frame.status = "not-record-aligned"
            log.diagnostics.append(Diagnostic("frame.unaligned", _UNALIGNED, frame=index, offset=lay.offset))
        plaintext.add(reader.stream_offset, index)
        reader.allow_lines_through(lay.end)
        reader.feed(content, index)
        if log.limit is not None:
            break
    if log.limit is None:
        reader.close_complete_frames(complete_end)
    reader.finish_zstd()
    _assign_lines_to_frames(log)


_FRAME_KINDS: tuple[FrameKind, ...] = ("zstd", "skippable", "invalid")


class _Layouts:
    """Every frame's layout, found before any is decoded, kept in arrays until the decoding pass
    reads them back (about 40 bytes a frame, not a :class:`FrameLayout` and its tuple of block
    types): the first structural error and whether any zstd frame is complete are known at once."""

    def __init__(self, layouts: Iterable[FrameLayout]) -> None:
        # offset, end, kind + 4 * complete + 8 * checksum + 16 * block types, declared size, dictionary
        self.cells = array("q")
        self.block_tables: list[tuple[str, ...]] = []
        self.errors: dict[int, str] = {}
        self.declared: dict[int, int] = {}  # a declared size beyond 63 bits (a frame header may declare 2**64 - 1)
        self.first_error: tuple[int, FrameLayout] | None = None
        self.whole_frame = False
        ids: dict[tuple[str, ...], int] = {}
        for index, lay in enumerate(layouts):
            block = ids.get(lay.block_types)
            if block is None:
                block = ids[lay.block_types] = len(self.block_tables)
                self.block_tables.append(lay.block_types)
            flags = _FRAME_KINDS.index(lay.kind) + 4 * lay.complete + 8 * lay.has_checksum + 16 * block
            declared = -1 if lay.content_size is None else lay.content_size
            if declared > MAX_CELL:
                self.declared[index], declared = declared, -2
            self.cells.extend((lay.offset, lay.end, flags, declared, -1 if lay.dictionary_id is None else lay.dictionary_id))
            if lay.error is not None:
                self.errors[index] = lay.error
                if self.first_error is None:
                    self.first_error = (index, lay)
            self.whole_frame = self.whole_frame or (lay.kind == "zstd" and lay.complete)

    def __iter__(self) -> Iterator[FrameLayout]:
        cells, tables, errors = self.cells, self.block_tables, self.errors
        for index in range(len(cells) // 5):
            offset, end, flags, declared, dictionary = cells[5 * index : 5 * index + 5]
            yield FrameLayout(
                offset, end, _FRAME_KINDS[flags & 3], bool(flags & 4), bool(flags & 8),
                (None if declared == -1 else self.declared[index]) if declared < 0 else declared,
                None if dictionary < 0 else dictionary, tables[flags >> 4], errors.get(index),
            )


class _Plaintext:
    """The concatenated plaintext of a zstd file's frames, sliced by offset.

    Only the frames are kept; a slice decodes the frames it spans again (the
    last one decoded is cached, so reading lines in order decodes each frame
    once). This is what :attr:`Line.text` of a zstd log reads from.
    """

    def __init__(self, frames: Sequence[Frame]) -> None:
        self.frames = frames
        self.starts = array("q")  # where each frame read for its text starts in the plaintext
        self.indexes = array("q")  # and its index among the frames
        self.cached: tuple[int, bytes] = (-1, b"")

    def add(self, start: int, index: int) -> None:
        self.starts.append(start)
        self.indexes.append(index)

    def _content(self, i: int) -> bytes:
        if self.cached[0] != i:
            self.cached = (i, self.frames[self.indexes[i]].content)
        return self.cached[1]

    def __getitem__(self, span: slice) -> bytes:
        start, stop = span.start, span.stop
        i = bisect_right(self.starts, start) - 1
        pieces: list[bytes | memoryview] = []
        while i < len(self.starts) and (not pieces or self.starts[i] < stop):
            base = self.starts[i]
            pieces.append(self._content(i)[max(start - base, 0) : stop - base])
            i += 1
        return b"".join(pieces)


def _over_limit(reader: _Reader, frame: Frame, hit: LimitHit) -> None:
    """Stop the read at a frame the inflation budget refused, marked ``over-limit``."""
    reader.stop(hit)
    frame.status = "over-limit"


def _assign_lines_to_frames(log: SessionLog | StreamedLog) -> None:
    """``Frame.lines``: the lines that start in each frame (as ``Line.frame`` says; the
    lines of a frame are consecutive, and ``log.frames[i]`` is frame ``i``)."""
    if isinstance(log, StreamedLog):
        for index, start, end in log.lines.frame_spans():
            log.frames.set_lines(index, range(start, end + 1))
        return
    frames = log.frames
    for index, run in groupby(log.lines, _FRAME_OF):
        first = next(run)
        rest = deque(run, maxlen=1)  # the run's last line, without a Python step per line
        if index is not None:
            frames[index].lines = range(first.number, (rest[0] if rest else first).number + 1)


_FRAME_OF = attrgetter("frame")


def _structural_code(error: str) -> str:
    if error.startswith("reserved frame-header bit"):
        return "frame.reserved-bit"
    if error.startswith("reserved block type"):
        return "frame.reserved-block"
    return "frame.invalid-magic"


def _is_number(value: Any) -> TypeGuard[int | float]:
    return type(value) is int or type(value) is float


def _is_non_negative_safe(value: Any) -> bool:
    # Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0)
    return is_safe_integer(value) and value >= 0 and not (type(value) is float and math.copysign(1.0, value) < 0)


def _header_refusal(value: Any) -> tuple[str, str] | None:
    """The official ``parseHeaderRecord`` verdict on a parsed first line (SPJ:55-200)."""
    if type(value) is dict or type(value) is list:
        version = value.get("version", MISSING) if type(value) is dict else MISSING
        if _is_number(version) and version != 0:
            ident = value.get("id", MISSING) if type(value) is dict else MISSING
            shown = ident if type(ident) is str else js_string(ident)
            v = js_string(version)
            if version > 0:
                why = "the log was written by a newer harness — upgrade the harness to open it"
                message = f'session "{shown}" uses log format v{v}, but this harness reads only v0: {why}'
            else:
                message = f'session "{shown}" uses log format v{v}, older than the supported v0, and this build ships no upgrade path for it'
            return "header.version", message
    if not _is_header_line(value):
        return "header.not-header", "corrupt session log: first line is not a session header"
    if "sandboxMode" in value or "approvalPolicy" in value:
        return "header.retired-fields", "session header uses retired policy baseline fields"
    return None


def _is_header_line(v: Any) -> bool:
    return (
        type(v) is dict
        and v.get("type") == "session"
        and _is_number(v.get("version"))
        and type(v.get("id")) is str
        and _is_non_negative_safe(v.get("createdAt"))
        and _is_non_negative_safe(v.get("delegationDepth"))
        and ("origin" not in v or v["origin"] == "subagent")
        and ("agentPreset" not in v or type(v["agentPreset"]) is str)
    )


def _parse(raw: bytes) -> tuple[Any, str | None]:
    try:
        return loads(raw), None
    except JsonDecodeError as exc:
        return MISSING, str(exc)


def _empty_lines(first: int, count: int, frame: int | None, offset: int | None) -> Diagnostic:
    """The one diagnostic of a run of ``count`` empty lines from line ``first`` on."""
    if count == 1:
        return Diagnostic("line.empty", "empty line (the official reader cannot parse it)", line=first, frame=frame, offset=offset)
    message = f"{count} empty lines, lines {first}-{first + count - 1} (the official reader cannot parse them)"
    return Diagnostic("line.empty", message, line=first, frame=frame, offset=offset)


def _no_table(cells: tuple[int, int, int]) -> None:
    raise AssertionError("only a streamed read keeps compact tables")


def _nothing() -> None:
    return None


class _Reader:
    """Turns plaintext into lines, rows and events while replaying ``SessionLogScanner``.

    Scanner state: ``committed_bytes``/``committed_events`` advance over each row
    whose events continue the seq sequence; the first unparsable row or seq gap
    is the ``issue`` that freezes them; a later row holding a ``turn/end`` turns
    the issue into a refusal (SPJ:272-300).
    """

    def __init__(self, log: SessionLog | StreamedLog, limits: Limits) -> None:
        self.log = log
        # the events a whole read keeps, or those a streamed read hands over (the other one is left empty)
        self.events: list[Event] = log.events if isinstance(log, SessionLog) else []
        self.streamed: StreamedEvents = log.events if isinstance(log, StreamedLog) else StreamedEvents()
        # every read screens for lossy numbers, so its log's list is there
        self.suspects: list[range] = log.lossy_suspects if log.lossy_suspects is not None else []
        self.limits = limits
        self.line_bytes = limits.line_bytes
        self.source: TextSource = b""
        self.line_number = 0
        self.stream_offset = 0
        self.fragment: list[bytes] = []
        self.fragment_size = 0
        self.fragment_frame: int | None = None
        self.fragment_offset = 0
        self.committed_bytes = 0
        self.issue: Diagnostic | None = None
        self.torn_start: int | None = None
        self.torn_frame: int | None = None
        self.torn_events_from = 0
        self.torn_lines_from = 0
        self.torn_lines = 0
        self.unreadable = 0
        self.max_lines = sys.maxsize
        self.compressed_end = 0
        self.emit: Callable[[int, int, Event], None] | None = None
        self.consumer: RowConsumer | None = None
        # a streamed read: an ordinary row's line (offset, size, frame) and row (line, first event,
        # signed count) go straight into the compact tables' arrays
        self.add_line: Callable[[tuple[int, int, int]], None] = _no_table
        self.add_row: Callable[[tuple[int, int, int]], None] = _no_table
        self.settle: Callable[[], None] = _nothing  # a streamed read's tables keep what they staged compactly
        self.settle_at = sys.maxsize  # the line number from which they next do
        # the diagnostic of the last run of empty lines (its index), and the line after that run
        self.blank_at: int | None = None
        self.blank_next = 0

    def begin_stream(self, first: int, stop: int, head: Event) -> None:
        """The first row of a streamed read: the header is read, so the consumer begins; then it
        takes this row and every later one directly."""
        consumer, log = self.consumer, self.log
        assert consumer is not None and isinstance(log, StreamedLog), "stream_log began the read"
        consumer.begin(log)
        self.emit = consumer.row
        consumer.row(first, stop, head)

    def set_source(self, source: TextSource) -> None:
        """Where the lines' text is read back from (the file, or the frames' plaintext); a streamed
        read's compact lines hold it themselves, so the log never refers back to the reader."""
        self.source = source
        if isinstance(self.log, StreamedLog):
            self.log.lines.source = source

    def refuse(self, code: str, message: str, **where: Any) -> None:
        if self.log.refusal is None:
            self.log.refusal = Diagnostic(code, message, **where)

    def stop(self, hit: LimitHit) -> None:
        """Stop reading at a limit: nothing after ``hit`` enters the model."""
        log = self.log
        log.limit = hit
        log.diagnostics.append(Diagnostic(hit.code, hit.message, line=hit.line, frame=hit.frame, offset=hit.offset))
        self.fragment = []

    def allow_lines_through(self, compressed_end: int) -> None:
        """The plaintext fed next comes from the file's first ``compressed_end`` bytes:
        the line ratio allows the lines they may hold."""
        self.compressed_end = compressed_end
        self.max_lines = self.limits.lines_allowed(compressed_end)

    def _line_count_limit(self, number: int, frame: int | None, offset: int) -> None:
        self.line_number = number - 1
        self.stop(LimitHit("line-ratio", self.max_lines, number, True, number, frame, offset, self.compressed_end))

    def _unreadable_limit(self, number: int, frame: int | None, offset: int) -> bool:
        """Count an unreadable line; past the limit, stop reading at it (``True``)."""
        self.unreadable += 1
        if self.unreadable <= self.limits.unreadable_lines:
            return False
        self.line_number = number - 1
        self.stop(LimitHit("unreadable-lines", self.limits.unreadable_lines, self.unreadable, True, number, frame, offset))
        return True

    def _line_limit(self, size: int, exact: bool, frame: int | None, offset: int) -> None:
        limit = self.limits.line_bytes
        self.stop(LimitHit("line-bytes", limit, size, exact, self.line_number + 1, frame, offset))

    def feed(self, chunk: bytes | FileBytes, frame: int | None) -> None:
        """Consume plaintext; complete lines are processed, an unterminated end is kept.

        A large chunk goes through in blocks, so that no more than one block (and
        a line of at most ``line_bytes``) is ever copied at once.
        """
        if len(chunk) <= _BLOCK and chunk.__class__ is bytes:
            self._feed(chunk, frame)
            if self.line_number >= self.settle_at:
                self._settle()
            return
        for start in range(0, len(chunk), _BLOCK):
            if self.log.limit is not None:
                return
            self._feed(chunk[start : start + _BLOCK], frame)
            if self.line_number >= self.settle_at:
                self._settle()

    def _settle(self) -> None:
        """A streamed read's tables keep the lines and rows staged so far compactly, about once a batch."""
        self.settle()
        self.settle_at = self.line_number + _stream._BATCH

    def _feed(self, chunk: bytes, frame: int | None) -> None:
        if not chunk or self.log.limit is not None:
            return
        parts = chunk.split(b"\n")
        start = self.stream_offset
        self.stream_offset += len(chunk)
        joined = bool(self.fragment)
        if joined:
            size = self.fragment_size + len(parts[0])
            if size > self.limits.line_bytes:
                self._line_limit(size, len(parts) > 1, self.fragment_frame, self.fragment_offset)
                return
            self.fragment.append(parts[0])
            if len(parts) == 1:
                self.fragment_size = size
                return
            first = b"".join(self.fragment)
            first_frame, first_offset = self.fragment_frame, self.fragment_offset
            self.fragment = []
        else:
            first, first_frame, first_offset = parts[0], frame, start
        if len(parts) == 1:
            self._keep_fragment(first, first_frame, first_offset)
            return
        depth = self.limits.depth
        number = self.line_number + 1
        last = len(parts) - 1
        # One vetting pass over the whole chunk lets every line in it go straight to orjson, and
        # its lossy-number screen spares the checker reading the lines again.
        exact, suspect = screen_numbers(chunk)
        # a first line joined from earlier chunks is screened whole; any other lies inside this chunk
        first_exact, first_suspect = screen_numbers(first) if joined else (exact, suspect)
        if first_suspect:
            self.suspects.append(range(number, number + 1))
        if suspect and last > 1:
            self.suspects.append(range(number + 1, number + last))
        self._line(first, first_frame, first_offset, first_exact, False)
        offset = start + len(parts[0]) + 1
        line = self._line
        # One bracket count spares almost every chunk the per-line nesting pre-scan.
        shallow = chunk.count(b"[") + chunk.count(b"{") <= depth
        rest = iter(range(1, last))
        for i in rest:
            if self.log.limit is not None:
                return
            raw = parts[i]
            if raw:
                line(raw, frame, offset, exact, shallow)
                offset += len(raw) + 1
                continue
            # an empty line starts a run of newlines, every one of them an empty line of this chunk
            at = offset - start
            match = _NEWLINES.match(chunk, at)
            taken = self.blanks(match.end() - at if match is not None else 1, frame, offset)
            offset += taken
            if taken > 1:
                deque(islice(rest, taken - 1), maxlen=0)  # skip the run's other lines without a step each
        if parts[last] and self.log.limit is None:
            self._keep_fragment(parts[last], frame, offset)

    def _keep_fragment(self, raw: bytes, frame: int | None, offset: int) -> None:
        if len(raw) > self.limits.line_bytes:
            self._line_limit(len(raw), False, frame, offset)
            return
        self.fragment = [raw]
        self.fragment_size = len(raw)
        self.fragment_frame, self.fragment_offset = frame, offset

    def _within_limits(self, raw: bytes, frame: int | None, offset: int, shallow: bool) -> bool:
        """Whether a complete line may be parsed; if not, reading stops at it."""
        limits = self.limits
        if len(raw) > limits.line_bytes:
            self._line_limit(len(raw), True, frame, offset)
            return False
        if not shallow:
            depth = json_depth(raw, limits.depth)
            if depth > limits.depth:
                self.stop(LimitHit("depth", limits.depth, depth, False, self.line_number + 1, frame, offset))
                return False
        return True

    def _line(self, raw: bytes, frame: int | None, offset: int, exact: bool, shallow: bool) -> None:
        if (not shallow or len(raw) > self.line_bytes) and not self._within_limits(raw, frame, offset, shallow):
            return
        log = self.log
        self.line_number = number = self.line_number + 1
        end = offset + len(raw) + 1
        if number == 1:
            self._header(raw, frame, offset)
            self.committed_bytes = end
            return
        if number > self.max_lines:
            self._line_count_limit(number, frame, offset)
            return
        rows = log.rows
        row_index = number - 2  # every line after the header is one row, until a limit stops the read
        if not raw:
            if self._unreadable_limit(number, frame, offset):
                return
            self._record_blanks(number, 1, frame, offset)
            return
        if exact:
            try:
                value, error = orjson.loads(raw), None
            except orjson.JSONDecodeError:
                value, error = _parse(raw)
        else:
            value, error = _parse(raw)
        if error is not None and self._unreadable_limit(number, frame, offset):
            return
        emit = self.emit
        if emit is None or error is not None:
            log.lines.append(Line(number, None, value, error, True, frame, offset, len(raw), self.source))
        if error is not None:
            rows.append(Row(number, "not-json", MISSING, range(0), error, frame))
            log.diagnostics.append(Diagnostic("line.not-json", f"line is not JSON: {error}", line=number, frame=frame, offset=offset))
            self._unparsable(number)
            return
        tag = value.get("type") if type(value) is dict else None
        if type(tag) is str and tag in CHUNK_ROW_TYPES:
            try:
                count = validate_storage_row(value)
            except RowDecodeError as exc:
                if self._unreadable_limit(number, frame, offset):
                    if isinstance(log, SessionLog):
                        log.lines.pop()  # the line stays out of the model, as every line past a limit does
                    return
                if emit is not None:
                    log.lines.append(Line(number, None, value, None, True, frame, offset, len(raw), self.source))
                rows.append(Row(number, "malformed-packed", value, range(0), exc.message, frame))
                log.diagnostics.append(Diagnostic("row.malformed", exc.message, line=number, frame=frame, offset=offset))
                self._unparsable(number)
                return
            if emit is None:
                events = self.events
                members = [packed_head(value, number, row_index, frame),
                           *(PackedMember(value, k, number, row_index, frame) for k in range(1, count))]
                head = members[0]
                first_event = len(events)
                events.extend(members)
                rows.append(Row(number, "packed", value, range(first_event, first_event + count), None, frame))
            else:  # a streamed read: the events of this row alone, handed over below, built when read
                run = PackedRun(value, count, number, row_index, frame)
                head = run.built[0]
                streamed = self.streamed
                first_event = streamed.first = streamed.length
                streamed.row = run
                streamed.length = first_event + count
                self.add_line((offset, len(raw), -1 if frame is None else frame))
                self.add_row((number, first_event, -count))
            # Members are contiguous chunk events: the first one decides the scanner's verdict.
            self._scan_row(head.raw, number, end, count)
            if emit is not None:
                emit(first_event, first_event + count, head)
        elif emit is None:
            events = self.events
            first_event = len(events)
            events.append(Event(value, number, row_index, None, frame))
            rows.append(Row(number, "event", value, range(first_event, first_event + 1), None, frame))
            self._scan_row(value, number, end, 1)
        else:
            event = Event(value, number, row_index, None, frame)
            streamed = self.streamed
            first_event = streamed.first = streamed.length
            streamed.row = (event,)
            streamed.length = first_event + 1
            self.add_line((offset, len(raw), -1 if frame is None else frame))
            self.add_row((number, first_event, 1))
            # _scan_row's commonest verdict inline: the next seq of an intact committed region
            seq = value.get("seq") if value.__class__ is dict else None
            if seq.__class__ is int and seq == log.committed_events and self.issue is None and log.refusal is None:
                log.committed_events = seq + 1
                self.committed_bytes = end
            else:
                self._scan_row(value, number, end, 1)
            emit(first_event, first_event + 1, event)

    def blanks(self, run: int, frame: int | None, offset: int) -> int:
        """Read the ``run`` empty lines from ``offset`` on (all in ``frame``) at once, as :meth:`_line`
        reads each; return how many it read (at least one). The run stops short of a line at which a
        limit stops the read, and a first line is the header: :meth:`_line` reads either alone."""
        number = self.line_number + 1
        take = min(run, self.max_lines - number + 1, self.limits.unreadable_lines - self.unreadable)
        if number == 1 or take <= 0:
            self._line(b"", frame, offset, True, True)
            return 1
        self.unreadable += take
        self.line_number = number + take - 1
        self._record_blanks(number, take, frame, offset)
        return take

    def _record_blanks(self, number: int, count: int, frame: int | None, offset: int) -> None:
        """``count`` empty lines from line ``number`` on, each a line and an ``empty`` row: a run in a
        streamed read's tables. Adjacent runs share one ``line.empty`` diagnostic."""
        log = self.log
        if isinstance(log, StreamedLog):
            log.lines.add_blanks(offset, count, frame)
            log.rows.add_blanks(number, count)
        else:
            numbers = range(number, number + count)
            log.lines.extend([Line(n, "", MISSING, EMPTY_LINE, True, frame, offset + n - number) for n in numbers])
            log.rows.extend([Row(n, "empty", MISSING, range(0), EMPTY_LINE, frame) for n in numbers])
        diagnostics = log.diagnostics
        at = self.blank_at
        if at is not None and self.blank_next == number:
            first = diagnostics[at]
            assert first.line is not None, "a run's diagnostic names its first line"
            diagnostics[at] = _empty_lines(first.line, number + count - first.line, first.frame, first.offset)
        else:
            self.blank_at = len(diagnostics)
            diagnostics.append(_empty_lines(number, count, frame, offset))
        self.blank_next = number + count
        self._unparsable(number)

    def _header(self, raw: bytes, frame: int | None, offset: int) -> None:
        log = self.log
        value, error = _parse(raw)
        log.lines.append(Line(1, None, value, error, True, frame, offset, len(raw), self.source))
        log.header = SessionHeader(value, 1, frame)
        if error is not None:
            message = "corrupt session log: header line is not valid JSON"
            log.diagnostics.append(Diagnostic("header.not-json", f"{message} ({error})", line=1, frame=frame, offset=offset))
            self.refuse("header.not-json", message, line=1, frame=frame, offset=offset)
            return
        verdict = _header_refusal(value)
        if verdict is not None:
            code, message = verdict
            log.diagnostics.append(Diagnostic(code, message, line=1, frame=frame, offset=offset))
            self.refuse(code, message, line=1, frame=frame, offset=offset)

    def _unparsable(self, number: int) -> None:
        if self.issue is None:
            message = f"corrupt session log: unparsable committed event at line {number - 1}"
            self.issue = Diagnostic("scan.unparsable", message, line=number)
            self.log.diagnostics.append(self.issue)

    def _scan_row(self, event: Any, number: int, end: int, count: int) -> None:
        """``consumeEventLine`` for a row of ``count`` events whose first is ``event``.

        A packed row's members carry consecutive seqs and are never ``turn/end``,
        so its first member decides alone.
        """
        log = self.log
        if log.refusal is not None:
            return
        if self.issue is not None:
            self._closes_turn(event, number, self.issue)
            return
        if event is None:
            self._crash("seq", number)
            return
        expected = log.committed_events
        seq = event.get("seq", MISSING) if type(event) is dict else MISSING
        if not (_is_number(seq) and seq == expected):
            got = js_string(seq)
            message = f"corrupt session log: seq gap in committed region at line {number - 1} (expected {expected}, got {got})"
            self.issue = Diagnostic("scan.seq-gap", message, line=number, seq=expected)
            log.diagnostics.append(self.issue)
            self._closes_turn(event, number, self.issue)
            return
        log.committed_events = expected + count
        self.committed_bytes = end

    def _closes_turn(self, event: Any, number: int, issue: Diagnostic) -> None:
        if event is None:
            self._crash("type", number)
        elif type(event) is dict and event.get("type") == "turn/end":
            self.refuse(issue.code, issue.message, line=issue.line, seq=issue.seq)

    def _crash(self, key: str, number: int) -> None:
        # The official scanner reads `.seq` / `.type` of a `null` row and crashes with a TypeError.
        self.refuse("scan.null-row", f"Cannot read properties of null (reading '{key}')", line=number)

    def close_complete_frames(self, done: int | None) -> int:
        """Apply the check made after the last complete frame (SPJ:983-984); idempotent."""
        if done is not None:
            return done
        if self.fragment or self.committed_bytes != self.stream_offset:
            self.refuse("frame.torn-record", _ZSTD_PREFIX + "complete frame contains a torn JSONL record")
        self.torn_events_from = self.log.committed_events
        self.torn_lines_from = self.line_number
        return self.stream_offset

    def begin_torn(self, offset: int, frame: int) -> None:
        self.torn_start, self.torn_frame = offset, frame

    def _flush_fragment(self) -> None:
        if not self.fragment:
            return
        raw = b"".join(self.fragment)
        self.fragment = []
        frame, offset = self.fragment_frame, self.fragment_offset
        if not self._within_limits(raw, frame, offset, False):
            return
        self.line_number += 1
        number = self.line_number
        if may_hold_lossy_number(raw):
            self.suspects.append(range(number, number + 1))
        value, error = _parse(raw)
        self.log.lines.append(Line(number, None, value, error, False, frame, offset, len(raw), self.source))
        self.log.diagnostics.append(
            Diagnostic("line.torn", "final line has no newline (a torn record)", line=number, frame=frame, offset=offset)
        )
        if number == 1:
            self.log.header = SessionHeader(value, 1, frame)

    def finish_plain(self) -> None:
        log = self.log
        if log.limit is not None:
            return
        if self.line_number == 0:
            self.refuse("log.empty", "empty or header-less session log", offset=0)
        torn_line = self.line_number + 1 if self.fragment else None
        self._flush_fragment()
        if log.refusal is None and self.committed_bytes < log.size:
            first_uncommitted = self.issue.line if self.issue is not None else torn_line
            log.torn = TornTail(self.committed_bytes, 0, 0, None, first_uncommitted)
        if log.refusal is not None:
            log.committed_events = 0

    def finish_zstd(self) -> None:
        log = self.log
        if log.limit is not None:
            return
        self._flush_fragment()
        if log.refusal is not None:
            log.committed_events = 0
            return
        if self.torn_start is not None:
            recovered_events = log.committed_events - self.torn_events_from
            log.torn = TornTail(
                self.torn_start, self.torn_lines, recovered_events, self.torn_frame, self.torn_lines_from + 1
            )
