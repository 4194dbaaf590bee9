"""The provider wire stream: which messages the DeepSeek request carries (with their
source seqs and the call ids pending after each), and every pairing defect, with
where it happens.

Base log: :func:`reference_oracle_logs.tool_turn` (surface [4, 9, 11, 14]: user,
assistant with call c1, its result, closing assistant; request/header at 5).
"""

from __future__ import annotations

from typing import Any

from reference_oracle_logs import Log, call_block, edited, text, tool_turn, verdict_text, without

from dshfuzz.model import MISSING
from dshfuzz.oracle import Accepted, HiddenCall, Violation, WireIssue, check_wire, wire_stream

Events = list[dict[str, Any]]


def stream(events: Events) -> Any:
    verdict = wire_stream(events)
    assert isinstance(verdict, Accepted), verdict_text(verdict, events)
    return verdict.state


def issues(events: Events) -> list[tuple[str, int | None, Any, str | None]]:
    return [(i.code, i.seq, i.call_id, i.closer) for i in stream(events).issues]


def step_with_calls(*call_ids: str) -> Log:
    """One open step: request/header 0, user 1, assistant 2 advertising ``call_ids``."""
    log = Log()
    log.request_header("sys")
    log.user("go")
    log.assistant(1, 1, *[call_block(c) for c in call_ids])
    return log


def test_the_wire_carries_the_system_prompt_then_the_surface_in_order() -> None:
    state = stream(tool_turn().events)
    assert [(m.role, m.seq, m.pending) for m in state.messages] == [
        ("system", 5, ()),
        ("user", 4, ()),
        ("assistant", 9, ("c1",)),
        ("tool", 11, ()),
        ("assistant", 14, ()),
    ]
    assert [m.body for m in state.messages] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a b c"},
        {"role": "assistant", "content": "three files"},
    ]
    assert state.issues == () and state.hidden_unanswered == () and state.surface == (4, 9, 11, 14)
    assert check_wire(tool_turn().events) == wire_stream(tool_turn().events)


def test_serialisation_follows_the_deepseek_adapter() -> None:
    log = Log()
    log.user("plain")
    log.assistant(1, 1)  # empty content: no message
    log.assistant(1, 1, {"type": "reasoning", "text": "think"}, text("a"), text("b"), call_block("c1"))
    mixed = log.user("see results")
    log.events[mixed]["data"]["content"].append({"type": "tool-result", "toolCallId": "c1", "content": []})
    state = stream(log.events)
    assert [m.body for m in state.messages] == [
        {"role": "user", "content": "plain"},
        {
            "role": "assistant",
            "content": "ab",
            "reasoning_content": "think",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "user", "content": "see results"},
        {"role": "tool", "tool_call_id": "c1", "content": "(no output)"},
    ]
    # The adapter writes a mixed message's text first: that is W2 even though the result follows.
    assert issues(log.events) == [
        ("wire-user-text-interleaved", 3, MISSING, None),
        ("unanswered-tool-call", 3, "c1", "user-text"),
    ]


def test_w1_a_tool_message_must_answer_a_pending_call() -> None:
    log = step_with_calls("c1")
    log.tool_result(1, 1, "c1")
    log.tool_result(1, 1, "c9")
    assert issues(log.events) == [("wire-dangling-tool-message", 4, "c9", None)]
    verdict = check_wire(log.events)
    assert verdict == Violation(
        4, "wire-dangling-tool-message", "tool message for c9 does not answer a pending assistant tool call"
    )


def test_w1_a_compaction_hiding_the_call_but_not_its_result_leaves_the_result_dangling() -> None:
    events = edited(tool_turn())
    events.append(
        {
            "type": "user/message",
            "seq": 17,
            "time": 0,
            "surfaceOp": {"op": "replace", "start": 4, "end": 9},
            "sourceEventSeqs": [4, 9],
            "data": {"id": "s", "role": "user", "content": [text("summary")], "source": {"kind": "user"}},
        }
    )
    assert [m.seq for m in stream(events).messages] == [5, 17, 11, 14]
    assert issues(events) == [("wire-dangling-tool-message", 11, "c1", None)]


def test_w2_user_text_between_calls_and_results_and_the_calls_stay_answerable() -> None:
    log = step_with_calls("c1", "c2")
    log.tool_result(1, 1, "c1")
    log.user("hurry up")
    log.tool_result(1, 1, "c2")
    state = stream(log.events)
    assert [(m.seq, m.pending) for m in state.messages] == [
        (0, ()),
        (1, ()),
        (2, ("c1", "c2")),
        (3, ("c2",)),
        (4, ("c2",)),
        (5, ()),
    ]
    assert issues(log.events) == [
        ("wire-user-text-interleaved", 4, MISSING, None),
        ("unanswered-tool-call", 4, "c2", "user-text"),
    ]


def test_an_unanswered_call_is_reported_once_where_its_window_closes() -> None:
    log = step_with_calls("c1")
    log.assistant(1, 2, text("moving on"))
    assert issues(log.events) == [("unanswered-tool-call", 3, "c1", "assistant")]
    at_end = step_with_calls("c1")
    assert issues(at_end.events) == [("unanswered-tool-call", None, "c1", "end")]
    first = stream(at_end.events).issues[0]
    assert first == WireIssue(
        "unanswered-tool-call",
        "assistant tool call c1 (seq 2) is not answered by a tool message before the end of history",
        None,
        None,
        "c1",
        2,
        "end",
    )
    assert check_wire(at_end.events) == Violation(None, "unanswered-tool-call", first.message)


def test_one_assistant_message_may_not_advertise_an_id_twice() -> None:
    log = step_with_calls("c1", "c1")
    log.tool_result(1, 1, "c1")
    assert issues(log.events) == [("wire-duplicate-tool-call-id", 2, "c1", None)]


def test_a_gap_the_surface_no_longer_shows_is_hidden_not_provider_visible() -> None:
    events = without(tool_turn().events, 11)
    events.append(
        {
            "type": "user/message",
            "seq": 16,
            "time": 0,
            "surfaceOp": {"op": "replace", "start": 4, "end": 9},
            "sourceEventSeqs": [4, 9],
            "data": {"id": "s", "role": "user", "content": [text("summary")], "source": {"kind": "user"}},
        }
    )
    state = stream(events)
    assert state.issues == ()
    assert state.hidden_unanswered == (HiddenCall("c1", 9),)
    # Before the compaction the same gap is provider-visible.
    assert issues(events[:16]) == [("unanswered-tool-call", 13, "c1", "assistant")]


def test_no_request_for_a_log_the_fold_refuses_nor_for_images_or_unsupported_efforts() -> None:
    events = edited(tool_turn())
    events[11]["sourceEventSeqs"] = []
    assert wire_stream(events) == Violation(
        11, "source-seqs-empty", "sourceEventSeqs must not be empty except on assistant/message"
    )
    log = Log()
    log.request_header()
    log.user("look")
    log.events[1]["data"]["content"].append({"type": "image", "attachment": {"attachmentId": "a"}})
    assert wire_stream(log.events) == Violation(
        1, "wire-image-content", 'DeepSeek model "deepseek-v4-flash" does not accept image input.'
    )
    log.events[0]["data"]["header"]["config"]["reasoningEffort"] = "medium"
    log.events[1]["data"]["content"].pop()
    assert wire_stream(log.events) == Violation(
        0, "wire-reasoning-effort", 'DeepSeek does not support reasoning effort "medium"'
    )
    log.events[1]["data"]["content"] = "not blocks"
    verdict = wire_stream(log.events)
    assert isinstance(verdict, Violation) and (verdict.seq, verdict.code) == (1, "malformed-event")
