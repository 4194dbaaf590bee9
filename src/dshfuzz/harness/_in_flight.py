"""The in-flight queue: official verdicts a worker has asked for and not yet counted.

The official server judges beside Python, so a worker leaves each family of logs with it and
draws the next one meanwhile; :class:`InFlightVerdicts` keeps those families in order and decides
when one must be waited for. It knows nothing of Hypothesis or of findings: what a resolved family
yields (its fresh findings, of type ``W``) is the ``record`` callback's to say.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from ._judge import Example, JudgedExample, PendingJudgement

__all__ = ["InFlightVerdicts"]

W = TypeVar("W")

MAX_LAG_LOGS = 256
MAX_LAG_SECONDS = 5.0
"""At most this many logs, and about this much of the official server's time (by each
stratum's cost so far), wait for their official verdicts while the worker draws on; beyond
either the worker waits for the oldest. A judgement that must wait for the queue (shrinking,
minimising) drains it first, watching for the stop; a stop drops what is still queued."""

DRAIN_POLL_SECONDS = 0.002
"""How often a drain looks for the server's next replies and for the stop."""


class InFlightVerdicts(Generic[W]):
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
        record: Callable[[list[Example], list[JudgedExample], float], list[W]],
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
        self.late: list[W] = []
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
        found: list[W] = []
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

    def take_late(self) -> list[W]:
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
