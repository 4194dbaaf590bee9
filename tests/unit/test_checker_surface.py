"""Surface rules S1-S8: each fires on a minimal broken log and not on its near twin;
S8's verdict agrees with the reference fold (``dshfuzz.oracle.fold_surface``) on
mutated logs, and the linear fold handles replace-heavy logs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import RuleId
from dshfuzz.checker._surface import LinearSurface
from dshfuzz.oracle import Accepted, fold_surface

from checker_logs import check, ev, explain, fired, header, minimal_events, tool_result_message


def _compaction(op: Any, sources: Any) -> list[dict[str, Any]]:
    """A compaction after the minimal log (whose surface is 2, 7, 9, 14): start, summary,
    the checkpoint ``user/message`` with surface op ``op`` at seq 19, end."""
    bounds = (op.get("start", op.get("startSeq")), op.get("end", op.get("endSeq"))) if isinstance(op, dict) else (2, 2)
    data = {"id": "msg-compact", "role": "user", "content": [{"type": "text", "text": "summary"}], "source": {"kind": "plugin", "plugin": "compact", "compactionId": "c1"}}
    summary = {
        "compactionId": "c1", "summary": [{"type": "text", "text": "summary"}],
        "shadowedRange": {"start": bounds[0], "end": bounds[1]}, "shadowedSeqs": sorted(set(sources)) if isinstance(sources, list) else [bounds[0]],
        "shadowedTokenCount": 10, "provider": "deepseek-official", "model": "deepseek-v4-flash",
    }
    checkpoint = ev(19, "user/message", data, surfaceOp=op, sourceEventSeqs=sources)
    return [ev(17, "compaction/start", {"compactionId": "c1", "turn": None}), ev(18, "compaction/summary", summary), checkpoint,
            ev(20, "compaction/end", {"compactionId": "c1", "turn": None})]


def _result_rewrite(start: int, end: int, sources: list[int], text: str = "shorter", **message: Any):
    """Replace the minimal log's turn/end with a prune and a tool/result rewrite at seq 17
    inside the still-open turn, then the turn/end."""
    msg = tool_result_message("msg-tool-3", "call_1", text)
    msg.update(message)
    prune = {"shadowedRange": {"start": start, "end": end}, "shadowedSeqs": sources, "shadowedTokenCount": 3}
    rewrite = ev(17, "tool/result", {"turn": 1, "step": 1, "message": msg}, surfaceOp={"op": "replace", "start": start, "end": end}, sourceEventSeqs=sources)
    tail = [ev(16, "compaction/prune", prune), rewrite, ev(18, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})]

    def mutate(events: list[dict[str, Any]]) -> None:
        events[16:] = tail

    return mutate


CASES = [
    (RuleId.S1, lambda e: e[2].pop("surfaceOp"), lambda e: e[2].update(surfaceOp="append")),
    (RuleId.S2, lambda e: e[0].update(surfaceOp="append"), lambda e: e[0].update(data={"turn": 1})),
    (RuleId.S2, lambda e: e[8].update(sourceEventSeqs=[4]), lambda e: e[9].update(sourceEventSeqs=[4, 8])),
    (RuleId.S3, lambda e: e[9].update(sourceEventSeqs=[9]), lambda e: e[9].update(sourceEventSeqs=[8])),
    (RuleId.S3, lambda e: e[9].update(sourceEventSeqs=[8, 8]), lambda e: e[9].update(sourceEventSeqs=[8, 4])),
    (RuleId.S3, lambda e: e[9].update(sourceEventSeqs=[]), lambda e: e[7].update(sourceEventSeqs=[])),
    (RuleId.S4, lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 3}, [2])), lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2}, [2]))),
    (RuleId.S4, lambda e: e.extend(_compaction({"op": "replace", "start": 9, "end": 2}, [2, 7, 9])), lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 9}, [2, 7, 9]))),
    (RuleId.S4, lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2, "x": 1}, [2])), lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2}, [2]))),
    (RuleId.S5, lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 9}, [2, 9])), lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 9}, [2, 7, 9]))),
    (RuleId.S6, lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2}, [2, 2])), lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2}, [2]))),
    (RuleId.S6, lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2}, "2")), lambda e: e.extend(_compaction({"op": "replace", "start": 2, "end": 2}, [2]))),
    (RuleId.S7, _result_rewrite(7, 9, [7, 9]), _result_rewrite(9, 9, [9])),
    (RuleId.S7, _result_rewrite(7, 7, [7]), _result_rewrite(9, 9, [9])),
    (RuleId.S7, _result_rewrite(9, 9, [9], id="msg-other"), _result_rewrite(9, 9, [9], text="x")),
    (RuleId.S8, lambda e: e[2].pop("surfaceOp"), lambda e: None),
]


def _clean(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for e in events:
        if e.get("sourceEventSeqs", 0) is None:
            del e["sourceEventSeqs"]
    return events


@pytest.mark.parametrize(("rule", "breaks", "keeps"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_surface_rule_fires_exactly_on_the_broken_log(rule: RuleId, breaks, keeps) -> None:
    bad, good = minimal_events(), minimal_events()
    breaks(bad)
    keeps(good)
    bad, good = _clean(bad), _clean(good)
    r_bad, r_good = check(header(), bad), check(header(), good)
    assert rule in fired(r_bad), explain(r_bad, header(), bad)
    assert rule not in fired(r_good), explain(r_good, header(), good)
    assert (RuleId.S8 in fired(r_bad)) and RuleId.S8 not in fired(r_good)


def test_s5_names_the_seqs_the_replace_left_uncovered() -> None:
    events = minimal_events() + _compaction({"op": "replace", "start": 2, "end": 14}, [2, 9, 14])
    (f,) = [f for f in check(header(), events).findings if f.rule is RuleId.S5]
    assert f.context["missing"] == [7]
    assert f.seq == 19 and f.line == 21


def test_a_node_with_bad_provenance_stays_on_the_surface_for_later_replaces() -> None:
    """The meter never reads provenance, so it keeps an append that breaks S3; a later replace
    of that node is no S4 (the fuzzing found S4 naming the meter, which accepts)."""
    events = minimal_events()
    events[9]["sourceEventSeqs"] = [9]
    events += _compaction({"op": "replace", "start": 9, "end": 9}, [9])
    report = check(header(), events)
    assert RuleId.S3 in fired(report) and RuleId.S4 not in fired(report), explain(report, header(), events)


def test_v3_replace_ops_use_start_seq_and_end_seq() -> None:
    events = minimal_events()
    for e in events:
        if e["type"] == "assistant/message":
            del e["sourceEventSeqs"]
    v3 = _compaction({"op": "replace", "startSeq": 2, "endSeq": 9}, [2, 7, 9])
    assert not {RuleId.S4, RuleId.S8} & fired(check(header(version=3), events + v3))
    assert RuleId.S4 in fired(check(header(version=0), minimal_events() + v3))


_EVENT_MUTATIONS = st.sampled_from(["drop-op", "op-on-chunk", "replace", "sources", "seq"])


@given(st.lists(st.tuples(_EVENT_MUTATIONS, st.integers(0, 20), st.integers(0, 20), st.integers(0, 20)), max_size=4))
def test_s8_agrees_with_the_reference_fold(mutations: list[tuple[str, int, int, int]]) -> None:
    """S8 fires exactly when the reference fold refuses, on randomly broken logs."""
    events = minimal_events() + _compaction({"op": "replace", "start": 2, "end": 9}, [2, 7, 9])
    for kind, i, a, b in mutations:
        e = events[i]
        if kind == "drop-op":
            e.pop("surfaceOp", None)
        elif kind == "op-on-chunk":
            e["surfaceOp"] = "append"
        elif kind == "replace":
            e["surfaceOp"] = {"op": "replace", "start": a, "end": b}
        elif kind == "sources":
            e["sourceEventSeqs"] = sorted({a, b})
        else:
            e["seq"] = a
    events = copy.deepcopy(events)
    official = fold_surface(events)
    report = check(header(), events)
    assert (RuleId.S8 in fired(report)) is not isinstance(official, Accepted), explain(report, header(), events)


def test_linear_surface_keeps_official_order_through_replaces() -> None:
    s = LinearSurface()
    for seq in range(6):
        s.append(seq)
    s.replace(s.span(1, 3), 6)
    assert list(s) == [0, 6, 4, 5]
    assert s.ordered(0, 6) and s.ordered(6, 5) and not s.ordered(5, 6)
    s.replace(s.span(5, 5), 7)
    s.append(8)
    assert list(s) == [0, 6, 4, 7, 8]


def _surface_out_of_seq_order(op: dict[str, Any], sources: list[int]) -> list[dict[str, Any]]:
    """The minimal log, a compaction whose checkpoint 19 takes node 2's place (surface
    19, 7, 9, 14: surface order is no longer seq order), then a user/message at seq 21
    with surface op ``op``."""
    events = minimal_events() + _compaction({"op": "replace", "start": 2, "end": 2}, [2])
    return events + [ev(21, "user/message", {"id": "msg-user-5", "role": "user", "content": [{"type": "text", "text": "again"}],
                                            "source": {"kind": "user"}}, surfaceOp=op, sourceEventSeqs=sources)]


def test_s4_orders_a_replace_range_by_surface_position_not_by_seq() -> None:
    """Official fold, seed and released accept start 19 / end 7 over surface 19, 7, 9, 14
    (19 took node 2's place); 7 .. 19 is the reversed range."""
    ordered = _surface_out_of_seq_order({"op": "replace", "start": 19, "end": 7}, [7, 19])
    reversed_ = _surface_out_of_seq_order({"op": "replace", "start": 7, "end": 19}, [7, 19])
    assert isinstance(fold_surface(copy.deepcopy(ordered)), Accepted)
    assert not isinstance(fold_surface(copy.deepcopy(reversed_)), Accepted)
    r_ordered, r_reversed = check(header(), ordered), check(header(), reversed_)
    assert not {RuleId.S4, RuleId.S8} & fired(r_ordered), explain(r_ordered, header(), ordered)
    assert {RuleId.S4, RuleId.S8} <= fired(r_reversed), explain(r_reversed, header(), reversed_)


def test_replace_range_start_after_end_is_reversed_in_surface_order() -> None:
    """Regression (fuzz seed 5): the mutator reversed the endpoints by seq value, which
    after a replace can name a correctly ordered range; every mutant must fire S4."""
    from dshfuzz.checker import CheckOptions, check_log
    from dshfuzz.model import parse_log
    from dshfuzz.mutators import apply_seeded, get

    from checker_logs import session_log

    log = session_log(header(), _surface_out_of_seq_order("append", [7]))
    reversed_at_21 = 0
    for seed_value in range(40):
        mutant = apply_seeded(get("replace-range"), log, seed_value)
        report = check_log(parse_log(mutant.data, compression=mutant.compression), CheckOptions(strict=True))
        assert RuleId.S4 in fired(report), mutant.description
        reversed_at_21 += mutant.description.startswith("seq 21 user/message surfaceOp: start after end")
    assert reversed_at_21
