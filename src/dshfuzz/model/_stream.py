"""The containers of a streamed read (:func:`~dshfuzz.model.stream_log`): the reader hands
each row's events to a consumer as it reads them and keeps of the physical layer only
what costs a few bytes a line, so the read costs what its consumer keeps, not the log.

- :class:`StreamedEvents` stands for ``SessionLog.events``: it counts the events read and
  holds those of the row being handed over, nothing else.
- :class:`CompactLines` stands for ``SessionLog.lines``: 4 bytes a line (its size; offsets and
  frames follow from the sizes and the runs of lines in one frame); a line that did not parse,
  is not terminated, or is the header is kept whole. An ordinary line comes back as a
  :class:`Line` whose text is read again from the source and whose ``value`` is
  :data:`MISSING` (its parsed value went to the consumer).
- :class:`CompactRows` stands for ``SessionLog.rows``: 4 bytes a row (its signed count; its line
  and first event follow); a row that did not decode is kept whole (with its value).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, groupby
from typing import Any, Protocol

from ._types import MISSING, Event, Frame, FrameStatus, Line, Row, RowKind, SessionLog, TextSource

__all__ = ["CompactFrames", "CompactLines", "CompactRows", "RowConsumer", "StreamedEvents"]


class RowConsumer(Protocol):
    """What a streamed read hands its events to: ``begin(log)`` once the header line is read
    (before the first row; at the end of the read when no row holds an event), then
    ``row(first, stop, head)`` for each row that holds events, once its events are
    ``log.events[first:stop]`` (readable until the next row); ``head`` is the first of them.
    ``row`` is looked up once, after ``begin``."""

    def begin(self, log: SessionLog) -> None: ...

    def row(self, first: int, stop: int, head: Event) -> None: ...


class StreamedEvents(Sequence[Event]):
    """``SessionLog.events`` of a streamed read: ``len`` is the number of events read so far,
    and only the events of the row being handed over can be read; any other position raises
    ``LookupError`` naming it (a consumer that needs an event later keeps it)."""

    __slots__ = ("count", "first", "row")

    def __init__(self) -> None:
        self.count = 0
        self.first = 0
        self.row: Sequence[Event] = ()

    def append(self, event: Event) -> None:
        self.first = self.count
        self.row = (event,)
        self.count += 1

    def extend(self, events: Sequence[Event]) -> None:
        self.first = self.count
        self.row = events
        self.count += len(events)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is int:
            k = index - self.first
            if 0 <= k < len(self.row):
                return self.row[k]
        raise LookupError(
            f"a streamed read keeps only the row being handed over (events {self.first}..{self.first + len(self.row) - 1}), "
            f"not event {index!r}"
        )

    def __iter__(self) -> Iterator[Event]:
        raise LookupError("a streamed read keeps no events to iterate over")

    def __repr__(self) -> str:
        return f"StreamedEvents(count={self.count}, row={self.first}..{self.first + len(self.row) - 1})"


_BATCH = 4096
"""Lines (and rows) settle in batches of this many: a batch's first offset (first event) is kept,
and any other is the sum of the sizes (counts) before it in the batch."""


class CompactLines(Sequence[Line]):
    """``SessionLog.lines`` of a streamed read: 4 bytes a line. A line's offset, size and frame are
    staged (``staged``, three cells to a line, as the reader extends it) until :meth:`settle` keeps
    of each whole batch only the sizes: lines are contiguous in the text they are read from, so an
    offset is its batch's first offset plus the sizes before it, and the frames are kept as runs.
    A batch that breaks either rule stays as it was staged (``loose``). A line that did not parse,
    is not terminated, or is the header is kept whole. An ordinary line comes back as a
    :class:`Line` whose text is read again from ``source`` (the file, or the frames decoded again;
    the reader sets it before the first line) and whose ``value`` is :data:`MISSING`."""

    __slots__ = ("staged", "settled", "sizes", "marks", "loose", "run_frames", "run_firsts", "whole", "source")

    def __init__(self, source: TextSource = b"") -> None:
        self.staged = array("q")
        self.settled = 0
        self.sizes = array("I")
        self.marks = array("q")
        self.loose: dict[int, array[int]] = {}
        self.run_frames = array("q")  # the frame of each run of settled lines in one frame
        self.run_firsts = array("q")  # and the run's first line number
        self.whole: dict[int, Line] = {}
        self.source = source

    def append(self, line: Line) -> None:
        self.staged.extend((-1 if line.offset is None else line.offset, line.size, -1 if line.frame is None else line.frame))
        number = self.settled + len(self.staged) // 3
        if line.error is not None or not line.terminated or line.number == 1 or line.number != number:
            self.whole[number] = line

    def settle(self) -> None:
        """Keep the whole batches staged so far compactly."""
        staged = self.staged
        while len(staged) >= 3 * _BATCH:
            batch = staged[: 3 * _BATCH]
            del staged[: 3 * _BATCH]
            offsets, sizes, frames = batch[0::3], batch[1::3], batch[2::3]
            first = self.settled + 1
            self.settled += _BATCH
            self._note_frames(frames, first)
            starts = array("q", accumulate(map(_ONE.__add__, sizes[:-1]), initial=offsets[0]))
            try:
                compact = array("I", sizes) if starts == offsets else None
            except OverflowError:
                compact = None
            if compact is None:
                self.loose[len(self.marks)] = batch
                self.marks.append(-1)
                compact = array("I", bytes(4 * _BATCH))  # keeps every later batch at its place
            else:
                self.marks.append(offsets[0])
            self.sizes.extend(compact)

    def _note_frames(self, frames: array[int], first: int) -> None:
        run_frames, run_firsts = self.run_frames, self.run_firsts
        for frame, run in groupby(frames):
            if not run_frames or run_frames[-1] != frame:
                run_frames.append(frame)
                run_firsts.append(first)
            first += sum(1 for _ in run)

    def __len__(self) -> int:
        return self.settled + len(self.staged) // 3

    def cells(self, index: int) -> tuple[int, int, int]:
        """Offset, size and frame of the line at ``index`` (-1 for no offset or no frame)."""
        settled = self.settled
        if index >= settled:
            k = 3 * (index - settled)
            return self.staged[k], self.staged[k + 1], self.staged[k + 2]
        batch, at = divmod(index, _BATCH)
        loose = self.loose.get(batch)
        if loose is not None:
            return loose[3 * at], loose[3 * at + 1], loose[3 * at + 2]
        start = index - at
        sizes = self.sizes
        return self.marks[batch] + sum(sizes[start:index]) + at, sizes[index], self._frame(index + 1)

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("line index out of range")
        number = index + 1
        kept = self.whole.get(number)
        if kept is not None:
            return kept
        offset, size, frame = self.cells(index)
        return Line(number, None, MISSING, None, True, None if frame < 0 else frame, offset, size, self.source)

    def __iter__(self) -> Iterator[Line]:
        return (self[i] for i in range(len(self)))

    def frame_of(self, number: int) -> int | None:
        """The frame line ``number`` starts in (``None`` for a plain log)."""
        frame = self._frame(number)
        return None if frame < 0 else frame

    def _frame(self, number: int) -> int:
        if number > self.settled:
            return self.staged[3 * (number - self.settled) - 1]
        return self.run_frames[bisect_right(self.run_firsts, number) - 1]

    def frame_spans(self) -> Iterator[tuple[int, int, int]]:
        """``(frame, first line, last line)`` for each run of lines that start in one frame."""
        runs = [(frame, self.run_firsts[i]) for i, frame in enumerate(self.run_frames)]
        number = self.settled + 1
        for frame, run in groupby(self.staged[2::3]):
            if not runs or runs[-1][0] != frame:
                runs.append((frame, number))
            number += sum(1 for _ in run)
        for i, (frame, first) in enumerate(runs):
            if frame >= 0:
                yield frame, first, (runs[i + 1][1] if i + 1 < len(runs) else number) - 1


_ONE = 1
_KINDS: tuple[RowKind, ...] = ("event", "packed")


class CompactRows(Sequence[Row]):
    """``SessionLog.rows`` of a streamed read: 4 bytes a row. A row's line, first event and signed
    count are staged (``staged``, three cells to a row: a packed row's count is minus its member
    count, so one number says kind and size; its frame is its line's, in ``lines``) until
    :meth:`settle` keeps of each whole batch only the counts: row ``i`` is line ``i + 2`` and the
    events are contiguous, so a first event is its batch's first plus the counts before it. A
    batch that breaks either rule stays as it was staged (``loose``). An event or packed row comes
    back without its ``value`` (:data:`MISSING`: its parsed value went to the consumer); a row of
    any other kind is kept whole."""

    __slots__ = ("staged", "settled", "counts", "marks", "loose", "whole", "lines", "events")

    def __init__(self, lines: CompactLines) -> None:
        self.staged = array("q")
        self.settled = 0
        self.counts = array("i")
        self.marks = array("q")
        self.loose: dict[int, array[int]] = {}
        self.whole: dict[int, Row] = {}
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
        """Keep the whole batches staged so far compactly, and the lines'."""
        self.lines.settle()
        staged = self.staged
        while len(staged) >= 3 * _BATCH:
            batch = staged[: 3 * _BATCH]
            del staged[: 3 * _BATCH]
            numbers, firsts, counts = batch[0::3], batch[1::3], batch[2::3]
            line = self.settled + 2
            self.settled += _BATCH
            starts = array("q", accumulate(map(abs, counts[:-1]), initial=firsts[0]))
            self.events = firsts[-1] + abs(counts[-1])
            try:
                regular = starts == firsts and numbers == array("q", range(line, line + _BATCH))
                compact = array("i", counts) if regular else None
            except OverflowError:
                compact = None
            if compact is None:
                self.loose[len(self.marks)] = batch
                self.marks.append(-1)
                compact = array("i", bytes(4 * _BATCH))  # keeps every later batch at its place
            else:
                self.marks.append(firsts[0])
            self.counts.extend(compact)

    @property
    def irregular(self) -> dict[int, Row]:
        """The rows kept whole (kinds other than event and packed), by index."""
        return self.whole

    def __len__(self) -> int:
        return self.settled + len(self.staged) // 3

    def cells(self, index: int) -> tuple[int, int, int]:
        """Line, first event and signed count of the row at ``index``."""
        settled = self.settled
        if index >= settled:
            k = 3 * (index - settled)
            return self.staged[k], self.staged[k + 1], self.staged[k + 2]
        batch, at = divmod(index, _BATCH)
        loose = self.loose.get(batch)
        if loose is not None:
            return loose[3 * at], loose[3 * at + 1], loose[3 * at + 2]
        counts = self.counts
        return index + 2, self.marks[batch] + sum(map(abs, counts[index - at : index])), counts[index]

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("row index out of range")
        kept = self.whole.get(index)
        if kept is not None:
            return kept
        number, first, count = self.cells(index)
        kind: RowKind = "packed" if count < 0 else "event"
        return Row(number, kind, MISSING, range(first, first + abs(count)), None, self.lines.frame_of(number))

    def __iter__(self) -> Iterator[Row]:
        return (self[i] for i in range(len(self)))


_STATUSES: tuple[FrameStatus, ...] = ("complete", "torn", "corrupt", "skippable", "not-record-aligned", "over-limit")
_STATUS_CODES = {status: code for code, status in enumerate(_STATUSES)}


class CompactFrames(Sequence[Frame]):
    """``SessionLog.frames`` of a streamed read: about 40 bytes a frame. The frame being read is
    kept as it is (``current``: the reader still sets its status, error and lines); appending the
    next one keeps that one's offset, size, declared size, checksum flag, status, block types (one
    table entry per distinct sequence) and lines in arrays, and its error, if any, by index. A
    frame before the last comes back as a new :class:`Frame` slicing the same ``source``."""

    __slots__ = ("cells", "block_tables", "block_ids", "errors", "current", "source")

    def __init__(self, source: TextSource = b"") -> None:
        # offset, size, declared size (-1: none), checksum flag + 2 * status, first line, last line + 1
        self.cells = array("q")
        self.block_tables: list[tuple[str, ...]] = []
        self.block_ids: dict[tuple[str, ...], int] = {}
        self.errors: dict[int, str] = {}
        self.current: Frame | None = None
        self.source = source

    def append(self, frame: Frame) -> None:
        self._keep()
        self.current = frame

    def _keep(self) -> None:
        frame, self.current = self.current, None
        if frame is None:
            return
        ids = self.block_ids
        block = ids.get(frame.block_types)
        if block is None:
            block = ids[frame.block_types] = len(self.block_tables)
            self.block_tables.append(frame.block_types)
        lines = frame.lines
        flags = int(frame.has_checksum) + 2 * _STATUS_CODES[frame.status] + 16 * block
        self.cells.extend((frame.offset, frame.size, -1 if frame.content_size is None else frame.content_size,
                           flags, lines.start, lines.stop))
        if frame.error is not None:
            self.errors[frame.index] = frame.error

    def set_lines(self, index: int, lines: range) -> None:
        """The lines that start in frame ``index`` (found once the read is over)."""
        if self.current is not None and index == self.current.index:
            self.current.lines = lines
        else:
            self.cells[6 * index + 4 : 6 * index + 6] = array("q", (lines.start, lines.stop))

    def __len__(self) -> int:
        return len(self.cells) // 6 + (self.current is not None)

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("frame index out of range")
        if self.current is not None and index == n - 1:
            return self.current
        offset, size, declared, flags, first, stop = self.cells[6 * index : 6 * index + 6]
        return Frame(
            index, offset, size, _STATUSES[(flags >> 1) & 7], None if declared < 0 else declared, bool(flags & 1),
            self.block_tables[flags >> 4], range(first, stop), self.errors.get(index), self.source,
        )

    def __iter__(self) -> Iterator[Frame]:
        return (self[i] for i in range(len(self)))
