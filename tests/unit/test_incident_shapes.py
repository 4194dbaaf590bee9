"""A mutator's declared log shape (``@mutator(..., logs=LogShape(...))``) is what ``logs_for``
draws for it, and it is there so that the campaign's draws meet the mutator's precondition
instead of being rejected: each rejected draw wastes a whole log."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dshfuzz.mutators import MUTATORS, DrawAdapter, Inapplicable, LogShape, logs_for

SAMPLE = 100


def applicability(name: str) -> Counter[str]:
    """How many of a fixed derandomized sample of ``logs_for(name)`` logs the mutator applies to."""
    mutator, logs, seen = MUTATORS[name], logs_for(name, max_events=120), Counter[str]()

    @settings(max_examples=SAMPLE, database=None, derandomize=True, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        log = data.draw(logs)
        try:
            mutator.apply_or_raise(log, DrawAdapter(data.draw))
            seen["applied"] += 1
        except Inapplicable as why:
            seen[str(why)] += 1

    draw()
    return seen


@pytest.mark.parametrize(
    "name", ["compacted-orphan-tool-call", "partial-coverage", "tool-result-rewrite", "retry-compaction-relations"]
)
def test_logs_drawn_for_a_shaped_mutator_mostly_meet_its_precondition(name: str) -> None:
    seen = applicability(name)
    assert seen["applied"] >= 2 * SAMPLE // 3, seen


def test_every_registered_shape_builds_its_logs() -> None:
    """An unknown FeatureWeights name in a declared shape fails here (``logs_for`` applies it)."""
    for name, mutator in MUTATORS.items():
        if mutator.logs != LogShape():
            logs_for(name).validate()


def test_a_shape_names_at_least_one_turn() -> None:
    with pytest.raises(ValueError):
        LogShape(turns=(0, 2))
