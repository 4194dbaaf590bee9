"""Tool-call pairing incidents, from the persisted lifecycle to the provider wire: orphan
calls (visible or compacted away), unparsable results, disagreeing call-id positions,
dangling or replayed tool messages, user text inside a tool round, and seed 001's
scheduler failure."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L

from ._base import Level, LogShape, before_every_turn, mutator
from ._draft import EventDraft, copy_json, seq_refs
from ._envelope import time_near
from ._select import ToolCall, choose, data_of, replace_guard, message_of, steps, surface_at, tool_calls

_RELEASED = (L.RELEASED,)


def _answered_once(draft: EventDraft) -> list[ToolCall]:
    return [c for c in tool_calls(draft) if c.call is not None and len(c.results) == 1]


def _coordinates(draft: EventDraft, index: int) -> dict[str, Any]:
    payload = data_of(draft.events[index])
    return {"turn": payload.get("turn"), "step": payload.get("step")}


@mutator(
    "orphan-tool-call",
    level=Level.EVENT,
    expects=("P3", "W3"),
    official=_RELEASED,
    incident="""A tool/call was recorded but its tool/result never was (an interrupted or
    failed round). The assistant's call stays on the provider-visible surface unanswered, so
    every later request replays an assistant message whose tool_calls have no tool messages,
    and archaeology loses the call's output.""",
)
def orphan_tool_call(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool call answered exactly once, whose assistant/message is on the
    final surface and whose result no later event cites. Removes that tool/result,
    renumbering later events. Deterministic given its draws."""
    visible, cited = set(surface_at(draft)), draft.referenced()
    candidates = [c for c in _answered_once(draft) if c.assistant in visible and c.results[0] not in cited]
    call = choose(data, candidates, "visible answered tool call")
    if defect:
        draft.remove(call.results[0])
    return f"tool/result of call {call.call_id!r} (seq {call.results[0]}) removed"


_COMPACTED_CALLS = LogShape(
    turns=(2, 3),
    weights=(("tool_calls", 1.0), ("working_step", 1.0), ("full_turns", 1.0), ("compact_all", 1.0),
             *before_every_turn("compaction")),
)
"""Logs whose earlier turns answer tool calls that a later turn's compaction shadows: at least
two turns drawn in full, each leading with a working step that calls tools (the final step
answers them), and a compaction of the whole surface before every turn (one that keeps the last
nodes keeps the answer visible or makes it the range's endpoint)."""


@mutator(
    "compacted-orphan-tool-call",
    level=Level.EVENT,
    expects=("P3", "W4"),
    official=_RELEASED,
    incident="""Seed 001's second case: a tool/call without a tool/result whose gap a later
    compaction has already hidden -- the assistant message asking for the call is no longer
    on the provider-visible surface. Requests are fine, but the execution log still has an
    unresolved call: a warning, not a blocking defect.""",
    logs=_COMPACTED_CALLS,
)
def compacted_orphan_tool_call(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool call answered exactly once whose assistant/message and result are
    both shadowed by a later replace (and the result is no range endpoint). Removes that
    tool/result and drops it from every seq list, renumbering later events. Deterministic
    given its draws."""
    visible = set(surface_at(draft))
    endpoints = {c[k] for e in draft.events for c, k in seq_refs(e) if type(c) is dict}
    candidates = [c for c in _answered_once(draft)
                  if c.assistant not in visible and c.results[0] not in visible and c.results[0] not in endpoints]
    call = choose(data, candidates, "compacted answered tool call")
    if defect:
        draft.remove(call.results[0])
    return f"shadowed tool/result of call {call.call_id!r} (seq {call.results[0]}) removed"


_UNPARSABLE = (42, "raw output", [{"type": "text", "text": 7}], [{"kind": "text"}], [["text"]], [None], {"text": "x"})


@mutator(
    "unparsable-tool-result",
    level=Level.EVENT,
    expects=("P4",),
    official=_RELEASED,
    incident="""A tool/result whose output is not the recursive text structure (a list of
    {type: "text", text} blocks or equivalent): a plugin stored a raw value. The rc.8 read
    path loads it, transcript archaeology silently drops the output, and the released v0
    codec refuses the payload.""",
)
def unparsable_tool_result(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool/result with a tool-result block. Replaces a drawn one's output
    content by a drawn unparsable value. Deterministic given its draws."""
    candidates = []
    for i in draft.of_type("tool/result"):
        content = message_of(draft.events[i]).get("content")
        for block in content if type(content) is list else ():
            if type(block) is dict and block.get("type") == "tool-result":
                candidates.append((i, block))
    i, block = choose(data, candidates, "tool-result block")
    content = data.draw(st.sampled_from(_UNPARSABLE), label="content")
    if defect:
        block["content"] = content
    return f"seq {i} tool-result content = {content!r}"


@mutator(
    "id-positions-disagree",
    level=Level.EVENT,
    expects=("P5",),
    official=_RELEASED,
    incident="""Seed 002: the three places a call id lives -- the assistant's tool-call block,
    tool/call.data.callId and tool/result.data.message.source.callId -- no longer name the
    same id (a rename applied to one position). Compared by id, not by count, the log is
    already broken and no request assembly can fix it.""",
)
def id_positions_disagree(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool call with a tool/call and one tool/result. Renames the id in one
    drawn position (for the result: its source and its wrapper block together).
    Deterministic given its draws."""
    call = choose(data, _answered_once(draft), "answered tool call")
    assert call.call is not None  # an answered call has its tool/call
    position = data.draw(st.sampled_from(("block", "tool/call", "tool/result")), label="position")
    new = f"{call.call_id}-renamed"
    if defect:
        _rename(draft, call, position, new)
    return f"call {call.call_id!r}: {position} id renamed to {new!r}"


def _rename(draft: EventDraft, call: ToolCall, position: str, new: str) -> None:
    """Rename ``call``'s id in one position: its block, its tool/call or its result (source and block)."""
    assert call.call is not None  # an answered call has its tool/call
    if position == "block":
        message_of(draft.events[call.assistant])["content"][call.block]["id"] = new
    elif position == "tool/call":
        data_of(draft.events[call.call])["callId"] = new
    else:
        message = message_of(draft.events[call.results[0]])
        message["source"]["callId"] = new
        content = message.get("content")
        for block in content if type(content) is list else ():
            if type(block) is dict and block.get("type") == "tool-result":
                block["toolCallId"] = new


def _tool_pair(draft: EventDraft, at: int, coordinates: dict[str, Any], call_id: str) -> None:
    """Insert a tool/call and its tool/result for ``call_id`` at ``at`` and ``at + 1``."""
    time = time_near(draft, at)
    draft.insert(at, {"type": "tool/call", "seq": at, "time": time,
                      "data": {**coordinates, "callId": call_id, "name": "ls", "arguments": "{}"}})
    message = {
        "id": f"msg-tool-{call_id}", "role": "user",
        "content": [{"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": "ok"}]}],
        "source": {"kind": "tool", "callId": call_id},
    }
    draft.insert(at + 1, {"type": "tool/result", "seq": at + 1, "time": time,
                          "data": {**coordinates, "message": message},
                          "surfaceOp": "append", "sourceEventSeqs": [at]})


@mutator(
    "dangling-tool-message",
    level=Level.EVENT,
    expects=("W1", "P5"),
    official=_RELEASED,
    incident="""2026-08-27: strict endpoints (MiMo) answered INVALID_REQUEST "Messages with role
    'tool' must be a response to a preceding message with 'tool_calls'". A tool result was on
    the surface after an assistant message that made no tool calls (a marker hid the calling
    message but not its results, or a replay wrote results with no call).""",
)
def dangling_tool_message(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an appended assistant/message without tool-call blocks, not inside a
    later replace's range. Inserts, right after a drawn one, a tool/call and tool/result for
    a fresh, never-advertised call id. Deterministic given its draws. Its twin inserts nothing:
    the unadvertised pair is the defect itself (advertising it would also need a tool-calls
    finish and a following step, a different log)."""
    calling, inside = {c.assistant for c in tool_calls(draft)}, replace_guard(draft)
    candidates = [
        i for i in draft.of_type("assistant/message")
        if draft.events[i].get("surfaceOp") == "append" and i not in calling and not inside(i + 1)
    ]
    i = choose(data, candidates, "assistant/message without tool calls")
    if defect:
        _tool_pair(draft, i + 1, _coordinates(draft, i), f"call_dangling_{i}")
    return f"unadvertised tool/call + tool/result inserted after seq {i}"


@mutator(
    "replayed-tool-result",
    level=Level.EVENT,
    expects=("W5", "W1"),
    official=(L.INVARIANTS, L.RELEASED),
    incident="""An interrupted round was replayed and wrote a second tool/result for a call that
    had already been answered, after all of the message's results. The second tool message
    answers a call id that is no longer pending; strict providers refuse the request.""",
)
def replayed_tool_result(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool call answered once whose round no later replace spans. Inserts a
    copy of its tool/result (new message id) after the last result of the same assistant
    message. Deterministic given its draws. Its twin inserts nothing: the second result is the
    defect itself."""
    last_of: dict[int, int] = {}
    for c in tool_calls(draft):
        last_of[c.assistant] = max([last_of.get(c.assistant, -1), *c.results])
    inside = replace_guard(draft)
    call = choose(data, [c for c in _answered_once(draft) if not inside(last_of[c.assistant] + 1)],
                  "answered tool call")
    last = last_of[call.assistant]
    replay = copy_json(draft.events[call.results[0]])
    message_of(replay)["id"] = f"{message_of(replay).get('id')}-replayed"
    replay["time"] = time_near(draft, last + 1)
    if defect:
        draft.insert(last + 1, replay)
    return f"tool/result for {call.call_id!r} replayed at seq {last + 1}"


@mutator(
    "user-text-between",
    level=Level.EVENT,
    expects=("W2", "W3"),
    incident="""User text landed between an assistant message's tool_calls and their tool
    results (a steering message spliced mid-round). The wire becomes [assistant(tool_calls),
    user(text), tool]: the ordering defect (W2), and an assistant message not followed by
    its tool messages, which OpenAI-compatible endpoints refuse with the very error of a
    missing result (W3). The results are still in the step, so every official layer
    accepts; only the provider refuses.""",
)
def user_text_between(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an answered tool call whose assistant/message no later replace spans.
    Inserts a user text message append right after a drawn such assistant/message, before
    its results. Deterministic given its draws. Its twin inserts nothing: the text's place
    is the defect."""
    inside = replace_guard(draft)
    candidates = [c for c in tool_calls(draft) if c.results and not inside(c.assistant + 1)]
    call = choose(data, candidates, "answered tool call")
    at = call.assistant + 1
    text = data.draw(st.sampled_from(("wait", "also check the tests", "stop")), label="text")
    message = {"id": f"msg-user-steer-{at}", "role": "user", "content": [{"type": "text", "text": text}],
               "source": {"kind": "user"}}
    if defect:
        draft.insert(at, {"type": "user/message", "seq": at, "time": time_near(draft, at), "data": message,
                          "surfaceOp": "append"})
    return f"user text inserted at seq {at}, between call {call.call_id!r} and its result"


@mutator(
    "scheduler-failure",
    level=Level.EVENT,
    expects=("W3", "P3"),
    official=_RELEASED,
    incident="""Seed 001: scheduler.prepare() threw after tool/call was persisted; the only path
    that appends tool/result never ran, yet step/end and turn/end(error) were written. Crash
    recovery only repairs open tails, so every later request replays the unanswered call and
    the provider refuses it before inference: "An assistant message with 'tool_calls' must be
    followed by tool messages responding to each 'tool_call_id'".""",
)
def scheduler_failure(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool call with a tool/call in a step with integer turn and step.
    Truncates the log right after a drawn tool/call and closes the step and turn with
    step/end and turn/end{kind: "error"}. Deterministic given its draws. Its twin truncates
    after the round's last tool/call or tool/result instead (every call answered) and closes
    the step and turn the same way."""
    enclosures = steps(draft)
    candidates = [c for c in tool_calls(draft) if c.call is not None
                  and type(_coordinates(draft, c.call)["turn"]) is int
                  and any(s.contains(c.call) for s in enclosures)]
    call = choose(data, candidates, "tool/call in a step")
    assert call.call is not None  # every candidate has its tool/call
    coordinates = _coordinates(draft, call.call)
    draft.check_truncate(call.call + 1)
    if defect:
        draft.truncate(call.call + 1)
    else:
        answered = [j for c in tool_calls(draft) if c.assistant == call.assistant for j in (c.call, *c.results)]
        draft.truncate(max(j for j in answered if j is not None) + 1)
    time = time_near(draft, len(draft.events))
    at = len(draft.events)
    draft.events.append({"type": "step/end", "seq": at, "time": time + 1, "data": coordinates})
    error = {"message": "tool scheduler failed before dispatch", "code": "TOOL_SCHEDULER_FAILED"}
    draft.events.append({"type": "turn/end", "seq": at + 1, "time": time + 2,
                         "data": {"turn": coordinates["turn"], "reason": {"kind": "error", "error": error}}})
    draft.cuts.append(len(draft.events))
    return f"scheduler failed after tool/call {call.call_id!r} (seq {call.call}); turn {coordinates['turn']} ended in error"
