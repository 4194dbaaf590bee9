"""The worker loop: one slot's rounds of ``hypothesis.find``, its judging, shrinking and minimising.

Each worker runs rounds of :func:`hypothesis.find`, one per stratum of the campaign's schedule (a
mutator's mutants, or valid logs; see ``_strategy`` and ``_rounds``), with a condition that judges
the example and is satisfied by a *new* checker defect. Hypothesis then shrinks that example (plans
shrink to small readable logs), the delta-debugging minimiser makes it 1-minimal (each candidate
judged only by the judges the signature depends on, and required to still hold the defect,
``Judge.still_fails``; the minimal log is judged by all of them once), and the worker emits a
:class:`DisagreementFound`. Every judged example is also emitted, so the coordinator counts
throughput and deduplicates signatures with counts.

The worker runs wherever a backend puts it (``_backends``: a child process or a thread; ``_cluster``:
a Dask task) and knows none of them: it reads a stop callable, emits events, and hears the
coordinator's claims through an :class:`Inbox`.

A round of a time-budgeted campaign also has a time cap (``_rounds.round_cap``): without it one
stratum of costly logs (the official loader inflates a 64 MiB frame for every ``frame-over-limit``
mutant, about 3 s a log) takes a 200-example round of ten minutes, most of a campaign, to learn
little more than its first rounds did. A cut round is reported (:class:`RoundCut`). Campaigns on an
example budget are never cut, so their example sequence does not depend on the machine's load.

The official layers run beside Python: a worker submits a family of logs to its Node server and
judges it with every other judge, then leaves the official verdicts in flight while Hypothesis
draws the next family (``Judge.submit``, ``_in_flight.InFlightVerdicts``). A family whose other
judges already disagree in a new way is waited for, so that its finding shrinks in Hypothesis; a
finding only the official layers reveal arrives a family or more later and is minimised by the
delta-debugger alone.

Each round steers generation (``_steering``): ``target()`` scores hard shapes and fresh coverage,
``event()`` labels each example's incident class.
"""

from __future__ import annotations

import collections
import hashlib
import os
import random
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ._classify import claimed_rules
from ._config import CampaignConfig, checker_kw, minimise_box, planned_mutators, slot_share
from ._events import (
    SETTLED,
    CampaignEvent,
    CheckerLinesMapped,
    CoverageReached,
    DisagreementFound,
    ExampleJudged,
    MinimiseStage,
    OfficialSitesMapped,
    RoundCut,
)
from ._in_flight import InFlightVerdicts
from ._judges import BATCH_LOGS, CheckerUnderTest
from ._owned import Claims, Inbox, OwnedFinding, finding_event
from ._ledger import SERVER, TimeLedger
from ._rounds import ROUND_EXAMPLES, Exploration, round_cap, round_seed, round_settings
from ._steering import steer_checker, steer_official, steer_shapes, steer_unjudged
from ._witness import Cut as _Cut

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from dshfuzz.oracle.official import CoverageGranularity, OfficialOracle

    from ._checker_coverage import CheckerCoverage, NodeCheckerCoverage
    from ._judge import Example, FreshCoverage, JudgedExample

__all__ = ["InProcess", "run_worker"]

RECENT_LOGS = 200_000
"""A worker judges no log twice among its last this many (a digest each): Hypothesis draws
the same bytes from different choices (a round's simplest example, every cycle), and a
fuzzer's power is the distinct logs it judges."""

PROGRESS_SECONDS = 2.0
"""A minimisation sends its best witness so far at most this often: what a stopped
campaign reports."""


class _Stop(BaseException):
    """Raised inside Hypothesis to end a round at once (BaseException escapes ``find``)."""


class _RoundOver(BaseException):
    """Raised inside Hypothesis when a hunting round reaches its time cap."""


class _RoundFull(BaseException):
    """A round judged its logs."""


class _Found(BaseException):
    """Raised inside Hypothesis when a batch of held-back logs holds a new finding."""


@dataclass(frozen=True, slots=True)
class InProcess:
    """What an in-process worker shares with its caller (a worker process gets none of it).

    ``official`` is a running ``OfficialOracle`` to use instead of starting one;
    ``budget`` caps the examples the worker judges, so that the cap is exact and a
    finding within it is still shrunk and minimised; ``observe`` sees every example
    judged in the hunt, in order, on the worker's thread.
    """

    official: OfficialOracle | None = None
    budget: int | None = None
    observe: Callable[[JudgedExample], None] | None = None


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


def run_worker(
    config: CampaignConfig,
    worker: int,
    emit: Callable[[CampaignEvent], None],
    should_stop: Callable[[], bool],
    local: InProcess = InProcess(),
    inbox: Inbox | None = None,
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

    from ._confirm import better_witness, confirm_expected_miss, needs_confirmation
    from ._judge import Judge
    from ._judges import BatchCommandChecker, BuiltinChecker, CheckerPool, load_checker
    from ._strategy import VALID, RepeatOnFreshCoverage, schedule, sibling_examples
    from ._database import example_database, save_witness, saved_witnesses
    from ._witness import minimise_finding

    ledger = TimeLedger(worker, emit)  # from here on: starting the judges is the worker's time too
    database = example_database(config.database, check=False) if config.database is not None else None
    checker = load_checker(config.checker, timeout=config.checker_timeout, **checker_kw(config))
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
        emit(CheckerLinesMapped(worker, dict(checker_coverage.statements()), checker_coverage.off_path()))
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
    claims = Claims(worker, inbox)
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
    strata: set[str | None] = set(planned_mutators(config))
    if config.valid_fraction > 0 or not strata:
        strata.add(VALID)
    # exploration's priority is a share of time: on an example budget minimisation waits for no clock,
    # so that its witnesses, like its logs, do not depend on the machine's load
    exploring = Exploration(set(strata) if config.budget_seconds is not None else set())
    pending: deque[OwnedFinding] = deque()
    # round numbers start at 1: "round 0" seeds the order of the strata
    rounds = RepeatOnFreshCoverage(schedule(config.mutators, valid_fraction=config.valid_fraction,
                                            seed=round_seed(config.seed, worker, 0), max_round=ROUND_EXAMPLES), strata)
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

    def announce(witness: OwnedFinding, stage: MinimiseStage) -> None:
        emit(finding_event(witness, stage, seed=config.seed, worker=worker))
        if database is not None and stage in SETTLED:
            save_witness(database, witness.judged.example)

    def cut_check(witness: OwnedFinding, deadline: float | None) -> None:
        if should_stop() or claims.elsewhere(witness.signature) or (deadline is not None and time.monotonic() > deadline):
            raise _Cut

    def deadline_for(witness: OwnedFinding) -> float | None:
        limits = [x for x in (witness.left, exploring.allowance()) if x is not None]
        return time.monotonic() + min(limits) if limits else None

    def spend(witness: OwnedFinding, began: float) -> None:
        took = time.monotonic() - began
        exploring.spent += took
        if witness.left is not None:
            witness.left = max(0.0, witness.left - took)

    def settle(witness: OwnedFinding, judge: Judge) -> None:
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

    def polish(witness: OwnedFinding, judge: Judge) -> None:
        """Minimise ``witness`` within its box; announce the result (or the best so far)."""
        began = time.monotonic()
        try:
            minimise_now(witness, judge)
        finally:
            ledger.add("minimising", time.monotonic() - began)

    def confirm(witness: OwnedFinding, judge: Judge) -> None:
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

    def minimise_now(witness: OwnedFinding, judge: Judge) -> None:
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
    ) -> list[OwnedFinding]:
        """Count and emit each judged example; the first fresh defect among them as a witness
        (``every``: a witness for each fresh signature, first log first)."""
        nonlocal hunted
        witnesses: list[OwnedFinding] = []
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
                witnesses.append(OwnedFinding(defect.signature, example, judged, judged.events, box))
                announce(witnesses[-1], "found")
                if not every:
                    break
        report_coverage()
        return witnesses

    def judged_batch(judge: Judge, batch: list[Example]) -> list[OwnedFinding]:
        before = time.monotonic()
        verdicts = judge.judge_many(batch)
        return record(batch, verdicts, (time.monotonic() - before) / len(batch), every=True)

    def polish_together(witnesses: list[OwnedFinding], judge: Judge) -> None:
        """Minimise ``witnesses`` at once, each on a thread of its own, their questions to a
        batch checker pooled into shared invocations (one process start for all of them);
        any other checker minimises them one after another."""
        if batch_logs <= 1 or len(witnesses) < 2:
            for witness in witnesses:
                polish(witness, judge)
            return
        pool = CheckerPool(checker, len(witnesses))
        failures: list[BaseException] = []

        def minimise_one(number: int, witness: OwnedFinding) -> None:
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

    def adopt(witnesses: list[OwnedFinding], judge: Judge) -> None:
        """New findings after their shrink (if any): minimise them now, or later when exploration comes first."""
        mine = [w for w in witnesses if not claims.elsewhere(w.signature)]
        if config.minimise and not exploring.may_minimise():
            pending.extend(mine)
            return
        polish_together(mine, judge)

    # a batch checker's logs wait here until there are BATCH_LOGS of them (one process start)
    held_back: list[Example] = []

    # a batch checker's logs are judged together (held_back), never left in flight one family at a time
    lagging = InFlightVerdicts[OwnedFinding](
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
            # an example budget: this slot's share of it, at which it stops itself (its logs then
            # depend on the seed and slot count alone, not on how fast the coordinator's stop travels)
            budget = local.budget if local.budget is not None or config.budget_examples is None else (
                slot_share(config.budget_examples, max(1, config.workers), worker))
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
                hunt: dict[str, OwnedFinding] = {}
                held: dict[bytes, JudgedExample] = {}  # candidates that kept the hunted signature
                lost: set[bytes] = set()  # candidates judged without it
                started, cap = time.monotonic(), round_cap(size, list(costs)) if capped else None
                shrink_deadline: list[float | None] = [None]
                in_round = 0
                batched: list[OwnedFinding] = []
                # when the round's finding was judged: exploration ends there and shrinking begins
                found_at: list[tuple[float, collections.Counter[str]]] = []

                def kept(witness: OwnedFinding, family: tuple[Example, ...]) -> bool:
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
                        steer_unjudged(family)
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
                    steer_shapes(family, judgement.shapes)
                    if checker_coverage is not None:
                        steer_checker(judgement.checker_lines)
                    lagging.settle()
                    if lagging.leave(family, judgement, before):
                        return False  # the server judges this family while Hypothesis draws the next
                    if not lagging.drain():
                        judgement.abandon()
                        raise _Stop
                    verdicts = judgement.result()
                    if official is not None and official.coverage:
                        steer_official(verdicts)
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
                                     random=random.Random(round_seed(config.seed, worker, round_no)))
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


def _checker_coverage(checker: CheckerUnderTest, scratch: Path) -> CheckerCoverage | NodeCheckerCoverage:
    """The checker's coverage; a Node checker's processes are told where to write theirs."""
    from ._checker_coverage import NodeCheckerCoverage, coverage_for

    coverage = coverage_for(checker, scratch)
    if isinstance(coverage, str):  # preflight said so already, for campaigns that run it
        raise RuntimeError(coverage)
    if isinstance(coverage, NodeCheckerCoverage):
        setattr(checker, "env", {**os.environ, **coverage.env})  # the cmd: and serve: checkers' field
    return coverage


def _official(*, coverage: CoverageGranularity | None = None) -> OfficialOracle:
    from dshfuzz.oracle.official import OfficialOracle, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"official layers unavailable: {reason} (or run with --no-official)")
    return OfficialOracle(coverage=coverage)
