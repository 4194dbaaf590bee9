"""Wire rules: what the provider receives (W1 W2 W3 W5) and what a compaction hid (W4).

The provider never sees events; it sees the request the harness serialises from
the *current* surface. So the pass folds the surface (leniently: a replace whose
range is not current is skipped, the S rules report it), derives each node's
message (``deriveEventMessage``, S:278) and expands it the way
``dsh-llm-deepseek``'s ``serializeMessages`` does (LD:117-145): an assistant
message carries ``tool_calls`` for its tool-call blocks; a user-role message
contributes its text first (when it has text, or has no tool results) and then one
``role: "tool"`` message per tool-result block. When the log ends inside a turn,
the loader's crash closers (``interruptedTurnClosers``, S:626) answer the calls
still open in that turn, so their synthetic results are appended before judging:
the open tail of a crash is repaired on load, while seed 001's gap (a turn/end
already written) is not.

The stream is then judged as a strict OpenAI-compatible endpoint does:

- W5: a tool message whose id is not among the calls awaiting an answer; also
  every raw ``tool/result`` the invariant companion or the released walk refuses
  for answering no pending call (``_lifecycle``);
- W1: such a tool message, paired by id: it dangles when no call awaits an answer, and it
  answers no call of its assistant message when the calls awaiting one carry other ids (the
  assistant's tool-call block and the tool result disagree: seed 002's check by id, not by
  count, and the provider's "tool_call_id not found");
- W2: user text between tool calls and tool messages that answer them after it
  (the catalog's ``[assistant(tool_calls), user(text), tool]``; user text after
  which a call is never answered is W3's gap, not an ordering defect);
- W3: a call not answered before the next user text, the next assistant message
  or the end of history (its window), reported once at the assistant message. A
  call answered only after user text breaks both: a strict endpoint refuses that
  request with W3's own error (the assistant message is not followed by its tool
  messages) and W2 names the ordering; released accepts it (the result is in the
  step), so W3 then names the provider alone;
- W4: a call the released walk saw left unresolved whose assistant message is no
  longer on the surface: a later replace hid the gap from the provider.

In a check the fold is a state walk (:class:`SurfaceFold`) keeping the current nodes
only, and the rules a walk (:class:`WireStream`) that judges the final surface in
``finish()``, after the fold and the tool ledger (:class:`~._lifecycle.ToolLedgerWalk`)
have finished; :func:`surface_indices` and :func:`wire_messages` answer from what the fold
published.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dshfuzz.contracts.js import number_key
from dshfuzz.contracts.rules import OfficialLayer, RuleId
from dshfuzz.model import MISSING, Event

from ._context import CheckContext, Shared
from ._finding import Finding
from ._lifecycle import TOOL_LEDGER, call_key, show_id, show_value, tool_ledger, upgraded_event
from ._run import Subscriptions, rule_walk, state_walk

__all__ = ["FINAL_SURFACE", "SurfaceFold", "WireMessage", "WireStream", "surface_indices", "wire_messages"]

_L = OfficialLayer
_V0_SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})
_V3_SURFACE = _V0_SURFACE | {"system/message"}


def _get(value: Any, key: str) -> Any:
    return value.get(key, MISSING) if type(value) is dict else MISSING


def _seq_key(value: Any) -> Any:
    """A dict key identifying a seq as JavaScript's ``===`` does (1 and 1.0 alike); plain
    numbers stay numbers so the fold allocates nothing the cyclic collector tracks."""
    return value if type(value) is int or type(value) is float else number_key(value)


_V = TypeVar("_V")


class _LenientFold(Generic[_V]):
    """The surface fold as a doubly linked list keyed by seq: O(1) per append and
    O(removed) per replace, so a log that keeps replacing its newest node stays linear.
    A node's order number preserves list order (a replacement inherits its start's),
    which decides ``startIdx <= endIdx`` without scanning. ``index`` maps a node to what
    the caller tracks for it (in :class:`SurfaceFold`, its position and event), dropped when
    a replace shadows the node."""

    def __init__(self, version: int | None) -> None:
        v3 = version == 3
        self.types: Subscriptions = _V3_SURFACE if v3 else _V0_SURFACE
        self.keys = ("startSeq", "endSeq") if v3 else ("start", "end")
        self.index: dict[Any, _V] = {}
        self.order: dict[Any, int] = {}
        self.prev: dict[Any, Any] = {}
        self.next: dict[Any, Any] = {}
        self.head: Any = None
        self.tail: Any = None
        self.counter = 0

    def link(self, key: Any, index: _V, order: int, before: Any, after: Any) -> None:
        self.index[key], self.order[key], self.prev[key], self.next[key] = index, order, before, after
        if before is None:
            self.head = key
        else:
            self.next[before] = key
        if after is None:
            self.tail = key
        else:
            self.prev[after] = key

    def replace(self, index: _V, key: Any, start: Any, end: Any) -> None:
        order = self.order
        if start not in order or end not in order or order[start] > order[end] or key in order:
            return
        before, after, kept = self.prev[start], self.next[end], order[start]
        cursor = start
        while True:
            following = self.next.pop(cursor)
            del self.index[cursor], self.order[cursor], self.prev[cursor]
            if cursor == end:
                break
            cursor = following
        self.link(key, index, kept, before, after)

    def indices(self) -> list[_V]:
        """What ``index`` holds for each node, in surface order."""
        out: list[_V] = []
        cursor = self.head
        while cursor is not None:
            out.append(self.index[cursor])
            cursor = self.next[cursor]
        return out


FINAL_SURFACE: Shared[list[tuple[int, Event]] | None] = Shared("the final surface's nodes")
"""The final surface's nodes (log position and event), published when :class:`SurfaceFold` finishes."""
_SURFACE: Shared[list[int]] = Shared("the final surface's log positions")
_MESSAGES: Shared[list[WireMessage]] = Shared("the wire messages of the final surface")


_V0_SUBSCRIPTIONS = {t: "visit" for t in _V0_SURFACE}


@state_walk(types={t: "visit" for t in _V3_SURFACE}, publishes=(FINAL_SURFACE,))
class SurfaceFold(_LenientFold[tuple[int, Event]]):
    """The lenient fold as a state walk: the surface types' events fold as the loop hands
    them over, and :meth:`finish` publishes the final surface for :func:`surface_indices`
    and :func:`wire_messages`. State: the current nodes, each with its log position and
    stored event (bounded by the surface: a node's event is dropped when a replace
    shadows it), plus their link and order entries."""

    def __init__(self, ctx: CheckContext) -> None:
        super().__init__(ctx.version)
        self.ctx = ctx
        if ctx.version != 3:
            self.types = _V0_SUBSCRIPTIONS

    def visit(self, position: int, event: Event) -> None:
        """:meth:`_LenientFold.fold` for one event, the node's entry being ``(position, event)``."""
        raw = event.raw
        op = raw.get("surfaceOp", MISSING)
        key = raw.get("seq", MISSING)
        if not (key.__class__ is int or key.__class__ is float):
            key = number_key(key)
        if op == "append":
            index = self.index
            if key in index:
                return None
            self.counter += 1
            tail = self.tail
            index[key], self.order[key], self.prev[key], self.next[key] = (position, event), self.counter, tail, None
            if tail is None:
                self.head = key
            else:
                self.next[tail] = key
            self.tail = key
        elif op.__class__ is dict and op.get("op") == "replace":
            start_key, end_key = self.keys
            self.replace((position, event), key, _seq_key(op.get(start_key, MISSING)), _seq_key(op.get(end_key, MISSING)))
        return None

    def finish(self) -> None:
        nodes = self.indices()
        self.ctx.memo(FINAL_SURFACE, lambda: nodes)
        return None


def _surface_nodes(ctx: CheckContext) -> list[tuple[int, Event]]:
    """The final surface :class:`SurfaceFold` published (position and event per node); asked
    only once the loop is over (a reader's ``finish``)."""
    nodes = ctx.memo(FINAL_SURFACE, lambda: None)
    if nodes is None:
        raise LookupError("the wire's surface fold has not finished: it is published by the check's walk loop")
    return nodes


def surface_indices(ctx: CheckContext) -> list[int]:
    """Log positions of the final surface's nodes, in model-visible order (computed once per check)."""
    return ctx.memo(_SURFACE, lambda: [position for position, _ in _surface_nodes(ctx)])


@dataclass(slots=True)
class WireMessage:
    """One serialised message: ``role`` (system, user, assistant, tool), the log
    position of the event it came from (``None`` for a loader closer), the call ids
    an assistant message advertises, or the id a tool message answers. Never changed
    once made (not frozen: a frozen dataclass's ``__init__`` costs three times as much)."""

    role: str
    index: int | None
    calls: tuple[Any, ...] = ()
    answers: Any = MISSING


def _message_of(raw: dict[str, Any]) -> Any:
    """``deriveEventMessage`` (S:278) of a node's event (an object): ``None`` when it derives no message."""
    data = raw.get("data", MISSING)
    kind = raw.get("type", MISSING)
    if kind == "user/message":
        return data
    message = _get(data, "message")
    if kind == "assistant/message" and _get(message, "content") == []:
        return None
    return message


def _serialise(index: int | None, message: Any, out: list[WireMessage]) -> None:
    """``serializeMessages`` (LD:117-145) for one message, onto ``out``; malformed content adds nothing."""
    content = _get(message, "content")
    if type(content) is not list:
        return
    role = _get(message, "role")
    if role == "system":
        out.append(WireMessage("system", index))
    elif role == "assistant":
        out.append(WireMessage("assistant", index, tuple(
            b.get("id", MISSING) for b in content if type(b) is dict and b.get("type") == "tool-call")))
    else:
        results = [b for b in content if type(b) is dict and b.get("type") == "tool-result"]
        # with no tool result the user text is sent whatever it prints, so the texts are read only otherwise
        if not results or any(_prints_text(b.get("text", MISSING)) for b in content if type(b) is dict and b.get("type") == "text"):
            out.append(WireMessage("user", index))
        for result in results:
            out.append(WireMessage("tool", index, answers=result.get("toolCallId", MISSING)))


def _prints_text(value: Any) -> bool:
    """Whether ``flattenText`` gets a non-empty string from one text block's ``text``:
    ``Array.join`` prints null/undefined as "" and anything else with ``String()``, which
    joins an array's members with commas (decided without recursing into nesting)."""
    while type(value) is list and len(value) == 1:
        value = value[0]
    if type(value) is list:
        return len(value) > 1
    return not (value is None or value is MISSING or value == "")


def wire_messages(ctx: CheckContext) -> list[WireMessage]:
    """The request history after a load: the surface's messages plus the loader's crash closers."""

    def build() -> list[WireMessage]:
        out: list[WireMessage] = []
        for index, event in _surface_nodes(ctx):
            message = _message_of(upgraded_event(event).raw)  # a node's event is an object: the scan found its type
            if message is not None:
                _serialise(index, message, out)
        for advert in tool_ledger(ctx).tail_pending:
            out.append(WireMessage("tool", None, answers=advert.call_id))
        return out

    return ctx.memo(_MESSAGES, build)


@dataclass(slots=True)
class _Pending:
    call_id: Any
    index: int | None
    reported: bool = False
    interposed: int | None = None


@dataclass(slots=True)
class _Judge:
    """A strict endpoint's reading of the stream; findings are collected, never raised.

    ``pending`` holds the calls of the latest assistant message not yet answered. A
    call's window closes at the next user text, the next assistant message or the end
    of history; a call still pending then is unanswered (reported once). User text
    leaves the calls pending, so a tool message after it still answers one, and that
    late answer is what makes the catalog's ``[assistant(tool_calls), user(text), tool]``.
    ``ctx.events`` (a :class:`_Located`) gives the event at a log position a message names.
    """

    ctx: Any
    pending: dict[Any, _Pending] = field(default_factory=dict)
    unanswered: dict[int | None, list[Any]] = field(default_factory=dict)
    closed_by: dict[int | None, str] = field(default_factory=dict)
    late: dict[int | None, list[Any]] = field(default_factory=dict)
    stray: list[tuple[WireMessage, list[Any]]] = field(default_factory=list)

    def close(self, reason: str) -> None:
        for item in self.pending.values():
            if not item.reported:
                item.reported = True
                self.unanswered.setdefault(item.index, []).append(item.call_id)
                self.closed_by.setdefault(item.index, reason)

    def read(self, stream: list[WireMessage]) -> None:
        for message in stream:
            # close() and the user text's marking change nothing while no call is pending: the reason is not formatted then
            if message.role == "assistant":
                if self.pending:
                    self.close(f"the next assistant message (seq {self.seq(message.index)})")
                    self.pending.clear()
                for call_id in message.calls:
                    self.pending.setdefault(call_key(call_id), _Pending(call_id, message.index))
            elif message.role == "user":
                if self.pending:
                    for item in self.pending.values():
                        if item.interposed is None:
                            item.interposed = message.index
                    self.close(f"the next user text (seq {self.seq(message.index)})")
            elif message.role == "tool":
                answered = self.pending.pop(call_key(message.answers), None)
                if answered is None:
                    self.stray.append((message, [p.call_id for p in self.pending.values()]))
                elif answered.interposed is not None:
                    self.late.setdefault(answered.interposed, []).append(answered.call_id)
        self.close("the end of history")

    def seq(self, index: int | None) -> str:
        return "?" if index is None else show_value(self.ctx.events[index].seq)


class _Located:
    """The events a :class:`WireStream` may locate a finding at, by log position: the final
    surface's nodes, the events of the tool ledger's refusals and the assistant/messages of its
    unresolved adverts."""

    __slots__ = ("events",)

    def __init__(self, events: Mapping[int, Event | None]) -> None:
        self.events = events


@rule_walk(RuleId.W1, RuleId.W2, RuleId.W3, RuleId.W4, RuleId.W5, types=(), reads=(FINAL_SURFACE, TOOL_LEDGER))
class WireStream:
    """W1-W5 over the post-load request history and the raw tool results, judged in
    :meth:`finish` from the final surface (:class:`SurfaceFold`) and the tool ledger
    (:class:`~._lifecycle.ToolLedgerWalk`), both finished by then. State: none of its own."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx

    def finish(self) -> Iterator[Finding]:
        ctx = self.ctx
        ledger = tool_ledger(ctx)
        located: dict[int, Event | None] = {r.index: r.event for r in (*ledger.invariants, *ledger.released)}
        located.update((advert.message_index, advert.message) for advert in ledger.unresolved)
        located.update(_surface_nodes(ctx))
        return _wire_findings(ctx, _Located(located))


def _wire_findings(ctx: CheckContext, at: Any) -> Iterator[Finding]:
    """The W findings; ``at.events[position]`` is the event at a log position the findings name."""
    events: Sequence[Event] | Mapping[int, Event] = at.events
    judge = _Judge(at)
    judge.read(wire_messages(ctx))
    ledger = tool_ledger(ctx)
    unresolved_at: dict[int, set[Any]] = {}
    for advert in ledger.unresolved:
        unresolved_at.setdefault(advert.message_index, set()).add(call_key(advert.call_id))

    for message, pending in judge.stray:
        origin = "the loader's synthetic result" if message.index is None else "tool message"
        shown = show_id(message.answers)
        if pending:
            waiting = [show_id(p) for p in pending]
            yield ctx.finding(RuleId.W1, f"{origin} answering {shown} follows no assistant tool call {shown}: the calls "
                              f"awaiting an answer are {', '.join(waiting)} (the ids disagree)",
                              event=_coords(events, message.index), context={"callId": shown, "callIds": waiting})
            continue
        yield ctx.finding(RuleId.W1, f"{origin} answering {shown} follows no assistant tool call awaiting an answer",
                          event=_coords(events, message.index), context={"callId": shown})

    for interposed, ids in judge.late.items():
        names = [show_id(i) for i in ids]
        yield ctx.finding(RuleId.W2, f"user text at seq {judge.seq(interposed)} sits between tool calls "
                          f"{', '.join(names)} and their tool messages", event=_coords(events, interposed),
                          context={"callIds": names})

    for index, ids in judge.unanswered.items():
        names = [show_id(i) for i in ids]
        released = index is not None and any(call_key(i) in unresolved_at.get(index, ()) for i in ids)
        yield ctx.finding(
            RuleId.W3,
            f"assistant tool call{'s' if len(ids) > 1 else ''} {', '.join(names)} not answered before "
            f"{judge.closed_by[index]}; every later request fails",
            event=_coords(events, index),
            context={"callIds": names},
            refused_by=(_L.RELEASED, _L.PROVIDER) if released else (_L.PROVIDER,),
        )

    visible = set(surface_indices(ctx))
    hidden: dict[int, list[Any]] = {}
    for advert in ledger.unresolved:
        if advert.message_index not in visible:
            hidden.setdefault(advert.message_index, []).append(advert.call_id)
    for index, ids in hidden.items():
        names = [show_id(i) for i in ids]
        yield ctx.finding(RuleId.W4, f"tool call{'s' if len(ids) > 1 else ''} {', '.join(names)} left unanswered, "
                          "but a later surface replace already hides the gap from the provider",
                          event=events[index], context={"callIds": names})

    yield from _w5(ctx, events, judge, ledger)


def _coords(events: Any, index: int | None) -> Event | None:
    return None if index is None else events[index]


def _w5(ctx: CheckContext, events: Any, judge: _Judge, ledger: Any) -> Iterator[Finding]:
    layers: dict[int, set[OfficialLayer]] = {}
    messages: dict[int, str] = {}
    ids: dict[int, Any] = {}
    for layer, refusals in ((_L.INVARIANTS, ledger.invariants), (_L.RELEASED, ledger.released)):
        for refusal in refusals:
            if refusal.code in ("no-call", "no-lifecycle"):
                layers.setdefault(refusal.index, set()).add(layer)
                messages.setdefault(refusal.index, refusal.message)
                ids.setdefault(refusal.index, refusal.call_id)
    synthetic = []
    for message, pending in judge.stray:
        waiting = f"the calls awaiting an answer are {', '.join(show_id(p) for p in pending)}" if pending else (
            "no call awaits an answer")
        text = f"tool message answers {show_id(message.answers)}, which is not pending: {waiting}"
        if message.index is None:
            synthetic.append((text, message.answers, pending))
            continue
        layers.setdefault(message.index, set()).add(_L.PROVIDER)
        messages.setdefault(message.index, text)
        ids.setdefault(message.index, message.answers)
    order = {layer: i for i, layer in enumerate(OfficialLayer)}
    for index in sorted(layers):
        yield ctx.finding(RuleId.W5, messages[index], event=events[index],
                          context={"callId": show_id(ids[index])},
                          refused_by=tuple(sorted(layers[index], key=order.__getitem__)))
    for text, answered, pending in synthetic:
        yield ctx.finding(RuleId.W5, f"the loader's synthetic result: {text}",
                          context={"callId": show_id(answered), "callIds": [show_id(p) for p in pending]},
                          refused_by=(_L.PROVIDER,))
