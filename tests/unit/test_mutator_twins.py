"""Every mutator builds its twin: the mutant's draws and inserted structure, without the defect.

The official layers judge the twins in ``tests/conformance/test_mutator_twins_official.py``;
these tests pin what a twin is, without any oracle: a twin makes exactly the draws its mutant
makes (seeded alike, both describe the same choice), keeps the mutant's container, expects no
rule and claims no refusal, is never the mutant itself, and -- unless the mutator inserts
structure around its defect -- is the drawn log, unedited.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.generators import GeneratedLog, generate
from dshfuzz.mutators import (
    MUTATORS,
    PERTURBATIONS,
    Inapplicable,
    Level,
    Mutator,
    apply_seeded,
    incident_weights,
    mutator,
    twins,
)
from dshfuzz.mutators._base import run_edit
from dshfuzz.mutators._draft import EventDraft
from dshfuzz.mutators._strategy import _as_v3

INSERTS = {
    "unknown-marker-prefix": "a marker's edit block (a turn whose one step holds the marker)",
    "self-shadowing-marker": "a marker's edit block (a turn whose one step holds the marker)",
    "system-message-source": "a system/message append",
    "descriptor-version": "a subagent/descriptor between turns",
    "nesting-over-limit": "a property in a tool's schema",
    "scheduler-failure": "the step/end and turn/end(error) that close the cut round",
    "chunk-row-overflow": "a time gap where a run had none to overflow by",
}
"""The mutators whose twin is not the drawn log unedited, with the structure they keep."""

PER_MUTATOR = 4


def _logs(m: Mutator) -> list[GeneratedLog | EventDraft]:
    logs = list(generate(40, seed=11, turns=(1, 3), weights=incident_weights()))
    if m.formats == {3}:
        return [_as_v3(log) for log in logs]
    if 1 in m.formats:
        logs += list(generate(10, seed=12, turns=(1, 3), weights=incident_weights(), format_version=1))
    return logs


class _Fixed:
    def draw(self, strategy: Any, label: object = None) -> Any:
        raise AssertionError("the identity edit drew a value")


def _unedited(log: GeneratedLog | EventDraft, compression: str) -> bytes:
    draft = EventDraft.of(log.header, log.events, log.cuts if isinstance(log, EventDraft) else log.batches)
    return run_edit(draft, Level.EVENT, compression, lambda stage, data: "", _Fixed()).data


def test_every_mutator_builds_a_twin_or_says_why_not() -> None:
    for m in MUTATORS.values():
        assert m.has_twin or "No twin:" in m.doc, f"{m.name}: no twin, and its docstring does not say why"
    assert set(INSERTS) <= set(MUTATORS)


@pytest.mark.parametrize("name", sorted(MUTATORS))
def test_a_twin_makes_the_mutants_draws_without_its_defect(name: str) -> None:
    m = MUTATORS[name]
    made = 0
    for i, log in enumerate(_logs(m)):
        try:
            mutant = apply_seeded(m, log, i)
        except Inapplicable:
            continue
        twin = apply_seeded(m, log, i, twin=True)
        assert twin.description == f"twin of: {mutant.description}", f"{name}: the twin drew otherwise"
        assert twin.data != mutant.data, f"{name}: the twin is the mutant ({mutant.description})"
        assert (twin.compression, twin.format_version, twin.mutator) == (
            mutant.compression, mutant.format_version, name)
        assert not twin.expects and not twin.official
        if name not in INSERTS:
            assert twin.data == _unedited(log, twin.compression), f"{name}: the twin edited the log ({twin.description})"
        made += 1
        if made == PER_MUTATOR:
            break
    assert made, f"{name} applied to none of the sample logs"


@given(st.sampled_from(sorted(MUTATORS)).flatmap(twins))
def test_the_twin_strategy_draws_twins(twin: Any) -> None:
    assert twin.description.startswith("twin of: ") and not twin.expects and not twin.official


def test_an_edit_without_a_defect_flag_has_no_twin() -> None:
    @mutator("probe", level=Level.EVENT, expects=("E1",), incident="x " * 15)
    def probe(draft: Any, data: Any) -> str:
        """Precondition: none. No twin: a probe. Deterministic."""
        return "probed"

    log = next(iter(generate(1, seed=1)))
    assert not probe.has_twin and MUTATORS["seq-gap"].has_twin
    with pytest.raises(TypeError, match="cannot build its twin"):
        probe.twin_or_raise(log, _Fixed())
    with pytest.raises(TypeError, match="no twin"):
        apply_seeded(next(iter(PERTURBATIONS.values())), log, 0, twin=True)


def test_an_insert_renumbers_the_seqs_repair_ids_and_title_prompts_name() -> None:
    """Found by descriptor-version's twin: the released migration checks a crash repair's id
    (``interrupted-tool-result-<callId>-<its seq>``) and a title request's framed seqs exactly."""
    from dshfuzz.model import loads

    logs = [log for log in generate(80, seed=3, weights=incident_weights())
            if b"interrupted-tool-result-" in log.to_jsonl() or b"session/title-llm-request" in log.to_jsonl()]
    assert logs
    for log in logs[:6]:
        draft = EventDraft.of(log.header, log.events, log.batches)
        draft.insert(0, {"type": "x-test/probe", "seq": 0, "time": 0, "data": {}})
        for event in draft.events:
            message = event.get("data", {}).get("message") if event["type"] == "tool/result" else None
            if message and str(message.get("id")).startswith("interrupted-tool-result-"):
                assert message["id"].endswith(f"-{event['seq']}"), message["id"]
            if event["type"] == "session/title-llm-request":
                text = event["data"]["messages"][0]["content"][0]["text"]
                assert [m["seq"] for m in loads(text.split("\n", 1)[1])] == event["data"]["messageSeqs"]
