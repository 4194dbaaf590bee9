"""Checker trees side by side in instructions: ``valgrind --tool=callgrind`` counts the
instructions of one process per tree and cell (``check_path`` over a log or a folder of logs,
the collector paused, imports included), which a shared machine's load cannot move.

Each cell drops the rules given (``--drop G5 --drop G4,G5``; an empty drop runs every rule);
a tree without a rule of the drop list simply has it absent. Byte-compile each tree's ``src``
first (``python -m compileall``), or the first cell of a tree pays for the compilation.

    benchmarks/checker_instructions.py --tree /tmp/before/src --tree src --logs synth-100k.jsonl.zstd \\
        --drop "" --drop G5
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

_DRIVER = r"""
import gc, os, sys
gc.disable()
from dshfuzz.checker import CheckOptions, check_path
try:
    from dshfuzz.contracts import RuleId
except ImportError:  # a tree from before dshfuzz.contracts
    from dshfuzz.checker import RuleId
drop = {x for x in sys.argv[2].split(",") if x}
options = CheckOptions(rules=frozenset(r for r in RuleId if r.value not in drop))
target = sys.argv[1]
paths = [os.path.join(target, f) for f in sorted(os.listdir(target))] if os.path.isdir(target) else [target]
for path in paths:
    check_path(path, options)
"""


def instructions(tree: str, logs: str, drop: str) -> int:
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _DRIVER, logs, drop],
        env={"PYTHONPATH": tree, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count for {tree} on {logs}:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="a src folder (give two or more)")
    parser.add_argument("--logs", action="append", required=True, help="a log file or a folder of logs")
    parser.add_argument("--drop", action="append", default=None, help="rule ids to drop, comma-separated")
    args = parser.parse_args()
    drops = args.drop if args.drop is not None else [""]
    print("| logs | dropped | " + " | ".join(args.tree) + " | last / first |")
    print("|---|---|" + "---:|" * (len(args.tree) + 1))
    for logs in args.logs:
        for drop in drops:
            counts = [instructions(tree, logs, drop) for tree in args.tree]
            cells = " | ".join(f"{n / 1e9:.3f}e9" for n in counts)
            print(f"| {logs} | {drop or '-'} | {cells} | {counts[-1] / counts[0]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
