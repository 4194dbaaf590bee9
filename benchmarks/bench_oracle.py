"""Throughput of the pure-Python reference oracle, against the official layers it models.

For a fixed seeded batch of generated logs (``dshfuzz.generators.generate``) this
measures, in one run on one machine:

- each reference model alone (logs/s), and the official layer it models, called
  inline one log at a time (logs/s; includes the transport);
- agreement checks per second: for every log, all six models plus one pipelined
  official ``all`` call over the same layers, and the accept/reject comparison.

Usage: ``.venv/bin/python benchmarks/bench_oracle.py [--logs 200] [--seed 7]``
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Callable

from dshfuzz.generators import generate
from dshfuzz.oracle import (
    check_enclosure,
    check_lifecycle,
    check_meter,
    fold_surface,
    replay_inbox,
    wire_stream,
)
from dshfuzz.oracle.official import OfficialOracle

MODELS: dict[str, Callable[[list[Any], Any], Any]] = {
    "fold": lambda events, header: fold_surface(events),
    "invariants": check_enclosure,
    "meter": check_meter,
    "inbox": replay_inbox,
    "released": check_lifecycle,
    "wire": wire_stream,
}


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    logs = [(g.header, g.events) for g in generate(args.logs, args.seed, max_events=120)]
    events_total = sum(len(e) for _, e in logs)
    print(
        f"{len(logs)} generated logs, {events_total} events (mean {events_total / len(logs):.0f}); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print("| model | reference logs/s | official layer logs/s | reference / official |")
    print("|---|---|---|---|")
    with OfficialOracle() as official:
        official.check(events=logs[0][1], header=logs[0][0])  # start the server outside the timings
        for layer, model in MODELS.items():
            start = time.perf_counter()
            for header, events in logs:
                model(events, header)
            mine = rate(len(logs), time.perf_counter() - start)
            start = time.perf_counter()
            for header, events in logs:
                official.layer(layer, events=events, header=header)
            theirs = rate(len(logs), time.perf_counter() - start)
            print(f"| {layer} | {mine:.0f} | {theirs:.0f} | {mine / theirs:.1f} |")

        start = time.perf_counter()
        requests = [
            {"op": "all", "events": e, "header": h, "options": {"layers": list(MODELS)}} for h, e in logs
        ]
        replies = official.pipeline(requests)
        disagreements = 0
        for (header, events), reply in zip(logs, replies, strict=True):
            layers = reply.result["layers"]
            for layer, model in MODELS.items():
                disagreements += model(events, header).ok != layers[layer]["ok"]
        elapsed = time.perf_counter() - start
    print(
        f"\nagreement checks (6 models + pipelined official `all`): {rate(len(logs), elapsed):.0f} logs/s, "
        f"{rate(len(logs) * len(MODELS), elapsed):.0f} model-layer comparisons/s; "
        f"disagreements: {disagreements}"
    )


if __name__ == "__main__":
    main()
