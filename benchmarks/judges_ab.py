"""The in-process judges of a campaign, two trees side by side: CPU per log of the built-in checker
(``BuiltinChecker.check_data``) and of the reference oracle (the judge's ``_reference``: its read
and ``reference_refusals``) over every log of a folder, by encoding.

    .venv/bin/python benchmarks/judges_ab.py --before /tmp/before/src --after src --logs DIR [--rounds 5] [--reps 3]

Each round runs one fresh process per tree (``PYTHONPATH`` chooses it), the order alternating, so
that both trees meet the same machine load; each process warms up on every log once, then times
``--reps`` passes. It prints each round's figures, then per figure the median of each tree and the
median of the rounds' own ratios (before / after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace


def measure(folder: Path, reps: int) -> dict[str, float]:
    """CPU milliseconds per log of each judge and encoding, in this process's tree."""
    from dshfuzz.harness._judge import _reference
    from dshfuzz.harness._judges import BuiltinChecker

    logs = [(p.read_bytes(), "zstd" if p.name.endswith(".zstd") else "none") for p in sorted(folder.iterdir())]
    checker = BuiltinChecker()
    for data, compression in logs:  # imports, the walks' plans, the first allocations
        checker.check_data(data, compression)
        _reference(SimpleNamespace(data=data, compression=compression))
    out: dict[str, float] = {}
    for encoding in ("none", "zstd"):
        mine = [(d, c) for d, c in logs if c == encoding]
        if not mine:
            continue
        judges = {
            "checker": lambda d, c: checker.check_data(d, c),
            "reference oracle": lambda d, c: _reference(SimpleNamespace(data=d, compression=c)),
        }
        for name, judge in judges.items():
            start = time.process_time()
            for _ in range(reps):
                for data, compression in mine:
                    judge(data, compression)
            out[f"{name}, {'zstd' if encoding == 'zstd' else 'jsonl'}"] = (
                (time.process_time() - start) * 1000 / (reps * len(mine))
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the src folder of the tree before")
    parser.add_argument("--after", required=True, help="the src folder of the tree after")
    parser.add_argument("--logs", required=True, type=Path, help="a folder of logs")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3, help="timed passes over the folder per process")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.logs, args.reps)))
        return
    rounds: list[dict[str, dict[str, float]]] = []
    for r in range(args.rounds):
        trees = [("before", args.before), ("after", args.after)]
        got: dict[str, dict[str, float]] = {}
        for name, src in trees if r % 2 == 0 else trees[::-1]:
            child = [sys.executable, __file__, "--child", "--before", "-", "--after", "-",
                     "--logs", str(args.logs), "--reps", str(args.reps)]
            env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
            done = subprocess.run(child, env=env, capture_output=True, text=True, check=True)
            got[name] = json.loads(done.stdout.strip().splitlines()[-1])
        rounds.append(got)
        print(f"round {r + 1}: " + "; ".join(
            f"{k} {got['before'][k]:.2f} -> {got['after'][k]:.2f} ms" for k in got["before"]), flush=True)
    print("median CPU ms per log, before -> after (median of the rounds' before / after):")
    for k in rounds[0]["before"]:
        before = statistics.median(x["before"][k] for x in rounds)
        after = statistics.median(x["after"][k] for x in rounds)
        ratio = statistics.median(x["before"][k] / x["after"][k] for x in rounds)
        print(f"  {k}: {before:.2f} -> {after:.2f} ({ratio:.2f}x)")


if __name__ == "__main__":
    main()
