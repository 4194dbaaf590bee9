"""The schedule's rounds, as one worker plays them: their seeds, sizes, time caps and priorities.

The order of strata comes from ``_strategy.schedule`` (and ``RepeatOnFreshCoverage``); this module
says how each round is played. A round's seed depends on the campaign's seed, the slot and the
round's number alone, so the same seed and slot count replay the same examples on any backend.
A round of a time-budgeted campaign is also capped in time (:func:`round_cap`); exploration keeps
priority over minimisation while some stratum has not had its first round (:class:`Exploration`).
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hypothesis import settings

__all__ = ["ROUND_EXAMPLES", "Exploration", "round_cap", "round_seed", "round_settings"]

ROUND_EXAMPLES = 200
"""The largest round; the schedule's rounds grow to it from ``FIRST_ROUND``."""

ROUND_FLOOR_SECONDS = 30.0
"""No round is cut before this: first-cycle rounds (3 examples) are never cut."""

ROUND_SLACK = 4.0
"""A round may take this many times what its examples cost at the recent median."""

EXPLORATION_MINIMISE_SHARE = 0.25
"""While strata remain unreached, minimisation takes at most this share of a worker's time."""

MINIMISE_SLICE_SECONDS = 1.0
"""A deferred minimisation resumes only with at least this much of the exploration allowance."""


def round_cap(size: int, recent_costs: list[float]) -> float:
    """The seconds a round of ``size`` examples may take, given recent judging costs."""
    if not recent_costs:
        return ROUND_FLOOR_SECONDS
    ordered = sorted(recent_costs)
    return max(ROUND_FLOOR_SECONDS, ROUND_SLACK * size * ordered[len(ordered) // 2])


def round_seed(seed: int, worker: int, round_no: int) -> int:
    """The seed of a slot's round: from the campaign's seed and the slot's number alone, so the
    same seed and slot count replay the same examples per slot, on processes or a cluster."""
    return random.Random(f"{seed}:{worker}:{round_no}").getrandbits(64)


def round_settings(examples: int, *, shrink: bool = True) -> settings:
    """One round's Hypothesis settings: no database (a seeded round keeps none; the corpus,
    and ``--database``'s saved witnesses, are the record), and ``Phase.target`` so that the
    round's ``target()`` scores steer generation (from ten examples on: Hypothesis
    optimises halfway through a round, and not before the tenth valid example)."""
    from hypothesis import HealthCheck, Phase, settings

    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.target, *([Phase.shrink] if shrink else [])],
        suppress_health_check=list(HealthCheck),
    )


class Exploration:
    """Exploration keeps priority: while some stratum has not had a round on this worker,
    shrinking and minimising take at most ``EXPLORATION_MINIMISE_SHARE`` of its time."""

    def __init__(self, strata: set[str | None]) -> None:
        self.unreached = strata
        self.started = time.monotonic()
        self.spent = 0.0

    def allowance(self) -> float | None:
        """Seconds minimisation may take now (``None``: no limit beyond each finding's box)."""
        if not self.unreached:
            return None
        return max(0.0, EXPLORATION_MINIMISE_SHARE * (time.monotonic() - self.started) - self.spent)

    def may_minimise(self) -> bool:
        """Whether a deferred minimisation may start now: with a slice worth starting."""
        allowance = self.allowance()
        return allowance is None or allowance >= MINIMISE_SLICE_SECONDS
