"""A campaign's minimiser keeps the defect, not only its signature, and judges candidates
with only the judges that signature depends on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.harness import CampaignConfig, Disagreement, DisagreementFound, Example, Judge, run_campaign
from dshfuzz.harness._events import SETTLED
from dshfuzz.harness._judge import EVERY_JUDGE, scope_of
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.harness._log_units import _layout
from dshfuzz.harness._strategy import examples
from dshfuzz.model import parse_log


def _first_finding(checker: str, mutator: str, tmp_path) -> DisagreementFound:
    config = CampaignConfig(
        checker=checker,
        workers=0,
        seed=0,
        budget_seconds=None,
        budget_examples=30,
        official=False,
        mutators=(mutator,),
        valid_fraction=0.0,
        stop_after_findings=1,
        out=tmp_path,
    )
    campaign = run_campaign(config)
    try:
        return next(e for e in campaign if isinstance(e, DisagreementFound) and e.stage in SETTLED)
    finally:
        campaign.close()


def _built_in_rules(finding: DisagreementFound, tmp_path) -> frozenset[str]:
    path = tmp_path / ("minimal.jsonl.zstd" if finding.compression == "zstd" else "minimal.jsonl")
    path.write_bytes(finding.data)
    return frozenset(f.rule for f in BuiltinChecker().check(path).findings)


@pytest.mark.parametrize(
    ("rule", "mutator"),
    [("P1", "unknown-marker-prefix"), ("S5", "partial-coverage")],
    ids=["declaration-only rule", "rule the oracle also sees"],
)
def test_a_missed_declared_rule_minimises_to_a_small_log_that_still_breaks_it(rule, mutator, tmp_path):
    finding = _first_finding(f"builtin:-{rule}", mutator, tmp_path)

    witness = finding.data.decode(errors="replace")
    # a miss, or a refusal under other ids (S8 beside S5): either way the declared rule
    expected = (f"{finding.kind}|expected|{rule}|v{finding.format_version}", mutator, "minimal")
    assert finding.kind in ("miss", "rule-id"), finding.signature
    assert (finding.signature, finding.mutator, finding.stage) == expected, witness
    assert rule in _built_in_rules(finding, tmp_path), f"the minimal log lost the defect:\n{witness}"
    events = len(parse_log(finding.data, compression=finding.compression).events)  # type: ignore[arg-type]
    # a marker stands in a turn and step of its own after a closed turn (no rider: it is valid there)
    assert 0 < events <= 8, f"{events} events left:\n{witness}"


def _defect(kind: str, layer: str | None = None) -> Disagreement:
    return Disagreement(kind, layer, (), "m", "")  # type: ignore[arg-type]


def test_each_signature_is_judged_by_the_judges_it_depends_on():
    assert scope_of(_defect("miss", "expected")) == scope_of(_defect("crash"))
    assert scope_of(_defect("crash")).layers == () and not scope_of(_defect("crash")).oracle
    assert (
        scope_of(_defect("miss", "load")).layers == ("load",) and not scope_of(_defect("miss", "load")).oracle
    )
    assert scope_of(_defect("miss", "fold")).layers == ("fold",) and scope_of(_defect("miss", "fold")).oracle
    assert scope_of(_defect("miss", "provider")).layers == () and scope_of(_defect("miss", "provider")).oracle
    assert scope_of(_defect("wrong-place")).reference and not scope_of(_defect("wrong-place")).oracle
    assert scope_of(_defect("metamorphic", "reframe")).twin
    assert scope_of(_defect("false-alarm")) == EVERY_JUDGE


def test_a_miss_the_built_in_checker_cannot_see_either_is_not_minimised():
    header = b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
    example = Example(header, "none", "unknown-marker-prefix", frozenset({"P1"}))
    with Judge(BuiltinChecker(without=frozenset({"P1"}))) as judge:
        defect = next(d for d in judge.judge(example).defects if d.layer == "expected")
        assert judge.still_fails(defect, example) is None


def _signatures(judge: Judge, example: Example, scope=EVERY_JUDGE) -> set[str]:
    return {d.signature for d in judge.judge(example, scope).disagreements}


@given(examples(), st.floats(0.0, 1.0))
def test_the_narrowed_judges_show_a_signature_exactly_when_all_judges_do(example, keep):
    """On the example and on a candidate the minimiser could try (a prefix of its units), a
    defect's signature shows under ``scope_of`` the defect iff it shows under every judge."""
    layout = _layout(example)
    candidate = layout.render(range(round(keep * len(layout.units))))
    with Judge(BuiltinChecker(without=example.expects), reference=BuiltinChecker()) as judge:
        for defect in judge.judge(example).defects:
            scope = scope_of(defect)
            for judged in (example, candidate):
                everyone = defect.signature in _signatures(judge, judged)
                narrowed = defect.signature in _signatures(judge, judged, scope)
                assert everyone == narrowed, f"{defect.signature} under {scope}:\n{judged.data[:2000]!r}"


@pytest.mark.parametrize(("rule", "mutator"), [("S5", "partial-coverage"), ("T3", "step-key-reuse")])
def test_a_minimised_expected_miss_keeps_the_mutants_official_verdict(official, rule, mutator):
    """The witness of a missed declared rule is still the mutant the mutator made: the same
    official layers refuse it, for the same reasons (a smaller log refused for another, say an
    assistant message cut loose from its step, is another log)."""
    from dshfuzz.generators import generate
    from dshfuzz.harness._classify import official_verdict_key
    from dshfuzz.harness._witness import minimise_finding
    from dshfuzz.mutators import MUTATORS, Inapplicable, apply_seeded, incident_weights

    found = 0
    with Judge(BuiltinChecker(without=frozenset({rule})), official=official) as judge:
        for i, log in enumerate(generate(12, seed=5, turns=(1, 3), weights=incident_weights())):
            try:
                mutant = apply_seeded(MUTATORS[mutator], log, i)
            except Inapplicable:
                continue
            example = Example(mutant.data, mutant.compression, mutator, mutant.expects,
                              format_version=mutant.format_version)
            judged = judge.judge(example)
            defect = next(d for d in judged.defects if d.layer == "expected")
            polished = minimise_finding(judge, defect.signature, example, judged)
            kept = official_verdict_key(judge.judge(polished.example).truth)
            assert kept == official_verdict_key(judged.truth), (
                f"{mutant.description}: the mutant's official verdict {sorted(official_verdict_key(judged.truth))} "
                f"became {sorted(kept)} on the witness:\n{polished.example.data.decode(errors='replace')}"
            )
            assert rule in _built_in_rules_of(polished.example), polished.example.data.decode(errors="replace")
            found += 1
            if found == 2:
                return
    assert found, f"{mutator} applied to none of the sample logs"


def _built_in_rules_of(example: Example) -> frozenset[str]:
    return frozenset(f.rule for f in BuiltinChecker().check_data(example.data, example.compression).findings)
