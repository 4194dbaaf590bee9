"""One shared scan of the log's heads: whether every seq is its position, and where the last
turn/end stands.

:class:`TypeScan` runs in the loop every walk shares, first among them, and keeps two facts
its readers ask: the positional flag (with the walks waiting for its first exception, the
seq-order rules) and the position and line of the last turn/end (read after the loop by the
seq-gap attribution and the corrupt-row attribution). State: O(1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dshfuzz.model import Event

from ._context import CheckContext, Shared
from ._run import EVERY_EVENT, state_walk

__all__ = ["RUNNING_SCAN", "SCAN", "Scanned", "TypeScan", "running_scan", "scanned"]


@dataclass(frozen=True, slots=True)
class Scanned:
    """What :class:`TypeScan` found over every head: ``positional`` (every head is an object
    whose seq is the int equal to its position; a packed run's members carry consecutive
    seqs from its first one), and the log position and line of the last turn/end (``-1`` and
    ``0`` when the log has none)."""

    positional: bool
    last_turn_end: int
    last_turn_end_line: int


RUNNING_SCAN: Shared[TypeScan | None] = Shared("the running type scan")
"""The :class:`TypeScan` of the check, published as it is constructed (:func:`running_scan`)."""
SCAN: Shared[Scanned | None] = Shared("the finished type scan")
"""What the scan found over every head, published as it finishes (:func:`scanned`)."""


@state_walk(types=EVERY_EVENT, publishes=(RUNNING_SCAN, SCAN))
class TypeScan:
    """The scan as a walk, published (:func:`scanned`) when it finishes, before the walks that
    read it finish and before every pass. While it runs, a later walk may read
    :attr:`positional` (true while every head so far is an object whose seq is its position),
    or ask to be told of the first head that is not (:attr:`on_first_misplaced`).
    State: the flag, the waiting callbacks and the last turn/end's position and line."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.positional = True
        self.on_first_misplaced: list[Callable[[int], None]] = []
        self.last_turn_end = -1
        self.last_turn_end_line = 0
        ctx.memo(RUNNING_SCAN, lambda: self)

    def visit(self, i: int, event: Event) -> None:
        raw = event.raw
        if raw.__class__ is not dict:
            if self.positional:
                self.misplaced(i)
            return None
        if self.positional:
            seq = raw.get("seq")
            if seq.__class__ is not int or seq != i:
                self.misplaced(i)
        if raw.get("type") == "turn/end":
            self.last_turn_end = i
            self.last_turn_end_line = event.line or 0
        return None

    def misplaced(self, i: int) -> None:
        """The first head that is no object or whose seq is not its position: the walks that
        waited for it (:attr:`on_first_misplaced`) learn where it is."""
        self.positional = False
        for wake in self.on_first_misplaced:
            wake(i)

    def finish(self) -> None:
        done = Scanned(self.positional, self.last_turn_end, self.last_turn_end_line)
        self.ctx.memo(SCAN, lambda: done)
        return None


def running_scan(ctx: CheckContext) -> TypeScan | None:
    """The :class:`TypeScan` of this check's walk loop, or ``None`` when none was constructed
    (a walk constructed before the loop asks it)."""
    return ctx.memo(RUNNING_SCAN, lambda: None)


def scanned(ctx: CheckContext) -> Scanned:
    """What this check's :class:`TypeScan` published; asked once the loop is over (a reader's
    ``finish``, or a pass)."""
    done = ctx.memo(SCAN, lambda: None)
    if done is None:
        raise LookupError("the type scan has not finished: it is published by the check's walk loop")
    return done
