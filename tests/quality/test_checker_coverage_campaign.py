"""The checker's own coverage end to end: a campaign with ``--checker-coverage`` lists the
lines of the checker under test no log ran, for the built-in checker (coverage.py) and for
a Node checker (V8), and refuses in one line a checker it cannot measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("coverage", reason="checker coverage needs coverage.py: pip install -e '.[dev]' (make setup)")

REPO = Path(__file__).resolve().parents[2]
RARE_FORM_BUDGET, RARE_FORM_SEED = "1000examples", "5"  # an example budget: the same logs on any machine


def fuzz(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dshfuzz", "fuzz", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env=env)


def test_the_builtin_checkers_unexercised_lines_are_listed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = fuzz("--budget", "150examples", "--workers", "1", "--seed", "2", "--no-official", "--checker-coverage",
                "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = json.loads((out / "summary.json").read_text())["checkerCoverage"]
    files = {f["file"]: f for f in lines["byFile"]}
    assert "checker/_released.py" in files and "checker/_recover.py" not in files
    assert 0 < lines["exercised"] < lines["statements"] == sum(f["statements"] for f in files.values())
    assert any(f["unexercised"] for f in files.values())
    assert "checker lines exercised" in proc.stdout and "Checker coverage" in (out / "report.md").read_text()


def test_a_node_checkers_unexercised_lines_are_listed(node24: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    env: dict[str, Any] = {**os.environ, "PATH": f"{node24.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = fuzz("--checker", "serve:'node examples/node-checker/checker.mjs'", "--budget", "150examples",
                "--workers", "1", "--seed", "1", "--no-official", "--checker-coverage", "--out", str(out), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [checker] = json.loads((out / "summary.json").read_text())["checkerCoverage"]["byFile"]
    assert checker["file"] == "node-checker/checker.mjs" and 0 < checker["exercised"] < checker["statements"]
    # a malformed request never comes from dshfuzz: that branch (lines 47-49) is never run
    assert "47-49" in checker["unexercised"].split(", "), checker
    assert not any(p.name.startswith("dshfuzz-checker-coverage-") for p in out.iterdir())


def test_a_checker_it_cannot_measure_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = fuzz("--checker", "cmd:'sh -c true {log}'", "--budget", "5examples", "--no-official", "--checker-coverage",
                "--out", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("dshfuzz fuzz: cannot measure checker coverage:"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_checker_that_mishandles_one_rare_form_of_a_field_is_found(official: Any, tmp_path: Path) -> None:
    """``one_range_form`` drops its findings on an event whose ``sourceEventSeqs`` holds a range
    reaching the event's own seq: one encoding of one list, which the official layers refuse in
    every encoding. A campaign with checker coverage on finds it, and its witness still holds
    that form (the minimiser kept the incident)."""
    from dshfuzz.model import read_log
    from tests.broken_checkers.one_range_form import _cites_itself_or_later

    out = tmp_path / "run"
    proc = fuzz("--checker", "py:tests.broken_checkers.one_range_form:check", "--budget", RARE_FORM_BUDGET,
                "--seed", RARE_FORM_SEED, "--workers", "1", "--checker-coverage", "--stop-after", "1", "--out", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    findings = json.loads((out / "summary.json").read_text())["findings"]
    assert findings and all(f["kind"] == "miss" for f in findings), findings
    finding = findings[0]
    witness = Path(finding["reproduce"].rsplit(" ", 1)[1])
    assert any(_cites_itself_or_later(e) for e in read_log(witness).events), finding["reproduce"]
