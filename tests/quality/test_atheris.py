"""Coverage-guided fuzzing: every byte-level entry point survives 50,000 libFuzzer executions.

Each target (the JSONL and zstd readers, the chunk-row decoder, the whole checker
on both containers) runs in a libFuzzer child process for exactly ``RUNS``
executions with dshfuzz's structure-aware mutator; any crash, hang (over
``HANG_SECONDS`` on one input) or memory blow-up fails the test with the
minimised input and the traceback. The execution count is libFuzzer's own, not
the request. Inputs stay small (``MAX_LEN``) so that the five targets fit the
suite's budget; ``make nightly`` fuzzes for longer with larger inputs.

The last test proves the pipeline with a planted bug: found, minimised, saved
in a corpus, replayed STILL FAILING, and FIXED once the bug is gone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES
from planted_bug import PLANTED_BUG_ENV

from dshfuzz.harness import Corpus, ReplayStatus, replay_entry
from dshfuzz.harness._atheris import (
    HANG_SECONDS,
    RSS_LIMIT_MB,
    TARGETS,
    AtherisConfig,
    Finding,
    SeedSources,
    fuzz_target,
    witness_signature,
)

REPO = Path(__file__).resolve().parents[2]
RUNS = 50_000
MAX_LEN = 512
SHARE = 0.05  # the structured path costs ~4 ms a mutation; libFuzzer's byte mutator, microseconds
SEEDS = SeedSources(
    corpus=REPO / "corpus",
    fixtures=FIXTURES,
    generated=24,
    max_events=5,
)


def _describe(finding: Finding) -> str:
    data = finding.artefact.read_bytes()
    return (
        f"{finding.kind} in {finding.target} ({finding.reason}) on {finding.size} bytes "
        f"(minimised from {finding.original_size}):\n{data[:2000]!r}\n{finding.traceback}"
    )


@pytest.mark.parametrize("target", list(TARGETS))
def test_each_target_survives_fifty_thousand_executions(target, tmp_path):
    config = AtherisConfig(out=tmp_path, runs=RUNS, max_len=MAX_LEN, structured_share=SHARE, sources=SEEDS)
    summary = fuzz_target(target, config)
    assert not summary.findings, "\n\n".join(_describe(f) for f in summary.findings)
    assert summary.stats.executions >= RUNS, f"libFuzzer ran {summary.stats.executions} of {RUNS} executions"
    assert summary.stats.coverage > 0, "no coverage: the target's modules were not instrumented"


def test_a_crash_is_minimised_saved_and_replayed_until_fixed(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the child imports tests.quality.planted_bug from the current directory
    monkeypatch.setenv(PLANTED_BUG_ENV, "1")
    target = "py:tests.quality.planted_bug:target"
    config = AtherisConfig(
        out=tmp_path / "out",
        runs=100,
        corpus=tmp_path / "corpus",
        minimise_seconds=10,
        max_findings=1,
        sources=SeedSources(generated=2, max_events=4),
    )
    (finding,) = fuzz_target(target, config).findings
    assert finding.kind == "crash" and "planted bug" in finding.traceback
    assert finding.size <= finding.original_size
    ((path, entry),) = Corpus(tmp_path / "corpus").entries()
    assert path == finding.corpus_file and entry.signature == witness_signature(target)
    assert path.read_bytes() == finding.artefact.read_bytes()
    assert replay_entry(path, entry).status is ReplayStatus.STILL_FAILING
    monkeypatch.delenv(PLANTED_BUG_ENV)
    assert replay_entry(path, entry).status is ReplayStatus.FIXED


def test_the_command_prints_the_summary_it_writes(tmp_path):
    """``dshfuzz atheris`` prints ``summary.md`` as written, next to the ``summary.json`` that
    states the same run: the run returns its summary and the report renders and writes both."""
    import json
    import subprocess
    import sys

    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "atheris", "jsonl-reader", "--runs", "300", "--max-len", "64",
         "--out", str(out), "--no-save", "--corpus", str(tmp_path / "corpus"), "--shared", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == (out / "summary.md").read_text()
    assert proc.stdout.startswith("# dshfuzz atheris\n") and "| jsonl-reader | " in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["findings"] == 0 and [t["target"] for t in summary["targets"]] == ["jsonl-reader"]
    assert summary["limits"] == {"hangSeconds": HANG_SECONDS, "rssLimitMb": RSS_LIMIT_MB}
    assert f"summary written to {out / 'summary.json'}" in proc.stderr
