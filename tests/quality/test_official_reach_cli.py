"""Official reach end to end, as a user reads it: a campaign measures which official refusal
sites its logs reached (on by default), every report says "official refusal sites reached:
N of M", and ``dshfuzz coverage`` prints the per-package and unreached tables of a report
folder, or says in one line why it cannot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def dshfuzz(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dshfuzz", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def campaign(official: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reach") / "run"
    proc = dshfuzz("fuzz", "--budget", "300examples", "--workers", "1", "--seed", "1", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_every_report_says_how_many_official_refusal_sites_were_reached(campaign: Path) -> None:
    reach = json.loads((campaign / "summary.json").read_text())["officialReach"]
    assert reach["granularity"] == "function" and reach["code"] > 0
    assert 0 < reach["reached"] < reach["reachable"] <= reach["sites"]
    assert sum(p["reached"] for p in reach["byPackage"]) == reach["reached"]
    assert len(reach["unreached"]) == reach["reachable"] - reach["reached"]
    assert all(set(u) == {"id", "package", "file", "line", "message"} for u in reach["unreached"])
    assert set(reach["reachedFirstBy"]) and all(v["afterSeconds"] >= 0 for v in reach["reachedFirstBy"].values())
    headline = f"official refusal sites reached: {reach['reached']} of {reach['reachable']}"
    assert headline in (campaign / "report.md").read_text()
    assert f"{reach['reached']} of {reach['reachable']}" in (campaign / "report.html").read_text()


def test_coverage_prints_the_tables_of_a_report_folder(campaign: Path) -> None:
    reach = json.loads((campaign / "summary.json").read_text())["officialReach"]
    proc = dshfuzz("coverage", str(campaign))
    assert proc.returncode == 0, proc.stderr
    assert f"official refusal sites reached: {reach['reached']} of {reach['reachable']}" in proc.stdout.replace("\n", " ")
    assert "dsh-token-meter" in proc.stdout and "unreached official refusal sites" in proc.stdout
    as_json = dshfuzz("coverage", str(campaign / "summary.json"), "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == {"officialReach": reach, "checkerCoverage": None}


def test_coverage_says_why_it_cannot_read_a_report(tmp_path: Path) -> None:
    missing = dshfuzz("coverage", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.startswith("dshfuzz coverage: ") and "nowhere" in missing.stderr
    (tmp_path / "summary.json").write_text(json.dumps({"officialReach": None}))
    unmeasured = dshfuzz("coverage", str(tmp_path))
    assert unmeasured.returncode == 2 and "measured no coverage" in unmeasured.stderr
    (tmp_path / "summary.json").write_text(json.dumps({"officialReach": {"reached": "many"}}))
    malformed = dshfuzz("coverage", str(tmp_path))
    assert malformed.returncode == 2 and "officialReach needs integer" in malformed.stderr, malformed.stderr
    (tmp_path / "summary.json").write_text("{not json")
    broken = dshfuzz("coverage", str(tmp_path))
    assert broken.returncode == 2 and len(broken.stderr.strip().splitlines()) == 1


REACH_FLOOR = 0.70


def test_a_minute_of_make_fuzz_reaches_most_reachable_refusal_sites(official: Any, tmp_path: Path) -> None:
    """Issue 32's coverage floor: a 60-second campaign with the built-in checker (what ``make
    fuzz`` runs) reaches at least 70% of the refusal sites not listed as unreachable. A coverage
    assertion, not a timing one: a loaded machine judges fewer logs, and the floor keeps margin
    for that (benchmarks/RESULTS.md has the reach of an unloaded minute)."""
    out = tmp_path / "run"
    proc = dshfuzz("fuzz", "--budget", "60s", "--seed", "1", "--out", str(out))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    reach = summary["officialReach"]
    unreached = "\n".join(f"  {u['id']}  {u['message']}" for u in reach["unreached"])
    assert reach["reached"] >= REACH_FLOOR * reach["reachable"], (
        f"{reach['reached']} of {reach['reachable']} reachable sites in {summary['examples']} logs; unreached:\n{unreached}"
    )
