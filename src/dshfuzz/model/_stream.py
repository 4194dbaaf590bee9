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
    """``SessionLog.lines`` of a streamed read: 24 bytes a line, its offset, size and frame in
    one array (``cells``, three to a line). ``source`` gives the text of a line back (the file,
    or the frames decoded again); the reader sets it before the first line."""

    __slots__ = ("cells", "whole", "source")

    def __init__(self, source: TextSource = b"") -> None:
        self.cells = array("q")
        self.whole: dict[int, Line] = {}
        self.source = source

    def append(self, line: Line) -> None:
        self.cells.extend((-1 if line.offset is None else line.offset, line.size, -1 if line.frame is None else line.frame))
        number = len(self.cells) // 3
        if line.error is not None or not line.terminated or line.number == 1 or line.number != number:
            self.whole[number] = line

    def pop(self) -> None:
        self.whole.pop(len(self.cells) // 3, None)
        del self.cells[-3:]

    def __len__(self) -> int:
        return len(self.cells) // 3

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self.cells) // 3
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("line index out of range")
        number = index + 1
        kept = self.whole.get(number)
        if kept is not None:
            return kept
        offset, size, frame = self.cells[3 * index : 3 * index + 3]
        return Line(number, None, MISSING, None, True, None if frame < 0 else frame, offset, size, self.source)

    def __iter__(self) -> Iterator[Line]:
        return (self[i] for i in range(len(self)))

    def frame_of(self, number: int) -> int | None:
        frame = self.cells[3 * number - 1]
        return None if frame < 0 else frame

    def frame_spans(self) -> Iterator[tuple[int, int, int]]:
        """``(frame, first line, last line)`` for each run of lines that start in one frame."""
        number = 1
        for frame, run in groupby(self.cells[2::3]):
            count = sum(1 for _ in run)
            if frame >= 0:
                yield frame, number, number + count - 1
            number += count


_KINDS: tuple[RowKind, ...] = ("event", "packed")


class CompactRows(Sequence[Row]):
    """``SessionLog.rows`` of a streamed read: 24 bytes a row, its line, first event and signed
    count in one array (``cells``, three to a row: a packed row's count is minus its member
    count, so one number says kind and size; its frame is its line's, in ``lines``). An event or
    packed row comes back without its ``value`` (:data:`MISSING`: its parsed value went to the
    consumer); a row of any other kind is kept whole."""

    __slots__ = ("cells", "whole", "lines")

    def __init__(self, lines: CompactLines) -> None:
        self.cells = array("q")
        self.whole: dict[int, Row] = {}
        self.lines = lines

    def append(self, row: Row) -> None:
        events = row.events
        self.cells.extend((row.line, events.start, -len(events) if row.kind == "packed" else len(events)))
        self.whole[len(self.cells) // 3 - 1] = row

    @property
    def irregular(self) -> dict[int, Row]:
        """The rows kept whole (kinds other than event and packed), by index."""
        return self.whole

    def __len__(self) -> int:
        return len(self.cells) // 3

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self.cells) // 3
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("row index out of range")
        kept = self.whole.get(index)
        if kept is not None:
            return kept
        number, first, count = self.cells[3 * index : 3 * index + 3]
        kind: RowKind = "packed" if count < 0 else "event"
        return Row(number, kind, MISSING, range(first, first + abs(count)), None, self.lines.frame_of(number))

    def __iter__(self) -> Iterator[Row]:
        return (self[i] for i in range(len(self)))
