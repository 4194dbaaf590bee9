"""What measuring coverage costs a campaign: the same campaign with and without, side by side.

Runs ``dshfuzz fuzz`` with each set of flags in turn (A B A B ...), each for the same budget
and seed, and prints per run the logs judged per second (the campaign's own count) and the
CPU seconds per judged log (every process the campaign started, the Node servers and a
checker's processes included, from the operating system's accounting of reaped children):
CPU per log is the steadier figure on a shared machine, logs/s the one a user sees; and the
official refusal sites each reached (with official coverage on).

    .venv/bin/python benchmarks/coverage_cost.py --seconds 45 --rounds 3 \\
        --a "--official-coverage off" --b "--official-coverage function"
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run(flags: str, seconds: float, seed: int, workers: int) -> tuple[float, float, int | None]:
    """One campaign: its logs/s, CPU milliseconds per judged log and official sites reached."""
    with tempfile.TemporaryDirectory(prefix="dshfuzz-coverage-cost-") as scratch:
        out = Path(scratch) / "run"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "dshfuzz", "fuzz", "--budget", f"{seconds:g}s", "--seed", str(seed), "--workers",
             str(workers), "--out", str(out), *shlex.split(flags)],
            capture_output=True, check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = json.loads((out / "summary.json").read_text("utf-8"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    reach = summary.get("officialReach")
    return summary["examplesPerSecond"], 1000 * cpu / max(1, summary["examples"]), reach and reach["reached"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", default="--official-coverage off", help="flags of campaign A (the baseline)")
    parser.add_argument("--b", default="--official-coverage function", help="flags of campaign B")
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rates: list[float] = []
    cpus: list[float] = []
    print(f"A: {args.a}\nB: {args.b}\n| round | A logs/s | B logs/s | B/A logs/s | A CPU ms/log | B CPU ms/log | B/A CPU "
          "| A sites | B sites |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in range(1, args.rounds + 1):
        a_rate, a_cpu, a_sites = run(args.a, args.seconds, args.seed, args.workers)
        b_rate, b_cpu, b_sites = run(args.b, args.seconds, args.seed, args.workers)
        rates.append(b_rate / a_rate)
        cpus.append(b_cpu / a_cpu)
        print(f"| {n} | {a_rate:.1f} | {b_rate:.1f} | {rates[-1]:.2f} | {a_cpu:.1f} | {b_cpu:.1f} | {cpus[-1]:.2f} "
              f"| {a_sites if a_sites is not None else '—'} | {b_sites if b_sites is not None else '—'} |", flush=True)
    print(f"median B/A: logs/s {statistics.median(rates):.2f}, CPU per log {statistics.median(cpus):.2f}")


if __name__ == "__main__":
    main()
