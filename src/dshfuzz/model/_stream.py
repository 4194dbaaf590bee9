"""The log of a streamed read (:func:`~dshfuzz.model.stream_log`), :class:`StreamedLog`, and its
containers: the reader hands each row's events to a consumer as it reads them and keeps of the
physical layer only what costs a few bytes a line, so the read costs what its consumer keeps,
not the log.

- :class:`StreamedEvents` is ``StreamedLog.events``: it counts the events read and
  holds those of the row being handed over, nothing else.
- :class:`CompactLines` is ``StreamedLog.lines``: 8 bytes a line (its size and frame;
  offsets follow from the sizes); a line that did not parse,
  is not terminated, or is the header is kept whole. An ordinary line comes back as a
  :class:`Line` whose text is read again from the source and whose ``value`` is
  :data:`MISSING` (its parsed value went to the consumer).
- :class:`CompactRows` is ``StreamedLog.rows``: 4 bytes a row (its signed count; its line
  and first event follow); a row that did not decode is kept whole (with its value).
- A run of empty lines (and their ``empty`` rows), which a hostile log may hold by the ten
  thousand, is one record in each table (:meth:`CompactLines.add_blanks`,
  :meth:`CompactRows.add_blanks`): its cells are staged in bulk, and its lines and rows are
  built only when read, so the reader and the rules that read it pay per run, not per line.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, groupby
from typing import Any, Protocol, TypeVar

from dshfuzz.contracts import MISSING

from ._limits import LimitHit
from ._types import Compression, Diagnostic, Event, Frame, JsonValue, Line, Row, RowKind, SessionHeader, TextSource, TornTail

__all__ = ["CompactFrames", "CompactLines", "CompactRows", "RowConsumer", "StreamedEvents", "StreamedLog"]


class RowConsumer(Protocol):
    """What a streamed read hands its events to: ``begin(log)`` once the header line is read
    (before the first row; at the end of the read when no row holds an event), then
    ``row(first, stop, head)`` for each row that holds events, once its events are
    ``log.events[first:stop]`` (readable until the next row); ``head`` is the first of them.
    ``row`` is looked up once, after ``begin``."""

    def begin(self, log: StreamedLog) -> None: ...

    def row(self, first: int, stop: int, head: Event) -> None: ...


class StreamedEvents(Sequence[Event]):
    """``StreamedLog.events``: ``len`` is the number of events read so far,
    and only the events of the row being handed over can be read, one at a time or as a slice
    (step 1) within the row; any other position raises ``LookupError`` naming it (a consumer
    that needs an event later keeps it)."""

    __slots__ = ("length", "first", "row")

    def __init__(self) -> None:
        self.length = 0
        self.first = 0
        self.row: Sequence[Event] = ()

    def append(self, event: Event) -> None:
        self.first = self.length
        self.row = (event,)
        self.length += 1

    def extend(self, events: Sequence[Event]) -> None:
        self.first = self.length
        self.row = events
        self.length += len(events)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is int:
            k = index - self.first
            if 0 <= k < len(self.row):
                return self.row[k]
        elif index.__class__ is slice:
            start, stop, step = index.indices(self.length)
            if step == 1 and self.first <= start <= stop <= self.first + len(self.row):
                return self.row[start - self.first : stop - self.first]
        raise LookupError(
            f"a streamed read keeps only the row being handed over (events {self.first}..{self.first + len(self.row) - 1}), "
            f"not event {index!r}"
        )

    def __iter__(self) -> Iterator[Event]:
        raise LookupError("a streamed read keeps no events to iterate over")

    def __repr__(self) -> str:
        return f"StreamedEvents(count={self.length}, row={self.first}..{self.first + len(self.row) - 1})"


_T = TypeVar("_T")
EMPTY_LINE = "empty line"
"""The error of an empty line and its row."""
_BATCH = 4096
"""Lines (and rows) settle in batches of this many: a batch's first offset (first event) is kept,
and any other is the sum of the sizes (counts) before it in the batch."""


class _Indexed(Sequence[_T]):
    """Indexing shared by the compact tables: a slice is a list, a negative index counts from the
    end, and :meth:`_entry` builds the entry at a valid index."""

    __slots__ = ()
    what = "entry"

    def _entry(self, index: int) -> _T:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"{self.what} index out of range")
        return self._entry(index)

    def __iter__(self) -> Iterator[_T]:
        return (self._entry(i) for i in range(len(self)))


class _Staged(_Indexed[_T]):
    """A table of three cells an entry: staged as the reader writes them (``staged``), then kept
    compactly a batch of :data:`_BATCH` entries at a time by :meth:`settle` (``marks`` holds each
    batch's first offset or event, or -1 for a batch that did not fit its rule and stays as staged
    in ``loose``). Entries that are not ordinary are also kept whole (``whole``, by index), but
    for runs of blank entries (empty lines, their rows): staged like any other, and recorded as
    one run each (``blank_starts``, ``blank_counts``), whose entries are built when read."""

    __slots__ = ("staged", "settled", "marks", "loose", "whole", "blank_starts", "blank_counts")

    def __init__(self) -> None:
        self.staged = array("q")
        self.settled = 0
        self.marks = array("q")
        self.loose: dict[int, array[int]] = {}
        self.whole: dict[int, _T] = {}
        # runs of empty lines or rows: the index of each run's first entry, and its length
        self.blank_starts = array("q")
        self.blank_counts = array("q")

    def _stage_blanks(self, count: int, first: int, step: int, second: int, third: int) -> None:
        """Stage ``count`` entries at once, the first cell running from ``first`` by ``step`` and the
        others constant, as one run of blank entries (built by :meth:`_blank` when read)."""
        cells = array("q", (0, second, third)) * count
        cells[0::3] = array("q", range(first, first + step * count, step)) if step else array("q", (first,)) * count
        self.blank_starts.append(len(self))
        self.blank_counts.append(count)
        self.staged.extend(cells)

    def _blank(self, index: int, a: int, b: int, c: int) -> _T:
        """The blank entry at ``index`` from its cells."""
        raise NotImplementedError

    def _in_blank_run(self, index: int) -> bool:
        starts = self.blank_starts
        i = bisect_right(starts, index) - 1
        return i >= 0 and index < starts[i] + self.blank_counts[i]

    def settle(self) -> None:
        """Keep the whole batches staged so far compactly."""
        staged = self.staged
        while len(staged) >= 3 * _BATCH:
            batch = staged[: 3 * _BATCH]
            del staged[: 3 * _BATCH]
            first = self.settled
            self.settled += _BATCH
            try:
                mark = self._compact(batch, first)
            except OverflowError:
                mark = None
            if mark is None:
                self.loose[len(self.marks)] = batch
                self.marks.append(-1)
                self._pad()
            else:
                self.marks.append(mark)

    def _compact(self, batch: array[int], first: int) -> int | None:
        """Keep ``batch`` (entries ``first`` on) compactly and return its mark, or ``None`` (nothing kept)."""
        raise NotImplementedError

    def _pad(self) -> None:
        """Keep a loose batch's place in the compact arrays."""
        raise NotImplementedError

    def _settled(self, index: int, batch: int, at: int) -> tuple[int, int, int]:
        raise NotImplementedError

    def _build(self, index: int, a: int, b: int, c: int) -> _T:
        raise NotImplementedError

    def cells(self, index: int) -> tuple[int, int, int]:
        """The three cells of the entry at ``index``, as staged."""
        settled = self.settled
        if index >= settled:
            k = 3 * (index - settled)
            return self.staged[k], self.staged[k + 1], self.staged[k + 2]
        batch, at = divmod(index, _BATCH)
        loose = self.loose.get(batch)
        if loose is not None:
            return loose[3 * at], loose[3 * at + 1], loose[3 * at + 2]
        return self._settled(index, batch, at)

    def __len__(self) -> int:
        return self.settled + len(self.staged) // 3

    def _entry(self, index: int) -> _T:
        kept = self.whole.get(index)
        if kept is not None:
            return kept
        if self.blank_starts and self._in_blank_run(index):
            return self._blank(index, *self.cells(index))
        return self._build(index, *self.cells(index))

    def blank_runs(self) -> Iterator[tuple[int, int]]:
        """``(first index, count)`` of each run of blank entries, in order."""
        return zip(self.blank_starts, self.blank_counts)


class CompactLines(_Staged[Line]):
    """``StreamedLog.lines``: 8 bytes a line. A line's offset, size and frame are
    staged (three cells, as the reader extends ``staged``) until :meth:`settle` keeps of each whole
    batch only the sizes and frames: lines are contiguous in the text they are read from, so an
    offset is its batch's first offset plus the sizes before it (the reader stages them end to end,
    and a sum over the batch is the tripwire for one that is not: it stays loose, as do sizes or
    frames beyond 32 bits). A line that did not parse, is not terminated, or is the header is kept
    whole; a run of empty lines is one record (:meth:`add_blanks`). An ordinary line comes back as a :class:`Line` whose text is read again from ``source``
    (the file, or the frames decoded again; the reader sets it before the first line) and whose
    ``value`` is :data:`MISSING`."""

    __slots__ = ("sizes", "frames", "source")
    what = "line"

    def __init__(self, source: TextSource = b"") -> None:
        super().__init__()
        self.sizes = array("I")
        self.frames = array("i")
        self.source = source

    def append(self, line: Line) -> None:
        self.staged.extend((-1 if line.offset is None else line.offset, line.size, -1 if line.frame is None else line.frame))
        index = len(self) - 1
        if line.error is not None or not line.terminated or line.number == 1 or line.number != index + 1:
            self.whole[index] = line

    def _compact(self, batch: array[int], first: int) -> int | None:
        sizes = batch[1::3]
        start, last = batch[0], batch[-3]
        if start < 0 or last - start != sum(sizes) - sizes[-1] + _BATCH - 1:
            return None
        compact, frames = array("I", sizes), array("i", batch[2::3])
        self.sizes.extend(compact)
        self.frames.extend(frames)
        return start

    def _pad(self) -> None:
        self.sizes.frombytes(bytes(4 * _BATCH))
        self.frames.frombytes(bytes(4 * _BATCH))

    def _settled(self, index: int, batch: int, at: int) -> tuple[int, int, int]:
        sizes = self.sizes
        return self.marks[batch] + sum(sizes[index - at : index]) + at, sizes[index], self.frames[index]

    def _build(self, index: int, offset: int, size: int, frame: int) -> Line:
        return Line(index + 1, None, MISSING, None, True, None if frame < 0 else frame, offset, size, self.source)

    def add_blanks(self, offset: int, count: int, frame: int | None) -> None:
        """Append ``count`` empty lines, the first at ``offset``, all starting in ``frame``: one
        run, whose lines are built when read (each as the reader builds an empty line)."""
        self._stage_blanks(count, offset, 1, 0, -1 if frame is None else frame)

    def _blank(self, index: int, offset: int, size: int, frame: int) -> Line:
        return Line(index + 1, "", MISSING, EMPTY_LINE, True, None if frame < 0 else frame, offset)

    def frame_of(self, number: int) -> int | None:
        """The frame line ``number`` starts in (``None`` for a plain log)."""
        frame = self.cells(number - 1)[2]
        return None if frame < 0 else frame

    def frame_spans(self) -> Iterator[tuple[int, int, int]]:
        """``(frame, first line, last line)`` for each run of lines that start in one frame."""
        loose = self.loose
        settled = (self.frames if not loose else
                   (loose[i // _BATCH][3 * (i % _BATCH) + 2] if i // _BATCH in loose else self.frames[i] for i in range(self.settled)))
        number = 1
        for frame, run in groupby(chain(settled, self.staged[2::3])):
            count = sum(1 for _ in run)
            if frame >= 0:
                yield frame, number, number + count - 1
            number += count


class CompactRows(_Staged[Row]):
    """``StreamedLog.rows``: 4 bytes a row. A row's line, first event and signed
    count are staged (three cells: a packed row's count is minus its member count, so one number
    says kind and size; its frame is its line's, in ``lines``) until :meth:`settle` keeps of each
    whole batch only the counts: row ``i`` is line ``i + 2`` and the events follow on, so a first
    event is its batch's first plus the counts before it (sums over the batch are the tripwire
    for one that does not: it stays loose). An event or packed row comes back without its
    ``value`` (:data:`MISSING`: its parsed value went to the consumer); a row of any other kind
    is kept whole, but for the rows of a run of empty lines: one record (:meth:`add_blanks`).
    :meth:`settle` settles the lines too."""

    __slots__ = ("counts", "lines", "events")
    what = "row"

    def __init__(self, lines: CompactLines) -> None:
        super().__init__()
        self.counts = array("i")
        self.lines = lines
        self.events = 0  # the events of the settled rows

    def append(self, row: Row) -> None:
        staged = self.staged
        # a row kept whole holds its events at the next position, for the batch to stay contiguous
        first = staged[-2] + abs(staged[-1]) if staged else self.events
        events = row.events
        count = len(events)
        staged.extend((row.line, events.start if count else first, -count if row.kind == "packed" else count))
        self.whole[len(self) - 1] = row

    def settle(self) -> None:
        self.lines.settle()
        super().settle()

    def _compact(self, batch: array[int], first: int) -> int | None:
        counts = batch[2::3]
        line = first + 2
        start, last = batch[1], batch[-2]
        self.events = last + abs(counts[-1])
        if not (batch[0] == line and batch[-3] == line + _BATCH - 1
                and sum(batch[0::3]) == _BATCH * line + _BATCH * (_BATCH - 1) // 2
                and last - start == sum(map(abs, counts)) - abs(counts[-1])):
            return None
        self.counts.extend(array("i", counts))
        return start

    def _pad(self) -> None:
        self.counts.frombytes(bytes(4 * _BATCH))

    def _settled(self, index: int, batch: int, at: int) -> tuple[int, int, int]:
        counts = self.counts
        return index + 2, self.marks[batch] + sum(map(abs, counts[index - at : index])), counts[index]

    def _build(self, index: int, number: int, first: int, count: int) -> Row:
        kind: RowKind = "packed" if count < 0 else "event"
        return Row(number, kind, MISSING, range(first, first + abs(count)), None, self.lines.frame_of(number))

    def add_blanks(self, number: int, count: int) -> None:
        """Append the ``empty`` rows of ``count`` empty lines from line ``number`` on: one run,
        whose rows are built when read (each as the reader builds an empty line's row)."""
        staged = self.staged
        self._stage_blanks(count, number, 1, staged[-2] + abs(staged[-1]) if staged else self.events, 0)

    def _blank(self, index: int, number: int, first: int, count: int) -> Row:
        return Row(number, "empty", MISSING, range(0), EMPTY_LINE, self.lines.frame_of(number))

    @property
    def irregular(self) -> dict[int, Row]:
        """The rows kept whole (kinds other than event and packed, but for the runs of empty
        rows: :meth:`blank_runs`), by index."""
        return self.whole


MAX_CELL = 2**63 - 1
"""The largest value an int64 table cell holds."""
_NO_CELLS = (0,) * 6


class CompactFrames(_Indexed[Frame]):
    """``StreamedLog.frames``: about 48 bytes a frame. The frame being read is
    kept as it is (``current``: the reader still sets its status, error and lines); appending the
    next one keeps that one, if complete, as its offset, size, declared size, checksum flag, block
    types (one table entry per distinct sequence) and lines in arrays, and otherwise whole
    (:attr:`irregular`). A complete frame before the last comes back as a new :class:`Frame`
    slicing the same ``source``."""

    __slots__ = ("cells", "block_tables", "block_ids", "whole", "current", "source")
    what = "frame"

    def __init__(self, source: TextSource = b"") -> None:
        # offset, size, declared size (-1: none), checksum flag + 16 * block types, first line, last line + 1
        self.cells = array("q")
        self.block_tables: list[tuple[str, ...]] = []
        self.block_ids: dict[tuple[str, ...], int] = {}
        self.whole: dict[int, Frame] = {}
        self.current: Frame | None = None
        self.source = source

    def append(self, frame: Frame) -> None:
        self._keep()
        self.current = frame

    def _keep(self) -> None:
        frame, self.current = self.current, None
        if frame is None:
            return
        declared = -1 if frame.content_size is None else frame.content_size
        # a frame header may declare up to 2**64 - 1 bytes, beyond a cell
        if frame.status != "complete" or frame.error is not None or declared > MAX_CELL:
            self.whole[frame.index] = frame
            self.cells.extend(_NO_CELLS)
            return
        ids = self.block_ids
        block = ids.get(frame.block_types)
        if block is None:
            block = ids[frame.block_types] = len(self.block_tables)
            self.block_tables.append(frame.block_types)
        lines = frame.lines
        self.cells.extend((frame.offset, frame.size, declared, int(frame.has_checksum) + 16 * block, lines.start, lines.stop))

    def set_lines(self, index: int, lines: range) -> None:
        """The lines that start in frame ``index`` (found once the read is over)."""
        kept = self.current if self.current is not None and index == self.current.index else self.whole.get(index)
        if kept is not None:
            kept.lines = lines
        else:
            cells = self.cells
            cells[6 * index + 4] = lines.start
            cells[6 * index + 5] = lines.stop

    def __len__(self) -> int:
        return len(self.cells) // 6 + (self.current is not None)

    def _entry(self, index: int) -> Frame:
        if self.current is not None and index == len(self) - 1:
            return self.current
        kept = self.whole.get(index)
        if kept is not None:
            return kept
        offset, size, declared, flags, first, stop = self.cells[6 * index : 6 * index + 6]
        return Frame(
            index, offset, size, "complete", None if declared < 0 else declared, bool(flags & 1),
            self.block_tables[flags >> 4], range(first, stop), None, self.source,
        )

    @property
    def irregular(self) -> dict[int, Frame]:
        """The frames before the last kept whole, by index: every frame whose status is not
        ``complete`` (or that has an error, or declares a size beyond 63 bits)."""
        return self.whole


@dataclass(slots=True)
class StreamedLog:
    """The log of a streamed read: what a :class:`~dshfuzz.model.SessionLog` says of the same
    bytes, except the events. ``events`` counts them and holds only the row being handed over
    (iterating it raises ``LookupError``); ``lines``, ``rows`` and ``frames`` are the compact
    tables, whose entries equal the whole model's except that an ordinary line's or row's
    ``value`` is :data:`MISSING` (it went to the consumer). Every other field means what it
    means on :class:`~dshfuzz.model.SessionLog`. A streamed log is not iterable: its events
    are gone."""

    header: SessionHeader | None
    events: StreamedEvents
    lines: CompactLines
    rows: CompactRows
    frames: CompactFrames
    diagnostics: list[Diagnostic] = field(default_factory=list)
    torn: TornTail | None = None
    compression: Compression = "none"
    path: str | None = None
    size: int = 0
    refusal: Diagnostic | None = None
    committed_events: int = 0
    limit: LimitHit | None = None
    lossy_suspects: list[range] | None = None

    @classmethod
    def empty(cls, compression: Compression, path: str | None, size: int) -> StreamedLog:
        """A log with no line read yet, its tables empty."""
        lines = CompactLines()
        return cls(None, StreamedEvents(), lines, CompactRows(lines), CompactFrames(),
                   compression=compression, path=path, size=size, lossy_suspects=[])

    @property
    def format_version(self) -> JsonValue:
        return self.header.version if self.header is not None else MISSING

    def __len__(self) -> int:
        return len(self.events)
