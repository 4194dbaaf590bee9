"""The generators: determinism, the write-order invariants every rendered log keeps, coverage.

These run without Node; ``tests/conformance/test_generated_official.py`` asks the
official layers themselves.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given

from dshfuzz.cli import main
from dshfuzz.generators import (
    FeatureWeights,
    GeneratedLog,
    SessionPlan,
    StepPlan,
    ToolCallPlan,
    TurnEndPlan,
    TurnPlan,
    coverage_stats,
    generate,
    interrupted_turn_closers,
    render,
    session_logs,
)
from dshfuzz.generators._stats import real_shapes
from dshfuzz.generators._vocabulary import KNOWN_V0_EVENT_TYPES, RELEASED_EXTRA_EVENT_TYPES
from dshfuzz.model import parse_log
from dshfuzz.report import coverage_text


def _dump(log: GeneratedLog) -> str:
    return log.to_jsonl(pack=False).decode()


def _write_order_problems(log: GeneratedLog) -> list[str]:
    """The enclosure, pairing, citation and surface rules the official layers enforce (see reference §1)."""
    problems: list[str] = []
    open_turn = open_step = None
    next_turn = 1
    next_step = 1
    lifecycles: dict[str, str] = {}
    surface: list[int] = []
    events = log.events
    for index, event in enumerate(events):
        kind, data, seq = event["type"], event["data"], event["seq"]
        if seq != index:
            problems.append(f"seq {seq} at index {index}")
        if kind == "turn/start":
            if open_turn is not None or data["turn"] != next_turn:
                problems.append(f"seq {seq}: turn/start {data['turn']} (open {open_turn}, next {next_turn})")
            open_turn, next_step = data["turn"], 1
            lifecycles.clear()
        elif kind == "turn/end":
            if open_turn != data["turn"] or open_step is not None or lifecycles:
                problems.append(
                    f"seq {seq}: turn/end {data['turn']} (open {open_turn}/{open_step}, calls {lifecycles})"
                )
            open_turn, next_turn = None, next_turn + 1
        elif kind == "step/start":
            if open_turn != data["turn"] or open_step is not None or data["step"] != next_step:
                problems.append(f"seq {seq}: step/start {data['turn']}/{data['step']}")
            open_step = data["step"]
        elif kind == "step/end":
            if (open_turn, open_step) != (data["turn"], data["step"]) or lifecycles:
                problems.append(f"seq {seq}: step/end leaves {sorted(lifecycles)} or is not open")
            open_step, next_step = None, next_step + 1
        elif kind == "assistant/message":
            for source in event["sourceEventSeqs"]:
                cited = events[source]
                if (
                    cited["type"] != "assistant/chunk"
                    or cited["data"]["step"] != data["step"]
                    or source >= seq
                ):
                    problems.append(f"seq {seq}: cites {source} ({cited['type']})")
            for block in data["message"]["content"]:
                if block["type"] == "tool-call":
                    lifecycles[block["id"]] = "advertised"
        elif kind == "tool/call":
            if lifecycles.get(data["callId"]) != "advertised":
                problems.append(f"seq {seq}: tool/call {data['callId']} was not advertised")
            lifecycles[data["callId"]] = "started"
        elif kind == "tool/result" and event["surfaceOp"] == "append":
            call_id = data["message"]["source"]["callId"]
            if call_id not in lifecycles:
                problems.append(f"seq {seq}: tool/result for {call_id} without a lifecycle")
            lifecycles.pop(call_id, None)
        elif kind == "session/title":
            for cited in data["messageSeqs"]:
                if (
                    events[cited]["type"] != "user/message"
                    or events[cited]["data"]["source"]["kind"] != "user"
                ):
                    problems.append(f"seq {seq}: title cites {cited}")
        op = event.get("surfaceOp")
        if op == "append":
            surface.append(seq)
        elif op is not None:
            start, end = surface.index(op["start"]), surface.index(op["end"])
            if set(surface[start : end + 1]) - set(event["sourceEventSeqs"]):
                problems.append(f"seq {seq}: replace omits a shadowed node")
            surface[start : end + 1] = [seq]
    if log.batches and log.batches[-1] != len(events):
        problems.append(f"last batch ends at {log.batches[-1]}, log has {len(events)} events")
    if log.batches != sorted(set(log.batches)):
        problems.append(f"batches not strictly increasing: {log.batches}")
    return problems


@given(session_logs())
def test_every_generated_log_keeps_the_agent_loop_invariants(log: GeneratedLog) -> None:
    assert _write_order_problems(log) == [], _dump(log)


@given(session_logs(format_version=1, max_events=80))
def test_format_1_logs_are_v0_rows_under_a_version_1_header(log: GeneratedLog) -> None:
    assert log.header["version"] == 1
    assert _write_order_problems(log) == [], _dump(log)


@given(session_logs(max_events=60))
def test_encoded_bytes_read_back_to_the_same_events(log: GeneratedLog) -> None:
    for data in (log.to_jsonl(), log.to_zstd()):
        parsed = parse_log(data)
        assert [e.raw for e in parsed.events] == log.events, _dump(log)
        assert not parsed.diagnostics, parsed.diagnostics


def test_generate_is_deterministic_for_a_seed() -> None:
    first = [log.to_jsonl() for log in generate(25, 11)]
    again = [log.to_jsonl() for log in generate(25, 11)]
    other = [log.to_jsonl() for log in generate(25, 12)]
    assert first == again
    assert first != other


def test_generate_respects_the_event_range() -> None:
    sizes = [len(log.events) for log in generate(40, 3, min_events=20, max_events=45)]
    assert all(20 <= n <= 45 for n in sizes), sizes


def test_three_hundred_logs_cover_the_whole_v0_vocabulary() -> None:
    stats = coverage_stats(generate(300, 7, max_events=250))
    assert {k: v for k, v in stats.missing().items() if v} == {}


def test_real_sessions_lie_within_what_the_generators_produce(real_sessions_dir: Path) -> None:
    stats = coverage_stats(generate(300, 7, max_events=250))
    real = real_shapes(real_sessions_dir / "concrete")
    assert real.logs >= 30
    outside = [c for c in stats.comparison(real) if not c.within]
    assert outside == [], coverage_text(stats, real)


def test_crash_closers_match_the_official_repair() -> None:
    """A turn cut after two advertised calls, one started:
    outcome-unknown, not-started, step/end, turn/end."""
    crash = TurnEndPlan(kind="interrupted", crash="tools", started=1, finished=0)
    calls = (ToolCallPlan(tool=0, args=TurnPlan().prompt), ToolCallPlan(tool=1, args=TurnPlan().prompt))
    plan = SessionPlan(turns=(TurnPlan(steps=(StepPlan(calls=calls),), end=crash),))
    events = render(plan).events
    tail = [(e["type"], e["data"].get("error", {}).get("code"), e["data"].get("reason")) for e in events[-4:]]
    assert tail == [
        ("tool/result", "TOOL_OUTCOME_UNKNOWN", None),
        ("tool/result", "TOOL_NOT_STARTED", None),
        ("step/end", None, None),
        ("turn/end", None, {"kind": "interrupted"}),
    ]
    not_started = events[-3]
    call_id = not_started["data"]["message"]["source"]["callId"]
    assert not_started["data"]["message"]["id"] == f"interrupted-tool-result-{call_id}-{not_started['seq']}"
    assert "sourceEventSeqs" not in not_started
    assert interrupted_turn_closers(events) == []


def test_a_shrunk_plan_still_renders_a_valid_log() -> None:
    """The smallest plan Hypothesis can reach: one turn, one step, one word."""
    log = render(SessionPlan())
    types = [e["type"] for e in log.events]
    assert types[:5] == [
        "agent/inbox/spliced",
        "turn/start",
        "agent/inbox/spliced",
        "step/start",
        "user/message",
    ]
    assert types[-2:] == ["step/end", "turn/end"]


def test_max_events_drops_whole_trailing_turns() -> None:
    plan = SessionPlan(turns=(TurnPlan(),) * 6)
    full = render(plan).events
    cut = render(plan, max_events=len(full) - 1).events
    assert len(cut) < len(full)
    assert cut[-1]["type"] == "turn/end"
    assert Counter(e["type"] for e in cut)["turn/start"] == 5


def test_ignorable_plugin_events_appear_only_in_format_1() -> None:
    """Unknown plugin types only in format 1; in both formats, ignorable marks exactly them and
    released's three inventory types rc.8 does not know (the one form every layer accepts)."""
    weights = FeatureWeights(side=1.0)
    v0 = [e for log in generate(60, 5, weights=weights) for e in log.events]
    v1 = [e for log in generate(60, 5, weights=weights, format_version=1) for e in log.events]
    assert not any(e["type"].startswith("x-") for e in v0)
    assert any(e["type"].startswith("x-") for e in v1)
    for events in (v0, v1):
        marked = {e["type"] for e in events if e.get("ignorable")}
        extra = {e["type"] for e in events if e["type"] in RELEASED_EXTRA_EVENT_TYPES}
        assert extra == RELEASED_EXTRA_EVENT_TYPES
        assert {t for t in marked if not t.startswith("x-")} == RELEASED_EXTRA_EVENT_TYPES
        assert all(e.get("ignorable") is True for e in events if e["type"] in extra)


def test_cli_writes_deterministic_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--count", "4", "--seed", "9", "--out", str(tmp_path / "a"), "--zstd"]) == 0
    assert (
        main(["generate", "--count", "4", "--seed", "9", "--out", str(tmp_path / "b"), "--zstd", "--stats"])
        == 0
    )
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["0000.jsonl.zstd", "0001.jsonl.zstd", "0002.jsonl.zstd", "0003.jsonl.zstd"]
    assert all((tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes() for n in names)
    assert "event type" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["5..2", "x..3", "-1..4"])
def test_cli_rejects_a_bad_event_range(tmp_path: Path, bad: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["generate", "--count", "1", "--out", str(tmp_path), "--events", bad])
    assert exc.value.code == 2


_DRAW_KNOBS = FeatureWeights(working_step=1.0, full_turns=1.0, compact_all=1.0, compaction=1.0, tool_calls=1.0)


def test_the_draw_knobs_are_off_by_default() -> None:
    """Off, the knobs make no draw, so every existing strategy and seed keeps its logs."""
    default = FeatureWeights()
    assert (default.working_step, default.full_turns, default.compact_all) == (0.0, 0.0, 0.0)


@given(session_logs(turns=(2, 3), max_events=120, weights=_DRAW_KNOBS))
def test_logs_drawn_with_every_draw_knob_on_keep_the_agent_loop_invariants(log: GeneratedLog) -> None:
    assert _write_order_problems(log) == [], _dump(log)


def test_the_draw_knobs_put_answered_calls_before_whole_surface_compactions() -> None:
    """On, every own turn with steps leads with a working step that calls tools, and every
    compaction keeps nothing of the surface."""
    for log in generate(40, 9, turns=(2, 3), max_events=400, weights=_DRAW_KNOBS):
        for turn in log.plan.turns:
            assert not turn.steps or turn.steps[0].calls or len(turn.steps) == 1
            assert turn.compaction is None or turn.compaction.keep == 0


def test_every_type_appears_in_at_least_one_log_in_fifty() -> None:
    """Default weights put every type of the vocabulary (rc.8's and released's extra three) in at
    least 2% of logs: thousands of times in a 10-minute campaign (~100k logs)."""
    logs = 1000
    seen: Counter[str] = Counter()
    for log in generate(logs, 50, max_events=200):
        seen.update({e["type"] for e in log.events})
    rare = {t: seen[t] for t in KNOWN_V0_EVENT_TYPES | RELEASED_EXTRA_EVENT_TYPES if seen[t] < logs // 50}
    assert rare == {}


def _chunk(e: dict) -> dict:
    return e["data"]["chunk"] if e["type"] == "assistant/chunk" else {}


def _source(e: dict) -> dict:
    if e["type"] == "user/message":
        return e["data"]["source"]
    return e["data"]["message"]["source"] if e["type"] in ("assistant/message", "tool/result") else {}


# Nested payload shapes released's validators tell apart (V01:271-1316), beyond the disposition
# members tests/conformance/test_generator_vocabulary.py reads from the installed package.
_SHAPES = {
    "usage cache counters": lambda e: "cacheReadTokens" in e["data"].get("usage", {}),
    "usage reasoning and total": lambda e: "totalTokens" in e["data"].get("usage", {}),
    "failure status and retry-after": lambda e: "providerRetryAfterMs" in e["data"].get("failure", {}),
    "finish replayState": lambda e: "replayState" in _chunk(e),
    "model source replayState": lambda e: "replayState" in _source(e),
    "tool-call-delta without name": lambda e: _chunk(e).get("type") == "tool-call-delta" and "name" not in _chunk(e),
    "header config maxTokens default": lambda e: e["type"] == "request/header"
    and "maxTokens" in e["data"]["header"].get("adapterDefaults", {}),
    "header config temperature and stop": lambda e: e["type"] == "request/header"
    and "stop" in e["data"]["header"]["config"],
    "series header": lambda e: e["type"] == "request/header" and e["data"]["reason"] == "series",
    "plugin source without form": lambda e: _source(e).get("kind") == "plugin" and "form" not in _source(e),
    "plugin relay, catalog, recall": lambda e: _source(e).get("form") in ("relay", "catalog", "recall")
    and _source(e).get("kind") == "plugin",
    "legacy goal message": lambda e: "change" in _source(e),
    "two session references": lambda e: len(_source(e).get("references", ())) == 2,
    "instructions removed": lambda e: any(c["action"] == "remove" for c in _source(e).get("changes", ())),
    "baselineIdentity": lambda e: "baselineIdentity" in _source(e),
    "skill-catalog update": lambda e: _source(e).get("update") is True,
    "nested code dispatch": lambda e: e["type"] == "tool/code-dispatch"
    and e["data"]["parentCallId"] != e["data"]["rootCallId"],
    "failed team member": lambda e: e["type"] == "team/member" and "error" in e["data"]["member"],
    "deleted team task": lambda e: e["type"] == "team/task" and e["data"]["task"]["status"] == "deleted",
    "unowned team task": lambda e: e["type"] == "team/task" and "ownerId" not in e["data"]["task"],
    "descriptor tool filter": lambda e: "toolFilter" in e["data"] and e["type"] == "subagent/descriptor",
    "one-shot descriptor without label": lambda e: e["type"] == "subagent/descriptor" and "label" not in e["data"],
    "provider title without route": lambda e: e["type"] == "session/title"
    and e["data"]["source"]["kind"] == "provider" and "model" not in e["data"]["source"],
    "dispatch without acceptedAt": lambda e: e["type"] == "schedule/change"
    and e["data"]["operation"] == "dispatch" and "acceptedAt" not in e["data"],
    "goal clear": lambda e: e["type"] == "goal/change" and e["data"]["operation"] == "clear",
    "approval without reason": lambda e: e["type"] == "approval/asked" and "reason" not in e["data"],
    "hook result without exit code": lambda e: e["type"] == "hook/result" and "exitCode" not in e["data"],
}


def test_every_nested_payload_shape_appears() -> None:
    seen: Counter[str] = Counter()
    for log in generate(1000, 51, max_events=200):
        for event in log.events:
            seen.update(name for name, shape in _SHAPES.items() if shape(event))
    assert sorted(name for name in _SHAPES if not seen[name]) == []
