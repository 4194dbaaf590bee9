"""Where a campaign's worker slots run: the backends behind one small interface.

The coordinator (``_campaign.run_campaign``) sees a :class:`Backend`: ``slots`` workers that send
events to one queue and end with ``("done", slot)``, a stop flag, a way to tell every slot the
coordinator's decisions, and an ``end`` that kills what still runs. :class:`LocalWorkers` runs
them as child processes (spawned, each in a process group of its own, so that ending one ends
the checkers and servers it started) or as one thread of this process (``workers=0``);
``_cluster.ClusterWorkers`` runs them as tasks on a Dask cluster. Every backend runs the same
:func:`run_guarded`, so a slot judges the same examples wherever it runs.

Backends depend on the worker loop and the configuration, never on the coordinator.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ._config import CampaignConfig
from ._events import WorkerFailed
from ._worker import InProcess, run_worker

if TYPE_CHECKING:
    import multiprocessing.process
    import multiprocessing.queues
    import multiprocessing.synchronize

    from ._owned import Inbox

__all__ = ["Backend", "LocalWorkers", "drain_queue", "run_guarded"]


def run_guarded(
    config: CampaignConfig,
    worker: int,
    put: Callable[[object], None],
    should_stop: Callable[[], bool],
    local: InProcess = InProcess(),
    inbox: Inbox | None = None,
    **resume: Any,
) -> None:
    """Run a worker; report its death to the coordinator, and always say it is done."""
    try:
        run_worker(config, worker, put, should_stop, local, inbox, **resume)
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

    run_guarded(config, worker, events.put, should_stop, inbox=inbox)


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


class Flag(Protocol):
    """A stop flag: a ``threading.Event``, a process one, or a cluster's."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class Backend(Protocol):
    """Where a campaign's worker slots run, as the coordinator loop sees it: ``slots`` workers,
    each ending with one ``("done", slot)`` on ``events`` (a ``queue.Queue``-like ``get``);
    ``stop`` tells them all to end; ``tell`` sends each the coordinator's decision; ``drain``
    takes what ``events`` holds now; ``end`` ends whatever still runs."""

    @property
    def slots(self) -> int: ...

    @property
    def events(self) -> queue.Queue[object] | multiprocessing.queues.Queue[object]: ...

    @property
    def stop(self) -> Flag: ...

    def tell(self, message: tuple[str, str, int]) -> None: ...

    def drain(self) -> list[object]: ...

    def end(self) -> None: ...


class LocalWorkers:
    """The campaign's workers, as processes (``workers >= 1``) or one thread (``workers=0``),
    with the event queue they share and an inbox each for the coordinator's decisions."""

    def __init__(self, config: CampaignConfig, local: InProcess) -> None:
        self.threaded = config.workers == 0
        if self.threaded:
            self.events: queue.Queue[object] | multiprocessing.queues.Queue[object] = queue.Queue()
            self.stop: threading.Event | multiprocessing.synchronize.Event = threading.Event()
            self.inboxes: list[queue.Queue[tuple[str, str, int]] | multiprocessing.queues.Queue[tuple[str, str, int]]] = [
                queue.Queue()
            ]
            thread = threading.Thread(
                target=run_guarded,
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
