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
from dataclasses import replace

import pytest
from hypothesis import Phase, find, settings

from dshfuzz.generators import GeneratedLog, generate, session_logs
from dshfuzz.harness import Example, Judge, load_checker, minimise
from dshfuzz.model import dumps, parse_log
from dshfuzz.mutators import MUTATORS, apply_seeded

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


@pytest.mark.slow
@pytest.mark.parametrize(
    # P5 too: seed 002's rule also refuses an orphan call, and a checker that refuses a log under
    # another id has not missed it (an attribution difference, not a defect to minimise)
    "mutator, switched_off", [("orphan-tool-call", {"P3", "W3", "P5"}), ("unparsable-tool-result", {"P4"})]
)
def test_a_defect_deep_in_a_long_log_minimises_to_a_few_events_with_the_campaigns_judge(
    mutator, switched_off
):
    """The campaign's own predicate (checker with the rule off, reference oracle; no Node)
    on a 40-turn log: the witness keeps the signature, has at most 12 events, and the
    candidates judged on the way add up to at most three times the log's bytes (the
    line-level ddmin this replaced judged 46-100 times them on these two cases)."""
    # Seed 8 since issue 32's vocabulary changed the generators' stream (seed 1's log no longer keeps an
    # answered call on the surface). The bound is one typical log's: over seeds 1-8 the judged bytes
    # run from 0.9 to 360 times the log's, before that change as after it (tail: a minimiser matter).
    log = next(generate(1, seed=8, turns=(40, 40), max_events=5000))
    mutant = apply_seeded(MUTATORS[mutator], log, 3, compression="zstd")
    example = Example(mutant.data, mutant.compression, mutant.mutator, frozenset(map(str, mutant.expects)))
    with Judge(load_checker("builtin:" + ",".join(f"-{r}" for r in sorted(switched_off)))) as judge:
        defects = [d for d in judge.judge(example).defects if d.layer != "expected"]
        assert defects, f"{mutator}: no layer refuses what the checker misses"
        signature = defects[0].signature
        campaign_predicate = judge.still_fails(defects[0], example)
        assert campaign_predicate is not None
        judged: list[int] = []

        def still_fails(candidate: Example) -> bool:
            judged.append(len(candidate.data))
            return campaign_predicate(candidate)

        minimal = replace(example, data=minimise(example, still_fails))
        final = judge.judge(minimal)
    witness = "\n".join(dumps(e.raw) for e in parse_log(minimal.data, compression="zstd").events)
    assert signature in {d.signature for d in final.disagreements}, witness
    assert final.events <= 12, f"{final.events} events left:\n{witness}"
    assert sum(judged) <= 3 * len(example.data), f"{len(judged)} calls judged {sum(judged)} bytes: {judged}"
