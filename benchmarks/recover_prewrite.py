"""Cost of `dshfuzz recover` and `dshfuzz check --prewrite` against a plain `dshfuzz check`.

All three run as whole cold processes on the same log in the same run, so the ratios
survive a noisy shared machine. A clean log is the planner's best case (one full check
of the re-encoded prefix); prewrite checks the log twice (before and after the edit).

    python benchmarks/recover_prewrite.py --log .dshfuzz-cache/synth-200k.jsonl.zstd --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable


def _run(args: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KB) of one cold ``python -m dshfuzz`` process."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", PYTHON, "-m", "dshfuzz", *args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    seconds = time.perf_counter() - start
    rss = int(proc.stderr.strip().splitlines()[-1])
    return seconds, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    log = str(args.log)
    with tempfile.TemporaryDirectory() as scratch:
        edit = Path(scratch) / "edit.json"
        edit.write_text(json.dumps({"type": "agent/inbox/spliced", "seq": 10**9, "time": 0,
                                    "data": {"target": "next-turn", "start": 0, "inserted": []}}))
        commands = {
            "check": ["check", "--json", log],
            "recover": ["recover", "--json", log],
            "prewrite": ["check", "--prewrite", str(edit), "--log", log, "--json"],
        }
        results: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                results[name].append(_run(command))
    reference = statistics.median(s for s, _ in results["check"])
    print(f"log: {log} ({os.path.getsize(log)} bytes), {args.runs} runs, load average {os.getloadavg()[0]:.2f}")
    print("| command | median s | x check | peak RSS MB |")
    print("|---|---|---|---|")
    for name, samples in results.items():
        seconds = statistics.median(s for s, _ in samples)
        rss = max(r for _, r in samples) / 1024
        print(f"| {name} | {seconds:.1f} | {seconds / reference:.2f} | {rss:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
