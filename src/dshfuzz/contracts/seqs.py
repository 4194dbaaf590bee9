"""Seq references: how one event names another, and which values can name one.

An event's ``seq`` is its position in the log (the official ``isEventSeq``: a
non-negative safe integer). Events cite earlier events by seq in a fixed set of
places (:func:`seq_refs`); the minimiser renumbers them and the rules check that
each names an earlier event, so both read that set here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .js import is_safe_integer

__all__ = ["SEQ_LIST_KEYS", "event_seq", "is_event_seq", "seq_refs"]

SEQ_LIST_KEYS = ("shadowedSeqs", "messageSeqs")
"""The ``data`` members that hold a list of cited seqs (compaction prunes and summaries, titles)."""


def is_event_seq(value: Any) -> bool:
    """The official ``isEventSeq`` (S:295-298): a non-negative safe integer number."""
    return is_safe_integer(value) and value >= 0


def event_seq(value: Any) -> int | None:
    """``value`` as the position it names when it is an event seq, else ``None``."""
    return int(value) if is_event_seq(value) else None


def seq_refs(event: Any) -> Iterator[tuple[Any, Any]]:
    """Every place in ``event`` that holds another event's seq, as ``(container, key)``.

    Covers ``sourceEventSeqs``, a replace's ``start``/``end``, compaction
    ``shadowedRange``/``shadowedSeqs`` and title ``messageSeqs``.
    """
    if type(event) is not dict:
        return
    if type(event.get("sourceEventSeqs")) is list:
        refs = event["sourceEventSeqs"]
        yield from ((refs, i) for i in range(len(refs)))
    op = event.get("surfaceOp")
    if type(op) is dict:
        yield from ((op, k) for k in ("start", "end") if k in op)
    data = event.get("data")
    if type(data) is not dict:
        return
    rng = data.get("shadowedRange")
    if type(rng) is dict:
        yield from ((rng, k) for k in ("start", "end") if k in rng)
    for key in SEQ_LIST_KEYS:
        if type(data.get(key)) is list:
            refs = data[key]
            yield from ((refs, i) for i in range(len(refs)))
