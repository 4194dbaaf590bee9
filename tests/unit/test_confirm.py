"""A miss of declared rules is confirmed on a second, independently drawn mutant before it
counts against the checker; one the second mutant does not reproduce is reported apart."""

from __future__ import annotations

from dshfuzz.generators import generate
from dshfuzz.harness import DisagreementFound, Example, Judge
from dshfuzz.report import CampaignSummary
from dshfuzz.harness._classify import Disagreement
from dshfuzz.harness._confirm import confirm_expected_miss, needs_confirmation
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.mutators import MUTATORS, Inapplicable, apply_seeded, incident_weights


def _mutant(name: str, *, twin: bool = False) -> Example:
    """The first seeded mutant of ``name`` (or its twin: the same draws without the defect,
    still expecting the mutant's rules)."""
    for i, log in enumerate(generate(20, seed=11, turns=(1, 3), weights=incident_weights())):
        try:
            m = apply_seeded(MUTATORS[name], log, i)
        except Inapplicable:
            continue
        made = apply_seeded(MUTATORS[name], log, i, twin=True) if twin else m
        return Example(made.data, made.compression, name, m.expects, made.description, made.format_version)
    raise AssertionError(f"{name} applied to none of the sample logs")


def _miss(rule: str, witness: Example) -> Disagreement:
    return Disagreement("miss", "expected", (rule,), witness.mutator, "", witness.format_version)


def test_a_checker_that_misses_the_rule_everywhere_is_confirmed_on_another_mutant():
    witness = _mutant("partial-coverage")
    with Judge(BuiltinChecker(without=frozenset({"S5"}))) as judge:
        defect = next(d for d in judge.judge(witness).defects if d.layer == "expected")
        outcome = confirm_expected_miss(judge, defect, "partial-coverage", witness, seed=1)
    assert outcome.confirmed, outcome.detail
    assert "reproduced on a second mutant" in outcome.detail


def test_a_miss_the_second_mutant_does_not_reproduce_is_unconfirmed_with_what_the_checker_said():
    """The checker under test reports S5 on every mutant (it is the full built-in checker): a
    miss of S5 claimed from some witness does not reproduce, and the answer says what it reported."""
    witness = _mutant("partial-coverage")
    with Judge(BuiltinChecker()) as judge:
        outcome = confirm_expected_miss(judge, _miss("S5", witness), "partial-coverage", witness, seed=1)
    assert not outcome.confirmed
    assert "did not reproduce" in outcome.detail and "S5" in outcome.detail, outcome.detail


def test_an_interrupted_confirmation_is_unconfirmed_and_says_it_was_not_tried():
    witness = _mutant("partial-coverage")
    with Judge(BuiltinChecker(without=frozenset({"S5"}))) as judge:
        outcome = confirm_expected_miss(judge, _miss("S5", witness), "partial-coverage", witness, seed=1,
                                        interrupted=lambda: True)
    assert (outcome.confirmed, outcome.detail) == (False, "not tried: the campaign ended first")


def test_only_a_verdict_on_the_declaration_needs_a_second_mutant():
    witness = _mutant("partial-coverage")
    assert needs_confirmation(_miss("S5", witness))
    assert not needs_confirmation(Disagreement("miss", "fold", ("x",), "m", ""))
    assert not needs_confirmation(Disagreement("not-implemented", "expected", ("S5",), "m", ""))


def _found(signature: str, confirmed: bool | None) -> DisagreementFound:
    kind, layer, rules, _ = signature.split("|")
    return DisagreementFound(
        signature=signature, kind=kind, layer=layer, rules=(rules,), mutator="m", detail="", data=b"{}\n",
        compression="none", format_version=0, events_found=1, events_minimal=1, checker_rules=(),
        expected_rules=(rules,), confirmed=confirmed, confirmation="" if confirmed is None else "why",
    )


def test_an_unconfirmed_miss_is_reported_apart_and_fails_no_campaign():
    summary = CampaignSummary()
    summary.add(_found("miss|expected|S5|v0", False))
    assert summary.unconfirmed and not summary.checker_defects and not summary.failing
    finding = summary.to_json()["findings"][0]
    assert (finding["confirmed"], finding["confirmation"]) == (False, "why")
    summary.add(_found("miss|expected|T3|v0", True))
    assert [f.signature for f in summary.checker_defects] == ["miss|expected|T3|v0"] and summary.failing


def test_a_confirmed_miss_whose_witness_lacks_the_incident_takes_the_second_mutant_as_witness():
    """A witness always shows the incident it is about: the twin of a partial coverage (the same
    log without the defect) is no witness of missed S5 and S8, the mutant that confirmed it is."""
    from dshfuzz.harness._confirm import better_witness

    witness = _mutant("partial-coverage", twin=True)
    with Judge(BuiltinChecker(without=frozenset({"S5", "S8"}))) as judge:
        defect = next(d for d in judge.judge(witness).defects if d.layer == "expected")
        outcome = confirm_expected_miss(judge, defect, "partial-coverage", witness, seed=1)
        assert outcome.confirmed, outcome.detail
        better = better_witness(judge, defect, witness, outcome)
        assert better is not None and better.example == outcome.example
        assert {"S5", "S8"} <= judge.reported_by_builtin(better.example)
        assert better_witness(judge, defect, better.example, outcome) is None  # a witness with the incident stays

