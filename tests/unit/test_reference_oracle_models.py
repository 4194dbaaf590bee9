"""The enclosure, meter, inbox and lifecycle reference models, reason code by reason
code: a log each refuses (first failing seq, code, official message) beside a near
miss it accepts.

Base log: :func:`reference_oracle_logs.tool_turn` (seqs 0 splice, 1 turn/start,
2 claim, 3 step/start, 4 user, 5 request/header, 6-8 chunks, 9 assistant with
call c1, 10 tool/call, 11 tool/result, 12 step/end, 13 step/start, 14 assistant,
15 step/end, 16 turn/end).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_oracle_logs import (
    HEADER,
    MODEL,
    PROVIDER,
    call_block,
    edited,
    text,
    tool_turn,
    verdict_text,
    without,
)

from dshfuzz.model import Event, SessionHeader, dumps
from dshfuzz.oracle import (
    Accepted,
    InboxState,
    Violation,
    check_enclosure,
    check_lifecycle,
    check_meter,
    replay_inbox,
)
from dshfuzz.contracts import strict_equal
from dshfuzz.oracle._lifecycle import _Surface

Events = list[dict[str, Any]]
Edit = Callable[[Events], Events | None]
ENCLOSURE = 'invariant violated by "@deepseek-ai/dsh-session": '


def add(events: Events, type_: str, data: Any, **envelope: Any) -> Events:
    events.append({"type": type_, "seq": len(events), "time": 0, "data": data, **envelope})
    return events


def run(edit: Edit) -> Events:
    """The base log after ``edit``, which edits in place or returns a new event list."""
    events = edited(tool_turn())
    result = edit(events)
    return result if isinstance(result, list) else events


def assert_refuses(
    model: Callable[..., Any],
    events: Events,
    code: str,
    seq: int | None,
    message: str | None,
    header: Any = None,
) -> None:
    verdict = model(events, header)
    assert isinstance(verdict, Violation) and (verdict.seq, verdict.code) == (seq, code), verdict_text(
        verdict, events
    )
    if message is not None:
        assert verdict.message == message, verdict_text(verdict, events)


def assert_accepts(model: Callable[..., Any], events: Events, header: Any = None) -> Any:
    verdict = model(events, header)
    assert isinstance(verdict, Accepted), verdict_text(verdict, events)
    return verdict.state


def set_data(seq: int, key: str, value: Any) -> Edit:
    return lambda e: e[seq]["data"].__setitem__(key, value)


def not_started_result(events: Events, seq: int, call_id: str = "c1") -> dict[str, Any]:
    """The exact TOOL_NOT_STARTED repair result for ``call_id`` at ``seq``."""
    text_ = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
    return {
        "type": "tool/result",
        "seq": seq,
        "time": 0,
        "surfaceOp": "append",
        "data": {
            "turn": 1,
            "step": 1,
            "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
            "message": {
                "id": f"interrupted-tool-result-{call_id}-{seq}",
                "role": "user",
                "source": {"kind": "tool", "callId": call_id},
                "content": [
                    {"type": "tool-result", "toolCallId": call_id, "isError": True, "content": [text(text_)]}
                ],
            },
        },
    }


def drop_call(events: Events) -> Events:
    """The base log without tool/call 10 (its result now cites the assistant message)."""
    events[11]["sourceEventSeqs"] = [9]
    return without(events, 10)


def repaired(events: Events) -> Events:
    """The base log with tool/call c1 and its result replaced by the TOOL_NOT_STARTED repair."""
    events = without(events, 10, 11)
    events.insert(10, not_started_result(events, 10))
    return without(events)


# -- enclosure (the dsh-session invariant companion) ----------------------------------------------

ENCLOSURE_REFUSED: list[tuple[str, Edit, str, int, str]] = [
    # The seed checks refuse this before the companion runs; the companion's own check still stands.
    (
        "seq goes back",
        lambda e: e[5].__setitem__("seq", 4),
        "seq-not-increasing",
        5,
        "seq must strictly increase: saw 4 after 4",
    ),
    (
        "turn/start inside a turn",
        lambda e: e.__setitem__(3, {**e[3], "type": "turn/start", "data": {"turn": 2}}),
        "turn-already-open",
        3,
        "turn/start 2 while turn 1 is still open",
    ),
    (
        "first turn numbered 2",
        set_data(1, "turn", 2),
        "turn-out-of-order",
        1,
        "turn/start expected turn 1, got 2",
    ),
    (
        "turn/end names another turn",
        set_data(16, "turn", 2),
        "turn-end-mismatch",
        16,
        "turn/end 2 does not match open turn 1",
    ),
    (
        "turn/end with a step open",
        lambda e: without(e, 15),
        "turn-end-step-open",
        15,
        "turn/end 1 while step 2 is still open",
    ),
    (
        "step/start in another turn",
        set_data(3, "turn", 2),
        "step-turn-mismatch",
        3,
        "step/start in turn 2 but open turn is 1",
    ),
    (
        "step/start with a step open",
        lambda e: without(e, 12),
        "step-already-open",
        12,
        "step/start 2 while step 1 is still open",
    ),
    (
        "step number reused",
        set_data(13, "step", 1),
        "step-reused",
        13,
        "step/start expected step 2 in turn 1, got 1",
    ),
    (
        "step number skipped",
        set_data(13, "step", 3),
        "step-out-of-order",
        13,
        "step/start expected step 2 in turn 1, got 3",
    ),
    (
        "chunk in another step",
        set_data(7, "step", 2),
        "not-in-open-step",
        7,
        "assistant/chunk names turn 1/step 2 but open is turn 1/step 1",
    ),
    (
        "turn null on a message",
        set_data(14, "turn", None),
        "not-in-open-step",
        14,
        "assistant/message names turn null/step 2 but open is turn 1/step 2",
    ),
    (
        "tool/result without its tool/call",
        drop_call,
        "tool-result-without-call",
        10,
        "tool/result for c1 with no prior tool/call in this step",
    ),
    (
        "tool/result in the step after its call",
        lambda e: e[11]["data"].__setitem__("step", 2) or e.insert(13, e.pop(11)) or without(e),
        "tool-result-without-call",
        13,
        "tool/result for c1 with no prior tool/call in this step",
    ),
    (
        "tool/result replace between turns",
        lambda e: add(
            e,
            "tool/result",
            e[11]["data"],
            surfaceOp={"op": "replace", "start": 11, "end": 11},
            sourceEventSeqs=[11],
        ),
        "tool-result-replace-outside-turn",
        17,
        "tool/result surface replacement appended outside any open turn",
    ),
    (
        "request/context between turns",
        lambda e: add(e, "request/context", {"provider": PROVIDER, "model": MODEL}),
        "outside-turn",
        17,
        "request/context appended outside any open turn (core execution events must be turn-enclosed)",
    ),
]


@pytest.mark.parametrize(
    "name,edit,code,seq,message", ENCLOSURE_REFUSED, ids=[c[0] for c in ENCLOSURE_REFUSED]
)
def test_enclosure_refuses(name: str, edit: Edit, code: str, seq: int, message: str) -> None:
    assert_refuses(check_enclosure, run(edit), code, seq, ENCLOSURE + message)


def test_enclosure_reads_like_v8_on_malformed_data() -> None:
    assert_refuses(
        check_enclosure,
        run(lambda e: e[1].__setitem__("data", None)),
        "malformed-event",
        1,
        "Cannot read properties of null (reading 'turn')",
    )


def test_enclosure_accepts_the_turn_and_its_quirks() -> None:
    state = assert_accepts(check_enclosure, tool_turn().events)
    assert (state.open_turn, state.open_step, state.next_turn, state.pending_calls) == (None, None, 2, ())
    # A synthetic TOOL_NOT_STARTED result needs no tool/call.
    assert_accepts(check_enclosure, repaired(edited(tool_turn())))
    # `!==` semantics: turn/end naming null while nothing is open passes.
    assert_accepts(
        check_enclosure, add(edited(tool_turn()), "turn/end", {"turn": None, "reason": {"kind": "completed"}})
    )
    # Nothing requires a call to be answered: step/end forgets it.
    assert_accepts(check_enclosure, without(tool_turn().events, 11))


# -- token meter (T1/T2) ------------------------------------------------------------------------------


def compaction(
    events: Events, *, claim: tuple[int, int] = (4, 11), span: tuple[int, int] = (4, 11)
) -> Events:
    add(events, "compaction/start", {"compactionId": "k", "turn": None})
    add(
        events,
        "compaction/summary",
        {
            "compactionId": "k",
            "summary": [text("s")],
            "shadowedRange": {"start": claim[0], "end": claim[1]},
            "shadowedSeqs": [4, 9, 11],
            "shadowedTokenCount": 30,
            "provider": PROVIDER,
            "model": MODEL,
        },
    )
    add(
        events,
        "user/message",
        {
            "id": "cp",
            "role": "user",
            "content": [text("summary")],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": "k"},
        },
        surfaceOp={"op": "replace", "start": span[0], "end": span[1]},
        sourceEventSeqs=[4, 9, 11],
    )
    return add(events, "compaction/end", {"compactionId": "k", "turn": None})


METER_REFUSED: list[tuple[str, Edit, str, int, str]] = [
    (
        "step/start before step/end",
        lambda e: without(e, 12),
        "meter-step-not-ended",
        12,
        "token meter: step/start at seq 12 arrived before turn 1/step 1 ended",
    ),
    (
        "step/end of another step",
        set_data(12, "step", 2),
        "meter-step-end-unmatched",
        12,
        "token meter: step/end at seq 12 has no matching step/start event",
    ),
    (
        "message of another step",
        set_data(14, "step", 1),
        "meter-message-unmatched",
        14,
        "token meter: assistant/message at seq 14 has no matching step/start event",
    ),
    (
        "replace of a range off the surface",
        lambda e: e.__setitem__(slice(17), e[:17]) or compaction(e, claim=(5, 9), span=(5, 9)),
        "meter-replace-range",
        19,
        "token surface: replace at seq 19 has invalid current range 5-9",
    ),
    (
        "cited chunk not earlier",
        lambda e: e[9].__setitem__("sourceEventSeqs", [6, 7, 9]),
        "meter-source-not-earlier",
        9,
        "token meter: assistant/message at seq 9 source seq 9 is not earlier",
    ),
    (
        "cited chunk repeated",
        lambda e: e[9].__setitem__("sourceEventSeqs", [6, 6]),
        "meter-source-repeated",
        9,
        "token meter: assistant/message at seq 9 repeats source seq 6",
    ),
    (
        "cited event not a chunk",
        lambda e: e[9].__setitem__("sourceEventSeqs", [5]),
        "meter-source-not-chunk",
        9,
        "token meter: assistant/message at seq 9 source seq 5 is not assistant/chunk",
    ),
    (
        "cited chunk of another step",
        set_data(7, "step", 2),
        "meter-source-other-step",
        9,
        "token meter: assistant/message at seq 9 source seq 7 belongs to another step",
    ),
    (
        "cited chunk of unknown type",
        lambda e: e[8]["data"].__setitem__("chunk", {"type": "weird"}),
        "meter-chunk-unknown",
        9,
        'unreachable variant in BlockAssembler.push: {"type":"weird"}',
    ),
    (
        "cited block never closed",
        lambda e: e[8]["data"].__setitem__(
            "chunk", {"type": "block-start", "index": 5, "blockType": "image"}
        ),
        "meter-incomplete-block",
        9,
        'cannot assemble incomplete block of type "image"',
    ),
    (
        "claim for another range",
        lambda e: compaction(e, claim=(4, 9)),
        "meter-shadow-price-mismatch",
        19,
        "token surface: replace at seq 19 over range 4-11 has no adjacent shadow price (armed claim covers 4-9)",
    ),
    (
        "request header without config",
        lambda e: e[5]["data"]["header"].pop("config") and None,
        "malformed-event",
        5,
        "Cannot read properties of undefined (reading 'provider')",
    ),
    (
        "usage chunk without a chunk",
        lambda e: add(e, "assistant/chunk", {"turn": 2, "step": 1}),
        "malformed-event",
        17,
        "Cannot read properties of undefined (reading 'type')",
    ),
]


@pytest.mark.parametrize("name,edit,code,seq,message", METER_REFUSED, ids=[c[0] for c in METER_REFUSED])
def test_meter_refuses(name: str, edit: Edit, code: str, seq: int, message: str) -> None:
    assert_refuses(check_meter, run(edit), code, seq, message)


def test_meter_accepts_adjacent_claims_and_skips_sources_before_any_header() -> None:
    state = assert_accepts(check_meter, compaction(edited(tool_turn())))
    assert state.surface == (19, 14) and state.open_step is None and state.header_seen
    # Without a request/header the usage anchor is never built, so the sources are never read.
    events = without(tool_turn().events, 5)
    events[8]["sourceEventSeqs"] = [3]
    assert_accepts(check_meter, events)
    # A replace with no armed claim folds with zero delta: accepted.
    events = compaction(edited(tool_turn()))
    del events[18]
    assert_accepts(check_meter, without(events))


# -- inbox (I1) -------------------------------------------------------------------------------------


def test_inbox_replays_splices_from_the_seed_boundary() -> None:
    assert assert_accepts(replay_inbox, tool_turn().events) == InboxState((), ())
    events = edited(tool_turn())
    events[2]["data"] = {"target": "next-step", "start": 0, "inserted": [{"id": "n1"}, {"id": "n2"}]}
    assert assert_accepts(replay_inbox, events) == InboxState(("u-pending",), ("n1", "n2"))
    # I1: a fork's claim of a prompt pending in the parent is an orphan once replay starts at seedLength.
    assert_refuses(
        replay_inbox,
        tool_turn().events,
        "inbox-invalid-splice",
        2,
        "invalid persisted inbox splice at session seq 2: invalid inbox splice",
        {**HEADER, "seedLength": 1},
    )
    assert_accepts(replay_inbox, tool_turn().events, {**HEADER, "seedLength": 3})
    assert_accepts(
        replay_inbox, [Event(e) for e in tool_turn().events], SessionHeader({**HEADER, "seedLength": 3})
    )


INBOX_REFUSED: list[tuple[str, Edit, str, int, str]] = [
    (
        "claim more than pending",
        set_data(2, "removedCount", 2),
        "inbox-invalid-splice",
        2,
        "invalid inbox splice",
    ),
    ("start past the end", set_data(2, "start", 2), "inbox-invalid-splice", 2, "invalid inbox splice"),
    ("fractional start", set_data(2, "start", 0.5), "inbox-invalid-splice", 2, "invalid inbox splice"),
    (
        "duplicate pending id across lists",
        lambda e: e[2].__setitem__(
            "data", {"target": "next-step", "start": 0, "inserted": [{"id": "u-pending"}]}
        ),
        "inbox-duplicate-pending",
        2,
        'message "u-pending" is already pending',
    ),
    (
        "unknown target",
        set_data(2, "target", "later"),
        "inbox-malformed-splice",
        2,
        "Cannot read properties of undefined (reading 'length')",
    ),
    (
        "inserted not iterable",
        set_data(0, "inserted", 5),
        "inbox-malformed-splice",
        0,
        "Spread syntax requires ...iterable[Symbol.iterator] to be a function",
    ),
]


@pytest.mark.parametrize("name,edit,code,seq,cause", INBOX_REFUSED, ids=[c[0] for c in INBOX_REFUSED])
def test_inbox_refuses(name: str, edit: Edit, code: str, seq: int, cause: str) -> None:
    assert_refuses(
        replay_inbox, run(edit), code, seq, f"invalid persisted inbox splice at session seq {seq}: {cause}"
    )


def test_inbox_stops_on_a_null_event_as_v8_does() -> None:
    assert_refuses(
        replay_inbox,
        run(lambda e: e.__setitem__(1, None)),
        "malformed-event",
        1,
        "Cannot read properties of null (reading 'type')",
    )


# -- released lifecycle relationships ------------------------------------------------------------


def turn_two(events: Events, *body: tuple[str, dict[str, Any]], close: bool = True) -> Events:
    """Append turn 2, step 1 (17 turn/start, 18 step/start, 19 request/header), then ``body``."""
    add(events, "turn/start", {"turn": 2})
    add(events, "step/start", {"turn": 2, "step": 1})
    add(
        events,
        "request/header",
        {"header": {"config": {"provider": PROVIDER, "model": MODEL}}, "reason": "initial"},
    )
    for type_, data in body:
        add(events, type_, data)
    if close:
        add(events, "step/end", {"turn": 2, "step": 1})
        add(events, "turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    return events


def retry(n: int = 1, retry_id: str = "r", **overrides: Any) -> tuple[str, dict[str, Any]]:
    return "llm/retry", {
        "turn": 2,
        "step": 1,
        "provider": PROVIDER,
        "mode": "always",
        "policyKey": "k",
        "retry": n,
        "retryId": retry_id,
        "delayMs": 0,
        "failure": {"message": "busy", "code": "E"},
        **overrides,
    }


def started(n: int = 1, retry_id: str = "r", **overrides: Any) -> tuple[str, dict[str, Any]]:
    return "llm/retry-started", {"turn": 2, "step": 1, "retry": n, "retryId": retry_id, **overrides}


def dispatch(
    kind: str, sub: str, parent: str = "c", root: str = "c", **overrides: Any
) -> tuple[str, dict[str, Any]]:
    result = {"isError": False, "content": [text("r")]} if kind == "tool/code-dispatch" else {}
    return kind, {
        "rootCallId": root,
        "parentCallId": parent,
        "subCallId": sub,
        "name": "n",
        "arguments": {"a": 1},
        **result,
        **overrides,
    }


def title(seqs: list[int], kind: str = "provider") -> Edit:
    source = {"kind": kind} if kind != "provider" else {"kind": "provider", "provider": PROVIDER}
    return lambda e: add(e, "session/title", {"title": "t", "messageSeqs": seqs, "source": source})


def title_request(framed: str) -> Edit:
    message = {
        "id": "m",
        "role": "user",
        "content": [text(framed)],
        "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"},
    }
    return lambda e: add(
        e,
        "session/title-llm-request",
        {
            "titleProvider": "p",
            "messageSeqs": [4],
            "route": {"provider": PROVIDER, "model": MODEL},
            "system": "",
            "messages": [message],
            "maxTokens": 16,
        },
    )


FRAMED = "Generate the session title from this JSON array of human messages:\n" + dumps(
    [{"seq": 4, "text": "list files"}]
)


def compaction_edit(**changes: Any) -> Edit:
    """:func:`compaction` with one of its four events' data changed (``at=`` 0-3, default 1)."""

    def edit(events: Events) -> None:
        compaction(events)
        at = changes.pop("at", 1)
        events[17 + at]["data"].update(changes)

    return edit


LIFECYCLE_REFUSED: list[tuple[str, Edit, str, int, str]] = [
    (
        "data not an object",
        lambda e: e[1].__setitem__("data", [1]),
        "released-not-object",
        1,
        "turn/start 1 data must be a JSON object",
    ),
    (
        "first turn numbered 2",
        set_data(1, "turn", 2),
        "turn-out-of-order",
        1,
        "turn/start 2 does not open expected turn 1",
    ),
    (
        "turn/end names another turn",
        set_data(16, "turn", 2),
        "turn-end-unmatched",
        16,
        "turn/end 2 has no matching open turn",
    ),
    (
        "turn/end with a step open",
        lambda e: without(e, 15),
        "turn-end-step-open",
        15,
        "turn/end 1 crosses an open step",
    ),
    (
        "step number reused",
        set_data(13, "step", 1),
        "step-reused",
        13,
        "step/start does not match the open turn and next step",
    ),
    (
        "step in another turn",
        set_data(3, "turn", 2),
        "step-mismatch",
        3,
        "step/start does not match the open turn and next step",
    ),
    (
        "message in another step",
        set_data(14, "step", 1),
        "not-in-open-step",
        14,
        "assistant/message does not match an open turn and step",
    ),
    (
        "advertised call never answered",
        lambda e: without(e, 11),
        "unresolved-tool-call",
        11,
        "step/end leaves unresolved tool call c1",
    ),
    (
        "advertised call never started nor answered",
        lambda e: without(e, 10, 11),
        "unresolved-tool-call",
        10,
        "step/end leaves unresolved tool call c1",
    ),
    (
        "call id advertised twice",
        lambda e: e[9]["data"]["message"]["content"].append(call_block("c1")),
        "duplicate-advertised-call",
        9,
        "assistant/message repeats advertised tool call c1",
    ),
    (
        "tool/call with other arguments",
        set_data(10, "arguments", '{"x":1}'),
        "tool-call-unadvertised",
        10,
        "tool/call c1 does not match one advertised tool call",
    ),
    (
        "tool/call of an unadvertised id",
        set_data(10, "callId", "c9"),
        "tool-call-unadvertised",
        10,
        "tool/call c9 does not match one advertised tool call",
    ),
    (
        "result for an unadvertised id",
        lambda e: (
            e[11]["data"]["message"]["source"].__setitem__("callId", "c9")
            or e[11]["data"]["message"]["content"][0].__setitem__("toolCallId", "c9")
        ),
        "tool-result-unadvertised",
        11,
        "tool/result c9 has no advertised tool lifecycle",
    ),
    (
        "result for a call never started",
        lambda e: without(e, 10),
        "tool-result-not-repair",
        10,
        "tool/result c1 is not the exact TOOL_NOT_STARTED repair",
    ),
    (
        "result replace between turns",
        lambda e: add(
            e,
            "tool/result",
            e[11]["data"],
            surfaceOp={"op": "replace", "start": 11, "end": 11},
            sourceEventSeqs=[11],
        ),
        "tool-result-replace-outside-turn",
        17,
        "tool/result replacement is outside an open turn",
    ),
    (
        "request/header between turns",
        lambda e: add(e, "request/header", e[5]["data"]),
        "outside-turn",
        17,
        "request/header is outside an open turn",
    ),
    (
        "message without surfaceOp",
        lambda e: e[4].pop("surfaceOp") and None,
        "surface-op-missing",
        4,
        "user/message requires a surfaceOp marker",
    ),
    (
        "replace off the surface",
        lambda e: compaction(e) and e[19].__setitem__("surfaceOp", {"op": "replace", "start": 5, "end": 9}),
        "replace-range-off-surface",
        19,
        "user/message replacement range is not on the current surface",
    ),
    (
        "replace omits a node",
        lambda e: compaction(e) and e[19].__setitem__("sourceEventSeqs", [4, 11]),
        "replace-missing-shadowed",
        19,
        "user/message replacement sourceEventSeqs omit a shadowed surface node",
    ),
    (
        "turn/start inside a compaction",
        lambda e: add(e, "compaction/start", {"compactionId": "k", "turn": None}) and turn_two(e),
        "compaction-crossed",
        18,
        "turn/start crosses an open compaction",
    ),
    (
        "compaction/start twice",
        lambda e: add(
            add(e, "compaction/start", {"compactionId": "k", "turn": None}),
            "compaction/start",
            {"compactionId": "k2", "turn": None},
        ),
        "compaction-overlap",
        18,
        "compaction/start overlaps an open compaction",
    ),
    (
        "summary of another compaction",
        compaction_edit(compactionId="z"),
        "compaction-owner",
        18,
        "compaction/summary has no matching compaction/start",
    ),
    (
        "compaction/start naming a closed turn",
        compaction_edit(at=0, turn=1),
        "compaction-turn",
        17,
        "compaction/start does not match the open turn",
    ),
    (
        "summary of a partial span",
        compaction_edit(shadowedSeqs=[4, 11]),
        "compaction-span",
        18,
        "compaction/summary shadowedSeqs do not name an exact current surface span",
    ),
    (
        "compaction/end changing its turn",
        compaction_edit(at=3, turn=1),
        "compaction-end-turn",
        20,
        "compaction/end changes its owner turn",
    ),
    (
        "successful compaction/end without summary",
        lambda e: add(
            add(e, "compaction/start", {"compactionId": "k", "turn": None}),
            "compaction/end",
            {"compactionId": "k", "turn": None},
        ),
        "compaction-end-unsummarized",
        18,
        "successful compaction/end requires one summary",
    ),
    (
        "summary repeated",
        lambda e: compaction(e) and e.insert(19, {**copy.deepcopy(e[18]), "seq": 19}) or without(e),
        "compaction-summary-repeated",
        19,
        "compaction/summary repeats",
    ),
    (
        "checkpoint outside a compaction",
        lambda e: compaction(e) and without(e, 17, 18, 20),
        "compaction-owner",
        17,
        "compaction checkpoint at seq 17 has no matching compaction/start",
    ),
    (
        "user title citing messages",
        title([4], "user"),
        "title-user-kind",
        17,
        "session/title 17 messageSeqs must be empty exactly for a user title",
    ),
    (
        "title citing an assistant message",
        title([9]),
        "title-source",
        17,
        "session/title 17 messageSeqs must cite earlier human user/message events",
    ),
    (
        "title request with another text",
        title_request("other"),
        "title-request-messages",
        17,
        "session/title-llm-request messages do not represent messageSeqs",
    ),
    (
        "command/run twice",
        lambda e: add(
            add(e, "command/run", {"commandId": "x", "name": "n", "source": {"kind": "user"}}),
            "command/run",
            {"commandId": "x", "name": "n", "source": {"kind": "user"}},
        ),
        "command-repeated",
        18,
        "command/run repeats commandId x",
    ),
    (
        "command/done without run",
        lambda e: add(e, "command/done", {"commandId": "y", "kind": "success"}),
        "command-done-unmatched",
        17,
        "command/done y has no prior command/run",
    ),
    (
        "command/done citing its run",
        lambda e: add(
            add(e, "command/run", {"commandId": "x", "name": "n", "source": {"kind": "user"}}),
            "command/done",
            {"commandId": "x", "kind": "success", "sourceEventSeq": 17},
        ),
        "command-done-source",
        18,
        "command/done x has invalid sourceEventSeq",
    ),
    (
        "retry of another step",
        lambda e: turn_two(e, retry(step=2)),
        "retry-mismatch",
        20,
        "llm/retry does not match the current turn and step",
    ),
    (
        "retry of another provider",
        lambda e: turn_two(e, retry(provider="other")),
        "retry-provider",
        20,
        "llm/retry provider does not match the open request/header",
    ),
    (
        "retry numbered 2 first",
        lambda e: turn_two(e, retry(2)),
        "retry-number",
        20,
        "llm/retry must use retry 1",
    ),
    (
        "retry chain changing its id",
        lambda e: turn_two(e, retry(1), retry(2, "s")),
        "retry-id",
        21,
        "llm/retry must preserve retryId across one policy chain",
    ),
    (
        "retry id reused by another chain",
        lambda e: turn_two(e, retry(1), retry(1, policyKey="k2")),
        "retry-id",
        21,
        'llm/retry reuses retryId "r" across policy chains',
    ),
    (
        "retry started without schedule",
        lambda e: turn_two(e, started()),
        "retry-started-unpaired",
        20,
        "llm/retry-started pairs no prior scheduled attempt",
    ),
    (
        "retry started naming another chain's attempt",
        lambda e: turn_two(e, retry(1), retry(2), retry(1, "s", policyKey="k2"), started(2, "s")),
        "retry-started-unpaired",
        23,
        "llm/retry-started pairs no prior scheduled attempt",
    ),
    (
        "retry started in another step",
        lambda e: turn_two(e, retry(), started(step=2)),
        "retry-started-mismatch",
        21,
        "llm/retry-started does not match its scheduled turn and step",
    ),
    (
        "retry started twice",
        lambda e: turn_two(e, retry(), started(), started()),
        "retry-started-repeated",
        22,
        "llm/retry-started repeats one scheduled attempt",
    ),
    (
        "code dispatch between turns",
        lambda e: add(e, *dispatch("tool/code-dispatch-start", "s1")),
        "ptc-outside-turn",
        17,
        "tool/code-dispatch-start is outside an open turn",
    ),
    (
        "code dispatch without start",
        lambda e: turn_two(e, dispatch("tool/code-dispatch", "s1")),
        "ptc-start-missing",
        20,
        "tool/code-dispatch has no unique start",
    ),
    (
        "code dispatch start twice",
        lambda e: turn_two(e, *[dispatch("tool/code-dispatch-start", "s1")] * 2),
        "ptc-start-repeated",
        21,
        "tool/code-dispatch-start repeats subCallId",
    ),
    (
        "code dispatch under a foreign parent",
        lambda e: turn_two(e, dispatch("tool/code-dispatch-start", "s1", parent="p")),
        "ptc-parent",
        20,
        "tool/code-dispatch-start parentCallId does not belong to rootCallId",
    ),
    (
        "code dispatch changing its root",
        lambda e: turn_two(
            e,
            dispatch("tool/code-dispatch-start", "s1"),
            dispatch("tool/code-dispatch", "s1", parent="d", root="d"),
        ),
        "ptc-root-changed",
        21,
        "tool/code-dispatch changes its rootCallId",
    ),
    (
        "code dispatch with other arguments",
        lambda e: turn_two(
            e,
            dispatch("tool/code-dispatch-start", "s1"),
            dispatch("tool/code-dispatch", "s1", arguments={"a": 2}),
        ),
        "ptc-start-mismatch",
        21,
        "tool/code-dispatch does not match its start",
    ),
    (
        "current delivery marker of another session",
        lambda e: add(e, "session-log-deepseek/delivery-accepted", {"sessionId": "other", "throughSeq": 3}),
        "delivery-wrong-session",
        17,
        "current-generation delivery marker names the wrong Session",
    ),
]


@pytest.mark.parametrize(
    "name,edit,code,seq,message", LIFECYCLE_REFUSED, ids=[c[0] for c in LIFECYCLE_REFUSED]
)
def test_lifecycle_refuses(name: str, edit: Edit, code: str, seq: int, message: str) -> None:
    assert_refuses(check_lifecycle, run(edit), code, seq, message, HEADER)


LIFECYCLE_ACCEPTED: list[tuple[str, Edit]] = [
    ("as written", lambda e: None),
    ("between-turn compaction", compaction),
    (
        "compaction that failed without summary",
        lambda e: add(
            add(e, "compaction/start", {"compactionId": "k", "turn": None}),
            "compaction/end",
            {"compactionId": "k", "turn": None, "error": "x"},
        ),
    ),
    ("exact TOOL_NOT_STARTED repair", lambda e: repaired(e)),
    ("user title citing nothing", title([], "user")),
    ("provider title citing the human message", title([4])),
    ("title request framing its messages", title_request(FRAMED)),
    ("retry chain with its starts", lambda e: turn_two(e, retry(1), started(1), retry(2), started(2))),
    (
        "interleaved retry chains, numbers written as floats",
        lambda e: turn_two(
            e, retry(1), retry(1, "s", policyKey="k2"), retry(2.0, step=1.0), started(2, step=1.0), started(1, "s")
        ),
    ),
    (
        "code dispatch tree",
        lambda e: turn_two(
            e,
            dispatch("tool/code-dispatch-start", "s1"),
            dispatch("tool/code-dispatch", "s1"),
            dispatch("tool/code-dispatch-start", "s2", parent="s1"),
        ),
    ),
    ("events without relationships", lambda e: add(e, "feedback/record", {"text": "x"})),
]


@pytest.mark.parametrize("name,edit", LIFECYCLE_ACCEPTED, ids=[c[0] for c in LIFECYCLE_ACCEPTED])
def test_lifecycle_accepts(name: str, edit: Edit) -> None:
    assert_accepts(check_lifecycle, run(edit), HEADER)


def test_lifecycle_lets_a_fork_inherit_its_parents_delivery_markers() -> None:
    # (The official released layer then refuses the marker's type, unknown to the v1 vocabulary:
    # a vocabulary question, outside the relationships this model speaks for.)
    events = add(
        edited(tool_turn()),
        "session-log-deepseek/delivery-accepted",
        {"sessionId": "parent", "throughSeq": 3},
    )
    assert_accepts(check_lifecycle, events, {**HEADER, "parentSession": "parent", "seedLength": 18})
    assert_refuses(
        check_lifecycle,
        events,
        "delivery-wrong-session",
        17,
        None,
        {**HEADER, "parentSession": "parent", "seedLength": 17},
    )


def test_lifecycle_state_names_unsettled_calls_of_the_open_step() -> None:
    events = tool_turn().events[:11]
    state = assert_accepts(check_lifecycle, events, HEADER)
    assert (state.open_turn, state.open_step, state.tools) == (1, 1, (("c1", "started"),))
    assert assert_accepts(check_lifecycle, events[:10], HEADER).tools == (("c1", "advertised"),)


_SEQ_VALUES = [0, 1, 1.0, -0.0, "1", True, None, 2**53, 2**53 + 1, float("nan"), {"seq": 7}, 7]
_SEQS = st.sampled_from(_SEQ_VALUES)
_SURFACE_EDITS = st.lists(st.tuples(_SEQS, st.none() | st.tuples(st.integers(0, 20), st.integers(0, 20))))


@given(_SURFACE_EDITS)
def test_lifecycle_surface_index_answers_index_of_as_a_scan_does(edits: list[Any]) -> None:
    """The walk's indexed surface against a plain list: duplicate seqs, numbers equal
    across int/float, ints a float would conflate, a container (``===`` to itself alone)
    and NaN (``===`` to nothing), through appends and splices."""
    surface, plain = _Surface(), list[Any]()
    for seq, span in edits:
        if span is None or not plain:
            surface.append(seq)
            plain.append(seq)
        else:
            start, end = sorted(index % len(plain) for index in span)
            surface.replace(start, end, seq)
            plain[start : end + 1] = [seq]
        assert surface.nodes == plain
        for probe in _SEQ_VALUES:
            scan = next((i for i, node in enumerate(plain) if strict_equal(node, probe)), -1)
            assert surface.index(probe) == scan, (plain, probe)
