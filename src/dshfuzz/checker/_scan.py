"""One shared scan of the log: event positions grouped by type, and the irregular events.

Most rules look at a handful of event types in a log dominated by chunks; reading
``event.type`` for every event in every pass would cost more than the rules
themselves. The scan is made once per check and holds positions only: by the
:class:`TypeScan` walk, in the loop every walk shares (so the events are read once for
it and the walks), or, when that walk did not run, on the first question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dshfuzz.model import Event

from ._context import CheckContext
from ._run import EVERY_EVENT, state_walk

__all__ = ["TypeScan", "irregular", "positions", "running_scan", "seqs_are_positions", "type_index"]


@dataclass(frozen=True, slots=True)
class _Scan:
    """What one walk over the heads found: see :func:`type_index`, :func:`irregular` and
    :func:`seqs_are_positions`."""

    by_type: dict[object, list[int]]
    irregular: list[int]
    positional: bool


def _scan(ctx: CheckContext) -> _Scan:
    index: dict[object, list[int]] = {}
    odd: list[int] = []
    positional = True
    events = ctx.events
    heads, runs = ctx.packed_runs
    for i in heads:
        raw = events[i].raw
        if raw.__class__ is not dict:
            odd.append(i)
            positional = False
            continue
        kind = raw.get("type")
        seq = raw.get("seq")
        if seq.__class__ is not int or seq != i:
            odd.append(i)
            positional = False
        elif kind.__class__ is not str or "surfaceOp" in raw or "sourceEventSeqs" in raw:
            odd.append(i)
        if kind.__class__ is not str:
            continue
        bucket = index.get(kind)
        if bucket is None:
            bucket = index[kind] = []
        bucket.append(i)
        if kind == "assistant/chunk" and i in runs:  # the rest of a packed run: chunks like its first member
            bucket.extend(range(i + 1, runs[i]))
    return _Scan(index, odd, positional)


_RUNNING = "type-scan-walk"
_DONE = "positions-by-type"


@state_walk(types=EVERY_EVENT)
class TypeScan:
    """:func:`_scan` as a walk: the same buckets, irregular positions and positional flag,
    built head by head and published for :func:`type_index` and the rest when it finishes
    (before the walks that read it finish, and before every pass). While it runs, a later
    walk may read :attr:`positional` (true while every head so far is an object whose seq
    is its position), or ask to be told of the first head that is not (:meth:`misplaced`).
    State: the positions, O(n) small ints, as :func:`_scan` keeps."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.runs = ctx.packed_runs[1]
        self.index: dict[object, list[int]] = {}
        self.odd: list[int] = []
        self.positional = True
        self.on_first_misplaced: list[Callable[[int], None]] = []
        ctx.memo(_RUNNING, lambda: self)

    def visit(self, i: int, event: Event) -> None:
        raw = event.raw
        if raw.__class__ is not dict:
            self.odd.append(i)
            if self.positional:
                self.misplaced(i)
            return None
        kind = raw.get("type")
        seq = raw.get("seq")
        if seq.__class__ is not int or seq != i:
            self.odd.append(i)
            if self.positional:
                self.misplaced(i)
        elif kind.__class__ is not str or "surfaceOp" in raw or "sourceEventSeqs" in raw:
            self.odd.append(i)
        if kind.__class__ is not str:
            return None
        index = self.index
        bucket = index.get(kind)
        if bucket is None:
            bucket = index[kind] = []
        bucket.append(i)
        if kind == "assistant/chunk":
            stop = self.runs.get(i)
            if stop is not None:  # the rest of a packed run: chunks like its first member
                bucket.extend(range(i + 1, stop))
        return None

    def misplaced(self, i: int) -> None:
        """The first head that is no object or whose seq is not its position: the walks that
        waited for it (:attr:`on_first_misplaced`) learn where it is."""
        self.positional = False
        for wake in self.on_first_misplaced:
            wake(i)

    def finish(self) -> None:
        done = _Scan(self.index, self.odd, self.positional)
        self.ctx.memo(_DONE, lambda: done)
        return None


def running_scan(ctx: CheckContext) -> TypeScan | None:
    """The :class:`TypeScan` of this check's walk loop, or ``None`` when none was constructed
    (a walk constructed before the loop asks it; its answers cover the heads behind the loop)."""
    return ctx.memo(_RUNNING, lambda: None)


def _shared(ctx: CheckContext) -> _Scan:
    return ctx.memo(_DONE, lambda: _scan(ctx))


def type_index(ctx: CheckContext) -> dict[object, list[int]]:
    """Every string event type of the log -> the positions holding it (computed once per check)."""
    return _shared(ctx).by_type


def irregular(ctx: CheckContext) -> list[int]:
    """The positions, in log order, of the events that are not objects, have no string type,
    carry a seq other than their position, or carry surface metadata (``surfaceOp``,
    ``sourceEventSeqs``), among the heads of :attr:`CheckContext.packed_runs`; a packed
    run's other members are as regular as its first. Every other event is an object with
    a string type and seq equal to its position, and without surface metadata, so a pass
    judging only those may visit the positions of the types it reads plus these."""
    return _shared(ctx).irregular


def seqs_are_positions(ctx: CheckContext) -> bool:
    """Whether every event is an object whose seq is the int equal to its position (the
    official shape); a packed run's members carry consecutive seqs from its first one."""
    return _shared(ctx).positional


def positions(ctx: CheckContext, types: Iterable[str]) -> list[int]:
    """Log positions of the events whose type is one of ``types``, in log order."""
    index = type_index(ctx)
    buckets = [index.get(t, ()) for t in types]
    if len(buckets) == 1:
        return list(buckets[0])
    return sorted(i for bucket in buckets for i in bucket)
