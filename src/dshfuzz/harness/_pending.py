"""A judgement whose official verdicts are still in flight (:class:`PendingJudgement`).

:meth:`Judge.submit` leaves the official verdicts in flight so that a campaign draws its
next logs while the server judges; judgements resolve in the order they were submitted,
because the server answers in order.
"""

from __future__ import annotations

from collections import deque
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ._classify import Disagreement
from ._example import Example, FreshCoverage, JudgedExample, Shape
from ._judges import CheckerVerdict

if TYPE_CHECKING:
    from dshfuzz.oracle.official import Flight, ReachedFirst

__all__ = ["PendingJudgement"]


class _Heard(NamedTuple):
    """What every judge but the official layers said of one log."""

    checked: tuple[CheckerVerdict, float]
    reference: CheckerVerdict | None
    twin: CheckerVerdict | None
    model: tuple[Shape, frozenset[str], bool] | Disagreement | None
    checker_lines: tuple[tuple[str, int], ...] = ()


class _Court(Protocol):
    """What a pending judgement needs of the judge that submitted it (:class:`._judge.Judge`):
    its judgements still open, in submission order, the official coverage not yet reported,
    the official server's seconds so far, and its classification of what every judge said."""

    _open: deque[PendingJudgement]
    _unreported: list[FreshCoverage]
    server_seconds: float

    def _judged(self, example: Example, heard: _Heard, official: dict[str, Any],
                reached: ReachedFirst | None = None) -> JudgedExample: ...


class _Abandoned(Exception):
    """Closes a judgement's flight without collecting it (:meth:`PendingJudgement.abandon`)."""


class PendingJudgement:
    """A judgement of some logs whose official verdicts may still be on their way
    (:meth:`Judge.submit`): every other judge has spoken. :meth:`result` waits for the
    official layers and classifies; it is idempotent, and resolves every judgement
    submitted before this one first, so the server's in-order replies reach their owners."""

    def __init__(
        self,
        judge: _Court,
        examples: tuple[Example, ...],
        heard: list[_Heard],
        stack: ExitStack,
        official: Flight[list[tuple[dict[str, Any], ReachedFirst | None]]],
        asked: list[bool],
    ) -> None:
        self.examples = examples
        self._judge = judge
        self._heard = heard
        self._stack = stack
        self._official = official
        self._asked = asked
        self._result: list[JudgedExample] | None = None
        self.server_seconds = 0.0
        """The official server's own seconds on these logs, once resolved."""

    @property
    def shapes(self) -> list[Shape]:
        """Each log's shape, as the reference oracle read it (known before the official verdicts)."""
        return [h.model[0] if isinstance(h.model, tuple) else Shape(0, 0, 0, 0) for h in self._heard]

    @property
    def checker_lines(self) -> tuple[tuple[str, int], ...]:
        """The checker lines these logs ran first (checker coverage on): known before the
        official verdicts, so a family left in flight still steers by them."""
        return tuple(line for h in self._heard for line in h.checker_lines)

    @property
    def resolved(self) -> bool:
        return self._result is not None

    def ready(self) -> bool:
        """Whether :meth:`result` would return without waiting for the server (exact for the
        oldest judgement not yet resolved: the server answers in order)."""
        return self._result is not None or self._official.ready()

    def abandon(self) -> None:
        """Give up on the official verdicts (a stopping campaign): the server, still judging,
        is discarded rather than waited for, and the logs count as never judged."""
        if self._result is None:
            self._close(_Abandoned())

    def provisional(self) -> list[JudgedExample]:
        """The judgement as it stands without the official layers: what the checker, the
        reference checker, the reference oracle and the mutator's declaration say. A campaign
        reads it to decide whether a log is worth waiting for; it is never a finding."""
        return [self._judge._judged(e, h, {}) for e, h in zip(self.examples, self._heard)]

    def result(self) -> list[JudgedExample]:
        """Every disagreement on each log among the judges, the official layers included."""
        if self._result is None:
            opened = self._judge._open
            while opened and opened[0] is not self:
                opened[0].result()
            served = self._judge.server_seconds
            try:
                answers = iter(self._official())
                verdicts = [next(answers) if asked else ({}, None) for asked in self._asked]
                self.server_seconds = self._judge.server_seconds - served
            except BaseException as exc:
                self._close(exc)
                raise
            self._close(None)
            self._result = [
                self._judge._judged(e, h, v, reached) for e, h, (v, reached) in zip(self.examples, self._heard, verdicts)
            ]
            self._judge._unreported.extend(
                FreshCoverage(e.mutator, reached.sites, reached.code)
                for e, (_, reached) in zip(self.examples, verdicts) if reached is not None and (reached.sites or reached.code)
            )
        return self._result

    def _close(self, exc: BaseException | None) -> None:
        opened = self._judge._open
        if self in opened:
            opened.remove(self)
        if exc is None:
            self._stack.close()
        else:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
