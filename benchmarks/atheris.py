"""The atheris targets' execution rates, against the same targets run bare, in one run.

    .venv/bin/python benchmarks/atheris.py [--runs 20000] [--max-len 512] [--targets all]

For each target, with the seeds and settings of ``tests/quality/test_atheris.py``:

- fuzzing: ``fuzz_target`` for ``--runs`` executions (libFuzzer in a child process,
  instrumented, the custom mutator at the test's structured share); the rate is per
  CPU second of the child (``os.wait4``) after its start-up, so that machine load
  does not enter it;
- bare: the target function called in this process on the seed inputs in a loop,
  uninstrumented, for the same CPU time budget of ``--bare-seconds``;
- start-up: the CPU time of a session that only runs the seeds (``-runs=1``), which is
  instrumentation, imports and the seed corpus;
- the projected CPU time of the quality test's 50,000 executions: start-up plus
  50,000 times the CPU time per execution after start-up.

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
sys.path.insert(0, str(REPO / "tests" / "quality"))

from test_atheris import MAX_LEN, RUNS, SEEDS, SHARE  # the quality test's settings

from dshfuzz.harness._atheris import TARGETS, AtherisConfig, fuzz_target, write_seeds


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
    parser.add_argument("--max-len", type=int, default=MAX_LEN)
    parser.add_argument("--share", type=float, default=SHARE)
    parser.add_argument("--bare-seconds", type=float, default=5.0)
    parser.add_argument("--targets", default="all")
    args = parser.parse_args()
    names = list(TARGETS) if args.targets == "all" else args.targets.split(",")
    rows = []
    for name in names:
        cpu = {}
        for runs in (1, args.runs):
            with tempfile.TemporaryDirectory() as out:
                config = AtherisConfig(
                    out=Path(out), runs=runs, max_len=args.max_len, structured_share=args.share, sources=SEEDS
                )
                summary = fuzz_target(name, config)
                cpu[runs] = summary.stats.cpu_seconds
        stats = summary.stats
        startup = cpu[1]
        per_exec = max(stats.cpu_seconds - startup, 1e-3) / max(1, stats.executions)
        bare = bare_rate(name, args.max_len, args.bare_seconds)
        rows.append(
            {
                "target": name,
                "executions": stats.executions,
                "cpuSeconds": round(stats.cpu_seconds, 1),
                "wallSeconds": round(stats.seconds, 1),
                "fuzzExecPerCpuSec": round(1 / per_exec),
                "bareExecPerCpuSec": round(bare),
                "overhead": round(bare * per_exec, 1),
                "startupCpuSeconds": round(startup, 1),
                "projectedTestCpuSeconds": round(startup + per_exec * RUNS),
                "coverage": stats.coverage,
                "findings": len(summary.findings),
            }
        )
    load = os.getloadavg()[0]
    print(json.dumps({"runs": args.runs, "maxLen": args.max_len, "load": load, "targets": rows}, indent=1))
    print()
    print("| target | fuzz exec/CPU s | bare exec/CPU s | bare / fuzz | start-up CPU s | 50k runs CPU s "
          "| cov | found |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['target']} | {r['fuzzExecPerCpuSec']} | {r['bareExecPerCpuSec']} | {r['overhead']}x | "
            f"{r['startupCpuSeconds']} | {r['projectedTestCpuSeconds']} | {r['coverage']} | {r['findings']} |"
        )
    total = sum(r["projectedTestCpuSeconds"] or 0 for r in rows)
    print(f"\nProjected CPU time of the quality test's fuzzing: {total} s (load average {load:.1f}).")


if __name__ == "__main__":
    main()
