"""Two checker trees side by side as a user runs them: ``python -m dshfuzz check --json FILE``, one
fresh process per tree, file and round (the CLI pauses the collector, in every tree), CPU seconds and
peak RSS from ``wait4`` (:func:`checker.run`). The rounds are interleaved and the tree order alternates
by round, so both trees meet the same machine load. With ``--reference FILE``, each round also runs the
official loader on FILE (``benchmarks/checker_official_load.mjs``), and each tree's check of that file
is also given as a multiple of it (``checker.py``'s "check 200k / official load 200k").

Prints a Markdown table: per file, the median CPU seconds of each tree, the median of the rounds' own
after / before ratios (and their range), the ratio of each tree's least CPU seconds, and the largest
peak RSS of each tree; then, per tree, the
median of each file's CPU over the first file's (the length ratios, the rounds' own ratios).

    .venv/bin/python benchmarks/synth.py --events 200000 --out /tmp/synth-200k
    git worktree add --detach /tmp/before 838bed0
    .venv/bin/python benchmarks/checker_cli_ab.py --before /tmp/before/src --after src --rounds 5 \\
        --reference /tmp/synth-200k.jsonl.zstd /tmp/synth-200k.jsonl.zstd /tmp/synth-400k.jsonl.zstd

Byte-compile both trees first (``python -m compileall -q TREE``), or each process compiles them again.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checker import NODE, PYTHON, ROOT, run  # noqa: E402  (a sibling script, not a package)


def _check(tree: str, path: str) -> list[str]:
    return ["env", f"PYTHONPATH={os.path.abspath(tree)}", str(PYTHON), "-m", "dshfuzz", "check", "--json", path]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the src folder of the tree before")
    parser.add_argument("--after", required=True, help="the src folder of the tree after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reference", help="a log the official loader also reads each round")
    parser.add_argument("logs", nargs="+", help="log files; the first is the base of the length ratios")
    args = parser.parse_args()
    trees = {"before": args.before, "after": args.after}
    cpu: dict[tuple[str, str], list[float]] = {(t, f): [] for t in trees for f in args.logs}
    rss: dict[tuple[str, str], list[float]] = {(t, f): [] for t in trees for f in args.logs}
    official: list[float] = []
    for r in range(args.rounds):
        for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            for path in args.logs:
                _, seconds, peak, _ = run(_check(trees[name], path))
                cpu[name, path].append(seconds)
                rss[name, path].append(peak)
        if args.reference:
            official.append(run([str(NODE), str(ROOT / "benchmarks" / "checker_official_load.mjs"), args.reference])[1])
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print("| log | CPU s before | CPU s after | after / before (rounds' own, median) | range | least / least "
          "| peak RSS MB before / after |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for path in args.logs:
        own = [a / b for a, b in zip(cpu["after", path], cpu["before", path])]
        # other work on a shared machine only adds time: the least of each tree is its steadiest figure
        print(f"| {path} | {statistics.median(cpu['before', path]):.3f} | {statistics.median(cpu['after', path]):.3f} "
              f"| **{statistics.median(own):.3f}** | {min(own):.3f}-{max(own):.3f} "
              f"| {min(cpu['after', path]) / min(cpu['before', path]):.3f} "
              f"| {max(rss['before', path]):.1f} / {max(rss['after', path]):.1f} |")
    base = args.logs[0]
    print()
    print("| ratio (each round's own, median) | before | after | after / before |")
    print("|---|---:|---:|---:|")
    for path in args.logs[1:]:
        pair = [statistics.median(x / y for x, y in zip(cpu[t, path], cpu[t, base])) for t in trees]
        print(f"| {path} / {base} | {pair[0]:.3f} | {pair[1]:.3f} | {pair[1] / pair[0]:.3f} |")
    if args.reference and args.reference in args.logs:
        pair = [statistics.median(x / y for x, y in zip(cpu[t, args.reference], official)) for t in trees]
        print(f"| {args.reference} / official load (median {statistics.median(official):.3f} s) "
              f"| {pair[0]:.3f} | {pair[1]:.3f} | {pair[1] / pair[0]:.3f} |")


if __name__ == "__main__":
    main()
