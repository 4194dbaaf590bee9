"""Two checker trees side by side: ``check_path`` over every log of a folder, one fresh process per
tree and round, the rounds interleaved (the order alternating), so that both trees meet the same
machine load. Prints each run's CPU seconds, the median per tree and the median of the rounds'
own ratios (after / before).

    .venv/bin/python -m dshfuzz generate --count 2000 --seed 7 --out /tmp/logs
    git archive main src | tar -x -C /tmp/before
    .venv/bin/python benchmarks/checker_ab.py --before /tmp/before/src --after src --logs /tmp/logs --rounds 7

``--rules G4`` times one rule's walk (and the state walks every check runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

_RUN = """
import os, sys, time
from dshfuzz.checker import CheckOptions, RuleId, check_path
rules = sys.argv[2].split(",") if sys.argv[2] else None
options = CheckOptions() if rules is None else CheckOptions(rules=frozenset(map(RuleId, rules)))
paths = sorted(os.path.join(sys.argv[1], name) for name in os.listdir(sys.argv[1]))
check_path(paths[0], options)  # the rule modules load on the first check
start = time.process_time()
for path in paths:
    check_path(path, options)
print(time.process_time() - start)
"""


def _run(src: str, logs: str, rules: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    done = subprocess.run([sys.executable, "-c", _RUN, logs, rules], env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the src folder of the tree before")
    parser.add_argument("--after", required=True, help="the src folder of the tree after")
    parser.add_argument("--logs", required=True, help="a folder of logs to check")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rules", default="", help="only these rule ids, comma-separated (default: every rule)")
    args = parser.parse_args()
    before: list[float] = []
    after: list[float] = []
    for r in range(args.rounds):
        order = [("before", args.before, before), ("after", args.after, after)]
        for name, src, out in order if r % 2 == 0 else order[::-1]:
            out.append(_run(src, args.logs, args.rules))
            print(f"round {r + 1} {name}: {out[-1]:.2f} s CPU", flush=True)
    ratios = [a / b for a, b in zip(after, before)]
    print(f"median before {statistics.median(before):.2f} s, after {statistics.median(after):.2f} s, "
          f"paired ratio median {statistics.median(ratios):.3f} (rounds {', '.join(f'{x:.3f}' for x in ratios)})")


if __name__ == "__main__":
    main()
