"""T1-T4, M1 (turn/step structure) and T2's shadow-price claims are walks: they see the
events in order and hand out their findings as they settle, each naming its own event."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_loop_logs import Builder
from checker_logs import assistant_message, check, ev, header, session_log, user_message

from dshfuzz.checker import CheckOptions, RuleId, _run, check_stream
from dshfuzz.checker._context import CheckContext
from dshfuzz.checker._engine import InboxReplay, ShadowPriceClaims, TurnStepStructure
from dshfuzz.checker._turnstep import _SETTLE_AT
from dshfuzz.model import dumps

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


def _both_ways(head: dict[str, Any], events: list[Any], **options: Any) -> Any:
    """The report of the whole model and of a streamed read of the same lines, which must be the same."""
    whole = check(head, events, **options)
    data = b"".join(dumps(x).encode() + b"\n" for x in [head, *events])
    streamed = check_stream(data, compression="none", options=CheckOptions(strict=True, **options))
    assert streamed.to_json() == whole.to_json()
    return whole


def _cited_step(sources: list[Any], *, seq: int = 7, block: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One step: a block-start (4), a text delta (5) and a block-end (6), the message at
    position 7 (with ``seq``) citing ``sources``, then a finish chunk of the same step (8)."""
    step = {"turn": 1, "step": 1}
    events = [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", step),
        ev(2, "user/message", user_message("u1", "hi"), surfaceOp="append"),
        ev(3, "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}),
        ev(4, "assistant/chunk", {**step, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}),
        ev(5, "assistant/chunk", {**step, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}),
        ev(6, "assistant/chunk", {**step, "chunk": {"type": "block-end", "index": 0,
                                                    "block": block or {"type": "text", "text": "x"}}}),
        ev(seq, "assistant/message", {**step, "message": assistant_message("a1", {"type": "text", "text": "x"}),
                                      "usage": {"inputTokens": 1, "outputTokens": 1}},
           surfaceOp="append", sourceEventSeqs=sources),
        ev(8, "assistant/chunk", {**step, "chunk": {"type": "finish", "reason": "stop"}}),
        ev(9, "step/end", step),
        ev(10, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]
    return header(), events


def _citing(report: Any) -> list[str]:
    return [f.message for f in report.findings if f.rule is RuleId.T2 and "at seq" in f.message]


def _walk_through(head: dict[str, Any], events: list[Any], stop: int) -> TurnStepStructure:
    """A structure walk handed the log's events before ``stop``, as the loop hands them."""
    ctx = CheckContext(session_log(head, events), CheckOptions())
    walk = TurnStepStructure(ctx)
    for index, event in enumerate(ctx.events[:stop]):
        method = walk.types.get(event.raw["type"]) if type(event.raw) is dict else None
        if method is not None:
            getattr(walk, method)(index, event)
    return walk


@pytest.mark.parametrize(("cited", "refusal"), [
    (8, None),  # a chunk of the same step read after the message
    (9, "source seq 9 is not assistant/chunk"),
    (40, "source seq 40 names no event"),  # past the log's end: decided in finish()
])
def test_a_citation_naming_a_position_after_the_message_waits_for_it(cited: int, refusal: str | None) -> None:
    head, events = _cited_step([4, 5, 6, cited], seq=50)
    walk = _walk_through(head, events, 8)
    (waiting,) = walk.waiting
    assert (waiting.index, waiting.awaiting, waiting.at) == (7, cited, 4)
    # the bytes kept for the positions read: not a chunk, chunks, and the message (not yet padded)
    assert list(walk.cite_kinds[:4]) == [0, 0, 0, 0] and min(walk.cite_kinds[4:7]) > 1
    after = _walk_through(head, events, len(events))
    assert bool(after.waiting) == (cited >= len(events))
    expected = [] if refusal is None else [f"token meter: assistant/message at seq 50 {refusal}"]
    assert _citing(_both_ways(head, events)) == expected


def test_a_citation_of_an_earlier_step_reads_what_was_kept_of_its_chunks() -> None:
    """A repeated step/start reopens turn 1/step 1: its message cites the first step's chunks,
    whose block-end block cannot be measured; the walk kept that verdict, not the block."""
    head, events = _cited_step([4, 5, 6], block={"type": "text"})
    again = copy.deepcopy(events[7])
    again.update(seq=11, sourceEventSeqs=[4, 5, 6, 8])
    events[9:9] = [ev(9, "step/end", {"turn": 1, "step": 1}), ev(10, "step/start", {"turn": 1, "step": 1}), again]
    for seq, event in enumerate(events):
        event["seq"] = seq
    report = _both_ways(head, events)
    assert _citing(report) == [f"token meter: assistant/message at seq {seq} cites chunks that do not assemble: "
                               "text block text has no length" for seq in (7, 11)]


@pytest.mark.parametrize("cap", [3, 1000])
@pytest.mark.parametrize("strays", [_SETTLE_AT - 2, _SETTLE_AT + 1, 3 * _SETTLE_AT])
def test_batches_held_back_while_a_citation_waits_are_the_whole_logs(strays: int, cap: int) -> None:
    """Stray todo/writes (a T1 each) after a message whose citation waits for the log's end:
    the batches their settling would hand out wait too, and reach the cap as they would have."""
    head, events = _cited_step([4, 5, 6, 10_000], seq=50_000)
    events += [ev(11 + k, "todo/write", {"turn": 1, "todos": []}) for k in range(strays)]
    report = _both_ways(head, events, max_findings_per_rule=cap)
    assert _citing(report) == ["token meter: assistant/message at seq 50000 source seq 10000 names no event"]
    t1 = [f for f in report.findings if f.rule is RuleId.T1]
    assert [f.seq for f in t1[:min(cap, strays)]] == list(range(11, 11 + min(cap, strays)))


@pytest.mark.parametrize("seed_length", [-1, -2, -5, -1000])
def test_a_seed_length_from_the_end_keeps_only_the_last_splices(seed_length: int) -> None:
    b = Builder()
    for _ in range(3):
        b.claim()
        b.text_turn()
    head = {**b.header, "seedLength": seed_length}
    from_end = [f.to_json() for f in _both_ways(head, b.events).findings if f.rule is RuleId.I1]
    counted = check({**head, "seedLength": max(len(b.events) + seed_length, 0)}, b.events)
    assert from_end == [f.to_json() for f in counted.findings if f.rule is RuleId.I1]
    ctx = CheckContext(session_log(head, b.events), CheckOptions())
    walk = InboxReplay(ctx)
    for index, event in enumerate(ctx.events):
        if event.type == "agent/inbox/spliced":
            walk.visit(index, event)
            assert all(at >= index + 1 + seed_length for at, _ in walk.kept) and len(walk.kept) <= -seed_length
