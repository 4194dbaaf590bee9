"""Campaigns on a real Dask cluster (``--cluster``): a ``LocalCluster`` of 2 worker processes
on 127.0.0.1, started by each test and stopped after it.

The coordinator finds each planted defect once, with a minimal witness, as the
multiprocessing path does; each slot judges the examples its seed stream gives it, the
same as a local worker process of that number; killing one of the two workers mid-campaign
loses neither the campaign nor a finding, with Dask's work stealing off too (the coordinator
itself moves the lost slot to the restarted worker), and the report names the lost worker; a
scheduler that cannot be reached is one usage error.
"""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from dshfuzz.harness import CampaignConfig, DisagreementFound, ExampleJudged, run_campaign
from dshfuzz.harness._config import slot_share
from dshfuzz.harness._events import SETTLED
from rich.console import Console

from dshfuzz.report import LiveReporter, write_reports
from dshfuzz.report._summary import CampaignSummary

distributed = pytest.importorskip("distributed", reason="the cluster extra: pip install 'dshfuzz[cluster]'")

REPO = Path(__file__).resolve().parents[2]
MAX_MINIMAL_EVENTS = 12


@pytest.fixture
def two_workers(monkeypatch):
    """A LocalCluster of 2 single-threaded worker processes; they start in the repository, so
    ``py:tests.broken_checkers…`` imports there as it does for a local worker process."""
    monkeypatch.chdir(REPO)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster


@pytest.fixture
def two_workers_that_never_steal(monkeypatch):
    """:func:`two_workers` with Dask's work stealing off: a lost slot that Dask queues behind the
    other slot on the surviving worker reaches a restarted worker only if the coordinator moves it."""
    import dask

    monkeypatch.chdir(REPO)
    with dask.config.set({"distributed.scheduler.work-stealing": False}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster


def _planted(kind: str, rule: str | None = None):
    def matches(found: DisagreementFound) -> bool:
        return found.kind == kind and (rule is None or rule in found.rules)

    return matches


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, matches",
    [
        ("miss_rule", _planted("rule-id", "S5")),
        ("wrong_seq", _planted("wrong-place", "E2")),
        ("crashes", _planted("crash")),
    ],
)
def test_a_cluster_campaign_finds_each_planted_defect_once_with_a_minimal_witness(module, matches, two_workers, tmp_path):
    config = CampaignConfig(
        checker=f"py:tests.broken_checkers.{module}:check", seed=1, workers=2, budget_seconds=240,
        budget_examples=1200, official=False, out=tmp_path, minimise_seconds=120,
        cluster=two_workers.scheduler_address,
    )
    summary = CampaignSummary()
    planted = None
    campaign = run_campaign(config)
    for event in campaign:
        summary.add(event)
        if isinstance(event, DisagreementFound) and event.stage in SETTLED and matches(event):
            planted = event
            break
    campaign.close()
    seen = [f.signature for f in summary.findings]
    assert planted is not None, f"{module}: the planted defect was not found on the cluster; found instead: {seen}"
    assert seen.count(planted.signature) == 1
    # exactly one slot minimised it: every witness the coordinator passed on came from its owner
    assert {e.worker for e in summary.findings if e.signature == planted.signature} == {planted.worker}
    witness = planted.data.decode("utf-8", "replace")
    assert planted.events_minimal <= MAX_MINIMAL_EVENTS, f"witness not minimal ({planted.events_minimal} events):\n{witness}"


def _per_slot(config: CampaignConfig) -> dict[int, list[tuple[object, ...]]]:
    """What each slot judged, in order: the log's stratum, size and the checker's rules."""
    judged: dict[int, list[tuple[object, ...]]] = defaultdict(list)
    for event in run_campaign(config):
        if isinstance(event, ExampleJudged):
            judged[event.worker].append((event.mutator, event.events, tuple(sorted(event.checker_rules))))
    return judged


@pytest.mark.slow
def test_each_slot_judges_exactly_what_its_seed_stream_and_budget_share_give_it_as_a_local_worker_of_that_number_does(two_workers, tmp_path):
    base = {"seed": 7, "workers": 2, "budget_seconds": None, "budget_examples": 400, "official": False}
    on_cluster = _per_slot(CampaignConfig(**base, out=tmp_path / "c", cluster=two_workers.scheduler_address))
    on_processes = _per_slot(CampaignConfig(**base, out=tmp_path / "p"))
    for slot in (0, 1):
        # each slot stops itself at its share of the example budget, on either backend: the same logs
        assert len(on_cluster[slot]) == len(on_processes[slot]) == slot_share(400, 2, slot), slot
        assert on_cluster[slot] == on_processes[slot], slot
    assert on_cluster[0][:10] != on_cluster[1][:10]  # each slot has a stream of its own


@pytest.mark.slow
def test_killing_one_of_two_workers_mid_campaign_loses_neither_the_campaign_nor_a_finding(
    two_workers_that_never_steal, tmp_path
):
    two_workers = two_workers_that_never_steal
    budget = 50.0
    config = CampaignConfig(
        checker="py:tests.broken_checkers.miss_rule:check", seed=1, workers=2, budget_seconds=budget,
        official=False, out=tmp_path, minimise_seconds=10, cluster=two_workers.scheduler_address,
    )
    shown = io.StringIO()
    reporter = LiveReporter(Console(file=shown, force_terminal=False, width=200))
    summary = reporter.summary
    per_slot: dict[int, int] = defaultdict(int)
    victim: str | None = None
    after_loss: dict[int, int] = defaultdict(int)
    with distributed.Client(two_workers.scheduler_address, set_as_default=False) as client:
        for event in reporter.consume(run_campaign(config)):
            if isinstance(event, ExampleJudged):
                per_slot[event.worker] += 1
                if summary.lost_workers:
                    after_loss[event.worker] += 1
            if victim is None and min(per_slot.get(0, 0), per_slot.get(1, 0)) >= 20:
                pids = client.run(os.getpid)  # the cluster's worker processes, which this test started
                victim = sorted(pids)[0]
                os.kill(pids[victim], signal.SIGKILL)
    assert victim is not None, f"the campaign ended before both slots judged 20 logs: {dict(per_slot)}"
    assert summary.finished is not None and summary.finished.reason == "budget"
    assert summary.elapsed < budget + 60
    [lost] = summary.lost_workers
    assert lost.worker == victim and len(lost.slots) == 1
    [slot] = lost.slots
    assert after_loss[slot] > 0, f"slot {slot} judged nothing after its worker was lost: {dict(after_loss)}"
    assert f"dshfuzz: worker {victim} lost; slot {slot} restarts" in shown.getvalue()
    assert summary.checker_defects, "the planted miss was not found"
    paths = write_reports(summary, tmp_path / "run")
    report = json.loads(paths["json"].read_text())
    assert report["lostWorkers"] == [
        {"worker": victim, "slots": [slot], "afterSeconds": report["lostWorkers"][0]["afterSeconds"]}
    ]
    assert [f["signature"] for f in report["findings"]] == [f.signature for f in summary.findings]
    assert victim in paths["markdown"].read_text() and victim in paths["html"].read_text()


@pytest.mark.slow
def test_fuzz_cluster_local_finds_the_planted_miss_once_and_saves_it_as_it_arrives(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--cluster", "local", "--workers", "2",
         "--checker", "py:tests.broken_checkers.miss_rule:check", "--budget", "240s", "--no-official",
         "--stop-after", "1", "--seed", "1", "--save", "--corpus", str(corpus), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["cluster"] == "local" and summary["run"]["workers"] == 2
    findings = summary["findings"]
    assert len({f["signature"] for f in findings}) == len(findings)
    [planted, *_] = [f for f in findings if f["kind"] == "rule-id" and "S5" in f["rules"] and f["stage"] == "minimal"]
    assert planted["eventsMinimal"] <= MAX_MINIMAL_EVENTS
    # the corpus keeps each finding's latest witness only: the earlier ones it replaced are gone
    saved = {}
    for meta_path in corpus.glob("*/meta.json"):
        [entry] = json.loads(meta_path.read_text())["entries"].values()
        assert sorted(p.name for p in meta_path.parent.iterdir()) == sorted(["meta.json", entry["file"]])
        saved[entry["signature"]] = entry["stage"]
    assert saved == {f["signature"]: f["stage"] for f in findings}


def test_ctrl_c_ends_a_local_cluster_campaign_with_130_and_no_worker_traceback(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group, the local Dask workers included:
    the coordinator closes them, exits as an interrupt (130, or 1 once a finding came), and no worker
    prints a traceback."""
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--cluster", "local", "--workers", "2", "--budget", "240s",
         "--no-official", "--seed", "1", "--out", str(tmp_path / "run")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the first progress line: the cluster judges logs
    assert first.startswith("dshfuzz: "), first
    os.killpg(proc.pid, signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=120)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stop"] == "interrupted", summary["stop"]
    # an interrupt exits 130, unless a finding came first: findings decide the status (1)
    assert proc.returncode == (1 if summary["findings"] else 130), first + stdout + stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]
    assert time.monotonic() - sent < 60, "Ctrl-C must end the campaign, not wait for its budget"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:{free port}", "nonsense"])
def test_a_cluster_that_cannot_be_reached_is_one_usage_error(address, tmp_path):
    address = address.replace("{free port}", str(_free_port()))  # chosen here: xdist workers collect alike
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--cluster", address, "--budget", "5s", "--no-official",
         "--out", str(tmp_path / "run")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"dshfuzz fuzz: cannot reach a Dask scheduler at {address}") and "--cluster local" in line
    assert not (tmp_path / "run").exists()
