"""The walk runner (:func:`dshfuzz.checker._run.rule_walk`): one loop over the heads of the
log for every walk, dispatch by string type (the rest reach only the every-event walks),
packed runs handed over by their first member, a crashing walk keeping what it reported,
and the per-rule cap applied to walks exactly as to passes; a walk may sit out until
another wakes it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from checker_logs import ev, header, minimal_events

from dshfuzz.checker import CheckOptions, RuleId, check_log, implemented_rules
from dshfuzz.checker._context import CheckContext, Shared
from dshfuzz.checker._finding import Finding
from dshfuzz.checker._run import EVERY_EVENT, PASSES, WALKS, EveryEventBut, resubscribe, rule_pass, rule_walk
from dshfuzz.model import encode_jsonl, parse_log

# rules no real pass or walk reports on these logs, so only the test walks speak for them
_RULE = RuleId.Z5
_OTHER = RuleId.Z4


def _log_with_odd_events() -> Any:
    """The minimal log with a packed run of five text deltas after seq 4, then an event that is
    no object and one whose type is a number (seqs renumbered to stay positions)."""
    events: list[Any] = minimal_events()
    deltas = [ev(0, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 1, "text": c}})
              for c in "abcde"]
    events[5:5] = deltas
    events.append(7)
    events.append({"type": 5, "seq": 0, "time": 1, "data": {}})
    for i, value in enumerate(events):
        if type(value) is dict:
            value["seq"] = i
    log = parse_log(encode_jsonl(header(), [events]))
    assert any(row.kind == "packed" for row in log.rows)
    return log


def _registered(*walks: type) -> Any:
    """Register ``walks`` (already decorated) for one check, then remove them again."""

    class _Scope:
        def __enter__(self) -> None:
            implemented_rules()  # the rule modules register first

        def __exit__(self, *exc: Any) -> None:
            for cls in walks:
                WALKS[:] = [w for w in WALKS if w.cls is not cls]

    return _Scope()


def _recording(into: list[int], name: str) -> type:
    """A walk class, to register, that records the position of each head it is handed in ``into``."""

    class Recording:
        def __init__(self, ctx: CheckContext) -> None:
            pass

        def visit(self, index: int, event: Any) -> None:
            into.append(index)

        def finish(self) -> None:
            return None

    Recording.__qualname__ = Recording.__name__ = name
    return Recording


def _check(log: Any, **options: Any) -> Any:
    return check_log(log, CheckOptions(rules=frozenset({_RULE, _OTHER}), **options))


def test_one_loop_hands_each_walk_the_heads_of_its_types_and_every_head_to_every_event_walks() -> None:
    log = _log_with_odd_events()
    seen: dict[str, list[Any]] = {"chunk": [], "turn": [], "every": [], "finished": []}

    @rule_walk(_RULE, types={"assistant/chunk": "chunk", "turn/start": "turn"})
    class Typed:
        def __init__(self, ctx: CheckContext) -> None:
            self.runs = ctx.packed_runs[1]

        def chunk(self, index: int, event: Any) -> None:
            seen["chunk"].append((index, self.runs.get(index)))

        def turn(self, index: int, event: Any) -> None:
            seen["turn"].append(index)

        def finish(self) -> None:
            seen["finished"].append("typed")

    @rule_walk(_OTHER, types=EVERY_EVENT)
    class Every:
        def __init__(self, ctx: CheckContext) -> None:
            pass

        def visit(self, index: int, event: Any) -> None:
            seen["every"].append(index)

        def finish(self) -> None:
            seen["finished"].append("every")

    with _registered(Typed, Every):
        report = _check(log, strict=True)
    ctx = CheckContext(log)
    heads, runs = ctx.packed_runs
    assert runs == {5: 10}  # the five deltas are one run, handed over by its first member
    assert seen["every"] == heads == [i for i in range(len(log.events)) if not 5 < i < 10]
    assert seen["chunk"] == [(4, None), (5, 10), (10, None), (11, None), (17, None), (18, None)]
    assert seen["turn"] == [0]
    assert seen["finished"] == ["typed", "every"]
    assert not report.findings and not report.internal_errors
    odd = [len(log.events) - 2, len(log.events) - 1]  # no object, a number as type
    assert odd[0] in seen["every"] and odd[1] in seen["every"]


def test_a_walk_that_raises_keeps_what_it_reported_and_the_other_walks_go_on() -> None:
    log = _log_with_odd_events()
    finished: list[str] = []

    @rule_walk(_RULE, types=("step/start",))
    class Crashing:
        def __init__(self, ctx: CheckContext) -> None:
            self.ctx = ctx

        def visit(self, index: int, event: Any) -> Iterator[Finding]:
            yield self.ctx.finding(_RULE, f"step/start at {index}", event=event)
            if index > 1:
                raise RuntimeError("a checker bug")

        def finish(self) -> None:
            finished.append("crashing")

    @rule_walk(_OTHER, types=("step/start", "step/end"))
    class Steady:
        def __init__(self, ctx: CheckContext) -> None:
            self.ctx = ctx
            self.count = 0

        def visit(self, index: int, event: Any) -> None:
            self.count += 1

        def finish(self) -> list[Finding]:
            finished.append("steady")
            return [self.ctx.finding(_OTHER, f"{self.count} step events", seq=0)]

    with _registered(Crashing, Steady):
        report = _check(log)
        with pytest.raises(RuntimeError, match="a checker bug"):
            _check(log, strict=True)
    assert [f.message for f in report.findings if f.rule == _RULE] == ["step/start at 1", "step/start at 16"]
    assert [f.message for f in report.findings if f.rule == _OTHER] == ["4 step events"]
    assert finished == ["steady"]  # the strict check stopped at the crash
    assert len(report.internal_errors) == 1
    assert report.internal_errors[0].startswith(f"{Crashing.__module__}.{Crashing.__qualname__} crashed:")


def test_a_walk_reporting_a_rule_it_does_not_declare_is_a_crash() -> None:
    log = _log_with_odd_events()

    @rule_walk(_RULE, types=("turn/end",))
    class Liar:
        def __init__(self, ctx: CheckContext) -> None:
            self.ctx = ctx

        def visit(self, index: int, event: Any) -> list[Finding]:
            return [self.ctx.finding(_OTHER, "not mine", event=event)]

        def finish(self) -> None:
            return None

    with _registered(Liar):
        report = _check(log)
    assert not report.findings
    assert "reported Z4, which it does not declare" in report.internal_errors[0]


def test_the_cap_keeps_a_walks_earliest_findings_whatever_order_it_reports_them_in() -> None:
    log = _log_with_odd_events()

    @rule_walk(_RULE, types=EVERY_EVENT)
    class Backwards:
        """Reports each head as it passes, and once more, in reverse, from finish."""

        def __init__(self, ctx: CheckContext) -> None:
            self.ctx = ctx
            self.pending: list[int] = []

        def visit(self, index: int, event: Any) -> list[Finding] | None:
            self.pending.append(index)
            if index % 3:
                return None
            return [self.ctx.finding(_RULE, f"early {index}", seq=index, line=index + 2)]

        def finish(self) -> Iterator[Finding]:
            for index in reversed(self.pending):
                yield self.ctx.finding(_RULE, f"late {index}", seq=index, line=index + 2)

    with _registered(Backwards):
        report = _check(log, strict=True, max_findings_per_rule=4)
    heads = CheckContext(log).packed_runs[0]
    arrivals = [f"early {i}" for i in heads if i % 3 == 0] + [f"late {i}" for i in reversed(heads)]

    def same_order_as_a_pass(ctx: CheckContext) -> Iterator[Finding]:
        for message in arrivals:
            index = int(message.split()[1])
            yield ctx.finding(_RULE, message, seq=index, line=index + 2)

    rule_pass(_RULE)(same_order_as_a_pass)
    try:
        as_pass = _check(log, strict=True, max_findings_per_rule=4)
    finally:
        PASSES.pop()
    assert report.to_json() == as_pass.to_json()
    assert sorted(f.message for f in report.findings[:4]) == ["early 0", "late 0", "late 1", "late 2"]
    assert report.findings[4].message == (f"{len(arrivals) - 4} more Z5 finding(s) suppressed from seq 3 on: "
                                          "the checker keeps the first 4 per rule")
    assert report.suppressed == {_RULE: len(arrivals) - 4}


def test_a_walk_woken_while_an_event_is_dispatched_is_handed_that_event_and_every_later_one() -> None:
    SLEEPER: Shared[Any] = Shared("a walk that sleeps until another wakes it")
    log = _log_with_odd_events()
    seen: list[int] = []

    @rule_walk(_RULE, types=(), publishes=(SLEEPER,))
    class Sleeper:
        def __init__(self, ctx: CheckContext) -> None:
            self.ctx = ctx
            ctx.memo(SLEEPER, lambda: self)

        def wake(self) -> None:
            self.types = EVERY_EVENT
            resubscribe(self.ctx)

        def visit(self, index: int, event: Any) -> None:
            seen.append(index)

        def finish(self) -> None:
            return None

    @rule_walk(_OTHER, types=("step/end",), reads=(SLEEPER,))
    class Alarm:
        def __init__(self, ctx: CheckContext) -> None:
            self.ctx = ctx

        def visit(self, index: int, event: Any) -> None:
            if not seen:
                self.ctx.memo(SLEEPER, lambda: None).wake()

        def finish(self) -> None:
            return None

    with _registered(Sleeper, Alarm):
        _check(log, strict=True)
    heads = CheckContext(log).packed_runs[0]
    first_step_end = next(i for i, e in enumerate(log.events) if type(e.raw) is dict and e.raw.get("type") == "step/end")
    assert seen == [i for i in heads if i >= first_step_end]


def test_the_scan_walk_publishes_what_every_event_says() -> None:
    """The scan keeps two facts, whatever the log's length: whether every event carries its
    position as seq, and where the last turn/end stands (position and line)."""
    from dshfuzz.checker import _run, _scan
    from dshfuzz.checker._finding import Report

    misplaced = _log_with_odd_events()
    del misplaced.events[2]  # every later seq is off its position
    for log in (_log_with_odd_events(), misplaced):
        ctx = CheckContext(log)
        sink = _run._Sink(Report(file=None, format_version=None, events=0, frames=0), set(), 1000, True)
        _run._run_walks(ctx, [w for w in WALKS if w.cls is _scan.TypeScan], sink)
        events = log.events
        turn_ends = [i for i, e in enumerate(events) if type(e.raw) is dict and e.raw.get("type") == "turn/end"]
        assert _scan.scanned(ctx) == _scan.Scanned(
            all(type(e.raw) is dict and type(e.raw.get("seq")) is int and e.raw["seq"] == i for i, e in enumerate(events)),
            turn_ends[-1] if turn_ends else -1,
            events[turn_ends[-1]].line if turn_ends else 0,
        )
        assert turn_ends


def test_no_walk_outlives_its_check_in_the_context() -> None:
    """The walks refer to the context; the context must not keep them (a cycle would keep the
    whole log alive after the check, and the CLI runs without the cyclic collector)."""
    import gc
    import weakref

    from dshfuzz.checker import _run
    from dshfuzz.checker._finding import Report

    log = _log_with_odd_events()
    del log.events[2]  # misplaced seqs: the seq walk is woken by the scan
    implemented_rules()
    ctx = CheckContext(log)
    sink = _run._Sink(Report(file=None, format_version=None, events=0, frames=0), set(_run.RULES), 1000, True)
    _run._run_walks(ctx, list(WALKS), sink)
    walk_classes = tuple(w.cls for w in WALKS)
    assert not [v for v in ctx._memo.values() if isinstance(v, walk_classes)]
    gone = weakref.ref(ctx)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del ctx, sink
        assert gone() is None
    finally:
        if enabled:
            gc.enable()


def test_checks_whose_walks_subscribe_alike_share_one_routing_and_a_walk_narrowing_its_own_gets_its_own() -> None:
    """The dispatch is worked out once per combination of subscription objects (``_run._routes``);
    a walk that builds its own ``types`` in a check is routed by that object, never by a stale
    routing that happened to share its identity."""
    from dshfuzz.checker import _run

    log = _log_with_odd_events()
    seen: list[tuple[str, int]] = []

    @rule_walk(_RULE, types={"turn/start": "turn"})
    class Narrowing:
        def __init__(self, ctx: CheckContext) -> None:
            if ctx.options.max_findings_per_rule == 7:  # this check routes step/start instead
                self.types = {"step/start": "step"}

        def turn(self, index: int, event: Any) -> None:
            seen.append(("turn", index))

        def step(self, index: int, event: Any) -> None:
            seen.append(("step", index))

        def finish(self) -> None:
            return None

    with _registered(Narrowing):
        _check(log, strict=True)
        shared = dict(_run._ROUTES)
        _check(log, strict=True)
        assert _run._ROUTES == shared, "a second check of the same walks reuses the routing"
        narrowed_at = len(seen)
        _check(log, strict=True, max_findings_per_rule=7)
        assert seen[:narrowed_at] == [("turn", 0), ("turn", 0)]
        assert seen[narrowed_at:] == [("step", i) for i, e in enumerate(log.events)
                                      if type(e.raw) is dict and e.raw.get("type") == "step/start"]
    stale = _run._Routes(({"turn/start": "visit"},))
    fresh: dict[str, str] = {"step/start": "visit"}
    _run._ROUTES[(id(fresh),)] = stale  # as if a dropped subscription's id had been reused
    assert _run._routes((fresh,)).route("step/start") == ((0, "visit"),)


def test_a_walk_seeing_every_event_but_some_types_is_handed_every_other_head_and_none_of_those() -> None:
    """:class:`EveryEventBut`: the heads of the types it names never reach it; every other head does,
    those of types no walk names, of no type and that are no object included, in order."""
    log = _log_with_odd_events()
    seen: list[int] = []
    every: list[int] = []

    all_but = rule_walk(_RULE, types=EveryEventBut({"assistant/chunk", "turn/start"}))(_recording(seen, "AllBut"))
    every_event = rule_walk(_OTHER, types=EVERY_EVENT)(_recording(every, "Every"))
    with _registered(all_but, every_event):
        report = _check(log, strict=True)
    assert not report.internal_errors
    def passed_over(i: int) -> bool:
        raw = log.events[i].raw
        return type(raw) is dict and raw.get("type") in ("assistant/chunk", "turn/start")
    assert seen == [i for i in every if not passed_over(i)]
    odd = [len(log.events) - 2, len(log.events) - 1]  # no object, a number as type
    assert odd[0] in seen and odd[1] in seen
    assert any(passed_over(i) for i in every) and len(seen) > 2
