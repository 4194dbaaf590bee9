"""Time is a contract: a campaign ends within its budget plus a few seconds whatever it is
doing (waiting on a slow checker, minimising), Ctrl-C ends it within 5 s, and either way
its report holds every finding so far.

These are the only tests that measure wall-clock time, with generous slack: a user relies
on ``--budget`` and on Ctrl-C. They run ``dshfuzz fuzz`` as a user does, in a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _sleeping_checker(tmp_path: Path, seconds: float) -> str:
    """A checker that sleeps ``seconds`` on every log and then reports nothing at all."""
    script = tmp_path / "sleepy.py"
    script.write_text(textwrap.dedent(f"""
        import json, time
        time.sleep({seconds})
        print(json.dumps({{"findings": []}}))
    """))
    return f"cmd:'{sys.executable} {script} {{log}}'"


def _fuzz(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "dshfuzz", "fuzz", *args],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _within_budget(out: Path, budget: int, slack: int, *args: str) -> dict:
    """``dshfuzz fuzz --budget {budget}s ... --out out``, which must end within the budget plus
    ``slack`` seconds (start-up included) at the budget; its summary."""
    began = time.monotonic()
    proc = _fuzz(*args, "--budget", f"{budget}s", "--seed", "3", "--out", str(out))
    stdout, stderr = proc.communicate(timeout=3 * budget + 60)
    took = time.monotonic() - began
    assert proc.returncode in (0, 1), stdout + stderr
    assert took <= budget + slack, f"a {budget} s campaign took {took:.0f} s\n{stderr[-3000:]}"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop"] == "budget"
    assert summary["examples"] > 0
    return summary


@pytest.mark.slow
def test_a_campaign_against_a_checker_that_sleeps_5s_a_log_ends_within_budget_plus_10s(tmp_path, official):
    out = tmp_path / "run"
    summary = _within_budget(out, 60, 10, "--checker", _sleeping_checker(tmp_path, 5), "--workers", "2")
    assert summary["startupAdvice"], "a checker taking seconds a log must be told which protocol to use"
    for finding in summary["findings"]:
        assert (out / finding["witness"]).is_file()


@pytest.mark.slow
def test_a_campaign_of_zstd_bombs_ends_within_budget_plus_10s_whatever_the_server_still_has_queued(
    tmp_path, official
):
    # every log inflates 64 MiB in the official loader: the worker runs ahead of its server,
    # and at the budget it drops what the server has not judged yet instead of waiting
    _within_budget(tmp_path / "run", 20, 10, "--mutators", "frame-over-limit", "--workers", "1")


@pytest.mark.slow
def test_ctrl_c_during_minimisation_ends_the_campaign_within_5s_with_the_findings_so_far(tmp_path):
    out = tmp_path / "run"
    proc = _fuzz("--checker", _sleeping_checker(tmp_path, 0.2), "--budget", "10m", "--workers", "1", "--seed", "1",
                 "--no-official", "--mutators", "partial-coverage", "--minimise-seconds", "600", "--out", str(out))
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("dshfuzz: finding 1:"):
            break
    assert lines and lines[-1].startswith("dshfuzz: finding 1:"), "".join(lines)
    time.sleep(1.0)  # minimising now: every candidate costs a 0.2 s checker run
    sent = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert took <= 5, f"Ctrl-C took {took:.1f} s to end the campaign\n{stderr[-3000:]}"
    assert proc.returncode == 1, stdout + stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop"] == "interrupted"
    assert summary["findings"], "the finding made before Ctrl-C is in the report"
    first = summary["findings"][0]
    assert first["stage"] in ("found", "minimising", "cut") and not first["minimised"], first
    assert (out / first["witness"]).is_file()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_workers_end_on_their_own_when_the_coordinator_is_killed(tmp_path):
    proc = _fuzz("--budget", "10m", "--workers", "1", "--no-official", "--out", str(tmp_path / "run"))
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and not workers:
        time.sleep(0.5)
        workers = [p for p in _children(proc.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
    assert workers, "no worker process started"
    time.sleep(3)  # the worker is judging
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.5)
    assert not any(_alive(p) for p in workers), "a worker outlived its killed coordinator"


@pytest.mark.slow
def test_ctrl_c_before_any_finding_exits_130_and_still_writes_the_report(tmp_path):
    """An interrupted campaign that found nothing has not shown the checker agrees with every judge:
    it exits 130 (the help's interrupted status), not 0, and its report says why it stopped."""
    out = tmp_path / "run"
    slow_but_right = f"cmd:'{sys.executable} {REPO / 'tests' / 'broken_checkers' / 'slow.py'} {{log}}'"
    proc = _fuzz("--checker", slow_but_right, "--budget", "10m", "--workers", "1", "--seed", "1",
                 "--no-official", "--out", str(out))
    assert proc.stderr is not None
    line = proc.stderr.readline()  # the first progress line: the campaign is judging
    assert line.startswith("dshfuzz:"), line
    sent = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - sent <= 5, stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop"] == "interrupted" and not summary["findings"], summary["findings"]
    assert proc.returncode == 130, stdout + stderr
