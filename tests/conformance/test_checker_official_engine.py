"""The engine, plugin, wire and migration rules name the official moments that really refuse.

Every minimal mutant of the unit tests (``twins()`` of each rule module's tests) is
written as a file and judged by every official layer. For each of the mutated
rule's findings, every harness layer its ``refused_by`` lists must refuse the
mutant (``provider`` is the real endpoint, which no offline layer stands for);
the unmutated twin must pass every layer, so the refusal belongs to the mutation;
and every layer that refuses the mutant must be named by some error finding, or
by a warning of a migration pre-check for the released layer (v0 exactness); the
offline ``wire`` layer seeds a Session first, so a seed refusal explains it too.
On generated logs with odd values in turn/step/inbox/usage fields, the meter, the
inbox replay and the invariant companion refuse exactly when an error finding
names them.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and mutants

import test_checker_engine  # noqa: E402
import test_checker_migration  # noqa: E402
import test_checker_plugin  # noqa: E402
import test_checker_wire  # noqa: E402
from agent_loop_logs import Builder, jsonl  # noqa: E402

from checker_logs import session_log  # noqa: E402

from dshfuzz.checker import CheckOptions, RuleId, check_log, check_path  # noqa: E402
from dshfuzz.generators import FeatureWeights, session_logs  # noqa: E402
from dshfuzz.mutators._draft import seq_refs  # noqa: E402

OFFLINE = {"loadApp": "load"}
TWINS = [*test_checker_engine.twins(), *test_checker_plugin.twins(), *test_checker_wire.twins(),
         *test_checker_migration.twins()]


def _verdicts(official, path: Path) -> dict[str, str | None]:
    """Layer (loadApp folded into load) -> None when it accepts, else the official message."""
    out: dict[str, str | None] = {}
    for name, verdict in official.check(path=path).items():
        name = OFFLINE.get(name, name)
        message = None if verdict.ok else (verdict.error.message if verdict.error else "refused")
        out[name] = out.get(name) or message
    return out


def _write(tmp_path: Path, name: str, b: Builder) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(jsonl(b.header, b.events), encoding="utf-8")
    return path


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), TWINS, ids=[f"{c[0]}-{c[1]}" for c in TWINS])
def test_refused_by_names_exactly_who_refuses(official, tmp_path: Path, rule: RuleId, why: str, broken: Builder,
                                               twin: Builder) -> None:
    twin_verdicts = _verdicts(official, _write(tmp_path, "twin", twin))
    assert not any(twin_verdicts.values()), f"{why}: the twin is refused: {twin_verdicts}"

    path = _write(tmp_path, "broken", broken)
    verdicts = _verdicts(official, path)
    report = check_path(path, CheckOptions(strict=True))
    for finding in (f for f in report.findings if f.rule is rule):
        for layer in map(str, finding.refused_by):
            if layer == "provider":
                continue
            assert verdicts.get(layer), (f"{why}: {rule} at seq {finding.seq} says {layer} refuses, but it accepts; "
                                         f"official verdicts: {verdicts}")
    named = {str(layer) for f in report.findings if f.is_error or str(f.rule).startswith("G") for layer in f.refused_by}
    if verdicts.get("seed"):
        named.add("wire")  # the offline wire layer builds its request through Session.create, the seed path
    unexplained = {layer: message for layer, message in verdicts.items() if message and layer not in named}
    assert not unexplained, (f"{why}: official layers refuse with no finding naming them: {unexplained}\n"
                             + "\n".join(f"  {f.rule} {f.seq}: {f.message} {list(map(str, f.refused_by))}"
                                         for f in report.findings))


_VALUES = st.sampled_from([
    None, 0, 1, 2, 3, -1, 1.5, "x", [], {}, True, [0, 1], [5, 2],
    {"inputTokens": -1, "outputTokens": 2}, {"inputTokens": 1.5, "outputTokens": 0},
    {"inputTokens": 1, "outputTokens": 1, "cacheReadTokens": None}, {"inputTokens": 1, "outputTokens": 1, "cacheWriteTokens": "2"},
])
_FIELDS = {
    "agent/inbox/spliced": ("start", "removedCount", "target", "inserted"),
    "turn/start": ("turn",), "turn/end": ("turn",), "step/start": ("turn", "step"), "step/end": ("turn", "step"),
    "assistant/chunk": ("turn", "step"), "assistant/message": ("turn", "step", "usage", "sourceEventSeqs"),
    "request/context": ("contextWindow",),
}
_ENGINE_LAYERS = ("meter", "inbox", "invariants")


def _assert_refused_exactly_when_named(
    official, header: dict[str, Any], events: list[dict[str, Any]], layers: tuple[str, ...],
    *, counts: Callable[[Any], bool] = lambda f: f.is_error,
) -> None:
    """Each of ``layers`` refuses the log exactly when a counted finding names it."""
    report = check_log(session_log(header, events), CheckOptions(strict=True))
    counted = [f for f in report.findings if counts(f)]
    named = {str(layer) for f in counted for layer in f.refused_by}
    verdicts = official.check(events=events, header=header, layers=layers)
    for layer in layers:
        refused = not verdicts[layer].ok
        assert refused == (layer in named), (
            f"{layer}: official {'refuses' if refused else 'accepts'} "
            f"({verdicts[layer].error.message if verdicts[layer].error else ''}); findings: "
            + "; ".join(f"{f.rule}@{f.seq} {list(map(str, f.refused_by))}" for f in counted))


@given(session_logs(max_events=80), st.data())
def test_meter_inbox_and_invariants_refuse_exactly_when_a_finding_names_them(official, generated: Any,
                                                                            data: st.DataObject) -> None:
    """Generated logs with one or two turn/step/inbox/usage fields replaced by odd JSON values."""
    events = copy.deepcopy(generated.events)
    candidates = [i for i, e in enumerate(events) if e["type"] in _FIELDS]
    if not candidates:
        return
    for _ in range(data.draw(st.integers(1, 2), label="edits")):
        event = events[data.draw(st.sampled_from(candidates), label="event")]
        key = data.draw(st.sampled_from(_FIELDS[event["type"]]), label="field")
        target = event if key == "sourceEventSeqs" else event["data"]
        target[key] = copy.deepcopy(data.draw(_VALUES, label="value"))
    _assert_refused_exactly_when_named(official, generated.header, events, _ENGINE_LAYERS)


def _call_ids(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        if e["type"] == "tool/call":
            out.append(e["data"]["callId"])
        elif e["type"] == "assistant/message":
            out += [b["id"] for b in e["data"]["message"]["content"] if b.get("type") == "tool-call"]
    return out


@given(session_logs(max_events=100, turns=(1, 3), weights=FeatureWeights(tool_calls=0.9)), st.data())
def test_tool_lifecycle_refusals_are_named_exactly(official, generated: Any, data: st.DataObject) -> None:
    """Generated logs with one or two call ids (or a tool/call's name/arguments) renamed to another
    id of the log or a fresh one, in any of the three positions: the released walk, the
    invariant companion and the seed refuse exactly when an error finding names them."""
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
            where = data.draw(st.sampled_from(["source", "block", "both"]), label="position")
            if where != "block":
                payload["message"]["source"]["callId"] = value
            if where != "source":
                payload["message"]["content"][0]["toolCallId"] = value
        else:
            blocks = [b for b in payload["message"]["content"] if b.get("type") == "tool-call"]
            if blocks:
                data.draw(st.sampled_from(blocks), label="block")["id"] = value
    _assert_refused_exactly_when_named(official, generated.header, events, ("released", "invariants", "seed"))


_MOVABLE = ("turn/start", "turn/end", "step/start", "step/end", "tool/call", "request/header", "request/context",
            "agent/inbox/spliced", "todo/write")
def _renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seqs made contiguous again after a move, with every seq reference remapped (``seq_refs``:
    provenance, replace ranges, compaction shadowed seqs and ranges, title messageSeqs)."""
    new = {e["seq"]: k for k, e in enumerate(events)}
    for k, e in enumerate(events):
        e["seq"] = k
        for container, key in seq_refs(e):
            container[key] = new.get(container[key], container[key])
    return events


@given(session_logs(max_events=80), st.data())
def test_moved_structural_events_are_refused_exactly_when_named(official, generated: Any, data: st.DataObject) -> None:
    """One turn/step/tool/request/inbox event moved elsewhere (seqs renumbered): the meter, the
    inbox, the invariant companion and the released walk refuse exactly when a finding names them
    (an error, or a migration pre-check warning for released). Moves past an llm/retry or a
    compaction event are drawn too: G4 names released's refusal of the relations they break."""
    events = copy.deepcopy(generated.events)
    movable = [i for i, e in enumerate(events) if e["type"] in _MOVABLE]
    if not movable:
        return
    origin = data.draw(st.sampled_from(movable), label="moved")
    moved = events.pop(origin)
    events.insert(data.draw(st.integers(0, len(events)), label="to"), moved)
    events = _renumbered(events)
    # the migration pre-checks (G*) are warnings, yet released refuses what they name
    _assert_refused_exactly_when_named(official, generated.header, events, ("meter", "inbox", "invariants", "released"),
                                       counts=lambda f: f.is_error or str(f.rule).startswith("G"))


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("incident", sorted(test_checker_engine._SEQ_INCIDENTS))
def test_the_official_inbox_refuses_a_seq_incident_exactly_when_i1_fires(official, incident: str, version: int) -> None:
    """The official evidence behind the nightly I1 "false alarm" (seed 11, v1 log): the inbox
    layer replays the raw events of any format version and refuses the re-run or orphaned
    claim with the message I1 quotes; a replay or gap that leaves the claim alone passes it."""
    edit, orphaned = test_checker_engine._SEQ_INCIDENTS[incident]
    b = edit(test_checker_engine._text_session(version))
    (inbox,) = official.check(events=b.events, header=b.header, layers=("inbox",)).values()
    i1 = [f.message for f in check_log(session_log(b.header, b.events), CheckOptions(strict=True)).findings
          if f.rule is RuleId.I1]
    assert inbox.ok is not orphaned
    if orphaned:
        assert inbox.error is not None and inbox.error.message == "invalid persisted inbox splice at session seq 2"
        assert len(i1) == 1 and i1[0].startswith(inbox.error.message), i1
    else:
        assert i1 == []
