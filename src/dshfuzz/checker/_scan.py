"""One shared scan of the log: event positions grouped by type.

Most rules look at a handful of event types in a log dominated by chunks; reading
``event.type`` for every event in every pass would cost more than the rules
themselves. The index is built once per check and holds positions only.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._context import CheckContext

__all__ = ["positions", "type_index"]


def _by_type(ctx: CheckContext) -> dict[object, list[int]]:
    index: dict[object, list[int]] = {}
    events = ctx.events
    heads, runs = ctx.packed_runs
    for i in heads:
        raw = events[i].raw
        kind = raw.get("type") if type(raw) is dict else None
        if type(kind) is str:
            bucket = index.get(kind)
            if bucket is None:
                bucket = index[kind] = []
            bucket.append(i)
            if kind == "assistant/chunk" and i in runs:  # the rest of a packed run: chunks like its first member
                bucket.extend(range(i + 1, runs[i]))
    return index


def type_index(ctx: CheckContext) -> dict[object, list[int]]:
    """Every string event type of the log -> the positions holding it (computed once per check)."""
    return ctx.memo("positions-by-type", lambda: _by_type(ctx))


def positions(ctx: CheckContext, types: Iterable[str]) -> list[int]:
    """Log positions of the events whose type is one of ``types``, in log order."""
    index = type_index(ctx)
    buckets = [index.get(t, ()) for t in types]
    if len(buckets) == 1:
        return list(buckets[0])
    return sorted(i for bucket in buckets for i in bucket)
