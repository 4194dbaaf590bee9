"""Shared choices and structural queries over an :class:`EventDraft`.

Every choice goes through :func:`choose`, so an empty candidate list becomes
:class:`Inapplicable` (the example is rejected) and a non-empty one a single
shrinkable draw. The queries read the log the way the official layers do:
``surface_at`` is ``foldSurface``'s node list, ``steps`` the step/start ..
step/end enclosures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st

from dshfuzz.model import JsonValue

from ._draft import EventDraft, Inapplicable

__all__ = [
    "Step",
    "ToolCall",
    "choose",
    "data_of",
    "message_of",
    "replace_guard",
    "steps",
    "surface_at",
    "tool_calls",
]

T = TypeVar("T")


def choose(data: st.DataObject, items: Sequence[T], label: str) -> T:
    """One of ``items`` (shrinks to the first); :class:`Inapplicable` when there is none."""
    if not items:
        raise Inapplicable(f"no {label} in the log")
    return data.draw(st.sampled_from(list(items)), label=label)


def data_of(event: JsonValue) -> dict[str, Any]:
    """The event's ``data`` object (``{}`` when absent or not an object)."""
    data = event.get("data") if type(event) is dict else None
    return data if type(data) is dict else {}


def message_of(event: JsonValue) -> dict[str, Any]:
    """The message a message event carries (``user/message``: the data itself)."""
    if type(event) is not dict:
        return {}
    data = data_of(event)
    message = data if event.get("type") == "user/message" else data.get("message")
    return message if type(message) is dict else {}


def surface_at(draft: EventDraft, end: int | None = None) -> list[JsonValue]:
    """The surface node seqs after folding the events before ``end`` (all by default)."""
    nodes: list[JsonValue] = []
    for event in draft.events[:end]:
        if type(event) is not dict:
            continue
        op = event.get("surfaceOp")
        if op == "append":
            nodes.append(event.get("seq"))
        elif type(op) is dict and op.get("start") in nodes and op.get("end") in nodes:
            lo, hi = nodes.index(op["start"]), nodes.index(op["end"])
            if lo <= hi:
                nodes[lo : hi + 1] = [event.get("seq")]
    return nodes


def replace_guard(draft: EventDraft) -> Callable[[int], bool]:
    """A predicate telling whether a surface event inserted at a position would land inside
    the range of a later replace (which would then fail to cite it): on the surface as that
    replace folds it, the new node sits after the range's start node and before its end
    node. Read on the surface, not on seqs: a replace (a compaction's summary) stands where
    its range stood, so a later range may run from a high seq to a lower one."""
    replaces = [
        i for i, event in enumerate(draft.events)
        if type(event) is dict and type(event.get("surfaceOp")) is dict
    ]

    def inside(at: int) -> bool:
        if not any(i >= at for i in replaces):
            return False
        new = object()  # the inserted node, appended to the surface as the event at ``at`` would be
        nodes: list[object] = []
        for i, event in enumerate(draft.events):
            if i == at:
                nodes.append(new)
            op = event.get("surfaceOp") if type(event) is dict else None
            if op == "append":
                nodes.append(event.get("seq"))
            elif type(op) is dict and op.get("start") in nodes and op.get("end") in nodes:
                lo, hi = nodes.index(op["start"]), nodes.index(op["end"])
                if i >= at and lo < nodes.index(new) < hi:
                    return True
                if lo <= hi:
                    nodes[lo : hi + 1] = [event.get("seq")]
        return False

    return inside


@dataclass(frozen=True, slots=True)
class Step:
    """One step/start .. step/end enclosure (``end`` is the step/end index, or ``None``)."""

    turn: object
    step: object
    start: int
    end: int | None

    def contains(self, index: int) -> bool:
        return self.start < index and (self.end is None or index < self.end)


def steps(draft: EventDraft) -> list[Step]:
    out: list[Step] = []
    open_at: int | None = None
    for i, event in enumerate(draft.events):
        kind = event.get("type") if type(event) is dict else None
        if kind == "step/start":
            if open_at is not None:
                out.append(_step(draft, open_at, None))
            open_at = i
        elif kind == "step/end" and open_at is not None:
            out.append(_step(draft, open_at, i))
            open_at = None
    if open_at is not None:
        out.append(_step(draft, open_at, None))
    return out


def _step(draft: EventDraft, start: int, end: int | None) -> Step:
    data = data_of(draft.events[start])
    return Step(data.get("turn"), data.get("step"), start, end)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One advertised tool call: the assistant/message block, its tool/call and
    tool/result appends (indices; ``None``/empty when absent)."""

    call_id: str
    assistant: int
    block: int
    call: int | None
    results: tuple[int, ...]


def tool_calls(draft: EventDraft) -> list[ToolCall]:
    """Every tool-call block of an appended assistant/message, with its lifecycle events."""
    calls: dict[str, int] = {}
    results: dict[str, list[int]] = {}
    for i, event in enumerate(draft.events):
        kind = event.get("type") if type(event) is dict else None
        if kind == "tool/call" and type(data_of(event).get("callId")) is str:
            calls.setdefault(data_of(event)["callId"], i)
        elif kind == "tool/result" and event.get("surfaceOp") == "append":
            source = message_of(event).get("source")
            if type(source) is dict and type(source.get("callId")) is str:
                results.setdefault(source["callId"], []).append(i)
    out = []
    for i, event in enumerate(draft.events):
        if type(event) is not dict or event.get("type") != "assistant/message":
            continue
        if event.get("surfaceOp") != "append":
            continue
        content = message_of(event).get("content")
        for b, block in enumerate(content if type(content) is list else ()):
            if type(block) is dict and block.get("type") == "tool-call" and type(block.get("id")) is str:
                cid = block["id"]
                out.append(ToolCall(cid, i, b, calls.get(cid), tuple(results.get(cid, ()))))
    return out
