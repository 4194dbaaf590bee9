"""The order a check runs its walks in comes from what they declare, not from the order their
modules happen to register them: a walk runs after the walks publishing the shared state it
``reads`` — constructed after them, handed each event after them (whatever either subscribes
to), finished after them — and otherwise in registration order. A read nobody publishes, a
state published twice, and a cycle are refused when the check is planned. The real checker
gives the same findings whatever order its walks registered in."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from checker_logs import header, minimal_events, session_log

from dshfuzz.checker import CheckOptions, RuleId, check_log, implemented_rules
from dshfuzz.checker._context import CheckContext, Shared
from dshfuzz.checker._run import EVERY_EVENT, WALKS, Walk, _ordered, _PLANS, rule_walk, state_walk
from dshfuzz.generators import generate
from dshfuzz.model import encode_jsonl, parse_log
from dshfuzz.mutators import MUTATORS, Inapplicable, apply_seeded

_RULE = RuleId.Z5


def test_a_reader_registered_before_its_producer_still_runs_after_it() -> None:
    COUNT: Shared[list[int]] = Shared("how many events the producer has seen")
    log = session_log(header(), minimal_events())
    calls: list[tuple[str, Any]] = []

    @rule_walk(_RULE, types=("assistant/message", "step/end"), reads=(COUNT,))
    class Reader:  # registered first, subscribed to two types only
        def __init__(self, ctx: CheckContext) -> None:
            self.seen = ctx.memo(COUNT, lambda: [-1])
            calls.append(("constructed after", self.seen[0]))

        def visit(self, index: int, event: Any) -> None:
            calls.append(("producer has seen", (index, self.seen[0])))

        def finish(self) -> None:
            calls.append(("finished after", self.seen[0]))

    @state_walk(types=EVERY_EVENT, publishes=(COUNT,))
    class Producer:  # registered second, handed every event
        def __init__(self, ctx: CheckContext) -> None:
            self.count = ctx.memo(COUNT, lambda: [0])

        def visit(self, index: int, event: Any) -> None:
            self.count[0] = index + 1

        def finish(self) -> None:
            self.count[0] = -2

    implemented_rules()
    try:
        report = check_log(log, CheckOptions(rules=frozenset({_RULE}), strict=True))
    finally:
        WALKS[:] = [w for w in WALKS if w.cls not in (Reader, Producer)]
    assert not report.internal_errors
    visits = [seen for what, seen in calls if what == "producer has seen"]
    assert calls[0] == ("constructed after", 0), calls
    assert visits and all(count == index + 1 for index, count in visits), visits
    assert calls[-1] == ("finished after", -2), calls


def _walk(name: str, order: int, reads: tuple[Shared[Any], ...] = (), publishes: tuple[Shared[Any], ...] = ()) -> Walk:
    return Walk(frozenset(), object, EVERY_EVENT, name, order, frozenset(reads), frozenset(publishes))


def test_the_order_is_registration_order_where_nothing_is_read() -> None:
    a, b, c = _walk("a", 3), _walk("b", 1), _walk("c", 2)
    assert [w.name for w in _ordered([a, b, c])] == ["b", "c", "a"]


def test_each_walk_comes_after_every_publisher_of_what_it_reads() -> None:
    x, y = Shared[int]("x"), Shared[int]("y")
    reader = _walk("reader", 1, reads=(x, y))
    middle = _walk("middle", 2, reads=(y,), publishes=(x,))
    first = _walk("first", 3, publishes=(y,))
    other = _walk("other", 4)
    assert [w.name for w in _ordered([reader, middle, first, other])] == ["first", "middle", "reader", "other"]


@pytest.mark.parametrize(
    "walks, complaint",
    [
        (lambda x, y: [_walk("lonely", 1, reads=(x,))], "lonely reads Shared('x'), which no walk publishes"),
        (lambda x, y: [_walk("one", 1, publishes=(x,)), _walk("two", 2, publishes=(x,))],
         "Shared('x') is published by both one and two"),
        (lambda x, y: [_walk("p", 1, reads=(y,), publishes=(x,)), _walk("q", 2, reads=(x,), publishes=(y,))],
         "the walks p, q read each other's state in a cycle"),
    ],
    ids=["read nobody publishes", "published twice", "cycle"],
)
def test_a_wrong_declaration_is_refused_when_the_check_is_planned(walks: Any, complaint: str) -> None:
    with pytest.raises(ValueError) as refused:
        _ordered(walks(Shared[int]("x"), Shared[int]("y")))
    assert str(refused.value) == complaint


def _logs() -> list[Any]:
    logs = []
    for version in (0, 1, 3):
        bases = list(generate(4, 60 + version, format_version=version, max_events=150, turns=(1, 4)))
        logs += [parse_log(encode_jsonl(b.header, b.batch_events())) for b in bases]
        rng = random.Random(version)
        for name, mutator in sorted(MUTATORS.items()):
            try:
                mutant = apply_seeded(mutator, bases[rng.randrange(len(bases))], rng.randrange(1 << 30))
            except Inapplicable:
                continue
            logs.append(parse_log(mutant.data))
    return logs


def _findings(log: Any) -> list[tuple[Any, ...]]:
    report = check_log(log, CheckOptions(strict=True))
    return sorted((f.rule, f.line or 0, f.seq if f.seq is not None else -1, f.message, f.refused_by) for f in report.findings)


def test_the_checker_finds_the_same_whatever_order_its_walks_registered_in() -> None:
    implemented_rules()
    logs = _logs()
    assert len(logs) > 100
    expected = [_findings(log) for log in logs]
    registered = list(WALKS)
    last = max(w.order for w in registered)
    try:
        WALKS[:] = [replace(w, order=last - w.order) for w in registered]  # as if every module registered backwards
        _PLANS.clear()
        for log, findings in zip(logs, expected):
            assert _findings(log) == findings, "\n".join(f"{e.raw}" for e in log.events)
    finally:
        WALKS[:] = registered
        _PLANS.clear()
