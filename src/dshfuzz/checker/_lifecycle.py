"""Tool-call bookkeeping shared by the plugin (P5) and wire (W3 W4 W5) passes.

Two official moments track tool calls over the raw events, each with its own
predicate, and both are reproduced here in one pass over the log:

- the invariant companion (``dsh-session/invariant``, SI:20-102) keeps the set of
  ``tool/call`` ids started in the open step; a ``tool/result`` append must answer
  one of them unless it is a synthetic ``TOOL_NOT_STARTED`` result, and step/end
  forgets the rest;
- the released validator (``assertReleasedArtifactRelationships``, V01:2270) keeps
  a lifecycle per advertised call id (advertised by an assistant tool-call block,
  started by the matching ``tool/call``, resolved by a ``tool/result`` append) and
  refuses, at step/end and turn/end, any call left unresolved.

Unlike the official code, which stops at its first refusal, the walk records every
refusal and keeps going with the official transition applied, so the checker can
report all of them. Malformed events never raise: a field that cannot be read counts
as absent here, and the message-shape rules report the malformed event itself.
Both the loader and the released migration upgrade pre-identity flat messages
before judging them, so the released walk (and the wire) read them upgraded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dshfuzz.contracts.js import js_string, number_key, strict_equal
from dshfuzz.model import MISSING, Event

from ._context import CheckContext, Shared
from ._run import state_walk

__all__ = [
    "Advert", "Refusal", "ToolLedger", "ToolLedgerWalk", "call_key", "named_again", "show_id", "show_value",
    "TOOL_LEDGER", "tool_ledger", "upgraded_event",
]


def call_key(value: Any) -> Any:
    """The key under which a JavaScript ``Map``/``Set`` identifies a call id (an object or an
    array by identity: see :func:`named_again`)."""
    return number_key(value)


def named_again(value: Any) -> bool:
    """Whether a later record can name the call id ``value``: not when it is an object or an
    array, which is ``===`` only to itself. A set of keys that outlives the record must not
    hold such a key: it is the object's ``id()``, which a later object may reuse once a
    streaming reader has dropped the record."""
    return value.__class__ is not dict and value.__class__ is not list


def show_value(value: Any) -> str:
    """A JSON value as finding text: ``String(value)`` for a scalar, as the official messages
    print it; a container is only described, since arbitrary nesting must not recurse."""
    if type(value) is list:
        return f"[array of {len(value)}]"
    if type(value) is dict:
        return "[object Object]"
    return js_string(value)


def show_id(value: Any) -> str:
    """A call id as text for messages and finding context."""
    return value if type(value) is str else show_value(value)


@dataclass(slots=True)
class Advert:
    """One advertised call: the assistant/message that named it (its position and the stored
    event, where a finding about the call is located), and its state."""

    call_id: Any
    message_index: int
    name: Any
    arguments: Any
    state: str = "advertised"
    call_index: int | None = None
    message: Event | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """One event an official moment refuses: the event's log position, the call id and why,
    and the stored event itself (where the finding is located)."""

    index: int
    call_id: Any
    code: str
    message: str
    event: Event | None = None


@dataclass(slots=True)
class ToolLedger:
    """Everything the tool-call rules need, from one walk.

    ``released`` and ``invariants`` hold each moment's refusals in log order.
    ``unresolved`` lists the adverts left open at a step/end or turn/end (the
    released refusal seed 001 is about; none where released passes the boundary,
    its first open advert having no id); ``tail_pending`` the adverts the official
    loader would close with a synthetic result because the log ends inside their
    turn (``interruptedTurnClosers``, S:626).
    """

    released: list[Refusal] = field(default_factory=list)
    invariants: list[Refusal] = field(default_factory=list)
    unresolved: list[Advert] = field(default_factory=list)
    tail_pending: list[Advert] = field(default_factory=list)


def _get(value: Any, key: str) -> Any:
    return value.get(key, MISSING) if type(value) is dict else MISSING


def _tool_result_call_id(data: Any) -> Any:
    message = data.get("message", MISSING) if type(data) is dict else MISSING
    source = message.get("source", MISSING) if type(message) is dict else MISSING
    return source.get("callId", MISSING) if type(source) is dict else MISSING


def _is_synthetic_not_started(data: Any) -> bool:
    """The invariant companion's exemption (SI:73): an error result coded TOOL_NOT_STARTED."""
    content = _get(_get(data, "message"), "content")
    first = content[0] if type(content) is list and content else MISSING
    return _get(first, "isError") is True and _get(_get(data, "error"), "code") == "TOOL_NOT_STARTED"


NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)


def _is_exact_not_started_repair(event: Event) -> bool:
    """The released validator's ``isExactToolNotStartedRepair`` (V01:2526)."""
    data = event.data
    message = _get(data, "message")
    call_id = _get(_get(message, "source"), "callId")
    content = _get(message, "content")
    block = content[0] if type(content) is list and content else MISSING
    repair = _get(block, "content")
    error = _get(data, "error")
    text = repair[0] if type(repair) is list and len(repair) == 1 else MISSING
    return (
        _get(error, "name") == "ToolNotStartedError"
        and _get(error, "code") == "TOOL_NOT_STARTED"
        and event.sourceEventSeqs is MISSING
        and type(call_id) is str
        and type(event.seq) not in (list, dict)
        and _get(message, "id") == f"interrupted-tool-result-{call_id}-{js_string(event.seq)}"
        and _get(block, "isError") is True
        and _get(text, "type") == "text"
        and _get(text, "text") == NOT_STARTED_TEXT
    )


def _tool_call_blocks(data: Any) -> list[dict[str, Any]]:
    content = _get(_get(data, "message"), "content")
    if type(content) is not list:
        return []
    return [b for b in content if type(b) is dict and b.get("type") == "tool-call"]


class _Walk:
    """The single pass behind :func:`tool_ledger`, fed one event at a time (:meth:`event`).

    Its state is the pending state of the open turn and step (the advertised lifecycles,
    each with its assistant/message event, the started and unmatched call keys, the adverts
    the loader would close) plus the ledger's lists, each of which holds the refusals (each
    with its event) or adverts some W or P finding reports (bounded by those findings, not
    by the log)."""

    def __init__(self) -> None:
        self.ledger = ToolLedger()
        self.lifecycles: dict[Any, Advert] = {}
        self.started: set[Any] = set()
        self.tail: dict[Any, Advert] = {}
        self.unmatched: set[Any] = set()
        self.turn_open = False
        self.current: Event | None = None  # the stored event being walked, which a refusal names

    def released(self, index: int, call_id: Any, code: str, message: str) -> None:
        self.ledger.released.append(Refusal(index, call_id, code, message, self.current))

    def close_step(self, index: int, boundary: str) -> None:
        first = next(iter(self.lifecycles.values()), None)
        if first is not None and first.call_id is MISSING:
            # assertNoUnresolvedTools names the first open lifecycle's id and throws only when it is
            # not undefined (V01:2513-2515): a first advert without an id leaves the boundary unrefused
            self.lifecycles.clear()
            return
        for advert in self.lifecycles.values():
            self.ledger.unresolved.append(advert)
            self.released(index, advert.call_id, "unresolved", f"{boundary} leaves unresolved tool call {show_id(advert.call_id)}")
        self.lifecycles.clear()

    def event(self, index: int, raw: Event, event: Event) -> None:
        """Walk the stored event ``raw`` at ``index``, read as ``event`` (its upgrade)."""
        self.current = raw
        upgraded = event.raw  # an object: the loop found its type
        kind = upgraded["type"]
        data = upgraded.get("data", MISSING)
        if kind == "tool/call":
            call_id = _get(data, "callId")
            key = call_key(call_id)
            if named_again(call_id):
                self.started.add(key)
            if key in self.tail:
                self.tail[key].call_index = index
            advert = self.lifecycles.get(key)
            if (advert is None or advert.state != "advertised"
                    or not strict_equal(advert.name, _get(data, "name"))
                    or not strict_equal(advert.arguments, _get(data, "arguments"))):
                self.released(index, call_id, "unmatched-call", f"tool/call {show_id(call_id)} does not match one advertised tool call")
                if named_again(call_id):
                    self.unmatched.add(key)
            else:
                advert.state = "started"
                advert.call_index = index
        elif kind == "tool/result":
            call_id = _tool_result_call_id(data)
            key = call_key(call_id)
            self.tail.pop(key, None)
            if upgraded.get("surfaceOp") != "append":
                return
            self.invariant_result(index, raw, data, call_id)
            self.started.discard(key)
            advert = self.lifecycles.get(key)
            if advert is None:
                # The result of a tool/call already refused as unadvertised is that refusal's consequence.
                if key not in self.unmatched:
                    self.released(index, call_id, "no-lifecycle", f"tool/result {show_id(call_id)} has no advertised tool lifecycle")
                return
            if advert.state == "advertised" and not _is_exact_not_started_repair(event):
                self.released(index, call_id, "not-repair", f"tool/result {show_id(call_id)} is not the exact TOOL_NOT_STARTED repair")
            del self.lifecycles[key]
        elif kind == "assistant/message":
            for block in _tool_call_blocks(data):
                call_id = block.get("id", MISSING)
                key = call_key(call_id)
                advert = Advert(call_id, index, block.get("name", MISSING), block.get("arguments", MISSING), message=raw)
                self.tail[key] = advert
                if key in self.lifecycles:
                    self.released(index, call_id, "repeated", f"assistant/message repeats advertised tool call {show_id(call_id)}")
                    continue
                self.lifecycles[key] = advert
        elif kind == "step/end":
            self.close_step(index, "step/end")
            self.started.clear()
            self.unmatched.clear()
            self.tail.clear()
        elif kind == "turn/start":
            self.lifecycles.clear()
            self.unmatched.clear()
            self.tail.clear()
            self.turn_open = True
        elif kind == "turn/end":
            self.close_step(index, "turn/end")
            self.tail.clear()
            self.turn_open = False

    def invariant_result(self, index: int, raw: Event, upgraded_data: Any, upgraded_call_id: Any) -> None:
        """SI:67-75 on the stored event; an unreadable call id is a message-shape defect (E6), not W5.
        The upgraded ``data`` and its call id are those of the stored event when it needed no upgrade."""
        data = raw.data
        call_id = upgraded_call_id if data is upgraded_data else _tool_result_call_id(data)
        if call_id is MISSING and _get(_get(data, "message"), "source") is MISSING:
            return
        if call_key(call_id) not in self.started and not _is_synthetic_not_started(data):
            self.ledger.invariants.append(Refusal(index, call_id, "no-call", f"tool/result for {show_id(call_id)} with no prior tool/call in this step", raw))

    def close_ledger(self) -> ToolLedger:
        """The ledger, once every event has been fed."""
        if self.turn_open:
            self.ledger.tail_pending = list(self.tail.values())
        return self.ledger


def _upgrade(event: Event) -> Event:
    """``migrateLegacyMessageEvent`` (SP:665-722): wrap a pre-identity flat assistant/message
    or tool/result into the current message shape, as both the loader and the released
    migration do before judging it. Anything else is returned as is."""
    data = event.data
    if type(data) is not dict or "message" in data:
        return event
    if event.type == "assistant/message" and "content" in data and "provenance" in data:
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        provenance = data["provenance"] if type(data["provenance"]) is dict else {}
        message = {"role": "assistant", "content": data["content"], "source": {**provenance, "kind": "model"}}
    elif event.type == "tool/result" and "callId" in data and "content" in data and "isError" in data:
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        call_id = data["callId"]
        block = {"type": "tool-result", "toolCallId": call_id, "content": data["content"], "isError": data["isError"]}
        message = {"role": "user", "content": [block], "source": {"kind": "tool", "callId": call_id}}
    else:
        return event
    raw = {**event.raw, "data": {**rest, "message": message}}
    return Event(raw, line=event.line, row=event.row, member=event.member, frame=event.frame)


def upgraded_event(event: Event) -> Event:
    """The event as load and released read it (a legacy flat message upgraded)."""
    data = event.raw.get("data") if event.raw.__class__ is dict else None
    return _upgrade(event) if type(data) is dict and "message" not in data else event


def tool_ledger(ctx: CheckContext) -> ToolLedger:
    """The tool-call ledger of the check, as :class:`ToolLedgerWalk` published it; asked once
    the loop is over (a reader's ``finish``). The invariant companion reads the stored events;
    the released walk reads them upgraded."""
    ledger = ctx.memo(TOOL_LEDGER, lambda: None)
    if ledger is None:
        raise LookupError("the tool ledger has not finished: it is published by the check's walk loop")
    return ledger


TOOL_LEDGER: Shared[ToolLedger | None] = Shared("the tool-call ledger")
"""The ledger of the whole check, published when :class:`ToolLedgerWalk` finishes (:func:`tool_ledger`)."""


@state_walk(publishes=(TOOL_LEDGER,), types={"tool/call": "visit", "tool/result": "upgraded", "assistant/message": "upgraded",
                   "step/end": "visit", "turn/start": "visit", "turn/end": "visit"})
class ToolLedgerWalk(_Walk):
    """:func:`tool_ledger` as a state walk in the loop every walk shares: each event is
    upgraded where it stands (no whole-log upgraded list) and fed to :class:`_Walk`, whose
    ledger :meth:`finish` publishes for :func:`tool_ledger`, before its readers finish.

    State: :class:`_Walk`'s: the open turn's and step's pending calls (each advert with its
    assistant/message event), and the refusals and unresolved adverts, each with the event
    its findings are located at (bounded by the findings that report them)."""

    def __init__(self, ctx: CheckContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit(self, index: int, event: Event) -> None:
        self.event(index, event, event)  # only a message is ever upgraded
        return None

    def upgraded(self, index: int, event: Event) -> None:
        self.event(index, event, upgraded_event(event))
        return None

    def finish(self) -> None:
        ledger = self.close_ledger()
        self.ctx.memo(TOOL_LEDGER, lambda: ledger)
        return None
