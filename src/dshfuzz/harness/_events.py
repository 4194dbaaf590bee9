"""The campaign's typed event stream.

A campaign never prints: it emits these events, and reporters (terminal, JSON,
Markdown, HTML) turn them into output. Every event is a frozen dataclass of plain
values, so it crosses process boundaries (workers -> coordinator) by pickling.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from dshfuzz.oracle.official import RefusalSite

    from ._off_path import OffPathLines

__all__ = [
    "CampaignEvent",
    "CampaignFinished",
    "CampaignStarted",
    "CheckerLinesMapped",
    "CoverageReached",
    "DisagreementFound",
    "ExampleJudged",
    "OfficialSitesMapped",
    "RoundCut",
    "TimeSpent",
    "WorkerFailed",
    "WorkerLost",
]

StopReason = Literal["budget", "examples", "findings", "interrupted", "error"]


@dataclass(frozen=True, slots=True)
class CampaignStarted:
    run_id: str
    checker: str
    seed: int
    workers: int
    budget_seconds: float | None
    budget_examples: int | None
    official: bool
    out: str
    started_at: float
    mutators: tuple[str, ...] = ()
    """The mutators the campaign draws from (its ``--mutators``, else the whole registry)."""
    cluster: str | None = None
    """The Dask scheduler the workers ran on (``--cluster``), ``None`` for local processes."""


@dataclass(frozen=True, slots=True)
class ExampleJudged:
    """One log judged by every judge. ``signatures`` are all disagreements it showed."""

    worker: int
    mutator: str | None
    events: int
    checker_rules: frozenset[str]
    expected_rules: frozenset[str]
    refusing_layers: frozenset[str]
    signatures: tuple[str, ...]
    at: float
    checker_seconds: float = 0.0
    """The checker under test's share of judging this log."""
    judge_seconds: float = 0.0
    """The whole judgement: the checker, the official layers and the reference oracle."""
    claimed_rules: frozenset[str] | None = None
    """The expected rules the checker answers for (its vocabulary's): what its recall is
    judged on. ``None``: every expected rule."""


@dataclass(frozen=True, slots=True)
class CoverageReached:
    """Coverage a worker's judgements reached first (the hunt's and the minimiser's alike):
    official refusal sites by id and official code units (official coverage on), and the
    checker's own lines as ``(file, line)`` (checker coverage on). ``mutator`` is the stratum of
    the log that reached them (``None``: a valid log)."""

    worker: int
    mutator: str | None
    at: float
    official_sites: tuple[str, ...] = ()
    official_code: int = 0
    checker_lines: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class CheckerLinesMapped:
    """The checker's own statements, per source file, that checker coverage measures (each
    worker sends them once, before it reports any line reached)."""

    worker: int
    statements: dict[str, tuple[int, ...]]
    off_path: tuple[OffPathLines, ...] = ()
    """The lines listed as off a campaign's path, with why (the built-in checker's, :mod:`._off_path`)."""


@dataclass(frozen=True, slots=True)
class OfficialSitesMapped:
    """The official refusal sites a worker's oracle measures (official coverage on): every
    ``throw`` of the packages a log passes through. Each worker sends it once, before its
    first :class:`ExampleJudged`; the sites are the same for every worker."""

    worker: int
    sites: tuple[RefusalSite, ...]
    granularity: str = "function"
    """What a unit of official code reached is: a ``function`` or a ``block``."""


MinimiseStage = Literal["found", "minimising", "minimal", "cut", "off"]
"""How far a finding's witness got: ``found`` as first judged (not yet minimised, or
waiting its turn), ``minimising`` the best so far while minimisation runs, ``minimal``
1-minimal, ``cut`` minimisation stopped at its time box or the campaign's end (best so
far), ``off`` minimisation switched off."""

SETTLED: frozenset[MinimiseStage] = frozenset({"minimal", "cut", "off"})
"""The stages after which a finding's witness no longer changes."""


@dataclass(frozen=True, slots=True)
class DisagreementFound:
    """A disagreement and its witness ``data``. A worker emits one as soon as it finds a
    new signature (``stage`` ``found``), then again as minimisation improves the witness;
    the coordinator keeps the first worker's finding of a signature and that worker's
    later witnesses. Every text is from the judgement of ``data`` itself.
    """

    signature: str
    kind: str
    layer: str | None
    rules: tuple[str, ...]
    mutator: str | None
    detail: str
    data: bytes
    compression: str
    format_version: Any
    events_found: int
    events_minimal: int
    checker_rules: tuple[str, ...]
    expected_rules: tuple[str, ...]
    oracle_refusing: tuple[str, ...] = ()
    official: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    at: float = 0.0
    worker: int = 0
    stage: MinimiseStage = "minimal"
    original: bytes | None = None
    """For a metamorphic finding, the log before its transform (``data`` is after it); its
    container is ``original_compression``."""
    original_compression: str = "none"
    shows: tuple[str, ...] = ()
    """Every reportable signature the judgement of ``data`` showed, its own included: two
    findings whose witnesses each show the other's signature are one cause (a log refused by
    three layers with three messages is one defect of the checker, not three)."""
    confirmed: bool | None = None
    """For a miss of declared rules, whether a second, independently drawn mutant of the same
    mutator reproduced it (``None``: a kind that needs no second mutant). An unconfirmed one is
    reported apart and never fails a campaign on its own."""
    confirmation: str = ""
    """What the second mutant was, or why none was asked."""


@dataclass(frozen=True, slots=True)
class RoundCut:
    """A round of ``stratum`` (a mutator, or ``None`` for valid logs) ended at its time cap
    after ``examples`` of its ``planned`` examples: its logs cost far more to judge than the
    campaign's typical log (a decompression bomb the official loader inflates whole)."""

    worker: int
    stratum: str | None
    examples: int
    planned: int
    seconds: float


@dataclass(frozen=True, slots=True)
class WorkerFailed:
    """A worker stopped on an error of dshfuzz itself (not of the checker under test)."""

    worker: int
    error: str


@dataclass(frozen=True, slots=True)
class WorkerLost:
    """A cluster worker went away (Dask reported it removed) while it ran the worker slots
    ``slots``: each is restarted on another worker at the round it was in, so the campaign
    loses at most that round per slot. Not an error of dshfuzz or of the checker."""

    worker: str
    """The Dask worker's address."""
    slots: tuple[int, ...]
    at: float


@dataclass(frozen=True, slots=True)
class TimeSpent:
    """Where a worker's time went since its previous report, in seconds per part:
    ``drawing`` (Hypothesis generating logs while exploring), ``mutating`` (editing them into
    the examples judged), each judge while exploring (``Judge.seconds``: checker, reference
    checker, official layers (the wait for them: they judge while the others run), reference
    oracle, files), ``shrinking`` and ``minimising`` (all of it, their judging included),
    and ``other`` (starting the judges, the worker's own bookkeeping). The parts of one
    worker add up to its wall time. ``official_server`` is not a part: the seconds the
    official server spent judging the logs explored, by its own clock, beside the worker."""

    worker: int
    seconds: dict[str, float]
    official_server: float = 0.0


def charge(parts: collections.Counter[str], part: str, seconds: float) -> None:
    """Add ``seconds`` to ``part``: the Counters that sum time per part hold float seconds."""
    parts[part] += seconds  # type: ignore[assignment]  # typeshed's Counter holds ints; Counter adds floats alike


@dataclass(frozen=True, slots=True)
class CampaignFinished:
    reason: StopReason
    examples: int
    elapsed: float
    finished_at: float


CampaignEvent = (
    CampaignStarted | ExampleJudged | DisagreementFound | RoundCut | TimeSpent | WorkerFailed | WorkerLost
    | OfficialSitesMapped | CheckerLinesMapped | CoverageReached | CampaignFinished
)
