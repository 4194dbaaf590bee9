"""``dshfuzz fuzz`` end to end, as a user runs it off a terminal (CI): it finds the planted
defect, says so while running, ends with a summary naming the report, and exits 1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_cli_campaign_reports_the_planted_miss_and_writes_every_report(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", "py:tests.broken_checkers.miss_rule:check",
         "--budget", "600examples", "--workers", "1", "--no-official", "--stop-after", "1", "--seed", "1",
         "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^dshfuzz: finding 1: rule-id rule-id\|expected\|S5\|v\d ", proc.stderr, re.M), proc.stderr
    assert f"report: {out / 'report.html'}" in proc.stdout, proc.stdout
    assert "1 checker finding" in proc.stdout and "partial-coverage" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop"] == "findings"
    [finding] = summary["findings"]
    assert finding["signature"] == f"rule-id|expected|S5|v{finding['formatVersion']}"
    assert finding["reachedBy"] == {"partial-coverage": finding["count"]} and finding["stage"] == "minimal"
    assert (out / finding["witness"]).is_file()
    page = (out / "report.html").read_text()
    assert "<svg" in page and finding["signature"] in page


@pytest.mark.slow
def test_a_witness_cut_at_its_time_box_is_saved_as_cut_and_corpus_minimise_finishes_it(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "run"
    fuzz = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", "py:tests.broken_checkers.miss_rule:check",
         "--budget", "600examples", "--workers", "1", "--no-official", "--stop-after", "1", "--seed", "1",
         "--minimise-seconds", "0", "--save", "--corpus", str(corpus), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert fuzz.returncode == 1, fuzz.stdout + fuzz.stderr
    [finding] = json.loads((out / "summary.json").read_text())["findings"]
    assert finding["stage"] == "cut" and not finding["minimised"], finding
    [meta_path] = corpus.glob("*/meta.json")
    [(key, entry)] = json.loads(meta_path.read_text())["entries"].items()
    assert entry["stage"] == "cut"
    cut = meta_path.parent / entry["file"]

    done = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "corpus", "--corpus", str(corpus), "minimise", str(cut), "--no-official"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("minimal: "), done.stdout
    entries = json.loads(meta_path.read_text())["entries"]
    [minimal] = [e for k, e in entries.items() if k != key]
    assert minimal["stage"] == "minimal"
    assert (meta_path.parent / minimal["file"]).stat().st_size < cut.stat().st_size


@pytest.mark.slow
def test_a_coordinator_killed_mid_campaign_leaves_every_finding_it_heard_in_the_corpus(tmp_path):
    import os
    import signal
    import time

    corpus = tmp_path / "corpus"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", "py:tests.broken_checkers.miss_rule:check",
         "--budget", "300s", "--workers", "1", "--no-official", "--seed", "1", "--save", "--corpus", str(corpus),
         "--out", str(tmp_path / "run")],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    heard: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # a finding's line is printed the moment the coordinator hears it
            if match := re.match(r"dshfuzz: finding \d+: \S+ (\S+) ", line):
                heard.append(match.group(1))
                time.sleep(1.0)  # the line is printed just before the finding is recorded
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # the coordinator this test started: no report, no goodbye
        proc.wait(timeout=60)
    assert heard, "the campaign found nothing before it was killed"
    saved = {json.loads(p.read_text())["signature"] for p in corpus.glob("*/meta.json")}
    assert set(heard) <= saved
    assert not (tmp_path / "run" / "summary.json").exists()


def _fuzz(checker: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", checker, "--mutators", "partial-coverage,step-key-reuse",
         "--budget", "80examples", "--workers", "1", "--no-official", "--no-minimise", "--out", str(out), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )


@pytest.mark.slow
def test_with_a_baseline_only_a_new_cause_fails_the_campaign(tmp_path):
    # a team's checker with a known bug (S5 switched off) in CI, then broken once more (T3 off too)
    first = _fuzz("builtin:-S5", tmp_path / "first", "--seed", "1")
    assert first.returncode == 1, first.stdout + first.stderr
    known = {f["cause"] for f in json.loads((tmp_path / "first" / "summary.json").read_text())["findings"]}
    assert known == {"rule-id|expected|S5"}, known

    again = _fuzz("builtin:-S5", tmp_path / "again", "--seed", "2", "--baseline", str(tmp_path / "first" / "summary.json"))
    assert again.returncode == 0, again.stdout + again.stderr
    baseline = json.loads((tmp_path / "again" / "summary.json").read_text())["baseline"]
    assert baseline["known"] == ["rule-id|expected|S5"] and baseline["new"] == [] and baseline["gone"] == [], baseline
    assert "no new cause" in again.stdout

    broken = _fuzz("builtin:-S5,-T3", tmp_path / "broken", "--seed", "2", "--baseline", str(tmp_path / "first"))
    assert broken.returncode == 1, broken.stdout + broken.stderr
    summary = json.loads((tmp_path / "broken" / "summary.json").read_text())
    baseline = summary["baseline"]
    assert baseline["known"] == ["rule-id|expected|S5"] and "miss|expected|T3" in baseline["new"], baseline
    assert not any("S5" in cause for cause in baseline["new"]), baseline
    assert {f["cause"] for f in summary["findings"] if f["known"]} == {"rule-id|expected|S5"}
    assert "miss|expected|T3" in broken.stdout and "new" in broken.stdout


def test_a_baseline_that_cannot_be_read_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "summary.json"
    bad.write_text('{"format": "something-else"}')
    for path, words in ((bad, "not a dshfuzz campaign summary"), (tmp_path / "nothing", "no such file or folder")):
        proc = _fuzz("builtin", tmp_path / "run", "--baseline", str(path))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and str(path) in lines[0], proc.stderr
        assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_checkers_own_exit_status_with_a_report_is_one_crash_named_once_until_checker_exit_maps_it(tmp_path):
    checker = f"cmd:'{sys.executable} {REPO / 'tests' / 'broken_checkers' / 'exit_four.py'} {{log}}'"

    def fuzz(out: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", checker, "--mutators", "torn-tail-line,empty-session",
             "--budget", "40examples", "--workers", "1", "--no-official", "--no-minimise", "--seed", "1",
             "--out", str(tmp_path / out), *extra],
            cwd=REPO, capture_output=True, text=True, timeout=600,
        )

    unmapped = fuzz("unmapped")
    assert unmapped.returncode == 1, unmapped.stdout + unmapped.stderr
    summary = json.loads((tmp_path / "unmapped" / "summary.json").read_text())
    assert {f["cause"] for f in summary["findings"]} == {"crash|-|exit-4"}, summary["findings"]
    assert "--checker-exit 4=findings" in summary["exitAdvice"] and "--checker-exit 4=findings" in unmapped.stdout
    mapped = fuzz("mapped", "--checker-exit", "4=findings")
    assert mapped.returncode == 0, mapped.stdout + mapped.stderr
    assert json.loads((tmp_path / "mapped" / "summary.json").read_text())["findings"] == []
