"""The differential campaign: generate, mutate, judge, shrink, minimise — in parallel.

Each worker runs rounds of :func:`hypothesis.find`, one per stratum of the
campaign's schedule (a mutator's mutants, or valid logs; see ``_strategy``), with
a condition that judges the example and is satisfied by a *new* checker defect.
Hypothesis then shrinks that example (plans shrink to small readable logs), the
delta-debugging minimiser makes it 1-minimal (each candidate judged only by the judges
the signature depends on, and required to still hold the defect, ``Judge.still_fails``;
the minimal log is judged by all of them once), and the worker emits a
:class:`DisagreementFound`. Every judged example is also emitted, so the
coordinator counts throughput and deduplicates signatures with counts.

The campaign never prints: :func:`run_campaign` yields the event stream and
reporters consume it. It stops cleanly at the budget or on Ctrl-C.

A round of a time-budgeted campaign also has a time cap: ``ROUND_SLACK`` times what its
examples would cost at the median judging time of the worker's recent examples, and
never under ``ROUND_FLOOR_SECONDS``. Without it one stratum of costly logs (the
official loader inflates a 64 MiB frame for every ``frame-over-limit`` mutant, about
3 s a log) takes a 200-example round of ten minutes, most of a campaign, to learn
little more than its first rounds did. A cut round is reported (:class:`RoundCut`).
Campaigns on an example budget are never cut, so their example sequence does not
depend on the machine's load.

The official layers run beside Python: a worker submits a family of logs to its Node
server and judges it with every other judge, then leaves the official verdicts in flight
while Hypothesis draws the next family (``Judge.submit``). A family whose other judges
already disagree in a new way is waited for, so that its finding shrinks in Hypothesis;
a finding only the official layers reveal arrives a family or more later and is
minimised by the delta-debugger alone. On an example budget exactly one family lags (the
example sequence stays independent of the machine's speed); on a time budget the queue
runs deeper (``MAX_LAG_LOGS``, ``MAX_LAG_SECONDS``) and a stop drops what it still holds.

Each round steers: ``target()`` scores hard shapes (open tool calls, zstd frames,
replace depth) and Hypothesis optimises them during generation, which it does only
with ``Phase.target`` enabled; ``event()`` labels each example's incident class in
the round's Hypothesis statistics.

``workers=0`` runs the one worker on a thread of the calling process, with an
exact example budget and optionally an already-running official oracle: what the
detection-power measurements run hundreds of times, where spawning a process and a
Node server per campaign would cost more than the campaign.
"""

from __future__ import annotations

import collections
import hashlib
import multiprocessing as mp
import os
import queue
import random
import shutil
import signal
import tempfile
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._classify import claimed_rules
from ._judges import BATCH_LOGS, PARSABLE_REPORT, CheckerUnderTest, CheckerVerdict
from ._witness import Cut as _Cut
from ._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    CheckerLinesMapped,
    CoverageReached,
    ExampleJudged,
    MinimiseStage,
    OfficialSitesMapped,
    RoundCut,
    StopReason,
    TimeSpent,
    WorkerFailed,
    charge,
)

if TYPE_CHECKING:
    import multiprocessing.process
    import multiprocessing.queues
    import multiprocessing.synchronize

    from hypothesis import settings
    from hypothesis.strategies import SearchStrategy

    from dshfuzz.oracle.official import CoverageGranularity, LayerVerdict, OfficialOracle

    from ._checker_coverage import CheckerCoverage, NodeCheckerCoverage
    from ._confirm import Confirmation

    from ._judge import Example, FreshCoverage, JudgedExample, PendingJudgement, Shape


__all__ = ["CampaignConfig", "parse_budget", "run_campaign"]

ROUND_EXAMPLES = 200
"""The largest round; the schedule's rounds grow to it from ``FIRST_ROUND``."""

SERVER = "official server"
"""The key under which a worker's judging counters carry the official server's own seconds."""

RECENT_LOGS = 200_000
"""A worker judges no log twice among its last this many (a digest each): Hypothesis draws
the same bytes from different choices (a round's simplest example, every cycle), and a
fuzzer's power is the distinct logs it judges."""

SIBLINGS = 4
"""The most examples a campaign draws from one valid log (``_strategy.sibling_examples``):
drawing a log (and the logs a mutator's precondition rejects) is most of an example's
drawing cost, and each sibling costs one edit more."""

ROUND_FLOOR_SECONDS = 30.0
"""No round is cut before this: first-cycle rounds (3 examples) are never cut."""

ROUND_SLACK = 4.0
"""A round may take this many times what its examples cost at the recent median."""

MINIMISE_FLOOR_SECONDS = 10.0
MINIMISE_SHARE = 0.05
"""A finding's shrinking and minimisation take at most the larger of the floor and this
share of a time budget (``--minimise-seconds`` overrides): a slow checker must not turn
one finding into the whole campaign."""

EXPLORATION_MINIMISE_SHARE = 0.25
"""While strata remain unreached, minimisation takes at most this share of a worker's time."""

MINIMISE_SLICE_SECONDS = 1.0
"""A deferred minimisation resumes only with at least this much of the exploration allowance."""

LEDGER_SECONDS = 1.0
"""A worker reports where its time went at most this often (and once at the end)."""

PROGRESS_SECONDS = 2.0
"""A minimisation sends its best witness so far at most this often: what a stopped
campaign reports."""


MAX_LAG_LOGS = 256
MAX_LAG_SECONDS = 5.0
"""At most this many logs, and about this much of the official server's time (by each
stratum's cost so far), wait for their official verdicts while the worker draws on; beyond
either the worker waits for the oldest. A judgement that must wait for the queue (shrinking,
minimising) drains it first, watching for the stop; a stop drops what is still queued."""

DRAIN_POLL_SECONDS = 0.002
"""How often a drain looks for the server's next replies and for the stop."""

SETTLED = frozenset({"minimal", "cut", "off"})
"""The stages after which a finding's witness no longer changes."""

STOP_GRACE_SECONDS = 3.0
"""After the budget ends or Ctrl-C, workers have this long to finish their judgement and
say they are done; then they are killed (with the checkers and servers they started)."""


class _Stop(BaseException):
    """Raised inside Hypothesis to end a round at once (BaseException escapes ``find``)."""


class _RoundOver(BaseException):
    """Raised inside Hypothesis when a hunting round reaches its time cap."""


class _RoundFull(BaseException):
    """A round judged its logs."""


class _Found(BaseException):
    """Raised inside Hypothesis when a batch of held-back logs holds a new finding."""


def round_cap(size: int, recent_costs: list[float]) -> float:
    """The seconds a round of ``size`` examples may take, given recent judging costs."""
    if not recent_costs:
        return ROUND_FLOOR_SECONDS
    ordered = sorted(recent_costs)
    return max(ROUND_FLOOR_SECONDS, ROUND_SLACK * size * ordered[len(ordered) // 2])


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


def _round_seed(seed: int, worker: int, round_no: int) -> int:
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


@dataclass(frozen=True, slots=True)
class _InProcess:
    """What an in-process worker shares with its caller (a worker process gets none of it).

    ``official`` is a running ``OfficialOracle`` to use instead of starting one;
    ``budget`` caps the examples the worker judges, so that the cap is exact and a
    finding within it is still shrunk and minimised; ``observe`` sees every example
    judged in the hunt, in order, on the worker's thread.
    """

    official: OfficialOracle | None = None
    budget: int | None = None
    observe: Callable[[JudgedExample], None] | None = None


class _Inbox(Protocol):
    """A worker's end of the coordinator's decisions: ``("claimed", signature, owner)``."""

    def get_nowait(self) -> tuple[str, str, int]: ...


def minimise_box(config: CampaignConfig) -> float | None:
    """The seconds one finding's shrinking and minimisation may take: ``minimise_seconds``
    when set, else the larger of ``MINIMISE_FLOOR_SECONDS`` and ``MINIMISE_SHARE`` of a time
    budget; no box on an example budget (its findings must not depend on the machine's load)."""
    if config.minimise_seconds is not None:
        return config.minimise_seconds
    if config.budget_seconds is None:
        return None
    return max(MINIMISE_FLOOR_SECONDS, MINIMISE_SHARE * config.budget_seconds)


@dataclass(slots=True)
class _Witness:
    """A signature this worker owns: its best witness so far and that witness's judgement."""

    signature: str
    best: Example
    judged: JudgedExample
    events_found: int
    left: float | None
    """Seconds left in the finding's box (``None``: no box)."""
    confirmation: Confirmation | None = None
    """For a miss of declared rules, what a second mutant said (``None``: not asked yet)."""

    @property
    def exhausted(self) -> bool:
        """Whether the box has no slice worth resuming left."""
        return self.left is not None and self.left < MINIMISE_SLICE_SECONDS

class _Claims:
    """The coordinator's decisions, as they reach this worker: which worker owns each
    signature found anywhere. A signature owned elsewhere is never hunted or minimised here."""

    def __init__(self, worker: int, inbox: _Inbox | None) -> None:
        self.worker = worker
        self.inbox = inbox
        self.owners: dict[str, int] = {}

    def _read(self) -> None:
        if self.inbox is None:
            return
        while True:
            try:
                _, signature, owner = self.inbox.get_nowait()
            except queue.Empty:
                return
            self.owners.setdefault(signature, owner)

    def known(self, signature: str) -> bool:
        self._read()
        return signature in self.owners

    def elsewhere(self, signature: str) -> bool:
        self._read()
        return self.owners.get(signature, self.worker) != self.worker


class _Exploration:
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


class _Recent:
    """The logs judged lately, by digest: the last ``limit`` of them (oldest forgotten first)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.digests: dict[bytes, None] = {}

    @staticmethod
    def _digest(data: bytes) -> bytes:
        return hashlib.blake2b(data, digest_size=16).digest()

    def __contains__(self, data: bytes) -> bool:
        return self._digest(data) in self.digests

    def update(self, logs: Iterable[bytes]) -> None:
        for data in logs:
            self.digests[self._digest(data)] = None
        while len(self.digests) > self.limit:
            del self.digests[next(iter(self.digests))]


class _Ledger:
    """Where one worker's time goes (:class:`TimeSpent`'s parts), sent as deltas at most
    every ``LEDGER_SECONDS`` and once at the end, when the residue is charged to ``other``
    so that the parts add up to the worker's wall time."""

    def __init__(self, worker: int, emit: Callable[[CampaignEvent], None]) -> None:
        self.worker = worker
        self.emit = emit
        self.began = self.last = time.monotonic()
        self.parts: collections.Counter[str] = collections.Counter()
        self.server = 0.0
        self.sent = 0.0

    def explored(self, wall: float, judging: collections.Counter[str]) -> None:
        """An exploration span of ``wall`` seconds, ``judging`` of them in the judges (and
        :data:`SERVER`: the official server's own seconds meanwhile, not the worker's)."""
        judging = collections.Counter(judging)
        self.server += judging.pop(SERVER, 0.0)
        self.parts.update(judging)
        charge(self.parts, "drawing", max(0.0, wall - sum(judging.values())))

    def add(self, part: str, seconds: float) -> None:
        charge(self.parts, part, seconds)

    def flush(self, *, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last < LEDGER_SECONDS:
            return
        if final:
            charge(self.parts, "other", max(0.0, (now - self.began) - self.sent - sum(self.parts.values())))
        if self.parts:
            self.sent += sum(self.parts.values())
            self.emit(TimeSpent(self.worker, {k: round(v, 6) for k, v in self.parts.items()}, round(self.server, 6)))
            self.parts.clear()
            self.server = 0.0
        self.last = now


class _LaggingVerdicts:
    """The official verdicts a worker has asked for and not yet counted: families of logs
    submitted to the official server (``Judge.submit``) whose verdicts lag behind the hunt.

    Why they lag: every other judge has spoken when ``Judge.submit`` returns, and the server
    judges beside Python, so Hypothesis draws the next family meanwhile. A family whose other
    judges already disagree in a way not yet found is not left behind (:meth:`leave`): its
    full verdict decides at once, so that a finding they can see still shrinks in Hypothesis.
    A finding only the official layers reveal arrives later, after its log left Hypothesis:
    it joins :attr:`late` and is minimised by the delta-debugger alone.

    Invariants:

    * first in, first out: families resolve in the order they were submitted (the server
      answers in order), so only the oldest is ever waited for or asked whether it is ready;
    * each family is counted (``record``) exactly once, when it resolves, or never, when
      abandoned: an abandoned family's logs count as never judged;
    * on an example budget exactly one family lags (the :meth:`settle` before each
      :meth:`leave` resolves every earlier one), so the example sequence does not depend on
      the machine's speed; on a time budget (``deep``) families queue up while the server
      catches up, so that a costly log (a zstd bomb) does not stall Python, until they exceed
      ``MAX_LAG_LOGS`` logs or ``MAX_LAG_SECONDS`` of the server's expected time (by each
      stratum's cost so far); then the oldest are waited for;
    * :meth:`drain` waits for every family, polling for the server's replies and for the
      stop; a stop abandons what is in flight rather than wait for the server.
    """

    def __init__(
        self,
        *,
        lags: bool,
        deep: bool,
        record: Callable[[list[Example], list[JudgedExample], float], list[_Witness]],
        known: Callable[[str], bool],
        should_stop: Callable[[], bool],
    ) -> None:
        self.lags = lags
        """Whether a family may be left in flight at all (else each is waited for at once)."""
        self.deep = lags and deep
        """Whether families queue up while the server catches up (a time budget), not one at a time."""
        self._record = record  # counts and emits each judged log; its fresh findings as witnesses
        self._known = known  # whether a signature is found already, here or by another worker
        self._should_stop = should_stop
        self._families: deque[tuple[tuple[Example, ...], PendingJudgement, float]] = deque()
        self.late: list[_Witness] = []
        """Fresh findings of families resolved after they left Hypothesis, not yet minimised."""
        self._waited_for: set[str] = set()  # provisional signatures already waited for once
        # the server's seconds per log, per stratum (a moving average): what the queue will cost it
        self._server_cost: dict[str | None, float] = {}

    @property
    def logs(self) -> int:
        """The logs in flight: an example budget counts them as judged already."""
        return sum(len(family) for family, _, _ in self._families)

    def leave(self, family: tuple[Example, ...], judgement: PendingJudgement, submitted: float) -> bool:
        """Leave ``family`` in flight (submitted at ``submitted``, monotonic) unless its full
        verdict must decide now; whether it was left."""
        if not self.lags or self._worth_waiting(judgement):
            return False
        self._families.append((family, judgement, time.monotonic() - submitted))
        return True

    def settle(self, *, wait: bool = False) -> None:
        """Resolve the families in flight that are due: count them, and add their fresh findings
        to :attr:`late`. Due: every one (``wait``, or one family's lag), else the oldest ones
        whose verdicts have arrived, and any beyond MAX_LAG_LOGS or MAX_LAG_SECONDS."""
        found: list[_Witness] = []
        while self._families and (
            wait or not self.deep or self._families[0][1].ready() or self.logs > MAX_LAG_LOGS
            or self._queued_seconds() > MAX_LAG_SECONDS
        ):
            family, judgement, seconds = self._families.popleft()
            before = time.monotonic()
            verdicts = judgement.result()
            self._learn_cost(family, judgement)
            found += self._record(list(family), verdicts, (seconds + time.monotonic() - before) / len(family))
        self.late.extend(found)

    def drain(self) -> bool:
        """Settle every family in flight before judging anything else (the server answers in
        order), watching for the stop as it waits; False when the campaign stopped instead."""
        while self._families:
            if self._should_stop():
                self.abandon()
                return False
            if self._families[0][1].ready():
                self.settle()
            else:
                time.sleep(DRAIN_POLL_SECONDS)
        return True

    def abandon(self) -> None:
        """A stopping campaign does not wait for the server: what it still judges is dropped."""
        while self._families:
            self._families.pop()[1].abandon()

    def take_late(self) -> list[_Witness]:
        """The late findings, handed over for minimisation (:attr:`late` is emptied)."""
        late, self.late = self.late, []
        return late

    def _worth_waiting(self, judgement: PendingJudgement) -> bool:
        """Whether the judges other than the official layers already disagree in a way not
        yet found (nor already waited for): then the family's full verdict decides at once."""
        suspects = {d.signature for judged in judgement.provisional() for d in judged.defects}
        suspects = {s for s in suspects - self._waited_for if not self._known(s)}
        self._waited_for.update(suspects)
        return bool(suspects)

    def _queued_seconds(self) -> float:
        """The server's expected seconds on the logs in flight, by their strata's costs so far."""
        costs = self._server_cost
        usual = sorted(costs.values())[len(costs) // 2] if costs else 0.0
        return sum(len(family) * costs.get(family[0].mutator, usual) for family, _, _ in self._families)

    def _learn_cost(self, family: tuple[Example, ...], judgement: PendingJudgement) -> None:
        per_log = judgement.server_seconds / len(family)
        known = self._server_cost.get(family[0].mutator)
        self._server_cost[family[0].mutator] = per_log if known is None else 0.8 * known + 0.2 * per_log


def _events_in(example: Example) -> int:
    from dshfuzz.model import parse_log

    try:
        return len(parse_log(example.data, compression=example.compression).events)
    except Exception:  # noqa: BLE001 - an unreadable witness has no events to count
        return 0


def _worker(
    config: CampaignConfig,
    worker: int,
    emit: Callable[[CampaignEvent], None],
    should_stop: Callable[[], bool],
    local: _InProcess = _InProcess(),
    inbox: _Inbox | None = None,
    *,
    resume_round: int = 1,
    on_round: Callable[[int], None] | None = None,
) -> None:
    """One worker's rounds, in a child process, on a thread (``workers=0``) or as a cluster task.

    ``resume_round`` starts at that round of the slot's schedule, exactly as the slot would
    have reached it (a slot restarted after its cluster worker was lost replays the round it
    was in, and skips the saved-witness replay it already did); ``on_round`` hears each
    round's number before it starts.

    A new signature is emitted the moment it is judged (stage ``found``), so the
    coordinator holds it whatever happens next; shrinking and minimisation then improve
    its witness within the finding's box, checking the stop event before every judgement.
    """
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    from ._confirm import Confirmation, better_witness, confirm_expected_miss, needs_confirmation
    from ._judge import Judge
    from ._judges import BatchCommandChecker, BuiltinChecker, CheckerPool, load_checker
    from ._strategy import VALID, RepeatOnFreshCoverage, schedule, sibling_examples
    from ._database import example_database, save_witness, saved_witnesses
    from ._witness import minimise_finding

    ledger = _Ledger(worker, emit)  # from here on: starting the judges is the worker's time too
    database = example_database(config.database, check=False) if config.database is not None else None
    checker = load_checker(config.checker, timeout=config.checker_timeout, **_checker_kw(config))
    layers = None if config.checker_layers is None else frozenset(config.checker_layers)
    # the built-in checker is the reference for seqs; with rules switched off it reports the same seqs for the rest
    reference = None if isinstance(checker, BuiltinChecker) else BuiltinChecker()
    official = local.official if config.official else None
    official_cm = _official(coverage=config.official_coverage) if config.official and official is None else None
    if official_cm is not None:
        official = official_cm.__enter__()
    if official is not None and official.coverage:
        emit(OfficialSitesMapped(worker, official.refusal_sites(), official.coverage))
    coverage_scratch = Path(tempfile.mkdtemp(prefix="dshfuzz-checker-coverage-")) if config.checker_coverage else None
    checker_coverage = None if coverage_scratch is None else _checker_coverage(checker, coverage_scratch)
    if checker_coverage is not None:
        emit(CheckerLinesMapped(worker, dict(checker_coverage.statements())))
    unreported: list[Callable[[], list[FreshCoverage]]] = []  # the judge's, once it runs

    def report_coverage() -> None:
        """Emit the coverage every judgement so far reached first, one event per stratum."""
        if not unreported:
            return
        merged: dict[str | None, list[FreshCoverage]] = {}
        for fresh in unreported[0]():
            merged.setdefault(fresh.mutator, []).append(fresh)
        for mutator, parts in merged.items():
            reached = CoverageReached(
                worker, mutator, time.time(),
                tuple(site for p in parts for site in p.official_sites), sum(p.official_code for p in parts),
                tuple(line for p in parts for line in p.checker_lines),
            )
            rounds.credit(mutator, len(reached.official_sites) + reached.official_code + len(reached.checker_lines))
            emit(reached)
    claims = _Claims(worker, inbox)
    # a batch checker is asked about several logs at once: each Hypothesis example is a list of them
    batch_logs = BATCH_LOGS if isinstance(checker, BatchCommandChecker) else 1
    seen: set[str] = set()

    def known(signature: str) -> bool:
        """Whether ``signature`` is found already, here or by another worker."""
        return signature in seen or claims.known(signature)

    hunted = 0
    costs: deque[float] = deque(maxlen=256)
    capped = config.budget_seconds is not None and local.budget is None
    box = minimise_box(config) if local.budget is None else None
    strata: set[str | None] = set(_planned_mutators(config))
    if config.valid_fraction > 0 or not strata:
        strata.add(VALID)
    exploring = _Exploration(strata)
    pending: deque[_Witness] = deque()
    # round numbers start at 1: "round 0" seeds the order of the strata
    rounds = RepeatOnFreshCoverage(schedule(config.mutators, valid_fraction=config.valid_fraction,
                                            seed=_round_seed(config.seed, worker, 0), max_round=ROUND_EXAMPLES), strata)
    strategies: dict[str | None, SearchStrategy[tuple[Example, ...]]] = {}
    judged_logs = _Recent(RECENT_LOGS)
    drawn: collections.defaultdict[str | None, tuple[int, int]] = collections.defaultdict(lambda: (0, 0))

    def families_for(stratum: str | None, size: int) -> int:
        """The Hypothesis examples a round of ``size`` logs asks for: ``size`` over the new logs a
        family of the stratum brought so far, so that the round ends as Hypothesis ends it (its
        statistics reported, its targets optimised halfway) about when it has judged ``size``."""
        families, logs = drawn[stratum]
        per_family = logs / families if families else 1.0
        return max(1, min(2 * size, int(size / max(per_family, 0.5))))

    edits: collections.Counter[str] = collections.Counter()  # seconds the strategies spent editing drawn logs

    def spent_so_far() -> collections.Counter[str]:
        """Seconds so far per judge, and mutating: the parts of exploring that are not drawing;
        and (:data:`SERVER`) the official server's own, which ran beside them."""
        return collections.Counter(judge.seconds) + edits + collections.Counter({SERVER: judge.server_seconds})

    siblings = max(1, config.siblings)

    def announce(witness: _Witness, stage: MinimiseStage) -> None:
        judged = witness.judged
        defect = next(d for d in judged.disagreements if d.signature == witness.signature)
        example = judged.example
        confirmation = witness.confirmation
        if confirmation is None and needs_confirmation(defect):
            confirmation = Confirmation(False, "not tried: the campaign ended first")
        emit(
            DisagreementFound(
                signature=witness.signature,
                kind=defect.kind,
                layer=defect.layer,
                rules=defect.rules,
                mutator=example.mutator,
                detail=defect.detail,
                data=example.data,
                compression=example.compression,
                format_version=example.format_version,
                events_found=witness.events_found,
                events_minimal=judged.events or _events_in(example),
                checker_rules=tuple(sorted({f.rule for f in judged.verdict.findings})),
                expected_rules=tuple(sorted(example.expects)),
                oracle_refusing=tuple(sorted(judged.truth.oracle_refusing)),
                official={k: _verdict_json(v) for k, v in judged.official.items()},
                seed=config.seed,
                at=time.time(),
                worker=worker,
                stage=stage,
                original=example.original if defect.kind == "metamorphic" else None,
                original_compression=example.original_compression,
                shows=tuple(sorted({d.signature for d in judged.defects})),
                confirmed=None if confirmation is None else confirmation.confirmed,
                confirmation="" if confirmation is None else confirmation.detail,
            )
        )
        if database is not None and stage in SETTLED:
            save_witness(database, example)

    def cut_check(witness: _Witness, deadline: float | None) -> None:
        if should_stop() or claims.elsewhere(witness.signature) or (deadline is not None and time.monotonic() > deadline):
            raise _Cut

    def deadline_for(witness: _Witness) -> float | None:
        limits = [x for x in (witness.left, exploring.allowance()) if x is not None]
        return time.monotonic() + min(limits) if limits else None

    def spend(witness: _Witness, began: float) -> None:
        took = time.monotonic() - began
        exploring.spent += took
        if witness.left is not None:
            witness.left = max(0.0, witness.left - took)

    def settle(witness: _Witness, judge: Judge) -> None:
        """After a cut: drop a signature given to another worker; keep a witness whose box has
        time left for later (exploration came first); else its best so far is the finding (a
        miss of declared rules confirmed first, unless the campaign is stopping)."""
        if claims.elsewhere(witness.signature):
            return
        if should_stop() or witness.exhausted:
            if not should_stop():
                confirm(witness, judge)
            announce(witness, "cut")
        else:
            pending.append(witness)

    def polish(witness: _Witness, judge: Judge) -> None:
        """Minimise ``witness`` within its box; announce the result (or the best so far)."""
        began = time.monotonic()
        try:
            minimise_now(witness, judge)
        finally:
            ledger.add("minimising", time.monotonic() - began)

    def confirm(witness: _Witness, judge: Judge) -> None:
        """Ask a second mutant about a miss of declared rules, once. Not within the finding's box:
        it costs one question to the checker (the built-in checker picks the mutant), and a miss
        no one confirmed fails no campaign. Its time is the finding's, charged as minimising."""
        defect = next(d for d in witness.judged.disagreements if d.signature == witness.signature)
        mutator = witness.best.mutator
        if witness.confirmation is not None or not needs_confirmation(defect) or mutator is None:
            return
        witness.confirmation = confirmation = confirm_expected_miss(
            judge, defect, mutator, witness.best, seed=config.seed, interrupted=should_stop,
        )
        better = better_witness(judge, defect, witness.best, confirmation)
        if better is not None:
            witness.best, witness.judged = better.example, better

    def minimise_now(witness: _Witness, judge: Judge) -> None:
        confirm(witness, judge)
        if not config.minimise:
            announce(witness, "off")
            return
        began = last_shown = time.monotonic()

        def on_better(candidate: Example, judged: JudgedExample) -> None:
            nonlocal last_shown
            witness.best, witness.judged = candidate, judged
            if time.monotonic() - last_shown >= PROGRESS_SECONDS:
                last_shown = time.monotonic()
                announce(witness, "minimising")

        outcome = minimise_finding(
            judge, witness.signature, witness.best, witness.judged,
            deadline=deadline_for(witness),
            interrupted=lambda: should_stop() or claims.elsewhere(witness.signature),
            on_better=on_better,
        )
        spend(witness, began)
        witness.best, witness.judged = outcome.example, outcome.judged
        if outcome.stage == "cut":
            settle(witness, judge)
        else:
            announce(witness, outcome.stage)

    def record(
        batch: list[Example], verdicts: list[JudgedExample], cost: float, *, every: bool = False
    ) -> list[_Witness]:
        """Count and emit each judged example; the first fresh defect among them as a witness
        (``every``: a witness for each fresh signature, first log first)."""
        nonlocal hunted
        witnesses: list[_Witness] = []
        for example, judged in zip(batch, verdicts):
            costs.append(cost)
            hunted += 1
            if local.observe is not None:
                local.observe(judged)
            emit(
                ExampleJudged(
                    worker,
                    example.mutator,
                    judged.events,
                    frozenset(f.rule for f in judged.verdict.findings),
                    example.expects,
                    judged.truth.refusing,
                    tuple(d.signature for d in judged.disagreements),
                    time.time(),
                    judged.checker_seconds,
                    cost,
                    claimed_rules(example.expects, judged.vocabulary),
                )
            )
            if witnesses and not every:
                continue
            for defect in judged.defects:
                if known(defect.signature):
                    continue
                seen.add(defect.signature)
                witnesses.append(_Witness(defect.signature, example, judged, judged.events, box))
                announce(witnesses[-1], "found")
                if not every:
                    break
        report_coverage()
        return witnesses

    def judged_batch(judge: Judge, batch: list[Example]) -> list[_Witness]:
        before = time.monotonic()
        verdicts = judge.judge_many(batch)
        return record(batch, verdicts, (time.monotonic() - before) / len(batch), every=True)

    def polish_together(witnesses: list[_Witness], judge: Judge) -> None:
        """Minimise ``witnesses`` at once, each on a thread of its own, their questions to a
        batch checker pooled into shared invocations (one process start for all of them);
        any other checker minimises them one after another."""
        if batch_logs <= 1 or len(witnesses) < 2:
            for witness in witnesses:
                polish(witness, judge)
            return
        pool = CheckerPool(checker, len(witnesses))
        failures: list[BaseException] = []

        def minimise_one(number: int, witness: _Witness) -> None:
            try:
                with Judge(pool.member(number), official=official, reference=reference,
                           batch_width=batch_logs, layers=layers) as own:
                    minimise_now(witness, own)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the worker's thread below
                failures.append(exc)
            finally:
                pool.leave()

        began = time.monotonic()
        threads = [threading.Thread(target=minimise_one, args=(n, w), daemon=True) for n, w in enumerate(witnesses)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        ledger.add("minimising", time.monotonic() - began)
        if failures:
            raise failures[0]

    def adopt(witnesses: list[_Witness], judge: Judge) -> None:
        """New findings after their shrink (if any): minimise them now, or later when exploration comes first."""
        mine = [w for w in witnesses if not claims.elsewhere(w.signature)]
        if config.minimise and not exploring.may_minimise():
            pending.extend(mine)
            return
        polish_together(mine, judge)

    # a batch checker's logs wait here until there are BATCH_LOGS of them (one process start)
    held_back: list[Example] = []

    # a batch checker's logs are judged together (held_back), never left in flight one family at a time
    lagging = _LaggingVerdicts(
        # a family steers by the official sites it reached only when its verdict decides at once
        lags=batch_logs == 1 and official is not None and not (config.steer_official and official.coverage),
        deep=capped,
        record=lambda batch, verdicts, cost: record(batch, verdicts, cost, every=True),
        known=known,
        should_stop=should_stop,
    )

    try:
        with Judge(checker, official=official, reference=reference, layers=layers,
                   checker_coverage=checker_coverage) as judge:
            unreported.append(judge.unreported_coverage)
            round_no = 0
            budget = local.budget
            for _ in range(resume_round - 1):  # a restarted slot: its earlier rounds are done
                round_no += 1
                exploring.unreached.discard(next(rounds)[0])
            if database is not None and resume_round <= 1:  # what failed before, here or elsewhere, comes first
                replay = [e for i, e in enumerate(saved_witnesses(database)) if i % max(1, config.workers) == worker]
                for at in range(0, len(replay), batch_logs):
                    if should_stop() or (budget is not None and hunted >= budget):
                        break
                    adopt(judged_batch(judge, replay[at : at + batch_logs]), judge)
            while not should_stop() and (budget is None or hunted + len(held_back) < budget):
                # judging anything now waits for the queue: drain it only when something will be judged
                if (lagging.late or pending) and exploring.may_minimise() and not lagging.drain():
                    break
                if lagging.late:  # found one family late, after the log had left Hypothesis: minimised alone
                    adopt(lagging.take_late(), judge)
                while pending and not should_stop() and exploring.may_minimise():
                    if batch_logs > 1:  # every deferred finding at once: their questions share invocations
                        deferred = list(pending)
                        pending.clear()
                        polish_together(deferred, judge)
                    else:
                        polish(pending.popleft(), judge)
                round_no += 1
                if on_round is not None:
                    on_round(round_no)
                stratum, size = next(rounds)
                exploring.unreached.discard(stratum)
                if stratum not in strategies:
                    # a valid log's siblings are re-encodings of it: valid rounds draw a fresh log each time
                    strategies[stratum] = sibling_examples(stratum, 1 if stratum is VALID else siblings, timing=edits)
                hunt: dict[str, _Witness] = {}
                held: dict[bytes, JudgedExample] = {}  # candidates that kept the hunted signature
                lost: set[bytes] = set()  # candidates judged without it
                started, cap = time.monotonic(), round_cap(size, list(costs)) if capped else None
                shrink_deadline: list[float | None] = [None]
                in_round = 0
                batched: list[_Witness] = []
                # when the round's finding was judged: exploration ends there and shrinking begins
                found_at: list[tuple[float, collections.Counter[str]]] = []

                def kept(witness: _Witness, family: tuple[Example, ...]) -> bool:
                    """Shrinking: whether a sibling of ``family`` still shows the hunted signature;
                    siblings judged before answer from memory, the others are judged in order."""
                    known = [e for e in family if e.data in held]
                    if not known:
                        for example in family:
                            if example.data in lost:
                                continue
                            judged = judge.judge(example)
                            if witness.signature in {d.signature for d in judged.disagreements}:
                                held[example.data] = judged
                                known.append(example)
                                break
                            lost.add(example.data)
                    for example in known:
                        if len(example.data) < len(witness.best.data):
                            witness.best, witness.judged = example, held[example.data]
                    return bool(known)

                def condition(family: tuple[Example, ...]) -> bool:
                    nonlocal in_round
                    if hunt:  # shrinking: every candidate judged in full, the best so far kept
                        witness = next(iter(hunt.values()))
                        cut_check(witness, shrink_deadline[0])
                        return kept(witness, family)
                    if should_stop() or (budget is not None and hunted + len(held_back) + lagging.logs >= budget):
                        raise _Stop
                    if cap is not None and time.monotonic() - started > cap:
                        raise _RoundOver
                    if in_round >= size:  # more families than the round's estimate (families_for) asked for
                        raise _RoundFull
                    # a log judged before is not judged again: the judges are deterministic
                    family = tuple(e for e in family if e.data not in judged_logs)
                    drawn[stratum] = (drawn[stratum][0] + 1, drawn[stratum][1] + len(family))
                    if not family:
                        return False
                    # a round and the example budget count logs, whatever the families' sizes
                    family = family[: size - in_round]
                    if budget is not None:
                        family = family[: budget - hunted - len(held_back) - lagging.logs]
                    judged_logs.update(e.data for e in family)
                    in_round += len(family)
                    if batch_logs > 1:
                        _steer_unjudged(family)
                        held_back.extend(family)
                        if len(held_back) < batch_logs:
                            return False
                        witnesses = judged_batch(judge, held_back[:])
                        held_back.clear()
                        if witnesses:
                            batched.extend(witnesses)
                            raise _Found
                        return False
                    before = time.monotonic()
                    judgement = judge.submit(family)
                    _steer(family, judgement.shapes)
                    if checker_coverage is not None:
                        _steer_checker(judgement.checker_lines)
                    lagging.settle()
                    if lagging.leave(family, judgement, before):
                        return False  # the server judges this family while Hypothesis draws the next
                    if not lagging.drain():
                        judgement.abandon()
                        raise _Stop
                    verdicts = judgement.result()
                    if official is not None and official.coverage:
                        _steer_official(verdicts)
                    fresh = record(list(family), verdicts, (time.monotonic() - before) / len(family))
                    if not fresh:
                        return False
                    witness = fresh[0]
                    hunt[witness.signature] = witness
                    held[witness.best.data] = witness.judged
                    shrink_deadline[0] = deadline_for(witness) if config.shrink else None
                    found_at.append((time.monotonic(), spent_so_far()))
                    return True

                def close_round(began: float, judged_before: collections.Counter[str]) -> None:
                    ended = time.monotonic()
                    if found_at:
                        at, judged_then = found_at[0]
                        ledger.explored(at - began, judged_then - judged_before)
                        ledger.add("shrinking", ended - at)
                    else:
                        ledger.explored(ended - began, spent_so_far() - judged_before)

                shrink_began = time.monotonic()
                judged_before = spent_so_far()
                try:
                    try:
                        found = find(strategies[stratum], condition,
                                     settings=round_settings(families_for(stratum, size), shrink=config.shrink),
                                     random=random.Random(_round_seed(config.seed, worker, round_no)))
                    finally:
                        lagging.settle()
                        close_round(shrink_began, judged_before)
                        ledger.flush()
                except (NoSuchExample, Unsatisfiable, _RoundFull):  # also: filters rejected every draw this round
                    continue
                except _Found:  # drawn apart, a batch's logs have no shrink of their own: minimise
                    adopt(batched, judge)
                    continue
                except _RoundOver:
                    emit(RoundCut(worker, stratum, in_round, size, round(time.monotonic() - started, 3)))
                    continue
                except _Stop:
                    if held_back and not should_stop():  # the example budget: judge what it counted
                        witnesses = judged_batch(judge, held_back[:])
                        held_back.clear()
                        adopt(witnesses, judge)
                    if lagging.late and not should_stop():
                        adopt(lagging.take_late(), judge)
                    break
                except _Cut:
                    witness = next(iter(hunt.values()))
                    spend(witness, shrink_began)
                    settle(witness, judge)
                    if should_stop():
                        break
                    continue
                witness = next(iter(hunt.values()))
                spend(witness, shrink_began)
                chosen = [e for e in found if e.data in held]  # Hypothesis' own choice of the smallest
                if chosen:
                    best = min(chosen, key=lambda e: len(e.data))
                    witness.best, witness.judged = best, held[best.data]
                if claims.elsewhere(witness.signature):
                    continue
                if config.shrink and not exploring.may_minimise():
                    pending.append(witness)
                    continue
                polish(witness, judge)
            if should_stop():
                lagging.abandon()
            else:
                lagging.settle(wait=True)
            for witness in [*pending, *lagging.late]:  # their best so far, for the report
                if not should_stop():  # an example budget ran out: a miss is still confirmed
                    began = time.monotonic()
                    confirm(witness, judge)
                    ledger.add("minimising", time.monotonic() - began)
                announce(witness, "cut")
    except _Stop:
        pass
    finally:
        lagging.abandon()  # never wait past the budget for logs no one will count
        if checker_coverage is not None:
            checker.close()  # a serve: checker writes its coverage as it exits
            lines = checker_coverage.fresh()
            if lines:
                emit(CoverageReached(worker, None, time.time(), checker_lines=lines))
        if coverage_scratch is not None:
            shutil.rmtree(coverage_scratch, ignore_errors=True)
        report_coverage()
        if official_cm is not None:
            official_cm.__exit__(None, None, None)
        ledger.flush(final=True)


def _checker_kw(config: CampaignConfig) -> dict[str, Any]:
    """``load_checker``'s vocabulary and exit statuses, when the campaign declares them."""
    kw: dict[str, Any] = {} if config.checker_rules is None else {"rules": frozenset(config.checker_rules)}
    if config.checker_exits:
        kw["exits"] = dict(config.checker_exits)
    return kw


def _steer(family: Sequence[Example], shapes: Sequence[Shape]) -> None:
    """Label the incident class and steer generation towards hard shapes (a family scores
    its hardest sibling: Hypothesis takes one score per label and example)."""
    from hypothesis import event, target

    event(f"mutator: {family[0].mutator or 'valid'}")
    target(float(max(s.open_tool_calls for s in shapes)), label="open tool calls")
    target(float(max(s.frames for s in shapes)), label="zstd frames")
    target(float(max(s.replaces for s in shapes)), label="replace depth")


def _steer_official(verdicts: Sequence[JudgedExample]) -> None:
    """Steer generation towards official code no log reached before: the family scores the
    refusal sites and official code its logs reached first, and each new site is an ``event()``.
    Only a family whose official verdict decides at once can: a family left in flight is
    resolved after Hypothesis moved on (its coverage is still counted and reported)."""
    from hypothesis import event, target

    sites = [site for v in verdicts if v.reached is not None for site in v.reached.sites]
    for site in sites:
        event(f"official site reached first: {site}")
    target(float(len(sites)), label="official sites reached first")
    target(float(sum(v.reached.code for v in verdicts if v.reached is not None)), label="official code reached first")


def _steer_checker(lines: Sequence[tuple[str, int]]) -> None:
    """Steer generation towards the checker's own lines no log ran before (known as soon as the
    checker judged the family): the family scores them, each file with new lines an ``event()``."""
    from hypothesis import event, target

    for file in dict.fromkeys(f for f, _ in lines):
        event(f"checker lines reached first in {file}")
    target(float(len(lines)), label="checker lines reached first")


def _checker_coverage(checker: CheckerUnderTest, scratch: Path) -> CheckerCoverage | NodeCheckerCoverage:
    """The checker's coverage; a Node checker's processes are told where to write theirs."""
    from ._checker_coverage import NodeCheckerCoverage, coverage_for

    coverage = coverage_for(checker, scratch)
    if isinstance(coverage, str):  # preflight said so already, for campaigns that run it
        raise RuntimeError(coverage)
    if isinstance(coverage, NodeCheckerCoverage):
        setattr(checker, "env", {**os.environ, **coverage.env})  # the cmd: and serve: checkers' field
    return coverage


def _steer_unjudged(family: Sequence[Example]) -> None:
    """:func:`_steer` for logs held back for a batch: their shapes read now, their verdicts later."""
    from ._judge import shape_of

    _steer(family, [shape_of(e) for e in family])


def _official(*, coverage: CoverageGranularity | None = None) -> OfficialOracle:
    from dshfuzz.oracle.official import OfficialOracle, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"official layers unavailable: {reason} (or run with --no-official)")
    return OfficialOracle(coverage=coverage)


def _verdict_json(verdict: LayerVerdict) -> dict[str, Any]:
    if verdict.ok:
        from ._judge import loaded_events

        count = loaded_events({verdict.layer: verdict})  # the loader's: what a replay holds a count to
        return {"ok": True} if count is None else {"ok": True, "events": count}
    error = verdict.error
    assert error is not None, "a layer that refuses names its error"
    return {"ok": False, "error": {"name": error.name, "message": error.message, "seq": error.seq}}


def _guarded(
    config: CampaignConfig,
    worker: int,
    put: Callable[[object], None],
    should_stop: Callable[[], bool],
    local: _InProcess = _InProcess(),
    inbox: _Inbox | None = None,
    **resume: Any,
) -> None:
    """Run a worker; report its death to the coordinator, and always say it is done."""
    try:
        _worker(config, worker, put, should_stop, local, inbox, **resume)
    except BaseException:  # noqa: BLE001 - report any worker death to the coordinator
        put(WorkerFailed(worker, traceback.format_exc(limit=10)))
    finally:
        put(("done", worker))


def _child_main(
    config: CampaignConfig,
    worker: int,
    events: multiprocessing.queues.Queue[object],
    stop: multiprocessing.synchronize.Event,
    inbox: multiprocessing.queues.Queue[tuple[str, str, int]],
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle: it stops us cleanly
    if hasattr(os, "setpgid"):
        os.setpgid(0, 0)  # our own group: the coordinator can end us with every checker and server we started
    parent = os.getppid()

    def should_stop() -> bool:
        return stop.is_set() or os.getppid() != parent  # an orphan stops: its coordinator is gone

    _guarded(config, worker, events.put, should_stop, inbox=inbox)


class CampaignSetupError(RuntimeError):
    """The campaign cannot start: one line saying what is wrong and how to fix it."""


def preflight(config: CampaignConfig) -> None:
    """Everything a campaign needs, checked before its first example: the mutator names,
    the official layers when they judge, the report folder, and the checker itself, run
    once on a valid log (a spec it cannot run, or output it cannot parse, stops here).
    Raises :class:`CampaignSetupError`."""
    from ._judges import CheckerSpecError, load_checker
    from ._strategy import unknown_mutators

    if config.mutators is not None:
        unknown = unknown_mutators(config.mutators)
        if unknown:
            raise CampaignSetupError(
                f"unknown mutator{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; `dshfuzz mutators` lists them"
            )
    if config.official:
        from dshfuzz.oracle.official import unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            fix = "pass --no-official" if "make setup" in reason else "run `make setup`, or pass --no-official"
            raise CampaignSetupError(f"official layers unavailable: {reason}; {fix}")
    if config.database is not None:
        from ._database import DatabaseError, example_database

        try:
            example_database(config.database)
        except DatabaseError as exc:
            raise CampaignSetupError(str(exc)) from None
    if config.checker_coverage:
        from importlib.util import find_spec

        if find_spec("coverage") is None:
            raise CampaignSetupError("checker coverage needs coverage.py: pip install 'dshfuzz[coverage]'")
    try:
        config.run_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CampaignSetupError(f"cannot create the report folder {config.run_dir.parent}: {exc.strerror or exc}") from None
    try:
        with load_checker(config.checker, timeout=config.checker_timeout, **_checker_kw(config)) as checker:
            start = getattr(checker, "start", None)  # a serve: checker's handshake fails here, in one line
            if start is not None:
                start()
            verdict = _probe(checker)
            if config.checker_coverage:
                from ._checker_coverage import coverage_for

                with tempfile.TemporaryDirectory(prefix="dshfuzz-coverage-probe-") as scratch:
                    coverage = coverage_for(checker, Path(scratch))
                if isinstance(coverage, str):
                    raise CampaignSetupError(f"cannot measure checker coverage: {coverage}")
    except CheckerSpecError as exc:
        raise CampaignSetupError(str(exc)) from None
    if verdict.failure is not None:
        lines = verdict.detail.strip().splitlines() or [""]
        # a status that came with a readable report: its first line names the flag that maps it
        detail = (lines[0] if PARSABLE_REPORT in lines[0] else lines[-1])[:200]
        how = "" if PARSABLE_REPORT in detail else "; a checker prints JSON with a 'findings' list"
        raise CampaignSetupError(
            f"the checker {config.checker} gave no usable report on a valid log ({verdict.failure}: {detail})"
            f"{how} (docs/CHECKER_PROTOCOL.md)"
        )


def _probe(checker: CheckerUnderTest) -> CheckerVerdict:
    """The checker's verdict on one small valid log."""
    from dshfuzz.generators import generate

    log = next(generate(1, 0, min_events=8, max_events=40))
    with tempfile.TemporaryDirectory(prefix="dshfuzz-probe-") as scratch:
        path = Path(scratch) / "probe.jsonl"
        path.write_bytes(log.to_jsonl())
        return checker.check(path)


def drain_queue(events: Any) -> list[object]:
    """What ``events`` (a thread, process or Dask queue) holds now, without waiting."""
    out: list[object] = []
    while True:
        try:
            out.append(events.get_nowait())
        except queue.Empty:
            return out
        except (OSError, EOFError, ValueError):  # a killed writer's half message
            return out


class _Flag(Protocol):
    """A stop flag: a ``threading.Event``, a process one, or a cluster's."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class _Backend(Protocol):
    """Where a campaign's worker slots run, as the coordinator loop sees it: ``slots`` workers,
    each ending with one ``("done", slot)`` on ``events`` (a ``queue.Queue``-like ``get``);
    ``stop`` tells them all to end; ``tell`` sends each the coordinator's decision; ``drain``
    takes what ``events`` holds now; ``end`` ends whatever still runs."""

    @property
    def slots(self) -> int: ...

    @property
    def events(self) -> queue.Queue[object] | multiprocessing.queues.Queue[object]: ...

    @property
    def stop(self) -> _Flag: ...

    def tell(self, message: tuple[str, str, int]) -> None: ...

    def drain(self) -> list[object]: ...

    def end(self) -> None: ...


class _Workers:
    """The campaign's workers, as processes (``workers >= 1``) or one thread (``workers=0``),
    with the event queue they share and an inbox each for the coordinator's decisions."""

    def __init__(self, config: CampaignConfig, local: _InProcess) -> None:
        self.threaded = config.workers == 0
        if self.threaded:
            self.events: queue.Queue[object] | multiprocessing.queues.Queue[object] = queue.Queue()
            self.stop: threading.Event | multiprocessing.synchronize.Event = threading.Event()
            self.inboxes: list[queue.Queue[tuple[str, str, int]] | multiprocessing.queues.Queue[tuple[str, str, int]]] = [
                queue.Queue()
            ]
            thread = threading.Thread(
                target=_guarded,
                args=(config, 0, self.events.put, self.stop.is_set, local, self.inboxes[0]),
                daemon=True,
                name="dshfuzz campaign worker",
            )
            self.units: list[threading.Thread | multiprocessing.process.BaseProcess] = [thread]
        else:
            ctx = mp.get_context("spawn")
            self.events, self.stop = ctx.Queue(), ctx.Event()
            self.inboxes = [ctx.Queue() for _ in range(config.workers)]
            self.units = [
                ctx.Process(target=_child_main, args=(config, w, self.events, self.stop, self.inboxes[w]), daemon=True)
                for w in range(config.workers)
            ]
        for unit in self.units:
            unit.start()
        self.slots = len(self.units)

    def tell(self, message: tuple[str, str, int]) -> None:
        for inbox in self.inboxes:
            inbox.put(message)

    def drain(self) -> list[object]:
        """What the queue holds now, without waiting."""
        return drain_queue(self.events)

    def end(self) -> None:
        """Kill what is still running: a worker's process group holds its checkers and servers."""
        for unit in self.units:
            if isinstance(unit, threading.Thread) or not unit.is_alive() or unit.pid is None:
                continue
            try:
                os.killpg(unit.pid, signal.SIGKILL) if hasattr(os, "killpg") else unit.kill()
            except (ProcessLookupError, PermissionError):
                unit.kill()
        for unit in self.units:
            # a thread cannot be killed: it sees the stop event at its next judgement
            unit.join(timeout=30 if isinstance(unit, threading.Thread) else 2)


def run_campaign(
    config: CampaignConfig,
    *,
    official: OfficialOracle | None = None,
    observe: Callable[[JudgedExample], None] | None = None,
    check_first: bool = False,
) -> Generator[CampaignEvent, None, None]:
    """Run a campaign and yield its events; closing the iterator stops the workers.

    The campaign ends within the budget plus ``STOP_GRACE_SECONDS`` (and the same after
    Ctrl-C) whatever the workers are doing: a worker that has not finished by then is
    killed, and every finding it sent so far stays in the stream. The coordinator is the
    one place that deduplicates: the first worker to send a signature owns it (minimises
    it), and every worker hears so and never hunts it again.

    ``check_first`` runs :func:`preflight` before the first event, inside the budget (its
    :class:`CampaignSetupError` propagates before anything is yielded).
    In-process campaigns (``workers=0``) only: ``official`` is a running
    ``OfficialOracle`` to share instead of starting one, and ``observe`` sees every
    example judged in the hunt (on the worker thread), in order.
    """
    if (official is not None or observe is not None) and config.workers != 0:
        raise ValueError("only an in-process campaign (workers=0) shares an oracle or an observer")
    start = time.time()
    if check_first:
        preflight(config)
    backend: _Backend | None = None
    if config.cluster is not None:
        from ._cluster import ClusterWorkers

        cluster = ClusterWorkers(config)  # connects first: an unreachable scheduler is a CampaignSetupError
        config = cluster.config  # with the slot count resolved
        backend = cluster
    yield CampaignStarted(
        run_id=config.run_id,
        checker=config.checker,
        seed=config.seed,
        workers=config.workers,
        budget_seconds=config.budget_seconds,
        budget_examples=config.budget_examples,
        official=config.official,
        out=str(config.run_dir),
        started_at=start,
        mutators=_planned_mutators(config),
        cluster=config.cluster,
    )
    deadline = start + config.budget_seconds if config.budget_seconds is not None else None
    workers = _Workers(config, _InProcess(official, config.budget_examples, observe)) if backend is None else backend
    stop = workers.stop
    owners: dict[str, int] = {}
    judged = 0
    found = 0
    live = workers.slots
    reason: StopReason = "budget"
    interrupted = False
    stopping_since: float | None = None

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        stop.set()

    def admit(event: object) -> CampaignEvent | None:
        """Count an event and decide for a finding: the first worker to send a signature owns it."""
        nonlocal judged, found, reason, live
        if isinstance(event, tuple):
            live -= 1
            return None
        if isinstance(event, ExampleJudged):
            judged += 1
        elif isinstance(event, DisagreementFound):
            owner = owners.setdefault(event.signature, event.worker)
            if owner != event.worker:
                return None
            if event.stage == "found":
                workers.tell(("claimed", event.signature, owner))
            elif event.stage in SETTLED:
                found += 1  # --stop-after counts findings whose witness is final
        elif isinstance(event, WorkerFailed):
            reason = "error"
        return cast(CampaignEvent, event)  # a worker sends campaign events, and ("done", slot) tuples

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    try:
        while live:
            try:
                event = workers.events.get(timeout=0.2)
            except queue.Empty:
                event = None
            if interrupted and reason != "interrupted":
                reason = "interrupted"
            if event is not None and (admitted := admit(event)) is not None:
                yield admitted
            if not stop.is_set():
                if deadline is not None and time.time() >= deadline:
                    stop.set()
                elif config.budget_examples is not None and judged >= config.budget_examples:
                    reason = "examples"
                    if config.workers:  # the in-process worker stops itself, after its last finding
                        stop.set()
                elif config.stop_after_findings is not None and found >= config.stop_after_findings:
                    reason = "findings"
                    stop.set()
            if stop.is_set() and not (config.workers == 0 and reason == "examples"):
                stopping_since = stopping_since or time.time()
                if time.time() - stopping_since > STOP_GRACE_SECONDS:
                    break
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
        stop.set()
        late = [a for e in workers.drain() if (a := admit(e)) is not None]
        workers.end()
    yield from late
    yield CampaignFinished(reason, judged, time.time() - start, time.time())


def _planned_mutators(config: CampaignConfig) -> tuple[str, ...]:
    if config.mutators is not None:
        return tuple(config.mutators)
    from ._strategy import campaign_strata

    return tuple(campaign_strata())


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
