"""Campaign throughput of two versions of dshfuzz side by side: this checkout against a commit.

    .venv/bin/python benchmarks/campaign_ab.py --before 1635da0 [--seconds 30] [--rounds 3] [--workers 1 2]
        [--checker SPEC]   # e.g. --checker serve: runs each version's own `dshfuzz check --serve`

Each round runs ``benchmarks/campaign.py`` once per version and worker count, alternating the
versions, in fresh processes (``PYTHONPATH`` points at each version's ``src``; the commit is
checked out into a temporary worktree that shares this checkout's pinned Node packages). It
prints each run's judged logs/s and the CPU its processes used per judged log (the worker and
its Node server included: CPU time is what a busy, shared machine disturbs least), then the
after/before ratio of each figure per round and their median.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_MODULES = Path("src/dshfuzz/oracle/official/js/node_modules")


def run(src: Path, workers: int, seconds: float, checker: str = "builtin") -> tuple[float, float, int]:
    """One campaign: logs/s, CPU milliseconds per judged log, and logs judged. ``serve:`` alone
    is the version's own ``dshfuzz check --serve`` (its PYTHONPATH is the version's)."""
    if checker == "serve:":
        checker = f"serve:'{sys.executable} -m dshfuzz check --serve'"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, str(HERE / "campaign.py"), "--seconds", str(seconds), "--workers", str(workers),
         "--checker", checker],
        env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True,
    ).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = re.search(r"(\d+) logs in ([\d.]+) s = ([\d.]+) logs/s", out)
    if found is None:
        raise SystemExit(f"no rate in the benchmark's output:\n{out}")
    logs = int(found.group(1))
    return float(found.group(3)), 1000 * cpu / max(1, logs), logs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the commit to compare this checkout against")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--checker", default="builtin", help="a --checker SPEC; serve: is each version's own serve")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), args.before], check=True)
        try:
            (tree / NODE_MODULES).symlink_to(ROOT / NODE_MODULES)
            versions = {"before": tree / "src", "after": ROOT / "src"}
            ratios: dict[int, list[tuple[float, float]]] = {w: [] for w in args.workers}
            print(f"load average before: {os.getloadavg()[0]:.1f}")
            for number in range(1, args.rounds + 1):
                for workers in args.workers:
                    got = {}
                    order = list(versions) if number % 2 else list(reversed(versions))
                    for name in order:
                        got[name] = run(versions[name], workers, args.seconds, args.checker)
                        rate, cpu, logs = got[name]
                        print(f"round {number}, {workers} worker(s), {name:6}: {logs:5} logs, {rate:6.1f} logs/s, "
                              f"{cpu:5.1f} CPU ms/log", flush=True)
                    ratios[workers].append((got["after"][0] / got["before"][0], got["before"][1] / got["after"][1]))
            for workers, pairs in ratios.items():
                rates = ", ".join(f"{r:.2f}" for r, _ in pairs)
                cpus = ", ".join(f"{c:.2f}" for _, c in pairs)
                print(f"{workers} worker(s): logs/s after/before {rates} (median "
                      f"{statistics.median(r for r, _ in pairs):.2f}); CPU per log before/after {cpus} "
                      f"(median {statistics.median(c for _, c in pairs):.2f})")
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


if __name__ == "__main__":
    main()
