"""Shrinking ends on small, readable logs.

A checker with a planted compound bug -- it crashes only on a log that has both
a reused step key and a step/start with a null turn -- is fuzzed with logs of up
to 200 events. For each of 10 seeds Hypothesis must shrink the failure to at
most 3 turns. The budget is counted in test-function calls, not seconds (tests
never assert wall-clock time); ``benchmarks/generators.py`` records the seconds.
"""

from __future__ import annotations

import random
import statistics

import pytest
from hypothesis import Phase, find, settings

from dshfuzz.generators import GeneratedLog, session_logs

SEEDS = range(10)
MAX_TURNS = 3
MEDIAN_CALLS = 600


def plant(events: list[dict]) -> list[dict] | None:
    """Both defects, where the log has room: the first multi-step turn's second step reuses step
    key 1, and the first step of a later turn gets ``turn: null``. ``None`` when there is no room."""
    turn_steps: dict[int, list[dict]] = {}
    for event in events:
        if event["type"] == "step/start":
            turn_steps.setdefault(event["data"]["turn"], []).append(event)
    reuse = next((t for t, steps in turn_steps.items() if len(steps) >= 2), None)
    later = next((t for t in turn_steps if reuse is not None and t > reuse), None)
    if later is None:
        return None
    planted = [dict(e) for e in events]
    for event in planted:
        if event["type"] != "step/start":
            continue
        if event["data"] == {"turn": reuse, "step": 2}:
            event["data"] = {"turn": reuse, "step": 1}
        elif event["data"] == {"turn": later, "step": 1}:
            event["data"] = {"turn": None, "step": 1}
    return planted


def buggy_checker_crashes(events: list[dict]) -> bool:
    """The planted bug: only the combination of both defects makes this checker fall over."""
    seen: set[tuple[object, object]] = set()
    reused = null_turn = False
    for event in events:
        if event["type"] == "step/start":
            key = (event["data"]["turn"], event["data"]["step"])
            reused |= key in seen
            null_turn |= key[0] is None
            seen.add(key)
    return reused and null_turn


def turns_of(log: GeneratedLog) -> int:
    return sum(e["type"] == "turn/start" for e in log.events)


@pytest.mark.slow
def test_a_compound_defect_shrinks_to_a_few_turns_for_every_seed() -> None:
    results = []
    for seed in SEEDS:
        calls = 0

        def fails(log: GeneratedLog) -> bool:
            nonlocal calls
            calls += 1
            planted = plant(log.events)
            return planted is not None and buggy_checker_crashes(planted)

        minimal = find(
            session_logs(max_events=200, turns=(1, 6)),
            fails,
            settings=settings(database=None, max_examples=2000, phases=[Phase.generate, Phase.shrink]),
            random=random.Random(seed),
        )
        results.append((seed, turns_of(minimal), len(minimal.events), calls, minimal))
    summary = "\n".join(f"seed {s}: {t} turns, {n} events, {c} calls" for s, t, n, c, _ in results)
    worst = max(results, key=lambda r: r[1])
    assert worst[1] <= MAX_TURNS, (
        f"{summary}\nlargest shrink (seed {worst[0]}):\n{worst[4].to_jsonl(pack=False).decode()}"
    )
    assert statistics.median(c for *_, c, _ in results) <= MEDIAN_CALLS, summary
