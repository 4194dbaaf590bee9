"""The containers of a streamed read (:func:`~dshfuzz.model.stream_log`): the reader hands
each row's events to a consumer as it reads them and keeps of the physical layer only
what costs a few bytes a line, so the read costs what its consumer keeps, not the log.

- :class:`StreamedEvents` stands for ``SessionLog.events``: it counts the events read and
  holds those of the row being handed over, nothing else.
- :class:`CompactLines` stands for ``SessionLog.lines``: every line's offset, size and frame
  in arrays; a line that did not parse, is not terminated, or is the header is kept whole.
  An ordinary line comes back as a :class:`Line` whose text is read again from the source
  and whose ``value`` is :data:`MISSING` (its parsed value went to the consumer).
- :class:`CompactRows` stands for ``SessionLog.rows``: every row's line, kind, events and
  frame in arrays; a row that did not decode is kept whole (with its value).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import groupby
from typing import Any, Protocol

from ._types import MISSING, Event, Line, Row, RowKind, SessionLog, TextSource

__all__ = ["CompactLines", "CompactRows", "RowConsumer", "StreamedEvents"]


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


class CompactLines(Sequence[Line]):
    """``SessionLog.lines`` of a streamed read: 16 bytes a line. ``source`` gives the text of
    a line back (the file, or the frames decoded again); the reader sets it before the first line."""

    __slots__ = ("offsets", "sizes", "frames", "whole", "source")

    def __init__(self, source: TextSource = b"") -> None:
        self.offsets = array("q")
        self.sizes = array("i")
        self.frames = array("i")
        self.whole: dict[int, Line] = {}
        self.source = source

    def append(self, line: Line) -> None:
        self.offsets.append(-1 if line.offset is None else line.offset)
        self.sizes.append(line.size)
        self.frames.append(-1 if line.frame is None else line.frame)
        if line.error is not None or not line.terminated or line.number == 1 or line.number != len(self.offsets):
            self.whole[len(self.offsets)] = line

    def pop(self) -> None:
        self.whole.pop(len(self.offsets), None)
        self.offsets.pop()
        self.sizes.pop()
        self.frames.pop()

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self.offsets)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("line index out of range")
        number = index + 1
        kept = self.whole.get(number)
        if kept is not None:
            return kept
        frame = self.frames[index]
        return Line(number, None, MISSING, None, True, None if frame < 0 else frame, self.offsets[index],
                    self.sizes[index], self.source)

    def __iter__(self) -> Iterator[Line]:
        return (self[i] for i in range(len(self)))

    def frame_spans(self) -> Iterator[tuple[int, int, int]]:
        """``(frame, first line, last line)`` for each run of lines that start in one frame."""
        number = 1
        for frame, run in groupby(self.frames):
            count = sum(1 for _ in run)
            if frame >= 0:
                yield frame, number, number + count - 1
            number += count


_KINDS: tuple[RowKind, ...] = ("event", "packed")


class CompactRows(Sequence[Row]):
    """``SessionLog.rows`` of a streamed read: 20 bytes a row (a row's frame is its line's, in
    ``lines``). An event or packed row comes back without its ``value`` (:data:`MISSING`: its
    parsed value went to the consumer); a row of any other kind is kept whole."""

    __slots__ = ("numbers", "firsts", "counts", "whole", "lines")

    def __init__(self, lines: CompactLines) -> None:
        self.numbers = array("q")
        self.firsts = array("q")
        # a packed row is stored as minus its member count, so one array says kind and size
        self.counts = array("i")
        self.whole: dict[int, Row] = {}
        self.lines = lines

    def append(self, row: Row) -> None:
        events = row.events
        self.numbers.append(row.line)
        self.firsts.append(events.start)
        self.counts.append(-len(events) if row.kind == "packed" else len(events))
        self.whole[len(self.numbers) - 1] = row

    def add(self, number: int, first: int, signed_count: int, frame: int | None, offset: int, size: int) -> None:
        """The next line, an ordinary parsed one, and the row it holds: an event row
        (``signed_count`` 1) or a packed row (minus its member count). One call for both: the
        reader makes it for every row of a log."""
        self.numbers.append(number)
        self.firsts.append(first)
        self.counts.append(signed_count)
        lines = self.lines
        lines.offsets.append(offset)
        lines.sizes.append(size)
        lines.frames.append(-1 if frame is None else frame)

    @property
    def irregular(self) -> dict[int, Row]:
        """The rows kept whole (kinds other than event and packed), by index."""
        return self.whole

    def __len__(self) -> int:
        return len(self.numbers)

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self.numbers)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("row index out of range")
        kept = self.whole.get(index)
        if kept is not None:
            return kept
        count = self.counts[index]
        first = self.firsts[index]
        number = self.numbers[index]
        frame = self.lines.frames[number - 1]
        kind: RowKind = "packed" if count < 0 else "event"
        return Row(number, kind, MISSING, range(first, first + abs(count)), None, None if frame < 0 else frame)

    def __iter__(self) -> Iterator[Row]:
        return (self[i] for i in range(len(self)))
