"""What a new user gets when something is wrong before a campaign starts: one line naming
what and the fix, exit 2, no report written, no traceback (issue 22, pre-flight)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dshfuzz import cli

REPO = Path(__file__).resolve().parents[2]


def _fuzz(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--budget", "5s", "--workers", "1", "--out", str(tmp_path / "run"),
         *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )


def _one_line_and_no_report(proc: subprocess.CompletedProcess[str], tmp_path: Path, says: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "run").exists()


def test_an_unknown_mutator_stops_fuzz_in_one_line(tmp_path):
    proc = _fuzz(tmp_path, "--mutators", "nope", "--no-official")
    _one_line_and_no_report(proc, tmp_path, "unknown mutator nope; `dshfuzz mutators` lists them")


def test_missing_official_layers_stop_fuzz_in_one_line_naming_the_fix(tmp_path):
    proc = _fuzz(tmp_path, env={"DSHFUZZ_NODE": "/nonexistent/node"})
    _one_line_and_no_report(proc, tmp_path, "official layers unavailable")
    assert "--no-official" in proc.stderr


def test_an_internal_error_of_any_command_is_one_line_and_a_saved_traceback(monkeypatch, capsys):
    def run(args: object) -> int:
        raise KeyError("boom")

    broken = types.SimpleNamespace(add_arguments=lambda parser: None, run=run)
    monkeypatch.setattr(cli, "_module", lambda name: broken)
    assert cli.main(["contracts"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dshfuzz contracts: internal error: KeyError"), err
    saved = Path(err[0].split("traceback saved in ")[1].split(";")[0])
    assert "KeyError: 'boom'" in saved.read_text()
    saved.unlink()


@pytest.mark.parametrize("budget", ["soon", "5x"])
def test_a_malformed_budget_is_one_line(tmp_path, budget):
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--budget", budget, "--out", str(tmp_path / "run")],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    _one_line_and_no_report(proc, tmp_path, "budget must look like")


@pytest.mark.parametrize("workers", ["0", "-2"])
def test_a_worker_count_under_one_without_a_cluster_is_one_line(tmp_path, workers):
    """``--workers 0`` once ran one per core, silently; a negative count ran no worker at all."""
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--budget", "5s", "--workers", workers, "--no-official",
         "--out", str(tmp_path / "run")],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    _one_line_and_no_report(proc, tmp_path, "--workers must be at least 1")


@pytest.mark.parametrize("body, says", [
    ("Alias = list[str] << list[str]\n", "importing broken_at_import raised TypeError: unsupported operand"),
    ("import sys\nsys.exit(3)\n", "importing broken_at_import raised SystemExit: 3"),
    ("def check(path):\n    return {\n", "importing broken_at_import raised SyntaxError"),
])
def test_a_py_checker_whose_module_fails_as_it_imports_is_one_line(tmp_path, body, says):
    """The module's own error, in one line: once a traceback (a mutant of an annotation did it)."""
    (tmp_path / "broken_at_import.py").write_text(body)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    proc = _fuzz(tmp_path, "--checker", "py:broken_at_import:check", "--no-official", env={"PYTHONPATH": path})
    _one_line_and_no_report(proc, tmp_path, says)
