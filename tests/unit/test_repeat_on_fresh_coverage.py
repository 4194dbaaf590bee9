"""The campaign's power schedule: a stratum whose round reached coverage no log reached before
has the next round again (at most ``REPEATS_ON_FRESH_COVERAGE`` in a row), once every stratum
had its first round; otherwise the rounds are :func:`schedule`'s, in its order."""

from __future__ import annotations

from itertools import islice

from dshfuzz.harness._strategy import REPEATS_ON_FRESH_COVERAGE, RepeatOnFreshCoverage, schedule

STRATA = ["a", "b", "c"]


def _rounds() -> RepeatOnFreshCoverage:
    return RepeatOnFreshCoverage(iter([(s, 3) for s in STRATA] + [(s, 6) for s in STRATA] * 10), set(STRATA))


def test_without_fresh_coverage_the_rounds_are_the_schedules() -> None:
    plain = list(islice(schedule(["type-confusion", "seq-encoding"], seed=4), 12))
    assert list(islice(RepeatOnFreshCoverage(schedule(["type-confusion", "seq-encoding"], seed=4),
                                             {"type-confusion", "seq-encoding", None}), 12)) == plain


def test_no_repeat_in_the_first_cycle() -> None:
    rounds = _rounds()
    drawn = []
    for _ in range(3):
        drawn.append(next(rounds))
        rounds.credit(drawn[-1][0], 5)
    assert drawn == [("a", 3), ("b", 3), ("c", 3)]
    assert next(rounds) == ("c", 3), "c's round reached new coverage after every stratum had one: it goes again"


def test_a_stratum_repeats_while_it_finds_coverage_up_to_the_limit() -> None:
    rounds = _rounds()
    for _ in range(3):
        next(rounds)
    assert next(rounds) == ("a", 6)
    for _ in range(REPEATS_ON_FRESH_COVERAGE):
        rounds.credit("a", 1)
        assert next(rounds) == ("a", 6)
    rounds.credit("a", 1)
    assert next(rounds) == ("b", 6), "the limit reached: the schedule moves on"
    assert rounds.repeated == REPEATS_ON_FRESH_COVERAGE


def test_coverage_credited_to_another_stratum_earns_no_repeat() -> None:
    rounds = _rounds()
    for _ in range(4):
        next(rounds)
    rounds.credit("c", 9)  # a late verdict of c's round, arriving during a's
    rounds.credit("a", 0)
    assert next(rounds) == ("b", 6) and rounds.repeated == 0
