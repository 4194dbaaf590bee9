"""A campaign's worker slots as long-running tasks on a Dask ``distributed`` cluster.

The coordinator (where :func:`run_campaign` runs) stays the one place that deduplicates
findings, decides which slot minimises a signature, and writes the reports and the corpus;
only the workers move. Each slot is one task running the same worker as a local process
(``_worker.run_worker``), with the same per-slot seed stream, so a campaign on a cluster
judges, slot by slot, the examples the same seed and slot count judge on processes.

Transport: every slot sends its events, pickled in small batches, to one Dask ``Queue``
the coordinator reads as they come; each slot has an inbox ``Queue`` for the
coordinator's decisions (claimed signatures, where to resume, stop, a periodic tick).
A background thread on each side moves messages, so neither the worker's judging nor the
coordinator's loop waits on the network.

Faults: the coordinator subscribes to the scheduler's ``remove-worker`` events and
reports a worker that goes away with the slots it ran (:class:`WorkerLost`). Dask
reschedules a lost worker's tasks on the workers left, but a slot holds its thread for the
whole campaign, so there it would wait behind a running slot until the campaign ends: Dask's
work stealing may move it to a worker that joins later, or may not. The coordinator does not
leave it to chance. It moves each lost slot itself, as a new attempt pinned to a worker with
a thread no slot holds, as soon as there is one (a nanny's restarted worker, say, or a worker
that joins). Each attempt has its own inbox and says hello with its number; an attempt that
is no longer the slot's current one is told to stop before it judges anything, so a slot
never runs twice. The current attempt hears the round the slot was in (slots report each
round as it starts) and every claim so far, so the slot loses at most that round. A slot
whose task ends in error anyway (Dask gave up on it) is resubmitted up to ``RESUBMITS`` times.
A slot that hears nothing from its coordinator for ``ORPHAN_SECONDS`` stops: a dead
coordinator leaves no campaign running on the cluster.

``distributed`` is imported here only: a campaign without ``--cluster`` needs no Dask.
"""

from __future__ import annotations

import logging
import pickle
import queue
import threading
import time
import traceback
import uuid
from dataclasses import replace
from collections.abc import Callable
from typing import Any

from ._backends import drain_queue, run_guarded
from ._config import CampaignConfig, CampaignSetupError, default_workers
from ._events import ExampleJudged, RoundCut, TimeSpent, WorkerFailed, WorkerLost

__all__ = ["ClusterWorkers", "close_local", "connect"]

CONNECT_SECONDS = 10.0
"""How long reaching the scheduler may take before ``--cluster`` is a usage error."""

PUMP_SECONDS = 0.05
"""The coordinator reads the slots' events this often while none are waiting."""

SEND_SECONDS = 0.25
"""A slot sends its judged logs at least this often, batched; a finding, an error, its hello
and its end go at once. Each send is a message through the scheduler, which every slot of
every machine shares: batching is what lets one scheduler and coordinator serve many."""

INBOX_SECONDS = 0.5
"""A slot reads its inbox this often: a claim heard this late costs at most a duplicate find."""

TICK_SECONDS = 5.0
"""The coordinator tells every slot it is alive this often."""

ORPHAN_SECONDS = 60.0
"""A slot that heard nothing from its coordinator for this long stops (generous: a loaded
coordinator is slow, not gone)."""

HELLO_SECONDS = 60.0
"""A slot waits this long for the coordinator to say where it resumes, then stops."""

RESUBMITS = 3
"""A slot whose task ends in error (not by its own worker's failure) is resubmitted this often."""

PLACE_SECONDS = 0.5
"""While a lost slot waits for a free worker thread, the coordinator asks the scheduler this often."""


SLOT_WORK: Callable[..., None] = run_guarded
"""What a slot task runs (``_backends.run_guarded``'s signature): the campaign's worker;
``benchmarks/cluster.py`` puts a synthetic one here to measure what a coordinator absorbs."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise CampaignSetupError(
            "--cluster needs Dask's distributed package: pip install 'dshfuzz[cluster]'"
        ) from None
    return distributed


def _knock(address: str) -> None:
    """Raise ``ValueError`` for an address that is none, ``OSError`` when nothing listens at a
    TCP one: at once, before a ``Client`` would retry for its whole timeout."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(address)
    host, port = parse_host_port(location)
    if not port:
        raise ValueError(f"missing port number in address {address!r}")
    if scheme == "tcp":
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()


def connect(cluster: str, workers: int) -> tuple[Any, Any, str]:
    """A Dask client of ``cluster``, the ``LocalCluster`` started for it (``None`` for an
    address) and the scheduler's address. ``cluster`` is a scheduler's address, or ``local``:
    a ``LocalCluster`` of ``workers`` single-threaded processes (``0``: one per core) listening
    on 127.0.0.1 only. Raises :class:`CampaignSetupError` with one line when the cluster cannot
    be had (``dshfuzz fuzz --cluster`` and ``dshfuzz mutants --cluster`` both connect here)."""
    distributed = _distributed()
    local: Any = None
    address = cluster
    if cluster == "local":
        # one single-threaded process per slot (threads would share a GIL), listening on this machine only
        try:
            local = distributed.LocalCluster(
                n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
            )
        except Exception as exc:  # noqa: BLE001 - Dask says why in its own words: one line of them
            raise CampaignSetupError(f"cannot start a local Dask cluster: {exc}") from None
        address = str(local.scheduler_address)
    try:
        _knock(address)
        client = distributed.Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        close_local(local)
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise CampaignSetupError(
            f"cannot reach a Dask scheduler at {address} ({why}); start one with `dask scheduler` "
            "and workers with `dask worker ADDRESS`, or pass --cluster local"
        ) from None
    if local is not None:
        try:
            client.run(_leave_interrupts_to_the_coordinator)
        except Exception:  # noqa: BLE001 - a worker that missed it only prints a traceback at Ctrl-C
            pass
    return client, local, address


def _leave_interrupts_to_the_coordinator() -> None:
    """Run on each worker of a ``LocalCluster``: a terminal's Ctrl-C reaches its whole process
    group, the local workers included, and the coordinator closes them itself (without this
    each worker prints a ``KeyboardInterrupt`` traceback as it dies)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def close_local(local: Any) -> None:
    """Close a ``LocalCluster`` that :func:`connect` started (``None``: nothing to close)."""
    if local is not None:
        try:
            local.close(timeout=20)
        except Exception:  # noqa: BLE001 - its worker processes die with it either way
            pass


class _StopAll:
    """The coordinator's stop: set here at once (a signal handler may set it), then told to
    every slot's inbox by the receiver thread."""

    def __init__(self, owner: ClusterWorkers) -> None:
        self._owner = owner
        self._set = threading.Event()

    def set(self) -> None:
        if self._set.is_set():
            return
        self._set.set()
        self._owner._outgoing.put(("stop",))

    def is_set(self) -> bool:
        return self._set.is_set()


class ClusterWorkers:
    """The campaign's worker slots on a Dask cluster (``config.cluster``): the coordinator
    loop's ``_Backend``. Construction connects (or starts a ``LocalCluster`` for ``local``)
    and submits one task per slot; it raises :class:`CampaignSetupError` with one line when
    the cluster cannot be had. ``config`` is the campaign's config with ``workers``
    resolved to the slot count."""

    def __init__(self, config: CampaignConfig) -> None:
        distributed = _distributed()
        self.client, self._local, address = connect(str(config.cluster), config.workers)
        threads = sum(self.client.nthreads().values())
        slots = config.workers or threads
        if slots < 1:
            self.client.close()
            self._close_local()
            raise CampaignSetupError(
                f"the Dask cluster at {address} has no workers yet; start some with `dask worker {address}`"
            )
        self.address = address
        self.config = replace(config, workers=slots)
        self.slots = slots
        self.events: queue.Queue[object] = queue.Queue()
        self._outgoing: queue.Queue[tuple[object, ...]] = queue.Queue()
        """What the receiver thread tells every slot: the coordinator's loop never waits on the network."""
        self.stop = _StopAll(self)
        self._prefix = f"dshfuzz-{config.run_id}-{uuid.uuid4().hex[:8]}"
        self._outbox = distributed.Queue(f"{self._prefix}-events", client=self.client)
        self._distributed = distributed
        self._inboxes = [self._inbox(n, 0) for n in range(slots)]
        """Each slot's current attempt's inbox: the coordinator's decisions go there only."""
        self._lock = threading.Lock()
        self._claims: list[tuple[str, str, int]] = []
        self._round = [1] * slots
        self._where: dict[int, str] = {}
        self._done: set[int] = set()
        self._attempts = [0] * slots
        self._failures = [0] * slots
        self._homeless: set[int] = set()
        """Slots whose worker was lost and that no attempt has said hello for since."""
        self._placed = 0.0
        self._closing = False
        self.client.subscribe_topic("all", self._on_scheduler_event)
        self._futures = {n: self._submit(n) for n in range(slots)}
        self._receiver = threading.Thread(target=self._receive, daemon=True, name="dshfuzz cluster events")
        self._receiver.start()

    def _inbox(self, slot: int, attempt: int) -> Any:
        return self._distributed.Queue(f"{self._prefix}-inbox-{slot}-{attempt}", client=self.client)

    def _submit(self, slot: int, worker: str | None = None) -> Any:
        attempt = self._attempts[slot]
        key = f"{self._prefix}-slot-{slot}-try-{attempt}"
        return self.client.submit(
            _slot_main, self.config, slot, self._prefix, SLOT_WORK, attempt, key=key, pure=False, retries=0,
            workers=None if worker is None else [worker], allow_other_workers=False,
        )

    def _retry(self, slot: int, worker: str | None = None) -> None:
        """Submit ``slot`` again as a new attempt, with an inbox of its own; the old attempt's
        task is cancelled, and told to stop should it say hello anyway."""
        old = self._futures[slot]
        self._attempts[slot] += 1
        self._inboxes[slot] = self._inbox(slot, self._attempts[slot])
        self._futures[slot] = self._submit(slot, worker)
        try:
            self.client.cancel([old], force=True)
        except Exception:  # noqa: BLE001 - a scheduler gone: the next read reports it
            pass

    def _slot_of(self, key: object) -> int | None:
        text = str(key)
        if not text.startswith(self._prefix + "-slot-"):
            return None
        return int(text[len(self._prefix) + len("-slot-"):].split("-", 1)[0])

    # ---- the coordinator loop's side ----

    def tell(self, message: tuple[str, str, int]) -> None:
        with self._lock:
            self._claims.append(message)
        self._outgoing.put(message)

    def drain(self) -> list[object]:
        return drain_queue(self.events)

    def end(self) -> None:
        """Stop listening, cancel what still runs (a slot still judging sees its stop), close."""
        self.stop.set()
        self._closing = True
        self._receiver.join(timeout=5)
        try:
            self.client.unsubscribe_topic("all")
            self.client.cancel(list(self._futures.values()), force=True)
        except Exception:  # noqa: BLE001 - a scheduler already gone has nothing left to cancel
            pass
        self.client.close(timeout=10)
        self._close_local()

    def _close_local(self) -> None:
        close_local(self._local)
        self._local = None

    # ---- messages ----

    def _broadcast(self, messages: list[tuple[object, ...]]) -> None:
        blob = pickle.dumps(messages)
        for inbox in self._inboxes:
            try:
                inbox.put(blob, timeout=CONNECT_SECONDS)
            except Exception:  # noqa: BLE001 - a gone scheduler: the receiver reports it
                return

    def _receive(self) -> None:
        """Move the slots' events to ``events`` as they arrive; answer hellos, tick, watch futures."""
        ticked = time.monotonic()
        while True:
            self._tell_pending()
            if self._closing:
                return
            try:
                # polled, never a blocking get: a scheduler logs every get that times out as an error
                blobs = self._outbox.get(batch=True)
            except Exception as exc:  # noqa: BLE001 - the scheduler is gone: every slot still running ends
                if not self._closing:
                    self._abandon(f"the Dask scheduler at {self.address} stopped answering: {exc!r}")
                return
            for blob in blobs:
                for item in pickle.loads(blob):
                    self._route(item)
            if not blobs:
                time.sleep(PUMP_SECONDS)
            if time.monotonic() - ticked > TICK_SECONDS:
                ticked = time.monotonic()
                self._broadcast([("tick",)])
            self._watch()

    def _tell_pending(self) -> None:
        messages: list[tuple[object, ...]] = []
        while True:
            try:
                messages.append(self._outgoing.get_nowait())
            except queue.Empty:
                break
        if messages:
            self._broadcast(messages)

    def _route(self, item: object) -> None:
        if isinstance(item, tuple) and item and item[0] == "hello":
            _, slot, address, attempt = item
            if attempt != self._attempts[slot]:  # a moved slot's old task that ran after all
                try:
                    self._inbox(slot, attempt).put(pickle.dumps([("stale",)]), timeout=CONNECT_SECONDS)
                except Exception:  # noqa: BLE001 - a gone scheduler: the next read reports it
                    pass
                return
            self._where[slot] = address
            with self._lock:
                self._homeless.discard(slot)
            with self._lock:
                reply: list[tuple[object, ...]] = [("resume", self._round[slot]), *self._claims]
            if self.stop.is_set():
                reply.append(("stop",))
            try:
                self._inboxes[slot].put(pickle.dumps(reply), timeout=CONNECT_SECONDS)
            except Exception:  # noqa: BLE001 - a gone scheduler: the next read reports it
                pass
            return
        if isinstance(item, tuple) and item and item[0] == "round":
            self._round[item[1]] = item[2]
            return
        if isinstance(item, tuple) and item and item[0] == "done":
            if item[1] in self._done:
                return
            self._done.add(item[1])
        self.events.put(item)

    def _watch(self) -> None:
        """A slot task that ended without saying it is done: resubmit it, or give it up."""
        for slot, future in list(self._futures.items()):
            if slot in self._done or future.status not in ("error", "cancelled", "lost"):
                continue
            if self.stop.is_set() or self._failures[slot] >= RESUBMITS:
                try:
                    why = repr(future.exception(timeout=1))
                except Exception as exc:  # noqa: BLE001 - whatever Dask says about it is the error
                    why = repr(exc)
                self._done.add(slot)
                if not self.stop.is_set():
                    self.events.put(WorkerFailed(slot, f"slot {slot} could not be kept running on the cluster: {why}"))
                self.events.put(("done", slot))
                continue
            self._failures[slot] += 1
            self._retry(slot)
        self._place()

    def _place(self) -> None:
        """Move each lost slot to a worker with a thread no slot of ours holds, once there is one."""
        with self._lock:
            homeless = sorted(s for s in self._homeless if s not in self._done)
        if not homeless or self.stop.is_set() or time.monotonic() - self._placed < PLACE_SECONDS:
            return
        self._placed = time.monotonic()
        try:
            free = dict(self.client.nthreads())
        except Exception:  # noqa: BLE001 - a gone scheduler: the next read reports it
            return
        for slot, where in self._where.items():
            if slot not in homeless and slot not in self._done and where in free:
                free[where] -= 1
        for slot in homeless:
            worker = next((w for w, n in sorted(free.items()) if n > 0), None)
            if worker is None:
                return
            free[worker] -= 1
            with self._lock:
                self._homeless.discard(slot)
            self._where[slot] = worker
            self._retry(slot, worker)

    def _abandon(self, why: str) -> None:
        for slot in range(self.slots):
            if slot not in self._done:
                self._done.add(slot)
                self.events.put(WorkerFailed(slot, why))
                self.events.put(("done", slot))

    def _on_scheduler_event(self, event: tuple[float, dict[str, Any]]) -> None:
        """On the client's event loop: a removed worker that ran slots (or left unexpectedly)."""
        _, message = event
        if self._closing or self.stop.is_set() or not isinstance(message, dict):
            return
        if message.get("action") != "remove-worker":
            return
        address = str(message.get("worker"))
        slots = {s for k in message.get("processing-tasks", ()) if (s := self._slot_of(k)) is not None}
        slots |= {s for s, where in list(self._where.items()) if where == address and s not in self._done}
        with self._lock:
            self._homeless |= slots
        if slots or not message.get("expected", False):
            self.events.put(WorkerLost(address, tuple(sorted(slots)), time.time()))


_ROUTINE = (ExampleJudged, TimeSpent, RoundCut)
"""What a slot batches for up to ``SEND_SECONDS``; everything else is sent at once."""


def _slot_main(
    config: CampaignConfig, slot: int, prefix: str, work: Callable[..., None] = run_guarded, attempt: int = 0
) -> None:
    """One attempt at a worker slot, as a task on a Dask worker: say hello, learn where to
    resume (or that this attempt is stale and must stop), then run the worker with its events
    and inbox moved by a pump thread."""
    import warnings

    from distributed import Queue, get_client, get_worker
    from hypothesis.errors import HypothesisDeprecationWarning

    # Dask's own threads draw from the random module while Hypothesis generates: not our strategies' doing
    warnings.filterwarnings("ignore", message="Do not use the `random` module", category=HypothesisDeprecationWarning)
    client = get_client()
    address = get_worker().address
    outbox = Queue(f"{prefix}-events", client=client)
    inbox = Queue(f"{prefix}-inbox-{slot}-{attempt}", client=client)
    outgoing: queue.Queue[object] = queue.Queue()
    claims: queue.Queue[tuple[str, str, int]] = queue.Queue()
    stop, resumed, finished, stale = threading.Event(), threading.Event(), threading.Event(), threading.Event()
    start = [1]
    heard = [time.monotonic()]

    def hear(message: tuple[Any, ...]) -> None:
        heard[0] = time.monotonic()
        if message[0] == "resume":
            start[0] = message[1]
            resumed.set()
        elif message[0] == "stop":
            stop.set()
        elif message[0] == "stale":  # the slot moved on to a newer attempt: this one says nothing more
            stale.set()
            stop.set()
            resumed.set()
        elif message[0] == "claimed":
            claims.put(message)

    def pump() -> None:
        read = 0.0
        while True:
            last = finished.is_set()
            batch: list[object] = []
            until = time.monotonic() + (SEND_SECONDS if resumed.is_set() else PUMP_SECONDS)
            while True:  # until the batch is due, or holds something the coordinator must hear now
                try:
                    item = outgoing.get(timeout=max(0.0, until - time.monotonic()))
                except queue.Empty:
                    break
                batch.append(item)
                if not isinstance(item, _ROUTINE) and not (isinstance(item, tuple) and item[0] == "round"):
                    break
            try:
                if batch:
                    outbox.put(pickle.dumps(batch))
                if last or not resumed.is_set() or time.monotonic() - read >= INBOX_SECONDS:
                    read = time.monotonic()
                    for blob in inbox.get(batch=True):
                        for message in pickle.loads(blob):
                            hear(message)
            except Exception:  # noqa: BLE001 - the coordinator's queues are gone: so is the coordinator
                stop.set()
                resumed.set()
                if last:
                    return
            if time.monotonic() - heard[0] > ORPHAN_SECONDS:
                stop.set()  # an orphan stops: its coordinator is gone
                resumed.set()
            if last and outgoing.empty():
                return

    thread = threading.Thread(target=pump, daemon=True, name=f"dshfuzz slot {slot} pump")
    thread.start()
    outgoing.put(("hello", slot, address, attempt))
    if not resumed.wait(HELLO_SECONDS):
        stop.set()
    if stale.is_set():
        finished.set()
        thread.join(timeout=30)
        return
    try:
        work(config, slot, outgoing.put, stop.is_set, inbox=claims, resume_round=start[0],
             on_round=lambda n: outgoing.put(("round", slot, n)))
    except BaseException:  # noqa: BLE001 - run_guarded reports; this is only the pump's own failure
        outgoing.put(WorkerFailed(slot, traceback.format_exc(limit=10)))
    finally:
        finished.set()
        thread.join(timeout=30)
