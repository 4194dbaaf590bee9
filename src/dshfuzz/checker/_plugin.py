"""Plugin-semantics rules: retrace markers (P1 P2), tool pairing for archaeology
(P3 P4) and seed 002's three call-id positions compared by id (P5).

P5 is the released validator's tool lifecycle (``_lifecycle``): within a step, the
ids of the assistant tool-call blocks, of ``tool/call.data.callId`` and of
``tool/result.data.message.source.callId`` must name the same calls (a call may
skip ``tool/call`` only when its result is the exact ``TOOL_NOT_STARTED`` repair).
Every disagreement is reported by id, not by count, with the id in the context.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dshfuzz.contracts import strict_equal
from dshfuzz.contracts.rules import OfficialLayer, RuleId, Severity
from dshfuzz.model import MISSING, Event

from ._context import CheckContext
from ._finding import Finding
from ._lifecycle import TOOL_LEDGER, _upgrade, call_key, named_again, show_id, tool_ledger
from ._persistence import message_shape_error, meter_price_throws
from ._run import rule_walk
from ._wire import FINAL_SURFACE, surface_indices

__all__ = ["MARKER_PREFIXES"]

MARKER_PREFIXES = ("retrace-", "message-editor-")
"""Message-id prefixes of the known marker plugins (retrace RENAME RULE, lib/client.js:29-44)."""

_MAX_PATHS = 8


def _get(value: Any, key: str) -> Any:
    return value.get(key, MISSING) if type(value) is dict else MISSING


def upgraded_event(event: Event) -> Event:
    """The event as load and released read it (a legacy flat message upgraded)."""
    data = event.data
    return _upgrade(event) if type(data) is dict and "message" not in data else event


def _is_replace(op: Any) -> bool:
    return type(op) is dict and op.get("op") == "replace"


@rule_walk(RuleId.P1, RuleId.P2, types=("assistant/message",))
class Markers:
    """P1: replacing assistant/messages carry a known marker prefix; P2: no marker cites itself.
    State: none; each assistant/message is judged as the walk passes it."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx

    def visit(self, index: int, event: Event) -> list[Finding] | None:
        found: list[Finding] | None = None
        if _is_replace(event.surfaceOp):
            message_id = _get(_get(event.data, "message"), "id")
            if type(message_id) is not str or not message_id.startswith(MARKER_PREFIXES):
                found = [self.ctx.finding(RuleId.P1, f"assistant/message replace carries message id {show_id(message_id)}, "
                                          f"which no known marker prefix ({', '.join(MARKER_PREFIXES)}) claims", event=event)]
        sources = event.sourceEventSeqs
        seq = event.seq
        # ``in`` (Python's looser ==) screens the list at C speed; === decides the few it keeps.
        if type(sources) is list and seq in sources and any(strict_equal(s, seq) for s in sources):
            finding = self.ctx.finding(RuleId.P2, f"marker at seq {show_id(event.seq)} lists its own seq in sourceEventSeqs "
                                       "(its shadowed set)", event=event, context={"shadowedSeqs": sources})
            found = [finding] if found is None else [*found, finding]
        return found

    def finish(self) -> None:
        return None


@rule_walk(RuleId.P3, types={"tool/call": "call", "tool/result": "result"})
class CallPairing:
    """P3: every tool/call's callId is answered by some tool/result's source.callId (of the
    result as load upgrades it), wherever that result stands in the log.

    State: the keys of the call ids answered so far (O(results) small values: a call may
    come after its answer; an object or array id, which no call can name, is not kept) and
    the calls still unanswered, which are the findings :meth:`finish` reports, in log order."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.answered: set[Any] = set()
        self.pending: dict[Any, list[tuple[int, Event, Any]]] = {}

    def result(self, index: int, event: Event) -> None:
        call_id = _get(_get(_get(upgraded_event(event).data, "message"), "source"), "callId")
        key = call_key(call_id)
        if named_again(call_id):
            self.answered.add(key)
        self.pending.pop(key, None)
        return None

    def call(self, index: int, event: Event) -> None:
        call_id = _get(event.data, "callId")
        key = call_key(call_id)
        if key not in self.answered:
            self.pending.setdefault(key, []).append((index, event, call_id))
        return None

    def finish(self) -> Iterator[Finding]:
        unanswered = sorted((entry for calls in self.pending.values() for entry in calls), key=lambda entry: entry[0])
        for _, event, call_id in unanswered:
            yield self.ctx.finding(RuleId.P3, f"tool/call {show_id(call_id)} has no tool/result; an archaeology "
                                   "extraction will miss its output", event=event, context={"callId": show_id(call_id)})


def _unparseable(blocks: Any, path: str, out: list[str]) -> None:
    """Collect the paths of content fragments that are not text, through nested tool results
    (walked without recursion: nesting depth is the input's to choose)."""
    stack = [(blocks, path)]
    while stack and len(out) <= _MAX_PATHS:
        blocks, path = stack.pop()
        if type(blocks) is not list:
            out.append(path)
            continue
        nested = []
        for i, block in enumerate(blocks):
            kind = _get(block, "type")
            if kind == "text" and type(block.get("text")) is str:  # a block with a type is an object
                continue
            if kind == "tool-result":
                nested.append((block.get("content", MISSING), f"{path}[{i}].content"))
            elif kind != "image":
                out.append(f"{path}[{i}]")
        stack.extend(reversed(nested))


def reports_fragments(content: Any) -> bool:
    """Whether P4 reports ``content`` (a well-shaped tool/result message's): some fragment of it,
    through nested tool results, is not text."""
    paths: list[str] = []
    _unparseable(content, "message.content", paths)
    return bool(paths)


def _released_content_problem(blocks: Any) -> bool:
    """Whether the released codec's ``contentBlocksValue`` (V01:647-700) refuses these blocks."""
    stack = [blocks]
    while stack:
        blocks = stack.pop()
        if type(blocks) is not list:
            return True
        for block in blocks:
            if type(block) is not dict:
                return True
            kind = block.get("type")
            if kind in ("text", "reasoning"):
                bad = set(block) != {"type", "text"} or type(block["text"]) is not str
            elif kind == "image":
                bad = set(block) != {"type", "attachment"} or type(block["attachment"]) is not dict
            elif kind == "tool-call":
                bad = set(block) != {"type", "id", "name", "arguments"} or not _nonempty(block["id"]) \
                    or not _nonempty(block["name"]) or type(block["arguments"]) is not str
            elif kind == "tool-result":
                bad = not ({"type", "toolCallId", "content"} <= set(block) <= {"type", "toolCallId", "content", "isError"}) \
                    or not _nonempty(block["toolCallId"]) or block.get("isError", False) not in (True, False)
                stack.append(block.get("content"))
            else:
                bad = not _nonempty(kind)
            if bad:
                return True
    return False


def _nonempty(value: Any) -> bool:
    return type(value) is str and value != ""


def _serializer_throws(blocks: Any) -> bool:
    """Whether the offline request serializer (``contentHasImage``/``flattenText``, dsh-llm and
    LD:36-40) throws on a message's content: a nested tool-result content that is not an
    array, or a null block; or whether the DeepSeek adapter refuses it for holding an image,
    at any depth (LD:677-682: no DeepSeek model accepts image input, measured)."""
    stack = [blocks]
    while stack:
        blocks = stack.pop()
        if type(blocks) is not list:
            return True
        for block in blocks:
            if block is None or block is MISSING:
                return True
            kind = _get(block, "type")
            if kind == "image":
                return True
            if kind == "tool-result":
                stack.append(_get(block, "content"))
    return False


@rule_walk(RuleId.P4, types=("tool/result",), reads=(FINAL_SURFACE,))
class ResultOutput:
    """P4: tool/result content parses recursively into text blocks (empty content is legal).

    Each finding names the moments that refuse that output: the token meter, which prices
    every stored result carrying a surfaceOp; the released codec (exact content blocks); and,
    for a result on the current surface, the request serializer. Whether a result is on
    the final surface is known only at the end, so the malformed results wait for
    :meth:`finish`: the state is those (O(malformed results), each with its verdicts)."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.malformed: list[tuple[int, Event, list[str], bool, bool, bool]] = []

    def visit(self, index: int, stored: Event) -> None:
        event = upgraded_event(stored)
        content = _get(_get(event.data, "message"), "content")
        paths: list[str] = []
        _unparseable(content, "message.content", paths)
        if paths and message_shape_error(event.type, event.data) is not None:
            # the message's shape (E6) owns its top-level elements: P4 judges the output inside its block
            paths = [path for path in paths if "content" in path[len("message.content"):]]
        if not paths:
            return None
        # the meter reads the stored event, not its upgrade
        meter = stored.surfaceOp is not MISSING and meter_price_throws(_get(_get(stored.data, "message"), "content"))
        # released validates the blocks of a format-0 result only: a format-1 log is restored as it is
        released = self.ctx.version == 0 and _released_content_problem(content)
        self.malformed.append((index, event, paths, meter, _serializer_throws(content), released))
        return None

    def finish(self) -> Iterator[Finding]:
        if not self.malformed:
            return
        visible = set(surface_indices(self.ctx))
        for index, event, paths, meter, serializer, released in self.malformed:
            layers = []
            if meter:
                layers.append(OfficialLayer.METER)
            if index in visible and serializer:
                layers.append(OfficialLayer.WIRE)
            if released:
                layers.append(OfficialLayer.RELEASED)
            shown = ", ".join(paths[:_MAX_PATHS]) + (" ..." if len(paths) > _MAX_PATHS else "")
            # an error wherever a layer refuses it; output no layer reads is an archaeology gap (a warning)
            yield self.ctx.finding(RuleId.P4, f"tool/result output has fragments that are not text: {shown}",
                                   event=event, context={"paths": paths[:_MAX_PATHS]},
                                   refused_by=tuple(sorted(layers, key=list(OfficialLayer).index)),
                                   severity=None if layers else Severity.WARNING)


@rule_walk(RuleId.P5, types=(), reads=(TOOL_LEDGER,))
class CallIdPositions:
    """P5: the released lifecycle's disagreements between the three call-id positions.

    Its verdicts are the tool ledger's (:func:`~._lifecycle.tool_ledger`), the state walk
    :class:`~._lifecycle.ToolLedgerWalk` publishes before this walk's :meth:`finish` reads it:
    each refusal carries the event it names (the refused event, or the step/end or turn/end
    that leaves calls unresolved). The walk keeps nothing of its own."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx

    def finish(self) -> Iterator[Finding]:
        ctx = self.ctx
        unresolved: dict[int, tuple[Event, list[Any]]] = {}
        for refusal in tool_ledger(ctx).released:
            if refusal.code == "no-lifecycle":
                continue
            if refusal.code == "unresolved":
                assert refusal.event is not None, "a step closes at the event that closes it"
                unresolved.setdefault(refusal.index, (refusal.event, []))[1].append(refusal.call_id)
                continue
            yield ctx.finding(RuleId.P5, refusal.message, event=refusal.event,
                              context={"callId": show_id(refusal.call_id)})
        for boundary, ids in unresolved.values():
            shown = [show_id(i) for i in ids]
            yield ctx.finding(RuleId.P5, f"{boundary.type} closes with advertised tool call{'s' if len(ids) > 1 else ''} "
                              f"{', '.join(shown)} that no tool/result answers", event=boundary,
                              context={"callIds": shown})
