"""Inbox replay: ``new Inbox(session)`` from dsh-agent (AG:12-170), catalog rule I1.

The inbox holds two pending lists, ``next-turn`` and ``next-step``. Every
``agent/inbox/spliced`` event at or after ``header.seedLength`` (the events a
fork inherited are not replayed) is one ``Array.prototype.splice`` on its
``target`` list, valid only when ``0 <= start <= len``, ``start + removedCount
<= len`` (both safe integers) and the result leaves no message id pending twice
across both lists. A refused splice is reported as the official wrapper error,
``invalid persisted inbox splice at session seq N``, with the cause appended.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable

from dshfuzz.contracts import js as _js
from dshfuzz.model import MISSING

from ._verdict import Accepted, Verdict, Violation, raw_events, raw_header

__all__ = ["InboxState", "replay_inbox"]


@dataclass(frozen=True, slots=True)
class InboxState:
    """The pending message ids after replay (the official ``nextTurn``/``nextStep``)."""

    next_turn: tuple[Any, ...]
    next_step: tuple[Any, ...]


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Pending:
    """One pending message; ``key`` is how a JavaScript ``Set`` identifies its ``id``."""

    __slots__ = ("message", "_key")
    _objects = itertools.count()

    def __init__(self, message: Any) -> None:
        self.message = message
        self._key: Any = None

    @property
    def key(self) -> Any:
        if self._key is None:  # read lazily: V8 reads `message.id` only inside the duplicate scan
            message_id = _js.get(self.message, "id")
            # Distinct JSON objects are distinct JavaScript objects, whatever Python shares.
            self._key = (
                ("o", next(self._objects)) if type(message_id) in (dict, list) else _js.number_key(message_id)
            )
        return self._key


def replay_inbox(events: Iterable[Any], header: Any = None) -> Verdict[InboxState]:
    """Replay the splices of ``events`` from ``header["seedLength"]`` on."""
    log = raw_events(events)
    header = raw_header(header)
    seed_length = _js.get(header, "seedLength") if type(header) is dict else MISSING
    first = _slice_start(MISSING if seed_length is None else seed_length, len(log))
    state: dict[str, list[_Pending]] = {"next-turn": [], "next-step": []}
    for index in range(first, len(log)):
        event = log[index]
        try:
            etype = _js.get(event, "type")
        except _js.JsTypeError as exc:
            return Violation(index, "malformed-event", str(exc))
        if not _js.strict_equal(etype, "agent/inbox/spliced"):
            continue
        try:
            _apply(state, _js.get(event, "data"))
        except (_Refused, _js.JsTypeError) as exc:
            code = exc.code if isinstance(exc, _Refused) else "inbox-malformed-splice"
            seq = _js.js_string(_js.get(event, "seq"))
            return Violation(index, code, f"invalid persisted inbox splice at session seq {seq}: {exc}")
    return Accepted(
        InboxState(
            tuple(_js.get(p.message, "id") for p in state["next-turn"]),
            tuple(_js.get(p.message, "id") for p in state["next-step"]),
        )
    )


def _slice_start(value: Any, length: int) -> int:
    """Where ``events.slice(value ?? 0)`` starts."""
    start = _js.to_integer_or_infinity(0 if value is MISSING else value)
    if start < 0:
        return int(max(length + start, 0))
    return int(min(start, length))


def _apply(state: dict[str, list[_Pending]], splice: Any) -> None:
    """``Inbox.apply``: validate, then splice."""
    target = _js.get(splice, "target")
    inbox = state.get(target) if type(target) is str else None
    removed = _js.get(splice, "removedCount")
    removed = 0 if removed is None or removed is MISSING else removed
    start = _js.get(splice, "start")
    if not _js.is_safe_integer(start) or start < 0:
        raise _Refused("inbox-invalid-splice", "invalid inbox splice")
    if inbox is None:
        raise _js.JsTypeError("Cannot read properties of undefined (reading 'length')")
    if start > len(inbox) or not _js.is_safe_integer(removed) or removed < 0 or start + removed > len(inbox):
        raise _Refused("inbox-invalid-splice", "invalid inbox splice")
    inserted = [_Pending(message) for message in _spread_items(_js.get(splice, "inserted"))]
    start, removed = int(start), int(removed)
    candidate = inbox[:start] + inserted + inbox[start + removed :]
    other = state["next-step"] if target == "next-turn" else state["next-turn"]
    ordered = candidate + other if target == "next-turn" else other + candidate
    seen: set[Any] = set()
    for pending in ordered:
        if pending.key in seen:
            message_id = _js.js_string(_js.get(pending.message, "id"))
            raise _Refused("inbox-duplicate-pending", f'message "{message_id}" is already pending')
        seen.add(pending.key)
    state[target] = candidate


def _spread_items(value: Any) -> list[Any]:
    """The elements ``...value`` spreads (an array's items, a string's characters)."""
    if type(value) is list:
        return value
    if type(value) is str:
        return list(value)
    raise _js.JsTypeError("Spread syntax requires ...iterable[Symbol.iterator] to be a function")
