"""Detection power (issue 6 item 7): a checker blind to one incident is caught by a
short campaign, in at least 19 of 20 seeds.

For each incident mutator the checker under test is the built-in one with every
rule the mutator declares switched off (``builtin:-S5,-S8`` for
``partial-coverage``), so it cannot see that incident at all. Each seed runs one
in-process campaign of at most 200 examples of the *default mix* (every mutator
and valid logs, as a user's campaign is: no campaign focused on the mutator), and
the seed catches the defect when the campaign reports a miss involving a
switched-off rule or a layer it maps to, and which the whole built-in checker does
not show on that log (``dshfuzz.harness._power.caught``).
The default mix suffices because the campaign's schedule gives every mutator a
round in its first cycle (192 examples for 54 mutators). Judges: the reference oracle always; the
official layers too where the rules are refused only by them.

``make test`` runs a rotating subset of mutators, chosen by ``DSHFUZZ_POWER_ROTATION``
or else the ISO week, named in each test id so that a red build reproduces with
``DSHFUZZ_POWER_ROTATION=<n>``; the ``nightly`` profile runs every mutator. The
same measurement for any mutators: ``benchmarks/detection_power.py --mutators ...``.
"""

from __future__ import annotations

import datetime
import os
import random
from collections import Counter

import pytest

from dshfuzz._pytest_plugin import profile_name
from dshfuzz.harness import CampaignConfig
from dshfuzz.harness._rounds import ROUND_EXAMPLES, round_settings
from dshfuzz.harness._worker import InProcess, run_worker
from dshfuzz.harness._power import crippled_checker, detection_trial, needs_official, shared_trials
from dshfuzz.mutators import MUTATORS

SEEDS = 20
REQUIRED = 19
EXAMPLES = 200
ROTATING = 2
"""Mutators per ``make test`` run: 20 campaigns cost 60 to 100 s of one core (the Node
server's share included), so two keep the file within about three minutes."""


def rotation_key() -> int:
    chosen = os.environ.get("DSHFUZZ_POWER_ROTATION")
    if chosen is not None:
        return int(chosen)
    year, week, _ = datetime.date.today().isocalendar()
    return year * 53 + week


def rotating_subset(key: int, names: list[str], size: int = ROTATING) -> list[str]:
    """``size`` mutators drawn by ``key``: consecutive keys draw disjoint sets while they last."""
    order = sorted(names)
    passes = -(-len(order) // size)
    random.Random(key // passes).shuffle(order)  # a fresh order for each pass through the list
    start = (key % passes) * size
    return [order[(start + i) % len(order)] for i in range(size)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "power_mutator" not in metafunc.fixturenames:
        return
    if profile_name(metafunc.config) == "nightly":
        metafunc.parametrize("power_mutator", sorted(MUTATORS))
        return
    key = rotation_key()
    chosen = rotating_subset(key, sorted(MUTATORS))
    metafunc.parametrize("power_mutator", [pytest.param(m, id=f"rotation{key}-{m}") for m in chosen])


@pytest.mark.slow
def test_a_checker_blind_to_an_incident_is_caught_by_a_short_campaign(power_mutator, request):
    oracle = request.getfixturevalue("official") if needs_official(power_mutator) else None
    trials = [detection_trial(power_mutator, seed, examples=EXAMPLES, official=oracle) for seed in range(SEEDS)]
    missed = [t.seed for t in trials if not t.caught]
    caught_by = Counter(t.signature for t in trials if t.caught)
    assert SEEDS - len(missed) >= REQUIRED, (
        f"{crippled_checker(power_mutator)} was caught in {SEEDS - len(missed)}/{SEEDS} campaigns of {EXAMPLES} "
        f"examples; missed seeds {missed}; caught by {dict(caught_by)}; reproduce with "
        f"benchmarks/detection_power.py --mutators {power_mutator} --seeds {SEEDS}"
    )


def test_rotating_subsets_cover_every_mutator_within_a_pass():
    names = sorted(MUTATORS)
    passes = -(-len(names) // ROTATING)
    start = 7 * passes
    seen = {m for key in range(start, start + passes) for m in rotating_subset(key, names)}
    assert seen == set(names)


def test_campaign_rounds_label_incident_classes_and_score_targets_in_hypothesis_statistics():
    """The labels Hypothesis reports (``event``) and the scores it optimises (``target``)
    reach its statistics from inside campaign rounds (run here on this thread), and the
    rounds let Hypothesis optimise those scores."""
    from hypothesis import Phase
    from hypothesis.statistics import collector, describe_statistics

    assert Phase.target in round_settings(ROUND_EXAMPLES).phases

    config = CampaignConfig(checker="builtin", seed=3, official=False, mutators=("orphan-tool-call",), valid_fraction=0)
    rounds: list[dict] = []
    with collector.with_value(rounds.append):
        run_worker(config, 0, lambda event: None, lambda: False, InProcess(budget=12))
    assert rounds, "no round reported statistics"
    for stats in rounds:
        text = describe_statistics(stats)
        assert "mutator: orphan-tool-call" in text, text
        assert set(stats["targets"]) == {"open tool calls", "zstd frames", "replace depth"}, stats.get("targets")


def test_trials_derived_from_one_campaign_of_the_whole_checker_are_the_separate_campaigns_trials():
    """What ``benchmarks/detection_power.py`` relies on to measure every mutator at once."""
    names = ["partial-coverage", "tool-result-rewrite", "seq-gap"]
    shared = shared_trials(names, 0, examples=60)
    for name in names:
        separate = detection_trial(name, 0, examples=60)
        assert shared[name] in (None, separate), f"{name}: shared {shared[name]}, separate {separate}"
    assert any(shared.values()), "every crippled campaign diverged: nothing was compared"
