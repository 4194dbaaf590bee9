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

import multiprocessing as mp
import os
import queue
import random
import signal
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    ExampleJudged,
    RoundCut,
    WorkerFailed,
)

if TYPE_CHECKING:
    from ._judge import JudgedExample

__all__ = ["CampaignConfig", "parse_budget", "run_campaign"]

ROUND_EXAMPLES = 200
"""The largest round; the schedule's rounds grow to it from ``FIRST_ROUND``."""


ROUND_FLOOR_SECONDS = 30.0
"""No round is cut before this: first-cycle rounds (3 examples) are never cut."""

ROUND_SLACK = 4.0
"""A round may take this many times what its examples cost at the recent median."""


class _Stop(BaseException):
    """Raised inside Hypothesis to end a round at once (BaseException escapes ``find``)."""


class _RoundOver(BaseException):
    """Raised inside Hypothesis when a hunting round reaches its time cap."""


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
    return random.Random(f"{seed}:{worker}:{round_no}").getrandbits(64)


def round_settings(examples: int, *, shrink: bool = True):  # noqa: ANN201 - Hypothesis is imported lazily
    """One round's Hypothesis settings: no database (the corpus is the record), and
    ``Phase.target`` so that the round's ``target()`` scores steer generation (from
    ten examples on: Hypothesis optimises halfway through a round, and not before
    the tenth valid example)."""
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

    official: object | None = None
    budget: int | None = None
    observe: Callable[[JudgedExample], None] | None = None


def _worker(
    config: CampaignConfig,
    worker: int,
    emit: Callable[[CampaignEvent], None],
    should_stop: Callable[[], bool],
    local: _InProcess = _InProcess(),
) -> None:
    """One worker's rounds, in a child process or on a thread (``workers=0``)."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    from ._judge import Judge
    from ._judges import BuiltinChecker, load_checker
    from ._minimise import minimise
    from ._strategy import schedule, stratum_examples

    checker = load_checker(config.checker, timeout=config.checker_timeout)
    # the built-in checker is the reference for seqs; with rules switched off it reports the same seqs for the rest
    reference = None if isinstance(checker, BuiltinChecker) else BuiltinChecker()
    official = local.official if config.official else None
    official_cm = _official() if config.official and official is None else None
    if official_cm is not None:
        official = official_cm.__enter__()
    seen: set[str] = set()
    hunted = 0
    costs: deque[float] = deque(maxlen=256)
    capped = config.budget_seconds is not None and local.budget is None
    # round numbers start at 1: "round 0" seeds the order of the strata
    rounds = schedule(config.mutators, valid_fraction=config.valid_fraction, seed=_round_seed(config.seed, worker, 0),
                      max_round=ROUND_EXAMPLES)
    strategies: dict[str | None, object] = {}
    try:
        with Judge(checker, official=official, reference=reference) as judge:
            round_no = 0
            budget = local.budget
            while not should_stop() and (budget is None or hunted < budget):
                round_no += 1
                stratum, size = next(rounds)
                if stratum not in strategies:
                    strategies[stratum] = stratum_examples(stratum)
                target: dict[str, str] = {}
                started, cap = time.monotonic(), round_cap(size, list(costs)) if capped else None
                in_round = 0

                def condition(example) -> bool:  # noqa: ANN001 - an Example from the strategy
                    nonlocal hunted, in_round
                    hunting = "signature" not in target
                    if should_stop() or (hunting and budget is not None and hunted >= budget):
                        raise _Stop
                    if hunting and cap is not None and time.monotonic() - started > cap:
                        raise _RoundOver
                    before = time.monotonic()
                    judged = judge.judge(example)
                    sigs = tuple(d.signature for d in judged.disagreements)
                    if hunting:
                        costs.append(time.monotonic() - before)
                        hunted += 1
                        in_round += 1
                        _steer(judged)
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
                                sigs,
                                time.time(),
                            )
                        )
                        fresh = [d for d in judged.defects if d.signature not in seen]
                        if fresh:
                            target["signature"] = fresh[0].signature
                            return True
                        return False
                    return target["signature"] in sigs

                try:
                    found = find(strategies[stratum], condition, settings=round_settings(size, shrink=config.shrink),
                                 random=random.Random(_round_seed(config.seed, worker, round_no)))
                except NoSuchExample:
                    continue
                except _RoundOver:
                    emit(RoundCut(worker, stratum, in_round, size, round(time.monotonic() - started, 3)))
                    continue
                except _Stop:
                    break
                signature = target["signature"]
                seen.add(signature)
                judged = judge.judge(found)
                defect = next(d for d in judged.disagreements if d.signature == signature)
                still_fails = judge.still_fails(defect, found) if config.minimise else None
                data = found.data if still_fails is None else minimise(found, still_fails)
                final = judge.judge(replace(found, data=data))
                if signature not in {d.signature for d in final.disagreements}:  # e.g. an official timeout
                    data, final = found.data, judged
                emit(
                    DisagreementFound(
                        signature=signature,
                        kind=defect.kind,
                        layer=defect.layer,
                        rules=defect.rules,
                        mutator=defect.mutator,
                        detail=defect.detail,
                        data=data,
                        compression=found.compression,
                        format_version=found.format_version,
                        events_found=judged.events,
                        events_minimal=final.events,
                        checker_rules=tuple(sorted({f.rule for f in final.verdict.findings})),
                        expected_rules=tuple(sorted(found.expects)),
                        oracle_refusing=tuple(sorted(final.truth.oracle_refusing)),
                        official={k: _verdict_json(v) for k, v in final.official.items()},
                        seed=config.seed,
                        at=time.time(),
                    )
                )
    except _Stop:
        pass
    finally:
        if official_cm is not None:
            official_cm.__exit__(None, None, None)


def _steer(judged) -> None:  # noqa: ANN001 - a JudgedExample
    """Label the incident class and steer generation towards hard shapes."""
    from hypothesis import event, target

    event(f"mutator: {judged.example.mutator or 'valid'}")
    shape = judged.shape
    target(float(shape.open_tool_calls), label="open tool calls")
    target(float(shape.frames), label="zstd frames")
    target(float(shape.replaces), label="replace depth")


def _official():
    from dshfuzz.oracle.official import OfficialOracle, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"official layers unavailable: {reason} (or run with --no-official)")
    return OfficialOracle()


def _verdict_json(verdict) -> dict:  # noqa: ANN001 - a LayerVerdict
    if verdict.ok:
        return {"ok": True}
    error = verdict.error
    return {"ok": False, "error": {"name": error.name, "message": error.message, "seq": error.seq}}


def _guarded(
    config: CampaignConfig,
    worker: int,
    put: Callable[[object], None],
    should_stop: Callable[[], bool],
    local: _InProcess = _InProcess(),
) -> None:
    """Run a worker; report its death to the coordinator, and always say it is done."""
    try:
        _worker(config, worker, put, should_stop, local)
    except BaseException:  # noqa: BLE001 - report any worker death to the coordinator
        put(WorkerFailed(worker, traceback.format_exc(limit=10)))
    finally:
        put(("done", worker))


def _child_main(config: CampaignConfig, worker: int, events: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle: it stops us cleanly
    _guarded(config, worker, events.put, stop.is_set)


def _start_thread(config: CampaignConfig, events: queue.Queue, stop: threading.Event, local: _InProcess) -> threading.Thread:  # type: ignore[type-arg]
    """The in-process worker."""
    thread = threading.Thread(
        target=_guarded,
        args=(config, 0, events.put, stop.is_set, local),
        daemon=True,
        name="dshfuzz campaign worker",
    )
    thread.start()
    return thread


def run_campaign(
    config: CampaignConfig,
    *,
    official: object | None = None,
    observe: Callable[[JudgedExample], None] | None = None,
) -> Iterator[CampaignEvent]:
    """Run a campaign and yield its events; closing the iterator stops the workers.

    In-process campaigns (``workers=0``) only: ``official`` is a running
    ``OfficialOracle`` to share instead of starting one, and ``observe`` sees every
    example judged in the hunt (on the worker thread), in order.
    """
    if (official is not None or observe is not None) and config.workers != 0:
        raise ValueError("only an in-process campaign (workers=0) shares an oracle or an observer")
    start = time.time()
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
    )
    deadline = start + config.budget_seconds if config.budget_seconds is not None else None
    procs: list  # worker processes, or the one in-process worker thread
    if config.workers == 0:
        events: queue.Queue | mp.Queue = queue.Queue()  # type: ignore[type-arg]
        stop = threading.Event()
        procs = [_start_thread(config, events, stop, _InProcess(official, config.budget_examples, observe))]
    else:
        ctx = mp.get_context("spawn")
        events, stop = ctx.Queue(), ctx.Event()  # type: ignore[assignment]
        procs = [ctx.Process(target=_child_main, args=(config, w, events, stop), daemon=True) for w in range(config.workers)]
        for proc in procs:
            proc.start()
    judged = 0
    found = 0
    live = len(procs)
    reason = "budget"
    interrupted = False

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        stop.set()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    try:
        while live:
            try:
                event = events.get(timeout=0.2)
            except queue.Empty:
                event = None
            if interrupted and reason != "interrupted":
                reason = "interrupted"
            if isinstance(event, tuple):
                live -= 1
                continue
            if event is not None:
                if isinstance(event, ExampleJudged):
                    judged += 1
                elif isinstance(event, DisagreementFound):
                    found += 1
                elif isinstance(event, WorkerFailed):
                    reason = "error"
                yield event
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
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
        stop.set()
        for proc in procs:
            proc.join(timeout=30)
            if not isinstance(proc, threading.Thread) and proc.is_alive():
                proc.kill()
    yield CampaignFinished(reason, judged, time.time() - start, time.time())  # type: ignore[arg-type]


def _planned_mutators(config: CampaignConfig) -> tuple[str, ...]:
    if config.mutators is not None:
        return tuple(config.mutators)
    from dshfuzz.mutators import MUTATORS

    return tuple(MUTATORS)


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
