"""The in-flight queue (``harness._in_flight.InFlightVerdicts``): its invariants, one test each.

The queue is driven here by stand-in judgements whose readiness each test sets, so that every
order of the server's replies can be stated exactly; the real ``PendingJudgement`` and server
are exercised by every campaign test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from dshfuzz.harness._in_flight import MAX_LAG_LOGS, MAX_LAG_SECONDS, InFlightVerdicts


@dataclass
class Judgement:
    """A family's judgement as the queue sees it: ``ready`` when the server has replied."""

    name: str
    suspects: tuple[str, ...] = ()
    is_ready: bool = False
    server_seconds: float = 0.0
    abandoned: bool = False
    results: int = 0

    def ready(self) -> bool:
        return self.is_ready

    def result(self) -> list[object]:
        self.results += 1
        return [f"verdict of {self.name}"]

    def abandon(self) -> None:
        self.abandoned = True

    def provisional(self) -> list[object]:
        return [SimpleNamespace(defects=[SimpleNamespace(signature=s) for s in self.suspects])]


def _family(name: str, logs: int = 1, stratum: str | None = "m") -> tuple[object, ...]:
    return tuple(SimpleNamespace(name=f"{name}.{i}", mutator=stratum) for i in range(logs))


@dataclass
class Harness:
    """A queue and what it recorded: the families counted, in order, and the stop switch."""

    lags: bool = True
    deep: bool = False
    known: set[str] = field(default_factory=set)
    stop: bool = False
    counted: list[str] = field(default_factory=list)
    found: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.queue: InFlightVerdicts[str] = InFlightVerdicts(
            lags=self.lags, deep=self.deep, record=self._record, known=self.known.__contains__,
            should_stop=lambda: self.stop,
        )

    def _record(self, batch: list[object], verdicts: list[object], cost: float) -> list[str]:
        name = batch[0].name.split(".")[0]  # type: ignore[attr-defined]
        self.counted.append(name)
        return [self.found[name]] if name in self.found else []

    def leave(self, name: str, judgement: Judgement, logs: int = 1, stratum: str | None = "m") -> bool:
        return self.queue.leave(_family(name, logs, stratum), judgement, 0.0)  # type: ignore[arg-type]


def test_on_an_example_budget_exactly_one_family_lags():
    h = Harness(deep=False)
    assert h.leave("a", Judgement("a"))
    assert h.queue.logs == 1
    h.queue.settle()  # what the worker does before leaving the next family
    assert h.counted == ["a"]  # resolved though the server had not replied: it was waited for
    assert h.leave("b", Judgement("b"))
    assert h.queue.logs == 1 and h.counted == ["a"]


def test_a_deep_queue_resolves_only_the_oldest_families_whose_verdicts_arrived():
    h = Harness(deep=True)
    a, b, c = Judgement("a"), Judgement("b", is_ready=True), Judgement("c", is_ready=True)
    for name, j in (("a", a), ("b", b), ("c", c)):
        assert h.leave(name, j)
    h.queue.settle()
    assert h.counted == []  # b and c replied, but a (the oldest) did not: first in, first out
    a.is_ready = True
    h.queue.settle()
    assert h.counted == ["a", "b", "c"]


def test_each_family_is_counted_once_and_an_abandoned_one_never():
    h = Harness(deep=True)
    a, b = Judgement("a", is_ready=True), Judgement("b")
    h.leave("a", a)
    h.leave("b", b)
    h.queue.settle()
    h.queue.settle()
    assert h.counted == ["a"] and a.results == 1
    h.queue.abandon()
    h.queue.settle(wait=True)
    assert h.counted == ["a"] and b.abandoned and b.results == 0 and h.queue.logs == 0


def test_a_deep_queue_waits_for_the_oldest_beyond_its_log_limit():
    h = Harness(deep=True)
    h.leave("a", Judgement("a"), logs=MAX_LAG_LOGS)
    h.queue.settle()
    assert h.counted == []
    h.leave("b", Judgement("b"), logs=1)
    h.queue.settle()
    assert h.counted == ["a"]  # MAX_LAG_LOGS + 1 logs in flight: the oldest is waited for
    assert h.queue.logs == 1


def test_a_deep_queue_waits_for_the_oldest_beyond_the_servers_expected_time():
    h = Harness(deep=True)
    slow = Judgement("slow", is_ready=True, server_seconds=2 * MAX_LAG_SECONDS)
    h.leave("slow", slow, stratum="bomb")
    h.queue.settle()  # the stratum's cost is learnt from its first resolved family
    h.leave("next", Judgement("next"), stratum="bomb")
    h.queue.settle()
    assert h.counted == ["slow", "next"]  # one more log of that stratum is more than the server's allowance
    h.leave("unseen", Judgement("unseen"), stratum="valid")
    h.queue.settle()
    assert h.counted == ["slow", "next", "unseen"]  # a stratum not seen yet costs the median of those seen


def test_a_deep_queue_lets_cheap_logs_lag_while_the_server_catches_up():
    h = Harness(deep=True)
    cheap = Judgement("cheap", is_ready=True, server_seconds=0.001)
    h.leave("cheap", cheap)
    h.queue.settle()
    for n in range(10):
        h.leave(f"f{n}", Judgement(f"f{n}"))
        h.queue.settle()
    assert h.counted == ["cheap"] and h.queue.logs == 10


def test_a_family_whose_other_judges_show_a_new_signature_is_not_left_in_flight():
    h = Harness(deep=True, known={"old"})
    assert h.leave("a", Judgement("a", suspects=("old",)))  # already found: no reason to wait
    assert not h.leave("b", Judgement("b", suspects=("new",)))  # decides at once: it shrinks in Hypothesis
    assert h.leave("c", Judgement("c", suspects=("new",)))  # each suspect is waited for once only


def test_without_lag_no_family_is_ever_left():
    h = Harness(lags=False, deep=True)
    assert not h.leave("a", Judgement("a", is_ready=True))
    assert h.queue.logs == 0


def test_drain_settles_every_family_in_order_and_late_findings_are_handed_over_once():
    h = Harness(deep=True)
    h.found["b"] = "finding of b"
    a, b = Judgement("a", is_ready=True), Judgement("b", is_ready=True)
    h.leave("a", a)
    h.leave("b", b)
    assert h.queue.drain()
    assert h.counted == ["a", "b"] and h.queue.logs == 0
    assert h.queue.take_late() == ["finding of b"]
    assert h.queue.take_late() == []


def test_a_stop_during_a_drain_abandons_what_is_in_flight():
    h = Harness(deep=True)
    a = Judgement("a")  # the server never replies
    h.leave("a", a)
    h.stop = True
    assert not h.queue.drain()
    assert a.abandoned and h.counted == [] and h.queue.logs == 0


@pytest.mark.parametrize("deep", [False, True])
def test_settle_with_wait_resolves_every_family(deep):
    h = Harness(deep=deep)
    judgements = [Judgement(n) for n in "abc"]
    for j in judgements:
        assert h.leave(j.name, j)
    h.queue.settle(wait=True)
    assert h.counted == ["a", "b", "c"]
