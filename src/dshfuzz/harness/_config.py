"""What a campaign is asked to do: its configuration, its budget, and the limits derived from them.

Every other part of the campaign reads these and none writes them: a :class:`CampaignConfig` is
frozen and picklable, so a worker process or a cluster task gets the same copy the coordinator has.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dshfuzz.oracle.official import CoverageGranularity

__all__ = ["CampaignConfig", "CampaignSetupError", "default_workers", "parse_budget", "slot_share"]

SIBLINGS = 4
"""The most examples a campaign draws from one valid log (``_strategy.sibling_examples``):
drawing a log (and the logs a mutator's precondition rejects) is most of an example's
drawing cost, and each sibling costs one edit more."""

MINIMISE_FLOOR_SECONDS = 10.0
MINIMISE_SHARE = 0.05
"""A finding's shrinking and minimisation take at most the larger of the floor and this
share of a time budget (``--minimise-seconds`` overrides): a slow checker must not turn
one finding into the whole campaign."""


@dataclass(frozen=True, slots=True)
class CampaignConfig:
    """Everything a campaign run depends on; picklable, so workers get a copy.

    ``workers=0`` means no worker process: one worker on a thread of this process.
    ``shrink=False`` reports each finding as generated (Hypothesis does not shrink it),
    for runs that ask only whether a defect is found.
    """

    checker: str = "builtin"
    seed: int = 0
    workers: int = 1
    budget_seconds: float | None = 60.0
    budget_examples: int | None = None
    official: bool = True
    mutators: tuple[str, ...] | None = None
    valid_fraction: float = 0.15
    out: Path = Path("reports")
    run_id: str = field(default_factory=lambda: time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6])
    checker_timeout: float = 20.0
    minimise: bool = True
    shrink: bool = True
    stop_after_findings: int | None = None
    checker_rules: tuple[str, ...] | None = None
    checker_exits: tuple[tuple[int, str], ...] = ()
    """A command checker's own exit statuses and what they mean (``--checker-exit 4=findings``)."""
    checker_layers: tuple[str, ...] | None = None
    """The official layers the checker answers for (``--checker-layers``); ``None``: its own
    declaration (a ``serve:`` handshake's ``layers``), else every layer. A refusal only a
    layer outside them makes is ``out-of-scope``, never a miss."""
    minimise_seconds: float | None = None
    database: str | None = None
    """Where failing examples are kept for later campaigns (``_database``); ``None``: nowhere."""
    siblings: int = SIBLINGS
    """The most mutants drawn from one valid log (``_strategy.sibling_examples``); 1 draws a
    fresh log for every example. Valid rounds always do."""
    steer_official: bool = False
    """With official coverage on, wait for each family's official verdict instead of leaving it
    in flight, so that every family steers by the official sites it reached first (a family
    left in flight resolves after Hypothesis moved on)."""
    checker_coverage: bool = False
    """Measure the checker's own lines (in-process Python checkers: ``builtin``, ``py:``), list
    the unexercised ones in the reports, and steer generation toward lines no log ran."""
    official_coverage: CoverageGranularity | None = "function"
    """Measure which official refusal sites and how much official code (by ``function`` or by
    ``block``) the campaign's logs reach, in the oracle servers; report them and steer
    generation toward what no log reached before. ``None``: not measured. By function costs
    little (benchmarks/RESULTS.md), so it is on by default; by block slows the official code."""
    cluster: str | None = None
    """A Dask scheduler's address (``tcp://HOST:8786``), or ``local`` for a ``LocalCluster`` of
    ``workers`` processes started here: the workers run as tasks there (``_cluster``), one per
    worker slot, and ``workers=0`` means every thread the cluster offers. ``None``: local
    processes (multiprocessing), which needs no cluster package."""

    @property
    def run_dir(self) -> Path:
        return self.out / self.run_id


def parse_budget(text: str) -> tuple[float | None, int | None]:
    """``60s``, ``5m``, ``1h`` -> seconds; ``500`` or ``500examples`` -> examples."""
    t = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600}
    if t.endswith("examples"):
        return None, int(t[: -len("examples")])
    if t and t[-1] in units and t[:-1].replace(".", "", 1).isdigit():
        return float(t[:-1]) * units[t[-1]], None
    if t.isdigit():
        return None, int(t)
    raise ValueError(f"budget must look like 60s, 5m, 1h or 500examples, not {text!r}")


def slot_share(budget: int, slots: int, slot: int) -> int:
    """Slot ``slot``'s share of an example budget of ``budget`` logs split among ``slots``: the
    shares differ by at most one and add up to the budget. Each slot stops itself at its share,
    so a slot judges the same logs whatever its backend and however fast the stop would travel."""
    return budget // slots + (1 if slot < budget % slots else 0)


class CampaignSetupError(RuntimeError):
    """The campaign cannot start: one line saying what is wrong and how to fix it."""


def minimise_box(config: CampaignConfig) -> float | None:
    """The seconds one finding's shrinking and minimisation may take: ``minimise_seconds``
    when set, else the larger of ``MINIMISE_FLOOR_SECONDS`` and ``MINIMISE_SHARE`` of a time
    budget; no box on an example budget (its findings must not depend on the machine's load)."""
    if config.minimise_seconds is not None:
        return config.minimise_seconds
    if config.budget_seconds is None:
        return None
    return max(MINIMISE_FLOOR_SECONDS, MINIMISE_SHARE * config.budget_seconds)


def checker_kw(config: CampaignConfig) -> dict[str, Any]:
    """``load_checker``'s vocabulary and exit statuses, when the campaign declares them."""
    kw: dict[str, Any] = {} if config.checker_rules is None else {"rules": frozenset(config.checker_rules)}
    if config.checker_exits:
        kw["exits"] = dict(config.checker_exits)
    return kw


def planned_mutators(config: CampaignConfig) -> tuple[str, ...]:
    """The mutators the campaign draws from: its ``mutators``, else every campaign stratum."""
    if config.mutators is not None:
        return tuple(config.mutators)
    from ._strategy import campaign_strata

    return tuple(campaign_strata())


def default_workers() -> int:
    """Worker processes by default: one per core, at most eight."""
    return max(1, min(os.cpu_count() or 1, 8))
