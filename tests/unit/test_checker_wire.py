"""Wire rules W1-W5: what a strict provider receives after a load. Each fires on a
minimal broken log and stays silent on its near twin; seed 001's distinctions hold
(a crash tail the loader closes is not W3; a gap a compaction hid is W4, not W3)."""

from __future__ import annotations

import copy

from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_loop_logs import Builder
from checker_logs import assert_fires_only_on_broken, build_twins, check, explain, fired, session_log

from dshfuzz.checker import CheckContext, CheckOptions, RuleId, check_log
from dshfuzz.model import Event, SessionHeader, SessionLog
from dshfuzz.oracle import Accepted
from dshfuzz.oracle import wire_stream as reference_wire_stream
from dshfuzz.checker._wire import SurfaceFold, surface_indices

WIRE = {RuleId.W1, RuleId.W2, RuleId.W3, RuleId.W4, RuleId.W5}


def _call_step(b: Builder, finish: Callable[[Builder, list[dict[str, Any]]], None], n: int = 1) -> None:
    b.open_step("call")
    calls = b.assistant([{"type": "tool-call", "name": "read", "arguments": f'{{"n":{i}}}'} for i in range(n)])
    finish(b, calls)
    b.step_end()
    b.turn_end()


def _answered(b: Builder, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        b.tool_round(call)


def _interject(before_result: bool) -> Callable[[Builder, list[dict[str, Any]]], None]:
    def finish(b: Builder, calls: list[dict[str, Any]]) -> None:
        seq = b.tool_call(calls[0])
        if before_result:
            b.user_append(b.user_message("wait, also this"))
        b.tool_result(calls[0]["id"], call_seq=seq)
        if not before_result:
            b.user_append(b.user_message("wait, also this"))
    return finish


def _marker_over_call(b: Builder) -> None:
    """An edit marker that replaces the assistant(tool_calls) node but leaves its tool/result."""
    b.open_step("edit")
    target = next(e["seq"] for e in b.events if e["type"] == "assistant/message" and
                  any(block["type"] == "tool-call" for block in e["data"]["message"]["content"]))
    b.push("assistant/message", {"turn": b.turn, "step": b.step, "message": {
        "id": "retrace-1", "role": "assistant", "content": [{"type": "text", "text": "edited"}],
        "source": {"kind": "model", "provider": "p", "model": "m"}}},
        surfaceOp={"op": "replace", "start": target, "end": target}, sourceEventSeqs=[target])
    b.step_end()
    b.turn_end()


def _compacted(finish: Callable[[Builder, dict[str, Any]], None]) -> Callable[[Builder], None]:
    """A tool step finished by ``finish``, a text step, then a compaction over the whole turn."""
    def build(b: Builder) -> None:
        b.open_step()
        first = b.surface[-1]
        [call] = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"}])
        finish(b, call)
        b.step_end()
        b.step_start()
        b.assistant([{"type": "text", "text": "moving on"}])
        b.step_end()
        b.turn_end()
        b.compaction(first, b.surface[-1])
        b.text_turn()
    return build


CASES: list[tuple[RuleId, str, Callable[[Builder], None], Callable[[Builder], None]]] = [
    (RuleId.W1, "a tool result with no call before it",
     lambda b: _call_step(b, lambda b, c: (b.tool_round(c[0]), b.tool_result("call-ghost"))),
     lambda b: _call_step(b, _answered)),
    (RuleId.W1, "a marker hides the call but not its result",
     lambda b: (b.tool_turn(), _marker_over_call(b)), lambda b: (b.tool_turn(), b.text_turn())),
    (RuleId.W2, "user text between a call and its result", lambda b: _call_step(b, _interject(True)),
     lambda b: _call_step(b, _interject(False))),
    (RuleId.W3, "turn/end written over an unanswered call (seed 001)",
     lambda b: _call_step(b, lambda b, c: b.tool_call(c[0])), lambda b: _call_step(b, _answered)),
    (RuleId.W3, "one of two parallel calls unanswered",
     lambda b: _call_step(b, lambda b, c: (b.tool_round(c[0]), b.tool_call(c[1])), n=2),
     lambda b: _call_step(b, _answered, n=2)),
    (RuleId.W4, "an unanswered call a compaction already hid",
     _compacted(lambda b, call: b.tool_call(call)), _compacted(lambda b, call: b.tool_round(call))),
    (RuleId.W5, "a result answering a different id while a call is pending",
     lambda b: _call_step(b, lambda b, c: b.tool_result("call-other", call_seq=b.tool_call(c[0]))),
     lambda b: _call_step(b, _answered)),
]


def twins() -> list[tuple[RuleId, str, Builder, Builder]]:
    """Every case as built logs: (rule, why, broken, twin); the official conformance test reuses them."""
    return build_twins(CASES, Builder)


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), twins(), ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_rule_fires_on_broken_log_and_not_on_its_twin(rule: RuleId, why: str, broken: Builder, twin: Builder) -> None:
    assert_fires_only_on_broken(rule, why, broken, twin, twin_lacks=WIRE)


def test_w3_names_the_unanswered_ids_and_both_refusing_moments() -> None:
    b = Builder()
    _call_step(b, lambda b, c: (b.tool_round(c[0]), b.tool_call(c[1]), b.tool_call(c[2])), n=3)
    [w3] = [f for f in check(b.header, b.events).findings if f.rule is RuleId.W3]
    assert w3.context["callIds"] == ["call-3", "call-4"]
    assert [str(x) for x in w3.refused_by] == ["released", "provider"]
    assert w3.seq == next(e["seq"] for e in b.events if e["type"] == "assistant/message")


def test_user_text_before_a_late_result_is_w2_and_w3_for_the_provider_alone() -> None:
    """Fuzz finding ``false-alarm|W3|user-text-between``: a strict endpoint refuses
    [assistant(tool_calls), user(text), tool] with W3's own error, so both rules fire;
    the result is in the step, so released accepts and W3 names only the provider. The
    same result before the user text breaks neither."""
    broken, twin = Builder(), Builder()
    _call_step(broken, _interject(True))
    _call_step(twin, _interject(False))
    report = check(broken.header, broken.events)
    by_rule = {f.rule: f for f in report.findings if f.rule in WIRE}
    assert set(by_rule) == {RuleId.W2, RuleId.W3}, explain(report, broken.header, broken.events)
    assert [str(x) for x in by_rule[RuleId.W3].refused_by] == ["provider"]
    assert "before the next user text" in by_rule[RuleId.W3].message
    assert not fired(check(twin.header, twin.events)) & WIRE


def test_an_open_crash_tail_is_closed_by_the_loader_not_w3() -> None:
    """No turn/end yet: the official loader answers the call with a synthetic result."""
    b = Builder()
    b.open_step()
    [call] = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"}])
    b.tool_call(call)
    assert not fired(check(b.header, b.events)) & WIRE
    b.step_end()
    assert RuleId.W3 in fired(check(b.header, b.events)), "a closed step is not repaired by the loader"


def test_a_gap_a_compaction_hid_is_w4_not_w3() -> None:
    b = Builder()
    b.open_step()
    first = b.surface[-1]
    [call] = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"}])
    b.tool_call(call)
    b.step_end()
    b.step_start()
    b.assistant([{"type": "text", "text": "moving on"}])
    b.step_end()
    b.turn_end()
    b.compaction(first, b.surface[-1])
    b.text_turn()
    report = check(b.header, b.events)
    assert RuleId.W4 in fired(report) and RuleId.W3 not in fired(report), explain(report, b.header, b.events)
    [w4] = [f for f in report.findings if f.rule is RuleId.W4]
    assert w4.context["callIds"] == [call["id"]] and w4.severity.value == "error"


def test_a_raw_orphan_result_is_w5_for_every_moment_and_dangles_on_the_wire() -> None:
    b = Builder()
    b.open_step()
    b.assistant([{"type": "text", "text": "no calls"}])
    b.tool_result("call-ghost")
    b.step_end()
    b.turn_end()
    report = check(b.header, b.events)
    [w5] = [f for f in report.findings if f.rule is RuleId.W5]
    assert [str(x) for x in w5.refused_by] == ["invariants", "released", "provider"]
    assert RuleId.W1 in fired(report)


def test_replace_heavy_surfaces_fold_linearly() -> None:
    """Every replace targets the newest node (the official fold's quadratic case)."""
    b = Builder()
    b.open_step()
    for i in range(2000):
        b.user_append(b.user_message(f"m{i}"))
        target = b.surface[-1]
        b.push("user/message", b.user_message(f"r{i}"), surfaceOp={"op": "replace", "start": target, "end": target},
               sourceEventSeqs=[target])
    ctx = CheckContext(session_log(b.header, b.events))
    fold = SurfaceFold(ctx)
    for position, event in enumerate(ctx.events):
        if event.type in fold.types:
            fold.visit(position, event)
    fold.finish()
    assert [ctx.events[i].seq for i in surface_indices(ctx)] == b.surface


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["append", "call-2", "tool-result", "tool-call", "text", "user", "assistant", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "id", "toolCallId", "callId", "content", "role", "op", "start", "end", "turn", "step"]),
        inner, max_size=4),
    max_leaves=8,
)
MINE = frozenset({RuleId(r) for r in "T1 T2 T3 T4 T5 M1 I1 P1 P2 P3 P4 P5 W1 W2 W3 W4 W5 G1 G2 G3".split()})


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@given(st.data())
def test_any_json_anywhere_never_crashes_the_rules_of_this_engineer(data: st.DataObject) -> None:
    b = Builder()
    b.tool_turn(n_calls=2)
    b.text_turn()
    events: list[Any] = copy.deepcopy(b.events)
    for _ in range(data.draw(st.integers(1, 5), label="edits")):
        i = data.draw(st.integers(0, len(events) - 1), label="event")
        paths = _paths(events[i])
        path = data.draw(st.sampled_from(paths), label="path")
        value = data.draw(_JSON, label="value")
        if not path:
            events[i] = value
            continue
        target = events[i]
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    if data.draw(st.booleans(), label="drop events"):
        start = data.draw(st.integers(0, len(events) - 1), label="drop from")
        del events[start : start + data.draw(st.integers(1, 8), label="drop count")]
    check(b.header, events, rules=MINE)


def _oracle_view(header: Any, events: list[Any]) -> set[tuple[str, Any]] | None:
    """The reference oracle's wire pairing issues, as (rule, call id or user-text seq) pairs.

    The oracle flags any user text while calls pend; the checker's W2 keeps the catalog's
    sequence, user text followed by a tool message answering a call that was pending
    before it, so the oracle's interleavings are kept only where such an answer follows."""
    verdict = reference_wire_stream(events, header)
    if not isinstance(verdict, Accepted):
        return None
    messages = verdict.state.messages
    out: set[tuple[str, Any]] = set()
    for issue in verdict.state.issues:
        if issue.code == "wire-dangling-tool-message":
            out.add(("W5", issue.call_id))
            out.add(("W1", issue.call_id))  # paired by id: dangling, or answering a call its assistant never made
        elif issue.code == "wire-user-text-interleaved":
            waiting = set(messages[issue.index].pending)
            later = messages[issue.index + 1 :]
            answered = any(m.role == "tool" and m.body["tool_call_id"] in waiting
                           and m.body["tool_call_id"] not in m.pending for m in later[: _window(later)])
            if answered:
                out.add(("W2", issue.seq))
        elif issue.code == "unanswered-tool-call":
            out.add(("W3", issue.call_id))
    return out


def _window(messages: Any) -> int:
    """How many of ``messages`` precede the next assistant message (which resets what is pending)."""
    return next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))


def _checker_view(header: Any, events: list[Any]) -> set[tuple[str, Any]]:
    out: set[tuple[str, Any]] = set()
    for f in check(header, events, rules=frozenset(WIRE)).findings:
        if f.rule is RuleId.W1 or (f.rule is RuleId.W5 and "provider" in map(str, f.refused_by)):
            out.add((str(f.rule), f.context["callId"]))
        elif f.rule is RuleId.W2:
            out.add(("W2", f.seq))
        elif f.rule is RuleId.W3:
            out.update(("W3", i) for i in f.context["callIds"])
    return out


_WIRE_DEFECTS = {
    "drop-result": lambda b, c: b.tool_call(c[0]),
    "ghost-result": lambda b, c: (b.tool_round(c[0]), b.tool_result("call-ghost")),
    "wrong-id": lambda b, c: b.tool_result("call-other", call_seq=b.tool_call(c[0])),
    "interject": _interject(True),
    "twice": lambda b, c: (b.tool_round(c[0]), b.tool_result(c[0]["id"])),
    "fine": _answered,
}


@given(st.lists(st.sampled_from(sorted(_WIRE_DEFECTS)), min_size=1, max_size=4), st.booleans())
def test_the_wire_judge_agrees_with_the_reference_oracle(defects: list[str], compact: bool) -> None:
    """Complete turns (no loader closers) of healthy and broken tool rounds, optionally compacted."""
    b = Builder()
    for defect in defects:
        _call_step(b, _WIRE_DEFECTS[defect])
        if compact and len(b.surface) > 2:
            b.compaction(b.surface[0], b.surface[1])
    expected = _oracle_view(b.header, b.events)
    if expected is None:
        return
    assert _checker_view(b.header, b.events) == expected, explain(check(b.header, b.events), b.header, b.events)


def _deep(depth: int, shape: str) -> Any:
    """Nested arrays, or arrays alternating with tool-result blocks."""
    value: Any = 1
    for i in range(depth):
        value = [value] if shape == "arrays" or i % 2 else {"type": "tool-result", "content": [value]}
    return value


@pytest.mark.parametrize("shape", ["arrays", "blocks"])
@pytest.mark.parametrize("where", ["seq", "turn", "callId", "id", "text", "content", "chunk", "usage", "version"])
def test_deeply_nested_values_never_crash(where: str, shape: str) -> None:
    """Nesting far past Python's recursion limit, wherever a rule reads or prints a value."""
    b = Builder()
    b.tool_turn()
    b.push("subagent/descriptor", {"mode": "one-shot", "version": 3, "provider": "p"})
    deep = _deep(3000, shape)
    for event in b.events:
        data = event["data"]
        if where in ("seq",):
            event["seq"] = deep
        elif where in data:
            data[where] = deep
        elif where == "id" and event["type"] == "assistant/message":
            data["message"]["content"] = [{"type": "tool-call", "id": deep, "name": "n", "arguments": "{}"}]
        elif where in ("text", "content") and event["type"] == "tool/result":
            data["message"]["content"] = [deep] if where == "content" else [{"type": "text", "text": deep}]
        elif where == "usage" and event["type"] == "assistant/message":
            data["usage"] = deep
    log = SessionLog(header=SessionHeader(b.header), events=[Event(e, line=i + 2, row=i) for i, e in enumerate(b.events)])
    check_log(log, CheckOptions(strict=True, rules=MINE))  # built by hand: deepcopy cannot copy such nesting
