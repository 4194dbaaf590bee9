"""One checker shared by concurrent minimisations, their questions put to it together
(:class:`CheckerPool`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ._interface import CheckerUnderTest, CheckerVerdict, _Checker

__all__ = ["CheckerPool", "PooledChecker"]


class CheckerPool:
    """One checker shared by several threads that each judge through it (concurrent
    minimisations): their ``check_many`` questions wait until every member still at work
    has asked, and are then put to the checker as one ``check_many``, so that a checker
    that starts a process per question answers them all for one start.

    Invariant: a member that stops asking (its work done, or cut) calls :meth:`leave`, or
    the others would wait for it forever. Only one thread at a time runs the checker, the
    one whose question completed the round; a failure of that call is every asker's.
    """

    def __init__(self, checker: CheckerUnderTest, members: int) -> None:
        self.checker = checker
        self.active = members
        self.rounds = 0
        self._cond = threading.Condition()
        self._asks: dict[int, list[Path]] = {}
        self._answers: dict[int, list[CheckerVerdict] | BaseException] = {}

    def member(self, number: int) -> PooledChecker:
        return PooledChecker(self, number)

    def ask(self, member: int, paths: Sequence[Path]) -> list[CheckerVerdict]:
        with self._cond:
            self._asks[member] = list(paths)
            self._run_when_complete()
            while member not in self._answers:
                self._cond.wait()
            answer = self._answers.pop(member)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def leave(self) -> None:
        with self._cond:
            self.active -= 1
            self._run_when_complete()

    def _run_when_complete(self) -> None:
        if not self._asks or len(self._asks) < self.active:
            return
        asks, self._asks = self._asks, {}
        everything = [path for paths in asks.values() for path in paths]
        self.rounds += 1
        try:
            verdicts: list[CheckerVerdict] | BaseException = self.checker.check_many(everything)
        except BaseException as exc:  # noqa: BLE001 - every asker gets the failure, none waits forever
            verdicts = exc
        at = 0
        for member, paths in asks.items():
            self._answers[member] = verdicts if isinstance(verdicts, BaseException) else verdicts[at : at + len(paths)]
            at += len(paths)
        self._cond.notify_all()


@dataclass(slots=True)
class PooledChecker(_Checker):
    """A member's view of a :class:`CheckerPool`: the pooled checker's name and rules,
    its questions put through the pool."""

    pool: CheckerPool
    number: int

    @property
    def name(self) -> str:
        return self.pool.checker.name

    @property
    def rules(self) -> frozenset[str]:
        return self.pool.checker.rules

    def check(self, path: Path) -> CheckerVerdict:
        return self.pool.ask(self.number, [path])[0]

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        return self.pool.ask(self.number, paths)
