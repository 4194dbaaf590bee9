"""Official reach of campaigns, recounted against today's list of unreachable sites.

A campaign's summary.json records which refusal sites it reached (``officialReach``); the list
of sites no log can reach (``unreachable-sites.json``) may have changed since. This prints,
for each summary given, the per-package table of reachable sites reached, counted against the
list as it is now, so that campaigns run before and after a change compare on one footing.

    .venv/bin/python benchmarks/official_reach.py reports/RUN_A reports/RUN_B
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from dshfuzz.oracle.official import unreachable_sites


def reach(summary: Path) -> tuple[dict[str, tuple[int, int]], float]:
    data = json.loads((summary / "summary.json" if summary.is_dir() else summary).read_text("utf-8"))
    official = data["officialReach"]
    reached = set(official["reachedFirstBy"])
    sites = {site: site.split("/")[0] for site in reached} | {u["id"]: u["package"] for u in official["unreached"]}
    listed = unreachable_sites()
    total: Counter[str] = Counter(p for s, p in sites.items() if s not in listed)
    hit: Counter[str] = Counter(p for s, p in sites.items() if s not in listed and s in reached)
    return {p: (hit[p], total[p]) for p in sorted(total)}, data["elapsedSeconds"]


def main(paths: list[str]) -> None:
    for path in paths:
        table, seconds = reach(Path(path))
        n, m = sum(h for h, _ in table.values()), sum(t for _, t in table.values())
        print(f"{path} ({seconds:.0f} s): reachable sites reached {n} of {m} ({100 * n / m:.1f}%)")
        for package, (h, t) in table.items():
            print(f"  {package:32} {h:4} / {t:4}")


if __name__ == "__main__":
    main(sys.argv[1:])
