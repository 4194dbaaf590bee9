"""The atheris targets' execution rates, against the same targets run bare, in one run.

    .venv/bin/python benchmarks/atheris.py [--runs 20000] [--max-len 512] [--targets all]

For each target, with the seeds and settings of ``tests/quality/test_atheris.py``:

- fuzzing: ``fuzz_target`` for ``--runs`` executions (libFuzzer in a child process,
  instrumented, the custom mutator at the test's structured share); the rate is per
  CPU second of the child (``os.wait4``), start-up included, so that machine load
  does not enter it;
- bare: the target function called in this process on the seed inputs in a loop,
  uninstrumented, for the same CPU time budget of ``--bare-seconds``;
- the projected CPU time of the quality test's 50,000 executions.

Prints a JSON summary and the Markdown block recorded in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from dshfuzz.harness._atheris import TARGETS, AtherisConfig, SeedSources, fuzz_target, write_seeds

TEST_RUNS = 50_000
SEEDS = SeedSources(
    corpus=REPO / "corpus", fixtures=REPO.parent / "shared" / "reference" / "fixtures", generated=8, max_events=6
)


def bare_rate(name: str, max_len: int, seconds: float) -> float:
    """Executions per CPU second of the target itself on its seeds, in this process."""
    with tempfile.TemporaryDirectory() as tmp:
        write_seeds(TARGETS[name], Path(tmp), SEEDS, max_len=max_len)
        inputs = [p.read_bytes() for p in sorted(Path(tmp).iterdir())]
    run, done, start = TARGETS[name].run, 0, time.process_time()
    while time.process_time() - start < seconds:
        run(inputs[done % len(inputs)])
        done += 1
    return done / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--max-len", type=int, default=512)
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--bare-seconds", type=float, default=5.0)
    parser.add_argument("--targets", default="all")
    args = parser.parse_args()
    names = list(TARGETS) if args.targets == "all" else args.targets.split(",")
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory() as out:
            config = AtherisConfig(
                out=Path(out), runs=args.runs, max_len=args.max_len, structured_share=args.share, sources=SEEDS
            )
            summary = fuzz_target(name, config)
        stats = summary.stats
        bare = bare_rate(name, args.max_len, args.bare_seconds)
        rows.append(
            {
                "target": name,
                "executions": stats.executions,
                "cpuSeconds": round(stats.cpu_seconds, 1),
                "wallSeconds": round(stats.seconds, 1),
                "fuzzExecPerCpuSec": round(stats.exec_per_cpu_sec),
                "bareExecPerCpuSec": round(bare),
                "overhead": round(bare / stats.exec_per_cpu_sec, 2) if stats.exec_per_cpu_sec else None,
                "projectedTestCpuSeconds": round(stats.cpu_seconds / stats.executions * TEST_RUNS)
                if stats.executions
                else None,
                "coverage": stats.coverage,
                "findings": len(summary.findings),
            }
        )
    load = os.getloadavg()[0]
    print(json.dumps({"runs": args.runs, "maxLen": args.max_len, "load": load, "targets": rows}, indent=1))
    print()
    print("| target | fuzz exec/CPU s | bare exec/CPU s | bare / fuzz | 50k runs, CPU s | cov | findings |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['target']} | {r['fuzzExecPerCpuSec']} | {r['bareExecPerCpuSec']} | {r['overhead']}x | "
            f"{r['projectedTestCpuSeconds']} | {r['coverage']} | {r['findings']} |"
        )
    total = sum(r["projectedTestCpuSeconds"] or 0 for r in rows)
    print(f"\nProjected CPU time of the quality test's fuzzing: {total} s (load average {load:.1f}).")


if __name__ == "__main__":
    main()
