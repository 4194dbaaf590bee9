"""Concurrent minimisations share a batch checker's invocations: their questions wait for
each other and go to the checker as one, and nobody waits for a member that has left."""

from __future__ import annotations

import threading
from pathlib import Path

from dshfuzz.harness import CheckerVerdict, ReportedFinding
from dshfuzz.harness._judges import CheckerPool


class _Counting:
    name = "counting"
    rules = frozenset({"R1"})

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def check(self, path: Path) -> CheckerVerdict:
        return self.check_many([path])[0]

    def check_many(self, paths):
        self.calls.append([p.name for p in paths])
        return [CheckerVerdict((ReportedFinding("R1", "error", len(p.name)),)) for p in paths]

    def close(self) -> None:
        pass


def _ask_together(pool: CheckerPool, questions: dict[int, list[Path]], leave_early: set[int] = frozenset()):
    answers: dict[int, list[CheckerVerdict]] = {}

    def member(number: int) -> None:
        try:
            if number not in leave_early:
                answers[number] = pool.member(number).check_many(questions[number])
        finally:
            pool.leave()

    threads = [threading.Thread(target=member, args=(n,)) for n in questions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a member waits forever"
    return answers


def test_every_members_question_goes_to_the_checker_in_one_call_and_each_gets_its_own_answers():
    checker = _Counting()
    pool = CheckerPool(checker, 3)
    questions = {0: [Path("a"), Path("bb")], 1: [Path("ccc")], 2: [Path("dddd"), Path("e"), Path("ff")]}
    answers = _ask_together(pool, questions)
    assert len(checker.calls) == 1 and sorted(checker.calls[0]) == sorted(p.name for q in questions.values() for p in q)
    for number, paths in questions.items():
        assert [v.findings[0].seq for v in answers[number]] == [len(p.name) for p in paths]


def test_a_member_that_leaves_without_asking_holds_nobody_up():
    checker = _Counting()
    pool = CheckerPool(checker, 3)
    answers = _ask_together(pool, {0: [Path("a")], 1: [Path("bb")], 2: [Path("ccc")]}, leave_early={1})
    assert set(answers) == {0, 2} and len(checker.calls) >= 1
    assert sorted(n for call in checker.calls for n in call) == ["a", "ccc"]


def test_a_failing_checker_call_is_every_askers_failure():
    class Broken(_Counting):
        def check_many(self, paths):
            raise RuntimeError("the checker broke")

    pool = CheckerPool(Broken(), 2)
    errors: list[BaseException] = []

    def member(number: int) -> None:
        try:
            pool.member(number).check(Path(str(number)))
        except RuntimeError as exc:
            errors.append(exc)
        finally:
            pool.leave()

    threads = [threading.Thread(target=member, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads) and len(errors) == 2
