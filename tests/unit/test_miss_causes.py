"""A miss is one finding per check the checker lacks: keyed by the refusing layer's
message, with the values it quotes, numbers, seqs and ids dropped."""

from __future__ import annotations

import pytest

from dshfuzz.harness import CheckerVerdict, classify
from dshfuzz.harness._classify import crash_fingerprint, refusal_fingerprint, truth_from

PREAMBLE = "@deepseek-ai/dsh-session-format-v0-to-v1 refuses this format v0 Session: "


def _miss(message: str, layer: str = "released") -> str:
    truth = truth_from({layer: False, "load": True}, reasons={layer: message})
    (found,) = [d for d in classify(CheckerVerdict(), truth) if d.kind == "miss"]
    assert message.removeprefix(PREAMBLE)[:40] in found.detail
    return found.signature


@pytest.mark.parametrize(
    "one, other",
    [
        (PREAMBLE + 'turn/start 3 data has unexpected member "foo"', PREAMBLE + 'turn/start 17 data has unexpected member "x y"'),
        ('session "5dfe0fff-b9ec-4611-9501-d014ad017e24" seq gap at 12', 'session "a" seq gap at 3'),
        ("compaction/prune 0 shadowedRange start must identify an earlier event",
         "compaction/prune 41 shadowedRange start must identify an earlier event"),
    ],
)
def test_one_check_reached_with_other_values_is_one_miss(one, other):
    assert _miss(one) == _miss(other)


@pytest.mark.parametrize(
    "one, other",
    [
        (PREAMBLE + "approval/policy 0 data must be a JSON object", PREAMBLE + "turn/start 0 data has unexpected member \"k\""),
        ("Cannot read properties of null (reading 'type')", "Cannot read properties of null (reading 'length')"),
    ],
)
def test_two_checks_of_one_layer_are_two_misses(one, other):
    assert _miss(one) != _miss(other)


def test_a_refusal_without_a_message_is_still_a_miss_of_its_layer():
    truth = truth_from({"released": False})
    (found,) = [d for d in classify(CheckerVerdict(), truth) if d.kind == "miss"]
    assert found.signature == "miss|released|-|v0"


def test_the_fingerprint_fits_a_signature():
    key = refusal_fingerprint('a|b, "c"\nsecond line ' + "x" * 500)
    assert "|" not in key and "," not in key and "\n" not in key and len(key) <= 160


def _verdict(*findings: tuple[str, str]):
    from dshfuzz.harness._judges import ReportedFinding

    return CheckerVerdict(findings=tuple(ReportedFinding(rule, severity, None) for rule, severity in findings))


def test_a_warning_never_explains_a_refusal():
    """W3 maps to released; said only as a warning, released's refusal is missed."""
    truth = truth_from({"released": False, "load": True}, reasons={"released": "step/end leaves unresolved tool call c1"})
    warned = classify(_verdict(("W3", "warning"), ("P3", "warning")), truth)
    assert [(d.kind, d.layer) for d in warned] == [("miss", "released")], warned
    assert not classify(_verdict(("W3", "error"), ("P3", "warning")), truth)


def test_a_warning_of_the_layer_beside_an_error_of_another_is_a_refusal_under_another_name():
    truth = truth_from({"released": False, "load": True})
    found = classify(_verdict(("W3", "warning"), ("I1", "error")), truth)
    assert [(d.kind, d.layer, d.rules) for d in found] == [("attribution", "released", ("I1",))], found


@pytest.mark.parametrize(
    "one, other",
    [
        ("cannot read line 7 of /dev/shm/dshfuzz-judge-ab12/example-3.jsonl: not JSON",
         "cannot read line 12 of /tmp/dshfuzz-judge-zz/example-40.jsonl: not JSON"),
        ("TypeError: Cannot read properties of undefined (reading 'seq') at seq 4",
         "TypeError: Cannot read properties of undefined (reading 'seq') at seq 91"),
        ('exit 2 with no report\nsession "5dfe0fff-b9ec-4611-9501-d014ad017e24" has no header',
         'exit 2 with no report\nsession "a" has no header'),
        ("exit 2 before answering", "exit 2 with no report"),
    ],
)
def test_one_crash_without_a_traceback_reached_with_other_values_is_one_cause(one, other):
    assert crash_fingerprint(one) == crash_fingerprint(other)


@pytest.mark.parametrize(
    "one, other",
    [
        ("cannot read line 7 of /tmp/x/example-3.jsonl: not JSON", "seq 12 repeats an earlier one"),
        ("TypeError: Cannot read properties of undefined (reading 'seq')", "TypeError: x.map is not a function"),
        ("exit 2 with no report", "exit 4 with no report"),
        ("Error: boom\n    at readFrame (/c/checker.mjs:3:4)", "Error: boom\n    at readLine (/c/checker.mjs:9:1)"),
    ],
)
def test_two_crashes_without_a_shared_cause_are_two_causes(one, other):
    assert crash_fingerprint(one) != crash_fingerprint(other)


def test_a_crash_fingerprint_fits_a_signature():
    key = crash_fingerprint('a|b, "c" ' + "x" * 500)
    assert "|" not in key and "," not in key and len(key) <= 160


def test_a_refusal_only_a_layer_outside_the_checkers_scope_makes_is_out_of_scope_never_a_miss():
    truth = truth_from({"released": False, "load": True}, reasons={"released": "uses unsupported descriptor version 2"})
    found = classify(CheckerVerdict(), truth, layers=frozenset({"load", "fold"}))
    assert [(d.kind, d.layer, d.is_checker_defect) for d in found] == [("out-of-scope", "released", False)], found
    assert [d.kind for d in classify(CheckerVerdict(), truth)] == ["miss"]  # every layer by default


def test_a_layer_inside_the_scope_is_judged_beside_one_outside_it():
    truth = truth_from({"released": False, "load": False})
    found = classify(CheckerVerdict(), truth, layers=frozenset({"load"}))
    assert sorted((d.kind, d.layer) for d in found) == [("miss", "load"), ("out-of-scope", "released")], found


def test_declared_layers_fold_the_load_routes_and_refuse_unknown_names():
    from dshfuzz.harness import parse_checker_layers
    from dshfuzz.harness._judges import CheckerSpecError

    assert parse_checker_layers("loadApp, released") == {"load", "released"}
    with pytest.raises(CheckerSpecError, match="'migrate' is not an official layer"):
        parse_checker_layers("load,migrate")
    with pytest.raises(CheckerSpecError, match="no official layer given"):
        parse_checker_layers(" , ")


def test_a_refusal_the_reference_reads_as_rules_the_checker_does_not_claim_is_not_implemented():
    """A checker of H1 and R1 says nothing of a seq gap that load refuses: the reference checker
    reads the refusal as E2, which the checker never claimed, so it is no miss."""
    truth = truth_from({"load": False, "fold": True}, reasons={"load": "seq gap in committed region at line 4"})
    reference = _verdict(("E2", "error"), ("C1", "warning"))
    found = classify(CheckerVerdict(), truth, reference=reference, vocabulary=frozenset({"H1", "R1"}))
    assert [(d.kind, d.layer, d.rules, d.is_reportable) for d in found] == [("not-implemented", "load", ("E2",), False)]
    # a checker that claims E2 missed it; so did one the reference did not read (or read as nothing)
    assert [d.kind for d in classify(CheckerVerdict(), truth, reference=reference, vocabulary=frozenset({"E2"}))] == ["miss"]
    assert [d.kind for d in classify(CheckerVerdict(), truth, vocabulary=frozenset({"H1"}))] == ["miss"]
    assert [d.kind for d in classify(CheckerVerdict(), truth, reference=_verdict(), vocabulary=frozenset({"H1"}))] == ["miss"]


def test_where_the_registry_maps_no_reference_error_to_the_layer_all_its_errors_read_the_refusal():
    # the inbox crashes on a null event; the reference reports E1 and S8, which the registry maps elsewhere
    truth = truth_from({"inbox": False})
    found = classify(CheckerVerdict(), truth, reference=_verdict(("E1", "error"), ("S8", "error")),
                     vocabulary=frozenset({"H1", "R1"}))
    assert [(d.kind, d.layer, d.rules) for d in found] == [("not-implemented", "inbox", ("E1", "S8"))]


def test_a_declared_rule_missed_on_a_log_the_checker_calls_fine_is_a_miss():
    truth = truth_from({"released": True}, expected=("P5",))
    [found] = [d for d in classify(_verdict(("P3", "warning")), truth) if d.layer == "expected"]
    assert found.signature == "miss|expected|P5|v0", found


def test_a_declared_rule_missed_on_a_log_the_checker_refused_under_other_ids_is_a_rule_id_finding():
    """The checker caught the log, under the wrong name: kept apart from a miss (the checker
    said fine), and the detail names what it reported instead."""
    truth = truth_from({"released": True}, expected=("P5",))
    [found] = [d for d in classify(_verdict(("W1", "error")), truth) if d.layer == "expected"]
    assert found.signature == "rule-id|expected|P5|v0", found
    assert found.is_checker_defect and "W1" in found.detail


_V1_LAYERS = ("fold", "invariants", "meter", "inbox", "released")  # the official layers that read format 1


def _marker_hiding_answers():
    from pathlib import Path

    from dshfuzz.harness._judges import BuiltinChecker

    data = (Path(__file__).resolve().parents[1] / "data" / "marker-hides-answers-v1.jsonl").read_bytes()
    return BuiltinChecker().check_data(data, "none")


def test_a_rule_only_an_unread_layer_enforces_is_no_false_alarm():
    """A checker that reports W3 (without saying it follows from the marker) on a format-1 log
    whose every reading layer accepts has not alarmed falsely: the built-in checker names only the
    provider for that W3, and no judge reads format 1 for the provider."""
    from dataclasses import replace

    reference = _marker_hiding_answers()
    assert {"P1", "W3"} <= {f.rule for f in reference.findings}
    uncaused = replace(reference, findings=tuple(replace(f, caused_by=None) for f in reference.findings), checked=())
    truth = truth_from({layer: True for layer in _V1_LAYERS}, expected=("P1",), oracle_consulted=False,
                       format_version=1)
    assert not [d for d in classify(uncaused, truth, reference=reference) if d.kind == "false-alarm"]
    assert not [d for d in classify(reference, truth) if d.kind == "false-alarm"]  # the built-in checker itself


def test_the_same_rule_is_a_false_alarm_where_a_judge_reads_its_layer():
    """Where the reference oracle reads the log (format 0) and models the provider, and accepts,
    the same W3 is a false alarm."""
    reference = _marker_hiding_answers()
    truth = truth_from({layer: True for layer in _V1_LAYERS}, expected=("P1",), oracle_consulted=True)
    [found] = [d for d in classify(reference, truth) if d.kind == "false-alarm"]
    assert "W3" in found.rules
