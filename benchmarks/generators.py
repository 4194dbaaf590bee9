"""Generator throughput and shrink speed (results: benchmarks/RESULTS.md, section "generators").

    .venv/bin/python benchmarks/generators.py [--logs 2000] [--seeds 10] [--baseline-seeds 3]

Figures are CPU seconds of this process (``time.process_time``: the machine is
shared, so wall time mostly measures the other tenants) plus wall time for the
record. Reference measured in the same run: serialising each generated log
once with ``dshfuzz.model.dumps`` (generation / serialisation = how many
"serialise the log" units one generated log costs). The shrink benchmark plants
the compound defect of tests/quality/test_shrink_quality.py; its reference is
the same plan grammar drawn the naive way (draw a length, then loop), which is
what the issue warns against.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "quality"))

from test_shrink_quality import buggy_checker_crashes, plant

from dshfuzz.generators import generate, session_logs
from dshfuzz.generators._draw import HypothesisDraw
from dshfuzz.generators._strategies import _log, _max_steps
from dshfuzz.generators._structure import FeatureWeights, draw_session
from dshfuzz.model import dumps


def clocks() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def throughput(count: int, max_events: int) -> dict:
    cpu0, wall0 = clocks()
    logs = list(generate(count, 1, max_events=max_events))
    cpu1, wall1 = clocks()
    for log in logs:
        dumps(log.events)
    cpu2, _ = clocks()
    sizes = sorted(len(log.events) for log in logs)
    gen_rate = count / (cpu1 - cpu0)
    ref_rate = count / (cpu2 - cpu1)
    return {
        "max_events": max_events,
        "median_events": sizes[len(sizes) // 2],
        "logs_per_cpu_s": gen_rate,
        "logs_per_wall_s": count / (wall1 - wall0),
        "serialise_per_cpu_s": ref_rate,
        "ratio": ref_rate / gen_rate,
    }


def strategy_rate(examples: int) -> float:
    seen = 0

    @settings(max_examples=examples, database=None, phases=[Phase.generate], deadline=None)
    @given(session_logs())
    def consume(log) -> None:
        nonlocal seen
        seen += 1

    cpu0, _ = clocks()
    consume()
    return seen / (time.process_time() - cpu0)


class _LoopDraw(HypothesisDraw):
    """The anti-pattern: draw a length, then loop (no st.lists structure for the shrinker)."""

    def many(self, element, lo, hi, *args):
        return [element(self, *args) for _ in range(self.integer(lo, hi))]


def _loop_logs(max_events: int):
    @st.composite
    def plans(draw):
        return draw_session(
            _LoopDraw(draw),
            weights=FeatureWeights(),
            format_version=0,
            turns=(1, 6),
            max_steps=_max_steps(max_events, None),
        )

    return plans().map(lambda plan: _log(plan, max_events))


def shrink(strategy, seed: int) -> tuple[float, float, int, int]:
    def fails(log) -> bool:
        planted = plant(log.events)
        return planted is not None and buggy_checker_crashes(planted)

    cpu0, wall0 = clocks()
    minimal = find(
        strategy,
        fails,
        settings=settings(database=None, max_examples=2000, phases=[Phase.generate, Phase.shrink]),
        random=random.Random(seed),
    )
    cpu1, wall1 = clocks()
    return (
        cpu1 - cpu0,
        wall1 - wall0,
        sum(e["type"] == "turn/start" for e in minimal.events),
        len(minimal.events),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--baseline-seeds", type=int, default=3)
    args = parser.parse_args()
    columns = ["logs", "max events", "median events", "logs/CPU-s", "logs/wall-s"]
    columns += ["serialise logs/CPU-s", "generate cost in serialisations"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for max_events in (40, 250):
        r = throughput(args.logs, max_events)
        cells = [args.logs, max_events, r["median_events"], f"{r['logs_per_cpu_s']:.0f}"]
        cells += [f"{r['logs_per_wall_s']:.0f}", f"{r['serialise_per_cpu_s']:.0f}", f"{r['ratio']:.1f}"]
        print("| " + " | ".join(map(str, cells)) + " |")
    print(f"\nsession_logs() under @given (generate phase only): {strategy_rate(300):.0f} examples/CPU-s")
    for name, strategy, seeds in (
        ("session_logs (st.lists)", session_logs(max_events=200, turns=(1, 6)), args.seeds),
        ("draw-a-length-and-loop", _loop_logs(200), args.baseline_seeds),
    ):
        runs = [shrink(strategy, seed) for seed in range(seeds)]
        cpu = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        print(f"\nshrink, {name}, {seeds} seeds: median {cpu:.2f} CPU-s ({wall:.2f} wall-s)")
        print("per seed (CPU-s, turns, events):")
        print("  " + "; ".join(f"{r[0]:.2f}s {r[2]}t {r[3]}e" for r in runs))


if __name__ == "__main__":
    main()
