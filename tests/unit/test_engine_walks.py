"""T1-T4, M1 (turn/step structure) and T2's shadow-price claims are walks: they see the
events in order and hand out their findings as they settle, each naming its own event."""

from __future__ import annotations

from typing import Any

import pytest

from agent_loop_logs import Builder
from checker_logs import check

from dshfuzz.checker import RuleId, _run
from dshfuzz.checker._engine import _SETTLE_AT, ShadowPriceClaims, TurnStepStructure

STRUCTURE = {RuleId.T1, RuleId.T2, RuleId.T3, RuleId.T4, RuleId.M1}


def test_the_structure_and_shadow_rules_are_walks_not_passes() -> None:
    _run._load_rule_modules()
    walks = {w.cls: w.rules for w in _run.WALKS}
    assert walks[TurnStepStructure] == STRUCTURE and walks[ShadowPriceClaims] == {RuleId.T2}
    assert not any(p.rules & STRUCTURE for p in _run.PASSES)
    # the structure walk registers first: its T2 findings reach the cap before the claims'
    order = [w.cls for w in _run.WALKS]
    assert order.index(TurnStepStructure) < order.index(ShadowPriceClaims)


def _stray_todos(count: int, tail: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[int]]:
    """A text turn, then ``count`` + 1 turn-scoped events outside any turn (one T1 each): a
    request/context (pinned: the end-of-log window verdict names it) and todo/writes; then a
    ``tail`` event."""
    b = Builder()
    b.text_turn()
    strays = [b.push("request/context", {"turn": 1, "contextWindow": 0})]
    strays += [b.push("todo/write", {"turn": 1, "todos": []}) for _ in range(count)]
    if tail == "user/message":
        b.user_append(b.user_message("later"))  # a head the structure walk is not handed
    else:
        b.push("todo/write", {"turn": 1, "todos": []})
        strays.append(len(b.events) - 1)
    return b.header, b.events, strays


@pytest.mark.parametrize("tail", ["user/message", "todo/write"])
@pytest.mark.parametrize("count", [_SETTLE_AT - 1, _SETTLE_AT + 1, 3 * _SETTLE_AT])
def test_settled_findings_name_their_own_events_in_log_order(count: int, tail: str) -> None:
    header, events, strays = _stray_todos(count, tail)
    report = check(header, events)
    t1 = [f.seq for f in report.findings if f.rule is RuleId.T1]
    assert t1 == [events[i]["seq"] for i in strays]
    (window,) = [f for f in report.findings if f.rule is RuleId.T2]
    assert window.seq == strays[0] and "contextWindow 0" in window.message


@pytest.mark.parametrize("tail", ["user/message", "todo/write"])
def test_the_cap_counts_every_settled_batch(tail: str) -> None:
    header, events, strays = _stray_todos(2 * _SETTLE_AT + 5, tail)
    report = check(header, events, max_findings_per_rule=3)
    kept = [f for f in report.findings if f.rule is RuleId.T1]
    assert [f.seq for f in kept] == [events[i]["seq"] for i in strays[:4]]
    assert report.suppressed[RuleId.T1] == len(strays) - 3 == kept[3].context["suppressed"]


def _compaction(between: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool turn whose surface is then compacted: a summary pricing 1..2 (not the surface's
    range), ``between`` events, and the user/message replacing the whole surface."""
    b = Builder()
    b.tool_turn()
    start, end = b.surface[0], b.surface[-1]
    b.push("compaction/summary", {"shadowedRange": {"start": 1, "end": 2}, "summary": "s"})
    for kind in between:
        b.push(kind, {"turn": 1, "todos": []})
    b.push("user/message", b.user_message("summary"), surfaceOp={"op": "replace", "start": start, "end": end})
    return b.header, b.events


def _shadow(report: Any) -> list[Any]:
    return [f for f in report.findings if f.rule is RuleId.T2 and "shadow price" in f.message]


def test_a_claim_arms_only_the_event_right_after_its_pricing_event() -> None:
    header, events = _compaction([])
    (refusal,) = _shadow(check(header, events))
    assert refusal.seq == events[-1]["seq"] and refusal.context == {"claim": ["1", "2"]}
    header, events = _compaction(["todo/write"])
    assert _shadow(check(header, events)) == []
