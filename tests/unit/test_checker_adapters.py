"""The checker-under-test adapters: any checker's failure becomes a verdict, never an exception."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from dshfuzz.harness import CheckerVerdict, ReportedFinding, load_checker, verdict_from_json
from dshfuzz.harness._judges import CheckerSpecError, CommandChecker


@pytest.mark.parametrize(
    "payload, expected",
    [
        ({"violations": [{"id": "S5", "seq": 4}]}, (ReportedFinding("S5", "error", 4),)),
        ({"findings": [{"rule": "Z1", "severity": "warning"}]}, (ReportedFinding("Z1", "warning", None),)),
        ([{"rule": "E2", "seq": True}], (ReportedFinding("E2", "error", None),)),
        ({"findings": []}, ()),
    ],
)
def test_reports_in_every_documented_shape_map_to_findings(payload, expected):
    assert verdict_from_json(payload).findings == expected


@pytest.mark.parametrize(
    "payload",
    [None, 3, "ok", {"result": []}, {"findings": {}}, {"findings": [1]}, {"findings": [{"severity": "error"}]}],
)
def test_reports_without_rule_ids_are_unparsable(payload):
    with pytest.raises(ValueError):
        verdict_from_json(payload)


def _script(tmp_path: Path, body: str) -> str:
    script = tmp_path / "checker.py"
    script.write_text(textwrap.dedent(body))
    return f"cmd:{sys.executable} {script} {{log}}"


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n')
    return path


def test_a_command_checker_report_is_read_from_stdout(tmp_path, log_file):
    spec = _script(tmp_path, 'import json, sys\nprint(json.dumps({"findings": [{"rule": "Z3", "severity": "warning", "seq": 0}]}))\n')
    verdict = load_checker(spec).check(log_file)
    assert verdict == CheckerVerdict((ReportedFinding("Z3", "warning", 0),), exit_code=0)


def test_a_command_that_dies_by_signal_is_a_crash(tmp_path, log_file):
    spec = _script(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    verdict = load_checker(spec).check(log_file)
    assert verdict.failure == "crash" and "signal" in verdict.detail


def test_a_command_that_exits_with_a_traceback_is_a_crash(tmp_path, log_file):
    spec = _script(tmp_path, "raise KeyError('boom')\n")
    verdict = load_checker(spec).check(log_file)
    assert verdict.failure == "crash" and "KeyError" in verdict.detail


def test_garbage_on_stdout_with_a_normal_exit_is_unparsable_output(tmp_path, log_file):
    spec = _script(tmp_path, "print('all good!')\n")
    assert load_checker(spec).check(log_file).failure == "unparsable-output"


def test_a_command_that_hangs_times_out(tmp_path, log_file):
    spec = _script(tmp_path, "import time\ntime.sleep(30)\n")
    verdict = load_checker(spec, timeout=0.5).check(log_file)
    assert verdict.failure == "timeout"


def test_a_python_checker_that_raises_is_a_crash(log_file):
    verdict = load_checker("py:json:loads").check(log_file)
    assert verdict.failure == "crash" and "JSONDecodeError" in verdict.detail


@pytest.mark.parametrize("spec", ["nonsense", "py:no.such.module:check", "py:json", "cmd:true"])
def test_unusable_checker_specs_are_refused_with_a_reason(spec):
    with pytest.raises(CheckerSpecError):
        load_checker(spec)


def test_the_builtin_checker_is_also_registered_as_an_entry_point():
    from importlib.metadata import entry_points

    assert "builtin" in {ep.name for ep in entry_points(group="dshfuzz.checkers")}


def test_command_template_needs_a_log_placeholder():
    with pytest.raises(CheckerSpecError):
        CommandChecker("checker --strict")


def _log_missing_seq_1(tmp_path: Path) -> Path:
    """A session whose first event has seq 2: E2 (contiguous seqs) fires on it."""
    path = tmp_path / "gap.jsonl"
    path.write_text(
        '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
        '{"seq":2,"time":0,"type":"user/message","data":{"text":"hi"}}\n'
    )
    return path


def test_builtin_with_rules_switched_off_never_reports_them(tmp_path):
    log = _log_missing_seq_1(tmp_path)
    whole = load_checker("builtin").check(log).error_rules
    assert "E2" in whole
    crippled = load_checker("builtin:-E2").check(log)
    assert crippled.error_rules == whole - {"E2"}
    assert crippled.failure is None


def test_builtin_without_rules_is_named_by_its_spec_in_catalog_order():
    assert load_checker("builtin:-S5,-E2").name == "builtin:-E2,-S5"
    assert load_checker("builtin").name == "builtin"


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("builtin:-S5,-X9", "unknown rule id X9"),
        ("builtin:-s5", "unknown rule id s5"),
        ("builtin:S5", "expected a comma-separated list of -RULE"),
        ("builtin:", "expected a comma-separated list of -RULE"),
        ("builtin:-S5,", "expected a comma-separated list of -RULE"),
    ],
)
def test_switching_off_a_rule_that_is_not_one_is_a_usage_error(spec, reason):
    with pytest.raises(CheckerSpecError, match=reason):
        load_checker(spec)


def test_an_unknown_checker_error_lists_every_form():
    from dshfuzz.harness._judges import CHECKER_SPEC_HELP

    with pytest.raises(CheckerSpecError) as caught:
        load_checker("nonsense")
    assert CHECKER_SPEC_HELP in str(caught.value) and "builtin:-RULE" in CHECKER_SPEC_HELP
