"""The runner: rule passes register themselves here and :func:`check_log` runs the
ones whose rules apply to the log's format version.

A pass is a function ``(ctx) -> Iterable[Finding]`` declared with
:func:`rule_pass` for the rule ids it may report. Passes are independent, and
each walks what it needs once.

A hostile log can make one rule fire on every event (a million seq gaps), so a
rule keeps at most ``CheckOptions.max_findings_per_rule`` findings (default
:data:`~dshfuzz.checker._context.MAX_FINDINGS_PER_RULE`): the earliest in log
order. The rest are counted in :attr:`Report.suppressed` and summed up by one
more finding of that rule, located at the first one suppressed, which says how
many were dropped. Memory stays bounded by the cap, not by the log.

A pass that raises is a checker bug. In production the report still comes back,
with the traceback in :attr:`Report.internal_errors` (the CLI turns it into exit
status 2); with ``CheckOptions(strict=True)`` the exception propagates, which is
how the tests prove that no pass ever raises.

A *walk* (:func:`rule_walk`) is the other kind of pass, the one a streaming reader can
feed: a class constructed with the :class:`CheckContext` whose handlers the runner
calls event by event, in log order, in ONE loop shared by every walk, then
``finish()`` once; handlers and ``finish`` return ``None`` (nothing to report, the
common case: no allocation) or an iterable of findings. The loop reads each event's
type once and dispatches it through one dict from type to the handlers subscribed to
it, followed by the handlers of the walks that want every event; an event whose type
is not a string (or that is not an object) reaches only the latter. The loop visits
the *heads* of :attr:`CheckContext.packed_runs`: the members of a packed chunk run
after its first share its type, turn, step and chunk kind, so a walk is handed the
first and, when it must account for the rest, finds the run's end in
``ctx.packed_runs[1]`` (keyed by the first member's position). A walk that raises is
a checker bug treated as a crashing pass is: it keeps the findings it reported before
the crash, leaves the loop (no more handlers, no ``finish``), and the others go on.
A shared derived state that reports nothing is a :func:`state_walk` (the type scan of
:mod:`._scan` is one): it runs on every check, before its readers. A walk may sit out
(``types = ()``) until another wakes it (:func:`resubscribe`), as the seq rules wait
for the scan's first misplaced seq.

Step 2 (the passes that still read ``ctx.memo`` at random) fits the same loop: each
shared state they read (the upgraded events, the tool ledger, the lenient surface fold)
becomes a state walk registered before its readers, so that when a reader's handler runs
for an event the state already includes it, and a reader asks it only about the events
behind the loop. The readers keep their pending state (an open step, unanswered calls,
an armed claim) and decide the end-of-log verdicts in ``finish()``, which runs in
registration order, so a state's ``finish`` precedes its readers'. Then the events behind
the loop can be dropped and the reader can stream.
"""

from __future__ import annotations

import heapq
import itertools
import importlib
import importlib.util
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from os import PathLike

from dshfuzz.model import MISSING, Event, SessionLog

from ._context import CheckContext, CheckOptions
from ._finding import Finding, Report
from .rules import RULES, OfficialLayer, RuleId

__all__ = [
    "EVERY_EVENT",
    "PASSES",
    "RULE_MODULES",
    "WALKS",
    "Pass",
    "Walk",
    "check_log",
    "check_path",
    "implemented_rules",
    "rule_pass",
    "resubscribe",
    "rule_walk",
    "state_walk",
]

RULE_MODULES = ("_persistence", "_surface", "_framing", "_engine", "_plugin", "_wire", "_migration")
"""The modules holding rule passes, imported (when present) on the first check."""

PassFn = Callable[[CheckContext], Iterable[Finding]]


_registered = itertools.count()
"""Passes and walks count their registration together: a report lists the rules it
suppressed in the registration order of their reporters (see :class:`_Sink`)."""


@dataclass(frozen=True, slots=True)
class Pass:
    rules: frozenset[RuleId]
    fn: PassFn
    order: int = 0

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


PASSES: list[Pass] = []

WalkHandler = Callable[[int, Event], "Iterable[Finding] | None"]


class _EveryEvent:
    def __repr__(self) -> str:
        return "EVERY_EVENT"


EVERY_EVENT: Any = _EveryEvent()
"""``types`` of a walk whose ``visit`` sees every head, whatever its type."""


@dataclass(frozen=True, slots=True, eq=False)
class Walk:
    """A registered walk: the class, the rules it reports, its subscriptions (``types``: a
    mapping from event type to the name of the handler method, or :data:`EVERY_EVENT`),
    and its name in crash reports."""

    rules: frozenset[RuleId]
    cls: type
    types: Mapping[str, str] | _EveryEvent
    name: str
    order: int


WALKS: list[Walk] = []
_loaded = False
_RULE_ORDER = {rid: i for i, rid in enumerate(RULES)}


def rule_pass(*rule_ids: RuleId) -> Callable[[PassFn], PassFn]:
    """Register the decorated function as the pass reporting ``rule_ids``."""
    if not rule_ids:
        raise ValueError("a rule pass must declare the rules it reports")

    def register(fn: PassFn) -> PassFn:
        PASSES.append(Pass(frozenset(RuleId(r) for r in rule_ids), fn, next(_registered)))
        return fn

    return register


def rule_walk(*rule_ids: RuleId, types: Iterable[str] | Mapping[str, str] | _EveryEvent) -> Callable[[type], type]:
    """Register the decorated class as the walk reporting ``rule_ids``. ``types`` names the
    event types whose heads go to its ``visit(index, event)`` (or, as a mapping, each type's
    handler method), or is :data:`EVERY_EVENT`. The class is constructed with the context
    once per check and may narrow its subscriptions by setting ``self.types`` (e.g. to
    ``()`` when the log already answers its question); it must define ``finish()``."""
    if not rule_ids:
        raise ValueError("a rule walk must declare the rules it reports")
    declared = types if types is EVERY_EVENT or isinstance(types, Mapping) else {t: "visit" for t in types}

    def register(cls: type) -> type:
        cls.types = declared
        name = f"{cls.__module__}.{cls.__qualname__}"
        WALKS.append(Walk(frozenset(RuleId(r) for r in rule_ids), cls, declared, name, next(_registered)))
        return cls

    return register


def state_walk(*, types: Iterable[str] | Mapping[str, str] | _EveryEvent) -> Callable[[type], type]:
    """Register the decorated class as a walk that reports nothing but derives state other
    walks and passes read (e.g. the positions by type): it runs on every check, and, being
    registered before its readers, sees each event before them and finishes before them."""

    def register(cls: type) -> type:
        cls.types = types if types is EVERY_EVENT or isinstance(types, Mapping) else {t: "visit" for t in types}
        WALKS.append(Walk(frozenset(), cls, cls.types, f"{cls.__module__}.{cls.__qualname__}", next(_registered)))
        return cls

    return register


def _load_rule_modules() -> None:
    global _loaded
    if _loaded:
        return
    for name in RULE_MODULES:
        qualified = f"{__package__}.{name}"
        if importlib.util.find_spec(qualified) is not None:
            importlib.import_module(qualified)
    _loaded = True


def implemented_rules() -> frozenset[RuleId]:
    """The rule ids some registered pass or walk reports."""
    _load_rule_modules()
    return frozenset().union(*(p.rules for p in PASSES), *(w.rules for w in WALKS))


def _location_key(f: Finding) -> tuple[int, int, int, int]:
    return (f.line is None, f.line or 0, f.seq if f.seq is not None else -1, _RULE_ORDER[f.rule])


@dataclass(slots=True)
class _Capped:
    """One rule's findings under the cap: the ``cap`` earliest by location (a max-heap on
    the negated location, ties broken by arrival), and a tally of the rest."""

    cap: int
    kept: list[tuple[tuple[int, ...], int, Finding]] = field(default_factory=list)
    dropped: int = 0
    first_dropped: Finding | None = None
    refused_by: set[OfficialLayer] = field(default_factory=set)

    def add(self, finding: Finding, arrival: int) -> None:
        entry = (tuple(-k for k in _location_key(finding)), -arrival, finding)
        if len(self.kept) < self.cap:
            heapq.heappush(self.kept, entry)
        elif self.kept and entry > self.kept[0]:
            self.drop(heapq.heapreplace(self.kept, entry)[2])
        else:
            self.drop(finding)

    def drop(self, finding: Finding) -> None:
        self.dropped += 1
        self.refused_by.update(finding.refused_by)
        first = self.first_dropped
        if first is None or _location_key(finding) < _location_key(first):
            self.first_dropped = finding

    def findings(self) -> list[Finding]:
        """The kept findings, then (when the cap was hit) the one that says what was dropped:
        the first dropped finding's coordinates, with the count as its message."""
        out = [entry[2] for entry in self.kept]
        first = self.first_dropped
        if first is None:
            return out
        where = f"seq {first.seq}" if first.seq is not None else f"line {first.line}" if first.line is not None else "there"
        message = (f"{self.dropped} more {first.rule} finding(s) suppressed from {where} on: "
                   f"the checker keeps the first {self.cap} per rule")
        context = {"suppressed": self.dropped, "cap": self.cap, "fromSeq": first.seq, "fromLine": first.line}
        refused_by = tuple(layer for layer in OfficialLayer if layer in self.refused_by)
        out.append(replace(first, message=message, context=context, refused_by=refused_by))
        return out


class _Sink:
    """Where every pass and walk hands its findings: the rule check, the selection and the
    cap, with one arrival counter (the cap's tie-break within a rule). The rules come out
    in the order sequential passes would first report them: by their first reporter's
    registration, then by first arrival (what orders :attr:`Report.suppressed`)."""

    __slots__ = ("report", "selected", "cap", "strict", "by_rule", "arrival", "first")

    def __init__(self, report: Report, selected: set[RuleId], cap: int, strict: bool) -> None:
        self.report = report
        self.selected = selected
        self.cap = cap
        self.strict = strict
        self.by_rule: dict[RuleId, _Capped] = {}
        self.arrival = 0
        self.first: dict[RuleId, tuple[int, int]] = {}

    def take(self, findings: Iterable[Finding], unit: Pass | Walk) -> None:
        selected, by_rule, rules = self.selected, self.by_rule, unit.rules
        for f in findings:
            if f.rule not in rules:
                raise AssertionError(f"{unit.name} reported {f.rule}, which it does not declare")
            if f.rule not in selected:
                continue
            capped = by_rule.get(f.rule)
            if capped is None:
                capped = by_rule[f.rule] = _Capped(self.cap)
                self.first[f.rule] = (unit.order, self.arrival)
            capped.add(f, self.arrival)
            self.arrival += 1

    def ordered(self) -> list[tuple[RuleId, _Capped]]:
        return sorted(self.by_rule.items(), key=lambda item: self.first[item[0]])

    def crashed(self, name: str) -> None:
        """Record the exception being handled as ``name``'s crash (re-raise it when strict)."""
        if self.strict:
            raise
        import traceback  # only a checker bug gets here

        self.report.internal_errors.append(f"{name} crashed:\n{traceback.format_exc()}")


_Subscriber = tuple[WalkHandler, Walk]


def _dispatch(live: dict[Walk, Any]) -> tuple[dict[str, tuple[_Subscriber, ...]], tuple[_Subscriber, ...]]:
    """The one dict from event type to its subscribers (each followed by the every-event
    ones), and the every-event subscribers alone, in registration order."""
    every: list[_Subscriber] = []
    typed: dict[str, list[_Subscriber]] = {}
    for walk, instance in live.items():
        types = instance.types
        if types is EVERY_EVENT:
            every.append((instance.visit, walk))
        else:
            for kind, method in (types.items() if isinstance(types, Mapping) else ((t, "visit") for t in types)):
                typed.setdefault(kind, []).append((getattr(instance, method), walk))
    return {kind: (*subs, *every) for kind, subs in typed.items()}, tuple(every)


class _Loop:
    """The loop's one piece of shared state: whether some walk changed its subscriptions."""

    __slots__ = ("changed",)

    def __init__(self) -> None:
        self.changed = False


def resubscribe(ctx: CheckContext) -> None:
    """Tell the walk loop that a walk changed its ``types``: the change holds from the event
    being dispatched on (a walk that subscribes while it is dispatched is handed it too, after
    the walks already served), so a walk may sit out until another walk wakes it."""
    ctx.memo(_LOOP, _Loop).changed = True


_LOOP = "walk-loop"


WINDOWED = __import__("os").environ.get("DSHFUZZ_WINDOWED") == "1"
"""Probe (temporary, while the streaming reader is built): hand the walks only what a
streaming reader can, ``ctx.events`` readable at the current head's row alone and
``ctx.packed_runs[1]`` holding the current run alone."""


class _Window:
    """``ctx.events`` as a streaming reader gives it: the events read so far (``len``), of which
    only the current head and the rest of its packed run can be read."""

    __slots__ = ("source", "lo", "hi", "count")

    def __init__(self, source: list[Event]) -> None:
        self.source = source
        self.lo = self.hi = self.count = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> Event:
        if i.__class__ is int and self.lo <= i < self.hi:
            return self.source[i]
        raise LookupError(f"streamed events: position {i} is not the current row ({self.lo}..{self.hi - 1})")

    def __iter__(self):
        raise LookupError("streamed events cannot be iterated")


def _run_walks(ctx: CheckContext, walks: list[Walk], sink: _Sink) -> None:
    """Construct the walks, hand them the heads of the log in one loop, then finish them."""
    if WINDOWED:
        heads, runs = ctx.packed_runs
        window = _Window(ctx.events)
        current: dict[int, int] = {}
        ctx._packed = (heads, current)
        ctx.events = window  # type: ignore[assignment]
        ctx._probe = (heads, runs, window, current)  # type: ignore[attr-defined]
    loop = ctx.memo(_LOOP, _Loop)
    live: dict[Walk, Any] = {}
    for walk in walks:
        try:
            live[walk] = walk.cls(ctx)
        except Exception:
            sink.crashed(walk.name)
    constructed = [*live.values(), loop]
    try:
        _loop_and_finish(ctx, loop, live, sink)
    finally:
        ctx.release(constructed)


def _loop_and_finish(ctx: CheckContext, loop: _Loop, live: dict[Walk, Any], sink: _Sink) -> None:
    table, every = _dispatch(live)
    probe = getattr(ctx, "_probe", None)
    if probe is not None:
        heads, runs, window, current = probe
        events = window.source
    else:
        heads, events = ctx.packed_runs[0], ctx.events
    if table or every:
        take = sink.take
        for i in heads:
            ev = events[i]
            if probe is not None:
                current.clear()
                stop = runs.get(i)
                if stop is not None:
                    current[i] = stop
                window.lo, window.hi = i, stop or i + 1
                window.count = window.hi
            raw = ev.raw
            if raw.__class__ is dict:
                kind = raw.get("type")
                subscribers = table.get(kind, every) if kind.__class__ is str else every
            else:
                subscribers = every
            for handle, walk in subscribers:
                try:
                    found = handle(i, ev)
                    if found is not None:
                        take(found, walk)
                except Exception:
                    sink.crashed(walk.name)
                    del live[walk]
                    table, every = _dispatch(live)
            if loop.changed:
                table, every = _woken(ctx, loop, live, subscribers, i, ev, sink)
    if probe is not None:
        current.clear()
        window.lo = window.hi = 0
        window.count = len(events)
    for walk, instance in live.items():
        try:
            found = instance.finish()
            if found is not None:
                sink.take(found, walk)
        except Exception:
            sink.crashed(walk.name)


def _woken(
    ctx: CheckContext, loop: _Loop, live: dict[Walk, Any], served: tuple[_Subscriber, ...], i: int, ev: Event, sink: _Sink
) -> tuple[dict[str, tuple[_Subscriber, ...]], tuple[_Subscriber, ...]]:
    """Rebuild the dispatch after a change of subscriptions, and hand the event being
    dispatched to the walks that subscribed to it meanwhile."""
    done = {walk for _, walk in served}
    raw = ev.raw
    kind = raw.get("type") if raw.__class__ is dict else None
    while loop.changed:
        loop.changed = False
        table, every = _dispatch(live)
        for handle, walk in table.get(kind, every) if kind.__class__ is str else every:
            if walk in done or walk not in live:
                continue
            done.add(walk)
            try:
                found = handle(i, ev)
                if found is not None:
                    sink.take(found, walk)
            except Exception:
                sink.crashed(walk.name)
                del live[walk]
                loop.changed = True
    return _dispatch(live)


def check_log(log: SessionLog, options: CheckOptions = CheckOptions()) -> Report:
    """Run every applicable rule over ``log``; never raises unless ``options.strict``."""
    _load_rule_modules()
    ctx = CheckContext(log, options)
    selected = {
        rid
        for rid, rule in RULES.items()
        if rule.applies_to(ctx.version) and (options.rules is None or rid in options.rules)
    }
    report = Report(
        file=log.path,
        format_version=None if log.format_version is MISSING else log.format_version,
        events=len(log.events),
        frames=len(log.frames),
    )
    sink = _Sink(report, selected, max(options.max_findings_per_rule, 0), options.strict)
    _run_walks(ctx, [w for w in WALKS if not w.rules or not selected.isdisjoint(w.rules)], sink)
    for p in PASSES:
        if selected.isdisjoint(p.rules):
            continue
        try:
            sink.take(p.fn(ctx), p)
        except Exception:
            sink.crashed(p.name)
    for rule, capped in sink.ordered():
        report.findings.extend(capped.findings())
        if capped.dropped:
            report.suppressed[rule] = capped.dropped
    report.findings.sort(key=_location_key)
    return report


def check_path(path: str | PathLike[str], options: CheckOptions = CheckOptions()) -> Report:
    """Read ``path`` through the model's reader and check it. Raises only ``OSError``
    (an unreadable file)."""
    from dshfuzz.model import read_log

    return check_log(read_log(path), options)
