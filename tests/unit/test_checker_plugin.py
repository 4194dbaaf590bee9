"""Plugin rules P1-P5: each fires on a minimal broken log and stays silent on its near
twin; P5 compares the three call-id positions by id and names the id."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_loop_logs import Builder
from checker_logs import assert_fires_only_on_broken, build_twins, check, explain, fired, header, minimal_events, session_log

from dshfuzz.checker import RuleId
from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.oracle import check_lifecycle, check_meter


def _marker(b: Builder, message_id: str, *, cite_self: bool = False) -> None:
    """An assistant/message replace over the newest node (a retrace-style edit marker)."""
    target = b.surface[-1]
    sources = [target, b.seq] if cite_self else [target]
    b.push("assistant/message", {"turn": b.turn, "step": b.step, "message": {
        "id": message_id, "role": "assistant", "content": [{"type": "text", "text": "edited"}],
        "source": {"kind": "model", "provider": "p", "model": "m"}}},
        surfaceOp={"op": "replace", "start": target, "end": target}, sourceEventSeqs=sources)


def _edit_step(b: Builder, message_id: str, *, cite_self: bool = False) -> None:
    b.open_step("edit that")
    b.assistant([{"type": "text", "text": "ok"}])
    _marker(b, message_id, cite_self=cite_self)
    b.step_end()
    b.turn_end()


def _one_call_step(b: Builder, finish: Callable[[Builder, dict[str, Any]], None]) -> None:
    b.open_step("call")
    [call] = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"}])
    finish(b, call)
    b.step_end()
    b.turn_end()


def _tool_result_content(content: Any) -> Callable[[Builder], None]:
    def build(b: Builder) -> None:
        b.tool_turn()
        result = [e for e in b.events if e["type"] == "tool/result"][0]
        result["data"]["message"]["content"][0]["content"] = content
    return build


CASES: list[tuple[RuleId, str, Callable[[Builder], None], Callable[[Builder], None]]] = [
    (RuleId.P1, "a marker with an unknown id prefix", lambda b: _edit_step(b, "rewind-7"),
     lambda b: _edit_step(b, "retrace-7")),
    (RuleId.P2, "a marker citing its own seq", lambda b: _edit_step(b, "retrace-7", cite_self=True),
     lambda b: _edit_step(b, "retrace-7")),
    (RuleId.P3, "a tool/call nobody answers", lambda b: _one_call_step(b, lambda b, c: b.tool_call(c)),
     lambda b: _one_call_step(b, lambda b, c: b.tool_round(c))),
    (RuleId.P4, "tool output holding a non-text fragment", _tool_result_content([{"type": "json", "value": 1}]),
     _tool_result_content([{"type": "text", "text": "x"}])),
    (RuleId.P4, "tool output that is not a list", _tool_result_content("plain"), _tool_result_content([])),
    (RuleId.P5, "tool/call for an id no assistant advertised",
     lambda b: _one_call_step(b, lambda b, c: (b.tool_call({**c, "id": "call-x"}), b.tool_round(c))),
     lambda b: _one_call_step(b, lambda b, c: b.tool_round(c))),
    (RuleId.P5, "tool/call whose arguments differ from the advertised block",
     lambda b: _one_call_step(b, lambda b, c: b.tool_round({**c, "arguments": "{\"x\":1}"})),
     lambda b: _one_call_step(b, lambda b, c: b.tool_round(c))),
    (RuleId.P5, "an advertised call answered without tool/call by a non-repair result",
     lambda b: _one_call_step(b, lambda b, c: b.tool_result(c["id"])),
     lambda b: _one_call_step(b, lambda b, c: b.not_started_result(c["id"]))),
    (RuleId.P5, "an advertised call left unresolved at step/end (seed 001)",
     lambda b: _one_call_step(b, lambda b, c: b.tool_call(c)),
     lambda b: _one_call_step(b, lambda b, c: b.tool_round(c))),
]


def twins() -> list[tuple[RuleId, str, Builder, Builder]]:
    """Every case as built logs: (rule, why, broken, twin); the official conformance test reuses them."""
    return build_twins(CASES, Builder)


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), twins(), ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_rule_fires_on_broken_log_and_not_on_its_twin(rule: RuleId, why: str, broken: Builder, twin: Builder) -> None:
    assert_fires_only_on_broken(rule, why, broken, twin)


def test_p5_compares_by_id_not_by_count() -> None:
    """Two advertised calls, two tool/calls, two results: equal counts, but one id swapped."""
    b = Builder()
    b.open_step()
    first, second = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"},
                                 {"type": "tool-call", "name": "read", "arguments": "{}"}])
    b.tool_round(first)
    b.tool_round({**second, "id": "call-swapped"})
    b.step_end()
    b.turn_end()
    p5 = [f for f in check(b.header, b.events).findings if f.rule is RuleId.P5]
    named = {f.context.get("callId") for f in p5} | {i for f in p5 for i in f.context.get("callIds", ())}
    assert {"call-swapped", second["id"]} <= named, p5
    assert all(str(layer) == "released" for f in p5 for layer in f.refused_by)


def test_legacy_flat_tool_results_pair_after_the_official_upgrade() -> None:
    """Pre-identity {callId, content, isError} results are wrapped as load and released do."""
    b = Builder()
    calls = b.tool_turn()
    result = [e for e in b.events if e["type"] == "tool/result"][0]
    result["data"] = {"turn": 1, "step": 1, "callId": calls[0]["id"], "content": [{"type": "text", "text": "x"}],
                      "isError": False}
    assert not fired(check(b.header, b.events)) & {RuleId.P3, RuleId.P4, RuleId.P5}


def _call_ids(events: list[dict[str, Any]]) -> list[str]:
    ids = [e["data"]["callId"] for e in events if e["type"] == "tool/call"]
    for e in events:
        if e["type"] == "assistant/message":
            ids += [b["id"] for b in e["data"]["message"]["content"] if b.get("type") == "tool-call"]
    return ids


@given(session_logs(max_events=100, turns=(1, 3), weights=FeatureWeights(tool_calls=0.9)), st.data())
def test_tool_lifecycle_findings_agree_with_the_released_reference_walk(generated: Any, data: st.DataObject) -> None:
    """Call ids renamed in any of the three positions: the reference released walk
    (``check_lifecycle``) refuses exactly when an error finding names ``released``."""
    events = copy.deepcopy(generated.events)
    ids = _call_ids(events)
    if not ids:
        return
    tool_events = [e for e in events if e["type"] in ("tool/call", "tool/result", "assistant/message")]
    for _ in range(data.draw(st.integers(1, 2), label="edits")):
        event = data.draw(st.sampled_from(tool_events), label="event")
        value = data.draw(st.sampled_from([*ids, "call-fresh"]), label="id")
        payload = event["data"]
        if event["type"] == "tool/call":
            payload[data.draw(st.sampled_from(["callId", "name", "arguments"]), label="field")] = value
        elif event["type"] == "tool/result":
            payload["message"]["source"]["callId"] = value
            payload["message"]["content"][0]["toolCallId"] = value
        else:
            blocks = [b for b in payload["message"]["content"] if b.get("type") == "tool-call"]
            if blocks:
                data.draw(st.sampled_from(blocks), label="block")["id"] = value
    report = check(generated.header, events)
    named = {str(layer) for f in report.findings if f.is_error for layer in f.refused_by}
    verdict = check_lifecycle(events, generated.header)
    assert verdict.ok == ("released" not in named), (verdict, explain(report, generated.header, events))


@pytest.mark.parametrize(("content", "meter"), [
    ([None], True),  # estimateContent reads null.type
    ([{"type": "text"}], True),  # a text block without the text it measures
    ([{"type": "tool-result", "toolCallId": "c", "content": 3}], True),  # nested content not iterable
    ([{"type": "json", "value": 1}], False),  # priced by its JSON length
    ("plain", False),  # for-of over a string yields characters
])
def test_p4_names_the_meter_exactly_where_its_pricing_throws(content: Any, meter: bool) -> None:
    """P4 names ``meter`` when the token meter cannot price the stored result, as the
    reference meter refuses; other unparsable output is no concern of the meter."""
    b = Builder()
    _tool_result_content(content)(b)
    report = check(b.header, b.events)
    p4 = [f for f in report.findings if f.rule is RuleId.P4]
    assert p4, explain(report, b.header, b.events)
    assert ("meter" in {str(layer) for f in p4 for layer in f.refused_by}) is meter, p4
    assert check_meter(b.events, b.header).ok is not meter


def test_p4_spares_the_meter_for_a_result_without_surface_op() -> None:
    """The meter prices only events carrying a surfaceOp; the same bad output off the surface passes it."""
    b = Builder()
    _tool_result_content([None])(b)
    result = [e for e in b.events if e["type"] == "tool/result"][0]
    del result["surfaceOp"]
    p4 = [f for f in check(b.header, b.events).findings if f.rule is RuleId.P4]
    assert p4 and all(str(layer) != "meter" for f in p4 for layer in f.refused_by), p4


def test_an_object_call_id_answered_is_never_taken_for_a_later_one() -> None:
    """P3 keeps the keys of the call ids answered so far, but not an object's: it is ``===``
    only to itself, and once a streaming reader drops its tool/result, a later call's object
    may sit at its address. That call has no answer."""
    from dshfuzz.checker._context import CheckContext
    from dshfuzz.checker._plugin import CallPairing
    from dshfuzz.model import Event

    walk = CallPairing(CheckContext(session_log(header(), minimal_events())))
    result = Event({"type": "tool/result", "seq": 0, "time": 0, "surfaceOp": "append",
                    "data": {"message": {"source": {"callId": {"k": 1}}}}}, line=2)
    first = id(result.raw["data"]["message"]["source"]["callId"])
    walk.result(0, result)
    del result
    others = [{"k": 1} for _ in range(64)]
    other = next((o for o in others if id(o) == first), others[0])
    walk.call(1, Event({"type": "tool/call", "seq": 1, "time": 0, "data": {"callId": other}}, line=3))
    assert [f.rule for f in walk.finish()] == [RuleId.P3]
