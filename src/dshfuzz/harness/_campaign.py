"""The coordinator: it runs a campaign on a backend, and yields its event stream.

A campaign is a few named parts (the README's layout lists them):

* ``_config``: what the campaign is asked to do (:class:`CampaignConfig`, its budget);
* ``_preflight``: everything it needs, checked before its first example;
* ``_rounds`` (with ``_strategy``'s schedule): the strata and rounds each worker plays;
* ``_worker``: the worker loop, rounds of ``hypothesis.find`` that judge, shrink and minimise,
  with ``_in_flight`` (official verdicts still on their way), ``_owned`` (the findings a worker
  owns, the coordinator's claims), ``_steering`` and ``_ledger``;
* ``_backends`` and ``_cluster``: where the workers run (processes, a thread, a Dask cluster);
* this module: the coordinator.

The coordinator is the one place that deduplicates: the first worker to send a signature owns it
(minimises it), and every worker hears so and never hunts it again. It counts judged examples,
stops the workers at a time budget, on ``--stop-after`` or on Ctrl-C, and kills what has not ended
``STOP_GRACE_SECONDS`` later. On an example budget it stops no one: each slot stops itself at its
share (``_config.slot_share``), so the logs a slot judges do not depend on how fast a stop travels
to it (a process, a thread, a cluster task). The campaign never prints: :func:`run_campaign` yields the event
stream and reporters consume it.

``workers=0`` runs the one worker on a thread of the calling process, with an exact example budget
and optionally an already-running official oracle: what the detection-power measurements run
hundreds of times, where spawning a process and a Node server per campaign would cost more than
the campaign.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, cast

from ._backends import Backend, LocalWorkers
from ._config import CampaignConfig, planned_mutators
from ._events import (
    SETTLED,
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    ExampleJudged,
    StopReason,
    WorkerFailed,
)
from ._preflight import preflight
from ._worker import InProcess

if TYPE_CHECKING:
    from dshfuzz.oracle.official import OfficialOracle

    from ._judge import JudgedExample

__all__ = ["run_campaign"]

STOP_GRACE_SECONDS = 3.0
"""After the budget ends or Ctrl-C, workers have this long to finish their judgement and
say they are done; then they are killed (with the checkers and servers they started)."""


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
    backend: Backend | None = None
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
        mutators=planned_mutators(config),
        cluster=config.cluster,
    )
    deadline = start + config.budget_seconds if config.budget_seconds is not None else None
    workers = LocalWorkers(config, InProcess(official, config.budget_examples, observe)) if backend is None else backend
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
                else:
                    if config.budget_examples is not None and judged >= config.budget_examples:
                        reason = "examples"  # each slot stops itself at its share, after its last finding
                    if config.stop_after_findings is not None and found >= config.stop_after_findings:
                        reason = "findings"
                        stop.set()
            if stop.is_set():
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
