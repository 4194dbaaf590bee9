"""The mutation-testing gates of the embedded checker (issue 5, item 5).

1. Every mutator's expected rules fire on every mutant it makes.
2. Every rule in the registry is expected by at least one mutator, so a new rule
   without an incident mutator fails CI (see docs/ADDING_A_RULE.md).
3. No error-level rule fires on a metamorphic variant of a valid log, and a
   variant's findings equal the original's (framing-only transforms may change
   framing findings, and nothing else).
4. Robustness perturbations never crash the checker, and yield a finding where
   the perturbation breaks the contract.

Each gate runs twice: as a Hypothesis property over every mutator and every format
its incident exists in (shrinking to a minimal failing log), and as a seeded sweep
that applies each mutator to a few generated v0 logs, so every mutator is
exercised on every run.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from dshfuzz.checker import RULES, CheckOptions, Report, RuleLayer, check_log
from dshfuzz.generators import GeneratedLog, generate, session_logs
from dshfuzz.model import decode_frame, parse_log, scan_frames
from dshfuzz.mutators import (
    METAMORPHIC,
    MUTATORS,
    PERTURBATIONS,
    Inapplicable,
    Mutant,
    apply_seeded,
    incident_logs,
    incident_weights,
    logs_for,
    mutants,
    perturbed,
    variants,
)
from dshfuzz.mutators._draft import EventDraft

SWEEP = 4


def _v3(log: GeneratedLog) -> EventDraft:
    """The generators write v0/v1 only: a v0 log re-tagged v3 carries a v3 system/message."""
    draft = EventDraft.of(log.header, log.events, log.batches)
    draft.header["version"] = 3
    return draft


def text_of(mutant: Mutant) -> str:
    """The mutant as readable text (zstd frames decoded where they decode)."""
    if mutant.compression == "none":
        return mutant.data.decode("utf-8", "replace")
    parts = []
    for frame in scan_frames(mutant.data):
        try:
            parts.append(decode_frame(mutant.data[frame.offset : frame.end]).decode("utf-8", "replace"))
        except Exception as exc:  # a corrupt frame is the point of some mutants
            parts.append(f"<frame at byte {frame.offset}: {exc}>\n")
    return "".join(parts)


def check(mutant: Mutant) -> Report:
    return check_log(parse_log(mutant.data), CheckOptions(strict=True))


def assert_expected_rules_fire(mutant: Mutant) -> None:
    report = check(mutant)
    fired = {f.rule for f in report.findings}
    missing = mutant.expects - fired
    assert not missing, (
        f"{mutant.mutator}: {mutant.description}\n expected {_ids(mutant.expects)}, missing {_ids(missing)}, "
        f"fired {_ids(fired)}\n--- mutant ({mutant.compression}) ---\n{text_of(mutant)}"
    )


def _ids(rules: Any) -> str:
    return ", ".join(sorted(map(str, rules))) or "none"


def test_every_registry_rule_is_expected_by_some_mutator() -> None:
    expected = {r for m in MUTATORS.values() for r in m.expects}
    orphans = [str(r) for r, rule in RULES.items() if r not in expected and rule.unmutated is None]
    assert not orphans, f"rules without an incident mutator (see docs/ADDING_A_RULE.md): {orphans}"


@given(st.sampled_from(sorted(MUTATORS)).flatmap(lambda name: mutants(name, logs_for(name))))
def test_expected_rules_fire_on_every_mutant(mutant: Mutant) -> None:
    note(mutant.description)
    assert_expected_rules_fire(mutant)


def _sample(name: str) -> list[Any]:
    logs: list[Any] = list(generate(30, seed=2026, turns=(1, 3), weights=incident_weights()))
    return [_v3(log) for log in logs] if MUTATORS[name].formats == {3} else logs


@pytest.mark.parametrize("name", sorted(MUTATORS))
def test_expected_rules_fire_in_a_seeded_sweep(name: str) -> None:
    done = 0
    for i, log in enumerate(_sample(name)):
        try:
            mutant = apply_seeded(MUTATORS[name], log, i)
        except Inapplicable:
            continue
        assert_expected_rules_fire(mutant)
        done += 1
        if done == SWEEP:
            return
    assert done, f"{name} applied to none of the sample logs"


def _signature(report: Report, *, without_framing: bool) -> Counter[tuple[str, Any]]:
    return Counter(
        (str(f.rule), f.seq) for f in report.findings
        if not (without_framing and RULES[f.rule].layer is RuleLayer.FRAMING)
    )


@given(st.sampled_from(sorted(METAMORPHIC)).flatmap(lambda name: variants(name, session_logs())))
def test_metamorphic_variants_keep_every_verdict(pair: tuple[GeneratedLog, Mutant]) -> None:
    log, variant = pair
    transform = METAMORPHIC[variant.mutator]
    note(variant.description)
    original = check_log(parse_log(log.to_jsonl()), CheckOptions(strict=True))
    changed = check(variant)
    errors = [f for f in changed.findings if f.is_error
              and not (transform.framing_only and RULES[f.rule].layer is RuleLayer.FRAMING)]
    assert not errors, f"{variant.mutator} ({variant.description}) raised errors on a valid log: " + "; ".join(
        f"{f.rule} seq {f.seq}: {f.message}" for f in errors)
    without = transform.framing_only
    assert _signature(changed, without_framing=without) == _signature(original, without_framing=without), (
        f"{variant.mutator} changed the verdict: {variant.description}"
    )


@given(st.sampled_from(sorted(PERTURBATIONS)).flatmap(lambda name: perturbed(name, incident_logs(max_events=60))))
def test_perturbations_yield_findings_and_never_crash(mutant: Mutant) -> None:
    note(mutant.description)
    report = check(mutant)
    assert not report.internal_errors
    if PERTURBATIONS[mutant.mutator].must_find:
        assert report.findings, f"{mutant.mutator} ({mutant.description}) produced no finding"


# Gate 5: root cause first (issue 20, item 5) -------------------------------------------


def test_every_mutators_root_findings_are_the_incident_it_declares():
    """The kill matrix of the built-in checker as a user asks for it (``dshfuzz matrix
    --examples 25 --json``, seed 0, in a process of its own, so that what ran before in
    this one cannot change the draws): every mutator at full recall, no rule unkilled, and
    at least 90% of each mutator's mutants with no error-level *root* finding outside
    what the mutant expects. A faithful cascade (a gap's S8, a lost frame's E2) is
    attributed to its root; a row below names its stray roots."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "dshfuzz", "matrix", "--examples", "25", "--seed", "0", "--json",
                           "--no-official"], capture_output=True, text=True, timeout=1200)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    matrix = json.loads(proc.stdout)
    rows = matrix["rows"]
    low = {name: f"precision {row['precision']:.2f}, stray roots {row['strayRootRules']}"
           for name, row in rows.items() if row["precision"] is not None and row["precision"] < 0.9}
    assert not low, low
    assert all(row["recall"] in (None, 1.0) for row in rows.values()), {
        name: row["recall"] for name, row in rows.items() if row["recall"] not in (None, 1.0)}
    assert matrix["unkilledRules"] == [] and matrix["falseAlarms"] == {}, (matrix["unkilledRules"], matrix["falseAlarms"])
