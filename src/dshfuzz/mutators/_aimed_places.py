"""Where the aimed families write their events, and the valid payloads they start from.

The places (between two turns, inside an open step, inside a turn between its steps, a log's
own event past its seed, a turn/end's data) and the templates (payloads as the generators
write them) are shared by the families aimed at official checks (:mod:`._aimed`) and those
aimed at the built-in checker's own branches (:mod:`._aimed_checker`). Each place raises
:class:`Inapplicable` only where the drawn log has no such place."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from dshfuzz.model import JsonValue

from ._draft import EventDraft, Inapplicable
from ._select import choose, data_of

Aim = Callable[[EventDraft, Any], str]
"""An aimed variant: edits the draft at a drawn place and says what it wrote."""


# --- places --------------------------------------------------------------------------------------


def _seed_end(draft: EventDraft) -> int:
    n = draft.header.get("seedLength") if type(draft.header) is dict else None
    return n if type(n) is int and n > 0 else 0


def _kind(event: JsonValue) -> object:
    return event.get("type") if type(event) is dict else None


def _between(draft: EventDraft, data: Any, *, last: bool = True) -> int:
    """An index between two turns of the log's own part (after any inherited seed): right
    before a turn/start, or (``last``) after a closing turn/end at the end of the log."""
    first = _seed_end(draft)
    places = [i for i in draft.of_type("turn/start") if i >= first]
    if last and draft.events and _kind(draft.events[-1]) == "turn/end" and len(draft.events) > first:
        places.append(len(draft.events))
    return choose(data, places, "place between turns")


def _in_step(draft: EventDraft, data: Any) -> tuple[int, int, int]:
    """``(index, turn, step)``: right before a step/end of the log's own part (the step is open there)."""
    first = _seed_end(draft)
    places = []
    for i in draft.of_type("step/end"):
        d = data_of(draft.events[i])
        if i > first and type(d.get("turn")) is int and type(d.get("step")) is int:
            places.append((i, d["turn"], d["step"]))
    return choose(data, places, "open step")


def _in_turn(draft: EventDraft, data: Any) -> tuple[int, int]:
    """``(index, turn)``: right before a turn/end (its turn is open, no step is)."""
    first = _seed_end(draft)
    places = []
    for i in draft.of_type("turn/end"):
        d = data_of(draft.events[i])
        if i > first and type(d.get("turn")) is int and d["turn"] > 0:
            places.append((i, d["turn"]))
    return choose(data, places, "open turn")


def _time(draft: EventDraft, index: int) -> int:
    """The time of the event before ``index`` (inserted events keep times non-decreasing)."""
    for event in reversed(draft.events[:index]):
        if type(event) is dict and type(event.get("time")) is int:
            return int(event["time"])
    created = draft.header.get("createdAt") if type(draft.header) is dict else None
    return created if type(created) is int else 0


def _provider(draft: EventDraft, index: int) -> str:
    """The provider of the last request/header before ``index`` (the step's provider)."""
    for event in reversed(draft.events[:index]):
        if _kind(event) == "request/header":
            config = data_of(event).get("header", {}).get("config", {}) if type(data_of(event).get("header")) is dict else {}
            if type(config) is dict and type(config.get("provider")) is str:
                return str(config["provider"])
    raise Inapplicable("no request/header before the place")


def _put(draft: EventDraft, index: int, *items: tuple[str, dict[str, Any]] | dict[str, Any]) -> int:
    """Insert events at ``index`` in order (``(type, data)`` pairs or whole events); the index after them."""
    t = _time(draft, index)
    for item in items:
        event = dict(item) if isinstance(item, dict) else {"type": item[0], "seq": index, "time": t, "data": item[1]}
        event.setdefault("time", t)
        draft.insert(index, event)
        index += 1
    return index


# --- templates (valid payloads, as the generators write them) ------------------------------------

_FAILURE = {"message": "simulated provider error (HTTP 503)", "code": "UNAVAILABLE"}


def _retry(turn: int, step: int, provider: str, **over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"retryId": "retry-aimed-1", "turn": turn, "step": step, "provider": provider, "mode": "normal",
                         "policyKey": "transient", "retry": 1, "delayMs": 250, "failure": dict(_FAILURE), "maxRetries": 3}
    d.update(over)
    return {k: v for k, v in d.items() if v is not _DROP}


_DROP = object()
"""A member an override removes."""


def _schedule(**over: Any) -> dict[str, Any]:
    schedule = {"id": "sched-aimed", "kind": "every", "prompt": "check the build", "everySeconds": 3600,
                "scheduledAt": "2025-12-29T17:01:34.624Z"}
    schedule.update(over)
    return {"version": 1, "operation": "create", "schedule": {k: v for k, v in schedule.items() if v is not _DROP}}


def _goal(**over: Any) -> dict[str, Any]:
    goal = {"id": "goal-aimed", "revision": 1, "objective": "Finish the task", "phase": "active", "maxGoalRounds": 3}
    goal.update(over)
    return {"kind": "goal/change", "version": 1, "operation": "create", "goal": goal, "roundsStarted": 0,
            "createdAt": 1767068043575, "updatedAt": 1767068043575}


def _user(source: dict[str, Any], text: str = "plan the fix") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "source": source, "role": "user",
            "id": "5d04f5db-e886-4f24-a59c-e7116786bdc2"}


def _splice(message: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An inbox splice carrying ``message`` into the next turn (payload-checked as a user message)."""
    return ("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]})


def _reference(**over: Any) -> dict[str, Any]:
    ref = {"sessionId": "becd7c22-693b-430f-ba36-2e485b28f9be", "label": "earlier session", "capturedThroughSeq": 12,
           "compacted": False, "originalMessages": 4, "retainedMessages": 4, "omittedMessages": 0, "omittedBytes": 0,
           "truncated": False, "inputIndex": 0}
    ref.update(over)
    return ref


def _references(*refs: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "session-reference", "form": "recall", "version": 1, "references": list(refs)}


def _descriptor(**over: Any) -> dict[str, Any]:
    d = {"mode": "continuable", "version": 3, "provider": "spawn", "label": "Reply with CHILD_OK",
         "agentProvider": "deepseek-official", "agentModel": "deepseek-v4-flash"}
    d.update(over)
    return {k: v for k, v in d.items() if v is not _DROP}


_ROUTE = {"provider": "deepseek-official", "model": "deepseek-v4-flash"}


def _search(**over: Any) -> dict[str, Any]:
    body = {"model": "deepseek-v4-flash", "max_tokens": 1024,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "gamma build"}]}],
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]}
    body.update(over)
    return {"endpoint": "/anthropic/v1/messages", "apiVersion": "2023-06-01", "body": body}


def _dispatch(root: str, parent: str, sub: str, name: str = "read", **over: Any) -> dict[str, Any]:
    d = {"rootCallId": root, "parentCallId": parent, "subCallId": sub, "name": name, "arguments": {"path": "src/the.py"}}
    d.update(over)
    return d


def _settled(start: dict[str, Any]) -> dict[str, Any]:
    return {**start, "isError": False, "content": [{"type": "text", "text": "ok"}]}


def _hook(turn: int, **over: Any) -> dict[str, Any]:
    d = {"turn": turn, "point": "UserPromptSubmit", "handlerId": "codex:UserPromptSubmit:1", "decision": "allow",
         "durationMs": 3.5}
    d.update(over)
    return d




def _at_step(make: Callable[[int, int, str], list[tuple[str, dict[str, Any]]]]) -> Aim:
    def edit(draft: EventDraft, data: Any) -> str:
        i, turn, step = _in_step(draft, data)
        events = make(turn, step, _provider(draft, i))
        _put(draft, i, *events)
        return f"seq {i}: {', '.join(t for t, _ in events)} in turn {turn} step {step}"
    return edit


def _at_turn(make: Callable[[int], list[tuple[str, dict[str, Any]]]]) -> Aim:
    def edit(draft: EventDraft, data: Any) -> str:
        i, turn = _in_turn(draft, data)
        events = make(turn)
        _put(draft, i, *events)
        return f"seq {i}: {', '.join(t for t, _ in events)} in turn {turn}, between its steps"
    return edit


def _at_gap(*events: tuple[str, dict[str, Any]] | dict[str, Any], last: bool = True) -> Aim:
    """``events`` inserted between two turns (``last``: or after the log's last turn)."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _between(draft, data, last=last)
        _put(draft, i, *copy.deepcopy(events))
        kinds = (e["type"] if isinstance(e, dict) else e[0] for e in events)
        return f"seq {i}: {', '.join(kinds)} between turns"
    return edit


def _turn_end_field(make: Callable[[dict[str, Any]], dict[str, Any]], what: str) -> Aim:
    def edit(draft: EventDraft, data: Any) -> str:
        ends = [i for i in draft.of_type("turn/end") if i >= _seed_end(draft) and type(data_of(draft.events[i]).get("turn")) is int]
        i = choose(data, ends, "turn/end")
        draft.events[i]["data"] = make(data_of(draft.events[i]))
        return f"seq {i}: turn/end {what}"
    return edit


def _own_event(draft: EventDraft, data: Any, kind: str, where: Callable[[dict[str, Any]], bool] = lambda e: True) -> int:
    own = [i for i in draft.of_type(kind) if i >= _seed_end(draft) and where(draft.events[i])]
    return choose(data, own, kind)


def _retries(*overs: dict[str, Any], started: tuple[dict[str, Any], ...] = ()) -> Aim:
    """llm/retry events (each the template with an override) and retry-started events, in an open step."""
    def make(turn: int, step: int, provider: str) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = [("llm/retry", _retry(turn, step, provider, **o)) for o in overs]
        for s in started:
            base = {"retryId": "retry-aimed-1", "turn": turn, "step": step, "retry": 1}
            base.update({k: (v(turn, step) if callable(v) else v) for k, v in s.items()})
            out.append(("llm/retry-started", base))
        return out
    return _at_step(make)


def _header(key: str, value: JsonValue, what: str) -> Aim:
    """The header's ``key`` set to ``value`` (every layer reads the header first)."""
    def edit(draft: EventDraft, data: Any) -> str:
        if type(draft.header) is not dict:
            raise Inapplicable("no header object")
        draft.header[key] = copy.deepcopy(value)
        return f"header {key} = {what}"
    return edit


def _request_header_member(key: str, value: JsonValue) -> Aim:
    """A request/header's ``header.<key>`` set to ``value`` (S:1241 adapterDefaults, V01:2037 messagePrefix)."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _own_event(draft, data, "request/header", lambda e: type(data_of(e).get("header")) is dict)
        data_of(draft.events[i])["header"][key] = copy.deepcopy(value)
        return f"seq {i}: request/header header.{key} = {value!r}"
    return edit
