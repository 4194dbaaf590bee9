"""Engine rules T1-T5, M1, I1: each fires on a minimal broken log and stays silent on
its near twin, names the official moments that refuse the instance, and never crashes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_loop_logs import Builder
from checker_logs import assert_fires_only_on_broken, build_twins, check, explain, fired

from dshfuzz.checker import OfficialLayer, RuleId
from dshfuzz.generators import session_logs
from dshfuzz.model import read_log
from dshfuzz.oracle import check_enclosure, check_meter, replay_inbox
from dshfuzz.contracts.js import js_add, js_subtract

ENGINE = {RuleId.T1, RuleId.T2, RuleId.T3, RuleId.T4, RuleId.T5, RuleId.M1, RuleId.I1}


def _base() -> Builder:
    b = Builder()
    b.tool_turn()
    b.text_turn()
    return b


def _index(b: Builder, type_: str, nth: int = 0) -> int:
    return [i for i, e in enumerate(b.events) if e["type"] == type_][nth]


def _marker(b: Builder, *, turn: Any, surface_op: Any) -> None:
    """A retrace-style edit marker: an empty assistant/message with null coordinates."""
    target = b.surface[-1]
    b.push("assistant/message", {"turn": turn, "step": turn, "message": {
        "id": "retrace-marker-1", "role": "assistant", "content": [],
        "source": {"kind": "model", "provider": "p", "model": "m"}}},
        surfaceOp=surface_op if surface_op == "append" else {"op": "replace", "start": target, "end": target},
        sourceEventSeqs=[] if surface_op == "append" else [target])


def _empty_step(b: Builder, coordinate: Any) -> None:
    """A turn whose only step appends an empty assistant/message (usage host) at ``coordinate``."""
    b.open_step()
    b.push("assistant/message", {"turn": coordinate, "step": coordinate and 1, "message": {
        "id": "msg-empty", "role": "assistant", "content": [], "source": {"kind": "model", "provider": "p", "model": "m"}}},
        surfaceOp="append", sourceEventSeqs=[])
    b.step_end()
    b.turn_end()


Mutation = Callable[[Builder], None]


def _set(type_: str, nth: int, **data: Any) -> Mutation:
    def mutate(b: Builder) -> None:
        b.events[_index(b, type_, nth)]["data"].update(data)
    return mutate


CASES: list[tuple[RuleId, str, Mutation, Mutation]] = [
    (RuleId.T1, "step/end names another step", _set("step/end", 0, step=2), _set("step/end", 0, step=1)),
    (RuleId.T1, "assistant/message outside its step", _set("assistant/message", 1, step=1), _set("assistant/message", 1, step=2)),
    (RuleId.T1, "request/header outside any turn", lambda b: b.request_header(), lambda b: None),
    (RuleId.T1, "turn/start while a turn is open", _set("turn/end", 0, turn=9), _set("turn/end", 0, turn=1)),
    (RuleId.T1, "retrace marker replace between turns (the meter refuses)",
     lambda b: _marker(b, turn=None, surface_op="replace"), lambda b: None),
    (RuleId.T2, "assistant/message cites a chunk of another step",
     lambda b: b.events[_index(b, "assistant/message", 1)]["sourceEventSeqs"].insert(0, _index(b, "assistant/chunk")),
     lambda b: None),
    (RuleId.T2, "assistant/message cites a non-chunk",
     lambda b: b.events[_index(b, "assistant/message", 1)]["sourceEventSeqs"].insert(0, _index(b, "step/start", 1)),
     lambda b: None),
    (RuleId.T2, "a usage sample with a fractional token count",
     _set("assistant/message", 0, usage={"inputTokens": 1.5, "outputTokens": 2}),
     _set("assistant/message", 0, usage={"inputTokens": 1, "outputTokens": 2})),
    (RuleId.T3, "a step number reused in a turn", _set("step/start", 1, step=1), _set("step/start", 1, step=2)),
    (RuleId.T4, "step/start without a turn",
     lambda b: b.events[_index(b, "step/start")]["data"].pop("turn"), _set("step/start", 0, turn=1)),
    (RuleId.T5, "turn/end without a reason",
     lambda b: b.events[_index(b, "turn/end")]["data"].pop("reason"), lambda b: None),
    (RuleId.T5, "aborted turn/end with a string cause (released only)",
     _set("turn/end", 0, reason={"kind": "aborted", "reason": "user"}),
     _set("turn/end", 0, reason={"kind": "aborted", "reason": {"kind": "user"}})),
    (RuleId.M1, "a null-turn empty message appended in a step", lambda b: _empty_step(b, None),
     lambda b: _empty_step(b, 3)),
    (RuleId.I1, "a claim larger than the queue",
     lambda b: b.events[_index(b, "agent/inbox/spliced", 1)]["data"].update(removedCount=2), lambda b: None),
    (RuleId.I1, "a message id already pending",
     lambda b: b.followup(copy.deepcopy(b.events[0]["data"]["inserted"][0])) and b.followup(
         copy.deepcopy(b.events[0]["data"]["inserted"][0])),
     lambda b: b.followup(b.user_message("again"))),
]


def twins() -> list[tuple[RuleId, str, Builder, Builder]]:
    """Every case as built logs: (rule, why, broken, twin); the official conformance test reuses them."""
    return build_twins(CASES, _base)


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), twins(), ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_rule_fires_on_broken_log_and_not_on_its_twin(rule: RuleId, why: str, broken: Builder, twin: Builder) -> None:
    assert_fires_only_on_broken(rule, why, broken, twin)


def test_the_base_log_is_clean() -> None:
    b = _base()
    report = check(b.header, b.events)
    assert report.findings == [], explain(report, b.header, b.events)


def test_findings_name_exactly_the_refusing_moments() -> None:
    b = _base()
    _marker(b, turn=None, surface_op="replace")
    [t1] = [f for f in check(b.header, b.events).findings if f.rule is RuleId.T1]
    assert [str(x) for x in t1.refused_by] == ["meter", "released"]
    b = _base()
    b.events[_index(b, "step/start", 1)]["data"]["step"] = 1
    [t3] = [f for f in check(b.header, b.events).findings if f.rule is RuleId.T3]
    assert [str(x) for x in t3.refused_by] == ["invariants", "released"]
    assert "expected step 2" in t3.message


def test_todo_write_outside_a_turn_is_refused_by_the_invariants_alone() -> None:
    """Released's walk has no todo/write case (it accepts one between turns, measured);
    the invariant companion's turn-scoped set includes it. request/context is refused by both."""
    b = _base()
    b.push("todo/write", {"todos": []})
    [t1] = [f for f in check(b.header, b.events).findings if f.rule is RuleId.T1]
    assert [str(x) for x in t1.refused_by] == ["invariants"], explain(check(b.header, b.events), b.header, b.events)
    b = _base()
    b.request_header()
    [t1] = [f for f in check(b.header, b.events).findings if f.rule is RuleId.T1]
    assert [str(x) for x in t1.refused_by] == ["invariants", "released"]


def test_a_chunk_usage_sample_is_not_read_by_released(fixtures_dir: Path) -> None:
    """Released never validates assistant/chunk payloads (V01:1918), so an extra key in a
    chunk's usage sample is no T2 of released (official: meter and released accept it);
    the same sample on an assistant/message of a format-0 file is (V01:345)."""
    log = read_log(fixtures_dir / "valid-v0.unpacked.jsonl")
    events = [copy.deepcopy(e.raw) for e in log.events]
    chunk = next(e for e in events if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "usage")
    chunk["data"]["chunk"]["usage"]["foo"] = 1
    report = check(log.header.raw, events)
    assert not [f for f in report.findings if f.rule is RuleId.T2], explain(report, log.header.raw, events)
    message = next(e for e in events if e["type"] == "assistant/message" and "usage" in e["data"])
    message["data"]["usage"]["foo"] = 1
    [t2] = [f for f in check(log.header.raw, events).findings if f.rule is RuleId.T2]
    assert [str(x) for x in t2.refused_by] == ["released"]


@pytest.mark.parametrize("string_in", ["a chunk", "a message", "the last sample"])
def test_a_string_count_stays_in_the_meter_totals_only_when_no_later_sample_subtracts_it(
    fixtures_dir: Path, string_in: str
) -> None:
    """The meter adds counts with JavaScript's ``+`` (TM:217-222): a ``"2"`` makes a total the text
    ``"...2"``, and the next sample's ``total - previous`` turns it back into a number, whether it
    replaces the same step's sample or starts another step. Only a string in the log's last sample
    reaches the meter's schema, which refuses it (each case checked against the official meter)."""
    log = read_log(fixtures_dir / "valid-v0.unpacked.jsonl")
    events = [copy.deepcopy(e.raw) for e in log.events]
    samples = [e["data"]["usage"] if e["type"] == "assistant/message" else e["data"]["chunk"]["usage"]
               for e in events
               if e["type"] == "assistant/message" and "usage" in e["data"]
               or e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "usage"]
    first_message = next(i for i, e in enumerate(events) if e["type"] == "assistant/message" and "usage" in e["data"])
    usage = {"a chunk": samples[0], "a message": events[first_message]["data"]["usage"],
             "the last sample": samples[-1]}[string_in]
    usage["cacheWriteTokens"] = "2"
    report = check(log.header.raw, events)
    meter = [f for f in report.findings if f.rule is RuleId.T2 and OfficialLayer.METER in f.refused_by]
    assert bool(meter) is (string_in == "the last sample"), explain(report, log.header.raw, events)


def test_javascript_addition_concatenates_strings_and_subtraction_makes_numbers() -> None:
    assert js_add(0, "2") == "02" and js_add("a", [1, None]) == "a1," and js_add(1, True) == 2
    assert js_subtract("02", "2") == 0 and js_subtract(js_add(0, "x"), 1) != js_subtract(js_add(0, "x"), 1)
    assert js_add(js_subtract(js_add(0, "2"), "2"), 0) == 0


def test_every_break_is_reported_not_only_the_first() -> None:
    b = _base()
    for i in (0, 1):
        b.events[_index(b, "turn/end", i)]["data"].pop("reason")
    assert [f.seq for f in check(b.header, b.events).findings if f.rule is RuleId.T5] == [
        b.events[_index(b, "turn/end", 0)]["seq"], b.events[_index(b, "turn/end", 1)]["seq"]]


def test_inbox_replays_from_the_seed_length() -> None:
    """A fork child whose first event removes the parent's pending prompt (the 2026-08-28 incident)."""
    b = Builder()
    b.claim()
    b.text_turn()
    assert RuleId.I1 in fired(check(b.header, b.events))
    assert RuleId.I1 not in fired(check({**b.header, "seedLength": 1}, b.events))


def test_legacy_turn_end_forms_the_loader_upgrades_are_not_t5_for_load() -> None:
    b = _base()
    b.events[_index(b, "turn/end")]["data"]["reason"] = {"kind": "error", "step": 1, "message": "boom"}
    assert RuleId.T5 not in fired(check(b.header, b.events))
    b.events[_index(b, "turn/end")]["data"]["reason"] = {"kind": "error", "step": 1, "message": ""}
    [t5] = [f for f in check(b.header, b.events).findings if f.rule is RuleId.T5]
    assert [str(x) for x in t5.refused_by] == ["released"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["turn", "step", "id", "kind", "type"]), inner, max_size=3),
    max_leaves=6,
) | st.sampled_from(["block-start", "block-end", "text-delta", "tool-call-delta", "usage", "text", "tool-call"])


@given(st.data())
def test_any_json_in_any_field_never_crashes_the_engine(data: st.DataObject) -> None:
    b = _base()
    events = copy.deepcopy(b.events)
    for _ in range(data.draw(st.integers(1, 4))):
        event = events[data.draw(st.integers(0, len(events) - 1))]
        target = event["data"] if isinstance(event.get("data"), dict) and data.draw(st.booleans()) else event
        if isinstance(target.get("chunk"), dict) and data.draw(st.booleans()):
            target = target["chunk"]
            if isinstance(target.get("block"), dict) and data.draw(st.booleans()):
                target = target["block"]
        key = data.draw(st.sampled_from(sorted(target) + ["turn", "step", "reason", "removedCount", "inserted"]))
        target[key] = data.draw(_json)
    check(b.header, events, rules=frozenset(ENGINE))


_ODD = st.sampled_from([None, 0, 1, 2, 3, -1, 1.5, "x", [], {}, True, [0, 1], [5, 2]])
_ODD_FIELDS = {
    "agent/inbox/spliced": ("start", "removedCount", "target", "inserted"),
    "turn/start": ("turn",), "turn/end": ("turn",), "step/start": ("turn", "step"), "step/end": ("turn", "step"),
    "assistant/chunk": ("turn", "step"), "assistant/message": ("turn", "step", "sourceEventSeqs"),
}
_MODELS = {"invariants": check_enclosure, "meter": check_meter, "inbox": replay_inbox}


@given(session_logs(max_events=80), st.data())
def test_engine_findings_agree_with_the_reference_models(generated: Any, data: st.DataObject) -> None:
    """Generated logs with turn/step/inbox/source fields replaced by odd values: each reference
    model (the invariant companion, the meter's structural checks, the inbox replay) refuses
    exactly when an error finding names its layer. (Usage samples and the context window,
    which only the meter's projections judge, are compared with the official meter in
    tests/conformance/test_checker_official_engine.py.)"""
    events = copy.deepcopy(generated.events)
    candidates = [i for i, e in enumerate(events) if e["type"] in _ODD_FIELDS]
    if not candidates:
        return
    for _ in range(data.draw(st.integers(1, 2), label="edits")):
        event = events[data.draw(st.sampled_from(candidates), label="event")]
        key = data.draw(st.sampled_from(_ODD_FIELDS[event["type"]]), label="field")
        (event if key == "sourceEventSeqs" else event["data"])[key] = copy.deepcopy(data.draw(_ODD, label="value"))
    report = check(generated.header, events)
    named = {str(layer) for f in report.findings if f.is_error for layer in f.refused_by}
    for layer, model in _MODELS.items():
        if layer == "invariants" and "seed" in named:
            continue  # the companion runs only on a session seed accepts; its model judges enclosure alone
        verdict = model(events, generated.header)
        assert verdict.ok == (layer not in named), (layer, verdict, explain(report, generated.header, events))


def test_t2_a_replace_right_after_its_shadow_price_must_cover_the_priced_range(fixtures_dir) -> None:
    """The meter's contextPressure claim: the summary before the compaction replace prices 4..28."""
    import json as _json

    from dshfuzz.checker import check_log
    from dshfuzz.model import parse_log

    lines = (fixtures_dir / "valid-v0.unpacked.jsonl").read_text().splitlines()
    events = [_json.loads(line) for line in lines[1:]]
    summary = next(e for e in events if e["type"] == "compaction/summary")
    summary["data"]["shadowedRange"]["start"] = 5

    def fired(evs: list) -> list:
        data = "\n".join([lines[0], *(_json.dumps(e, separators=(",", ":")) for e in evs)]) + "\n"
        return [f for f in check_log(parse_log(data.encode())).findings if f.rule is RuleId.T2]

    (t2,) = fired(events)
    assert t2.seq == summary["seq"] + 1 and "armed claim covers 5-28" in t2.message
    summary["data"]["shadowedRange"]["start"] = 4
    assert fired(events) == []


def _forked_child_with_inherited_splices() -> Builder:
    """A fork child whose seed (the first turn) holds a follow-up and its claim; the second turn is its own."""
    b = Builder()
    b.text_turn("inherited")
    b.header["seedLength"] = len(b.events)
    b.text_turn("own")
    return b


def test_an_excess_claim_the_fork_inherited_is_not_replayed() -> None:
    """Found by the fuzz property (seed 3): the official inbox slices from seedLength, so an over-long claim
    before it is accepted (all layers ok) and only the same claim past the boundary is I1."""
    inherited = _forked_child_with_inherited_splices()
    inherited.events[_index(inherited, "agent/inbox/spliced", 1)]["data"]["removedCount"] = 2
    assert RuleId.I1 not in fired(check(inherited.header, inherited.events))
    assert replay_inbox(inherited.events, inherited.header).ok
    own = _forked_child_with_inherited_splices()
    own.events[_index(own, "agent/inbox/spliced", 3)]["data"]["removedCount"] = 2
    assert RuleId.I1 in fired(check(own.header, own.events))
    assert not replay_inbox(own.events, own.header).ok


@pytest.mark.parametrize("seed_value", range(12))
def test_the_inbox_orphan_splice_mutator_only_edits_replayed_splices(seed_value: int) -> None:
    """Every inbox-orphan-splice mutant of a fork child is I1 for the checker and the reference inbox."""
    from dshfuzz.model import parse_log
    from dshfuzz.mutators import apply_seeded, get
    from dshfuzz.mutators._draft import EventDraft

    b = _forked_child_with_inherited_splices()
    mutant = apply_seeded(get("inbox-orphan-splice"), EventDraft.of(b.header, b.events, []), seed_value,
                          compression="none")
    log = parse_log(mutant.data)
    assert RuleId.I1 in fired(check(log.header.raw, [e.raw for e in log.events])), mutant.description
    assert not replay_inbox([e.raw for e in log.events], log.header.raw).ok, mutant.description


_RUN_RULES = frozenset(ENGINE | {RuleId(f"S{i}") for i in range(1, 9)} | {RuleId.P1, RuleId.P2})
_SOURCE_EDITS: dict[str, Callable[[list[Any], int], list[Any]]] = {
    "reverse": lambda s, k: s[::-1],
    "cite one twice, first up front": lambda s, k: [s[k], *s],
    "cite one twice, again at the end": lambda s, k: [*s, s[k]],
    "drop one": lambda s, k: s[:k] + s[k + 1 :],
}


def _facts(report: Any) -> list[tuple[Any, ...]]:
    return sorted((str(f.rule), -1 if f.seq is None else f.seq, f.message, tuple(map(str, f.refused_by)),
                   repr(sorted(f.context.items()))) for f in report.findings)


@given(session_logs(max_events=80), st.data())
def test_a_packed_chunk_run_is_judged_as_its_members_are(generated: Any, data: st.DataObject) -> None:
    """The engine, surface and marker passes decide a packed chunk row from its first member
    (its members share type, turn, step and delta kind). With a structural event dropped,
    turn/step fields made odd, or sources reordered, repeated or thinned, the log read from
    packed rows gets exactly the findings of the same events stored one per line."""
    from dshfuzz.checker import CheckOptions, check_log
    from dshfuzz.model import encode_jsonl, parse_log

    events = copy.deepcopy(generated.events)
    structural = [i for i, e in enumerate(events) if e["type"] in ("turn/start", "step/start", "step/end")]
    if structural and data.draw(st.booleans(), label="drop"):
        del events[data.draw(st.sampled_from(structural), label="dropped")]
    candidates = [i for i, e in enumerate(events) if e["type"] in _ODD_FIELDS]
    for _ in range(data.draw(st.integers(0, 2), label="edits") if candidates else 0):
        event = events[data.draw(st.sampled_from(candidates), label="event")]
        key = data.draw(st.sampled_from(_ODD_FIELDS[event["type"]]), label="field")
        (event if key == "sourceEventSeqs" else event["data"])[key] = copy.deepcopy(data.draw(_ODD, label="value"))
    cited = [e for e in events if type(e.get("sourceEventSeqs")) is list and len(e["sourceEventSeqs"]) > 2]
    if cited and data.draw(st.booleans(), label="edit sources"):
        event = data.draw(st.sampled_from(cited), label="citing")
        sources = event["sourceEventSeqs"]
        edit = _SOURCE_EDITS[data.draw(st.sampled_from(sorted(_SOURCE_EDITS)), label="sources edit")]
        event["sourceEventSeqs"] = edit(sources, data.draw(st.integers(0, len(sources) - 1), label="at"))
    packed = parse_log(encode_jsonl(generated.header, [events]))
    one_per_line = [e.raw for e in packed.events]
    got = check_log(packed, CheckOptions(strict=True, rules=_RUN_RULES))
    want = check(generated.header, one_per_line, rules=_RUN_RULES)
    assert _facts(got) == _facts(want), explain(got, generated.header, one_per_line)


def test_a_run_member_cited_ahead_of_its_run_is_a_repeated_source() -> None:
    """The meter refuses a cited seq that repeats (T2). The engine takes a packed run cited in
    order in one step; a member already cited ahead of its run must still count as repeated."""
    from dshfuzz.checker import CheckOptions, check_log
    from dshfuzz.generators import generate
    from dshfuzz.model import encode_jsonl, parse_log

    def packed(header: Any, events: list[Any]) -> Any:
        return parse_log(encode_jsonl(header, [events]))

    for generated in generate(20, 7, max_events=120):
        events = copy.deepcopy(generated.events)
        runs = {r.events.start: r.events.stop for r in packed(generated.header, events).rows if r.kind == "packed"}
        citing = [(e, h) for e in events if e["type"] == "assistant/message" and "usage" in e["data"]
                  for h in e.get("sourceEventSeqs", ()) if h in runs]
        if citing:
            break
    event, head = citing[0]
    event["sourceEventSeqs"] = [head + 1, *event["sourceEventSeqs"]]
    log = packed(generated.header, events)
    assert head in {r.events.start for r in log.rows if r.kind == "packed"}
    for report in (check_log(log, CheckOptions(strict=True)), check(generated.header, [e.raw for e in log.events])):
        t2 = [f.message for f in report.findings if f.rule is RuleId.T2]
        assert t2 == [f"token meter: assistant/message at seq {event['seq']} repeats source seq {head + 1}"], t2


def _text_session(version: int) -> Builder:
    """follow-up splice (seq 0), turn/start, its claim (seq 2), then the step answering it."""
    b = Builder(version=version)
    b.text_turn("the fix", "update")
    return b


def _replayed_from(b: Builder, seq: int) -> Builder:
    """The stale-cursor-replay incident: events from ``seq`` on appended again, seqs unchanged."""
    b.events += copy.deepcopy(b.events[seq:])
    return b


def _dropped(b: Builder, type_: str) -> Builder:
    """The seq-gap incident: the first event of ``type_`` deleted, seqs not renumbered."""
    del b.events[_index(b, type_)]
    return b


_SEQ_INCIDENTS = {
    "replay re-runs the claim": (lambda b: _replayed_from(b, 2), True),
    "replay starts after the claim": (lambda b: _replayed_from(b, 3), False),
    "gap drops the follow-up the claim takes": (lambda b: _dropped(b, "agent/inbox/spliced"), True),
    "gap drops a chunk": (lambda b: _dropped(b, "assistant/chunk"), False),
}


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("incident", sorted(_SEQ_INCIDENTS))
def test_a_seq_incident_is_i1_exactly_when_the_inbox_replay_throws(incident: str, version: int) -> None:
    """Nightly fuzzing (seed 11) called I1 on seq-gap and stale-cursor-replay mutants of a v1
    log a false alarm. The checker was right: the official Inbox replays the raw events from
    seedLength whatever their seqs and format version, and throws ``invalid persisted inbox
    splice at session seq 2`` on the re-run or orphaned claim (tests/conformance has the
    official verdicts); the judge had no model for v1 logs and took silence for acceptance."""
    edit, orphaned = _SEQ_INCIDENTS[incident]
    b = edit(_text_session(version))
    report = check(b.header, b.events)
    assert (RuleId.I1 in fired(report)) is orphaned, explain(report, b.header, b.events)
    assert replay_inbox(b.events, b.header).ok is not orphaned


@given(session_logs(max_events=80), st.data())
def test_hits_handed_out_early_are_the_hits_of_one_late_settlement(generated: Any, data: st.DataObject) -> None:
    """The walk settles its pending hits as it goes (memory bounded on hostile logs): settling
    after every event gives exactly the findings of settling once at the end of the log, the
    end-of-log usage and context-window verdicts included."""
    from dshfuzz.checker import _turnstep

    events = copy.deepcopy(generated.events)
    candidates = [i for i, e in enumerate(events) if e["type"] in _ODD_FIELDS]
    for _ in range(data.draw(st.integers(0, 3), label="edits") if candidates else 0):
        event = events[data.draw(st.sampled_from(candidates), label="event")]
        key = data.draw(st.sampled_from(_ODD_FIELDS[event["type"]]), label="field")
        (event if key == "sourceEventSeqs" else event["data"])[key] = copy.deepcopy(data.draw(_ODD, label="value"))
    metered = [e["data"] for e in events if e["type"] in ("assistant/message", "request/context") and "usage" in e["data"]
               or e["type"] == "request/context"]
    for target in data.draw(st.lists(st.sampled_from(metered), max_size=2), label="metered") if metered else ():
        value = copy.deepcopy(data.draw(_ODD, label="count"))
        if "usage" in target:
            usage = target["usage"]
            target["usage"] = {**usage, "inputTokens": value} if type(usage) is dict and data.draw(st.booleans()) else value
        else:
            target["contextWindow"] = value
    default = _turnstep._SETTLE_AT
    try:
        _turnstep._SETTLE_AT = -1
        eager = check(generated.header, events, rules=frozenset(ENGINE))
        _turnstep._SETTLE_AT = 10**9
        late = check(generated.header, events, rules=frozenset(ENGINE))
    finally:
        _turnstep._SETTLE_AT = default
    assert _facts(eager) == _facts(late), explain(late, generated.header, events)
