"""Where one worker's time goes: the ledger behind :class:`TimeSpent`.

The parts add up to the worker's wall time (the residue is ``other``), so a report can say what a
campaign spent on drawing, on each judge, on shrinking and on minimising, and what the official
server spent beside them.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable

from ._events import CampaignEvent, TimeSpent, charge

__all__ = ["SERVER", "TimeLedger"]

SERVER = "official server"
"""The key under which a worker's judging counters carry the official server's own seconds."""

LEDGER_SECONDS = 1.0
"""A worker reports where its time went at most this often (and once at the end)."""


class TimeLedger:
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
