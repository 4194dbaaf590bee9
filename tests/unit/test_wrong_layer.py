"""``wrong-layer`` (issue 31 item 6): a checker that says which official layers refuse the
log (its findings' ``refusedBy``) is held to what the layers said, and only such a checker."""

from __future__ import annotations

import pytest

from dshfuzz.harness import CheckerVerdict, classify
from dshfuzz.harness._classify import truth_from
from dshfuzz.harness._judges import ReportedFinding, verdict_from_json


def _wrong_layers(verdict: CheckerVerdict, truth, **kw) -> list[str]:
    return [d.signature for d in classify(verdict, truth, **kw) if d.kind == "wrong-layer"]


def _says(rule: str, *layers: str, severity: str = "error", caused_by: int | None = None) -> ReportedFinding:
    return ReportedFinding(rule, severity, None, caused_by, tuple(layers))


def test_naming_a_layer_that_accepts_is_wrong_layer():
    truth = truth_from({"fold": False, "meter": True})
    found = _wrong_layers(CheckerVerdict((_says("S4", "fold", "meter"),)), truth)
    assert found == ["wrong-layer|meter:accepts|S4|v0"]


def test_a_refusing_layer_no_finding_names_is_wrong_layer():
    # S4's rule maps to the meter: the checker refused the log for it, but no finding says so
    truth = truth_from({"fold": False, "meter": False}, reasons={"meter": "token surface: replace"})
    found = _wrong_layers(CheckerVerdict((_says("S4", "fold"),)), truth)
    assert found == ["wrong-layer|meter:refuses|S4|v0"]


def test_right_claims_are_no_finding():
    truth = truth_from({"fold": False, "meter": False, "released": True})
    assert _wrong_layers(CheckerVerdict((_says("S4", "fold", "meter"),)), truth) == []


def test_a_checker_that_says_nothing_of_layers_is_never_judged():
    truth = truth_from({"fold": False, "meter": True, "released": False})
    verdict = CheckerVerdict((ReportedFinding("S4", "error", 3),))
    assert _wrong_layers(verdict, truth) == []


def test_a_layer_outside_the_checkers_declared_layers_is_never_judged():
    truth = truth_from({"fold": False, "meter": True, "released": False})
    verdict = CheckerVerdict((_says("S4", "fold", "meter"),))
    assert _wrong_layers(verdict, truth, layers=frozenset({"fold"})) == []


def test_a_silent_miss_stays_a_miss():
    truth = truth_from({"meter": False}, reasons={"meter": "blocks is not iterable"})
    verdict = CheckerVerdict((_says("P1", severity="warning"),))
    kinds = {d.kind for d in classify(verdict, truth)}
    assert "miss" in kinds and "wrong-layer" not in kinds


def test_a_cascade_of_an_error_is_judged_through_its_root():
    truth = truth_from({"fold": False, "meter": True})
    verdict = CheckerVerdict((_says("S6", "fold"), _says("S4", "fold", "meter", caused_by=0)))
    assert _wrong_layers(verdict, truth) == []


def test_a_headerless_seed_is_not_judged_on_the_header():
    truth = truth_from({"seed": True, "load": False, "released": False})
    verdict = CheckerVerdict((_says("H1", "seed", "load", "released"),))
    assert _wrong_layers(verdict, truth) == ["wrong-layer|seed:accepts|H1|v0"]
    from dataclasses import replace

    assert _wrong_layers(verdict, replace(truth, header_record=False)) == []


@pytest.mark.parametrize(
    "refused_by, parsed",
    [
        (["fold", "loadApp", "load"], ("fold", "load")),
        ([], ()),
        (None, None),
        ("fold", None),
        (["fold", 3], None),
        ({"fold": True}, None),
    ],
)
def test_verdict_from_json_reads_refused_by(refused_by, parsed):
    item = {"rule": "S4", "severity": "error", "seq": 1}
    if refused_by is not None:
        item["refusedBy"] = refused_by
    verdict = verdict_from_json({"findings": [item]})
    assert verdict.findings[0].refused_by == parsed


def test_verdict_from_json_without_refused_by_is_never_judged():
    verdict = verdict_from_json({"findings": [{"rule": "S4", "severity": "error"}]})
    assert _wrong_layers(verdict, truth_from({"fold": False, "meter": True})) == []


def _misses(verdict: CheckerVerdict, truth) -> list[str]:
    return sorted(d.layer or "" for d in classify(verdict, truth) if d.kind == "miss")


def test_a_warning_naming_a_raw_readers_refusal_of_a_usable_log_answers_it():
    """Issue 20's severity: a legacy message the loader upgrades on read is a warning naming the
    raw readers that refuse it (seed, invariants). The harness can use the log, and the checker
    warned of it under a rule those readers refuse: no miss (our own classifier called the
    built-in checker's E6 warning a miss on such a log)."""
    truth = truth_from({"seed": False, "invariants": False, "load": True, "released": True},
                       reasons={"seed": "seed user/message at index 2 lacks an identified message"})
    assert _misses(CheckerVerdict((_says("E6", "seed", "invariants", severity="warning"),)), truth) == []
    # a warning's refusedBy that leaves a layer out says that layer accepts; a rule mapped elsewhere answers nothing
    assert _misses(CheckerVerdict((_says("E6", "seed", severity="warning"),)), truth) == ["invariants"]
    assert _misses(CheckerVerdict((_says("Z3", "seed", "invariants", severity="warning"),)), truth) == [
        "invariants", "seed"]
    # a checker that says nothing of layers is read by its rule, as for an error: E6 maps to both
    assert _misses(CheckerVerdict((ReportedFinding("E6", "warning", 2),)), truth) == []


@pytest.mark.parametrize("layer", ["load", "released"])
def test_a_warning_never_answers_a_refusal_that_makes_the_log_unusable(layer):
    """The loader and the released migration decide whether the harness can use the log: a
    warning says it can, so naming either does not answer its refusal."""
    truth = truth_from({"seed": True, layer: False})
    assert _misses(CheckerVerdict((_says("E6", layer, severity="warning"),)), truth) == [layer]
