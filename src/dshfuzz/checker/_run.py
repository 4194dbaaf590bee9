"""The runner: rule passes register themselves here and :func:`check_log` runs the
ones whose rules apply to the log's format version.

A pass is a function ``(ctx) -> Iterable[Finding | FindingRun]`` declared with
:func:`rule_pass` for the rule ids it may report. Passes are independent, and
each walks what it needs once.

A hostile log can make one rule fire on every event (a million seq gaps), so a
rule keeps at most ``CheckOptions.max_findings_per_rule`` findings (default
:data:`~dshfuzz.checker._context.MAX_FINDINGS_PER_RULE`): the earliest in log
order. The rest are counted in :attr:`Report.suppressed` and summed up by one
more finding of that rule, located at the first one suppressed, which says how
many were dropped. Memory stays bounded by the cap, not by the log. So is time, for findings a
rule hands over as a :class:`FindingRun` (one per run of empty lines, say): the members are built
in location order only while the cap may keep them, and the rest are counted at once.

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
:mod:`._scan` is one): it runs on every check, and declares the :class:`Shared` state it
``publishes``; a walk or pass that reads it declares it in ``reads``. The engine orders the
walks of a check from those declarations, not from the order their modules happened to be
imported: see "Order" below. A walk may sit out
(``types = ()``) until another wakes it (:func:`resubscribe`), as the seq rules wait
for the scan's first misplaced seq.

Streaming. :func:`check_stream` (what :func:`check_path` and ``dshfuzz check`` run) feeds the
loop from a streamed read (:func:`~dshfuzz.model.stream_log`): the walks are constructed once the
header is read and handed each row's head as the reader parses it; the events are dropped after,
and the physical passes run on the compact physical layer the read keeps. :func:`check_log` runs
the same loop over a whole model under the same restrictions, so both give the same report: during
the loop ``ctx.events`` can be read only at the head being handed over (and the rest of its packed
run), ``len(ctx.events)`` counts the events read so far, and ``ctx.packed_runs[1]`` holds the
current run alone. A walk keeps what it still needs (its pending state: an open step, unanswered
calls, the surface) and nothing else, so a check's memory follows the surface and the pending
state, not the length of the log. Shared derived state (the type scan, the tool ledger, the
lenient surface fold) is a state walk, which the engine orders before its readers.

Order. A check's walks run in one order (:func:`_ordered`): every walk after the walks
publishing what it reads, and otherwise in registration order. That one order is the order
of construction, of the handlers given each event (whatever a walk subscribes to), and of
``finish()``; so a reader's constructor finds its producer constructed, each of its handlers
sees the producer already updated with the event at hand, and its ``finish`` sees what the
producer's ``finish`` published. Passes run after every walk has finished. A read that no
walk publishes, two walks publishing one state, or a cycle is a :class:`ValueError`
when the check is planned: a wrong declaration never runs.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import importlib
import importlib.util
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar
from os import PathLike

from dshfuzz.contracts.rules import RULES, OfficialLayer, RuleId
from dshfuzz.model import (
    DEFAULT_LIMITS,
    MISSING,
    Compression,
    Event,
    FileBytes,
    Limits,
    SessionLog,
    StreamedLog,
    compression_by_name,
    stream_log,
)

from ._causes import SUMMARISES, attribute
from ._context import CheckContext, CheckOptions, EventView, Shared
from ._finding import Finding, Report

__all__ = [
    "EVERY_EVENT",
    "EveryEventBut",
    "FindingRun",
    "PASSES",
    "RULE_MODULES",
    "WALKS",
    "Pass",
    "Subscriptions",
    "Walk",
    "check_log",
    "check_path",
    "check_stream",
    "implemented_rules",
    "rule_pass",
    "resubscribe",
    "rule_walk",
    "state_walk",
    "stream_check",
]

RULE_MODULES = ("_persistence", "_surface", "_framing", "_engine", "_plugin", "_wire", "_content", "_migration", "_relations", "_released")
"""The modules holding rule passes, imported (when present) on the first check."""



@dataclass(frozen=True, slots=True)
class FindingRun:
    """``count`` findings of ``rule`` a pass or walk hands over as one, member ``k`` built by
    ``build(k)`` only when the cap may keep it. Invariants, which let the sink count the members
    it drops without building them: every member is of ``rule`` and refused by ``refused_by``
    exactly, and their location keys (line, seq, rule) strictly increase with ``k``."""

    rule: RuleId
    count: int
    build: Callable[[int], Finding]
    refused_by: tuple[OfficialLayer, ...]


Found = Iterable[Finding | FindingRun]
"""What a pass returns and a walk's handler may: findings, some of them runs."""

PassFn = Callable[[CheckContext], Found]


_registered = itertools.count()
"""Passes and walks count their registration together: a report lists the rules it
suppressed in the registration order of their reporters (see :class:`_Sink`)."""


@dataclass(frozen=True, slots=True)
class Pass:
    rules: frozenset[RuleId]
    fn: PassFn
    order: int = 0
    reads: frozenset[Shared[Any]] = frozenset()

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


PASSES: list[Pass] = []

WalkHandler = Callable[[int, Event], "Found | None"]


class _EveryEvent(enum.Enum):
    """The one value :data:`EVERY_EVENT` (an enum member, so that ``is`` narrows it)."""

    EVERY_EVENT = "EVERY_EVENT"

    def __repr__(self) -> str:
        return "EVERY_EVENT"


EVERY_EVENT: Final = _EveryEvent.EVERY_EVENT
"""``types`` of a walk whose ``visit`` sees every head, whatever its type."""

class EveryEventBut(frozenset[str]):
    """``types`` of a walk whose ``visit`` sees every head but those of these types: the heads of
    any other type, of no type, and those that are no object. The loop passes over the heads of
    the common types it names without a call, where a walk seeing every head would be called
    for each only to return at once."""

    __slots__ = ()


Subscriptions = Mapping[str, str] | Iterable[str] | _EveryEvent | EveryEventBut
"""A walk's ``types``: each type's handler method, the types whose heads go to ``visit``,
:data:`EVERY_EVENT`, or :class:`EveryEventBut` some types."""


@dataclass(frozen=True, slots=True, eq=False)
class Walk:
    """A registered walk: the class, the rules it reports, its subscriptions (``types``: a
    mapping from event type to the name of the handler method, or :data:`EVERY_EVENT`),
    its name in crash reports, its registration number, and the shared state it reads and
    (a state walk only) publishes."""

    rules: frozenset[RuleId]
    cls: type
    types: Mapping[str, str] | _EveryEvent | EveryEventBut
    name: str
    order: int
    reads: frozenset[Shared[Any]] = frozenset()
    publishes: frozenset[Shared[Any]] = frozenset()


WALKS: list[Walk] = []
_loaded = False
_RULE_ORDER = {rid: i for i, rid in enumerate(RULES)}


def rule_pass(*rule_ids: RuleId, reads: Iterable[Shared[Any]] = ()) -> Callable[[PassFn], PassFn]:
    """Register the decorated function as the pass reporting ``rule_ids``, reading the shared
    state ``reads`` (published by state walks, all finished before any pass runs)."""
    if not rule_ids:
        raise ValueError("a rule pass must declare the rules it reports")

    def register(fn: PassFn) -> PassFn:
        PASSES.append(Pass(frozenset(RuleId(r) for r in rule_ids), fn, next(_registered), frozenset(reads)))
        return fn

    return register


_C = TypeVar("_C", bound=type)


def _declared(types: Iterable[str] | Mapping[str, str] | _EveryEvent | EveryEventBut) -> Mapping[str, str] | _EveryEvent | EveryEventBut:
    """A walk's declared ``types`` as the loop reads them: a plain collection of types becomes a
    mapping of each to ``visit``."""
    if types is EVERY_EVENT or isinstance(types, (Mapping, EveryEventBut)):
        return types
    return {t: "visit" for t in types}


def rule_walk(
    *rule_ids: RuleId, types: Iterable[str] | Mapping[str, str] | _EveryEvent | EveryEventBut,
    reads: Iterable[Shared[Any]] = (), publishes: Iterable[Shared[Any]] = (),
) -> Callable[[_C], _C]:
    """Register the decorated class as the walk reporting ``rule_ids``. ``types`` names the
    event types whose heads go to its ``visit(index, event)`` (or, as a mapping, each type's
    handler method), or is :data:`EVERY_EVENT` or :class:`EveryEventBut` some types. ``reads``
    declares the shared state it reads:
    the engine runs it after their publishers, in every check it runs in; ``publishes``, the
    state it publishes (shared state is usually a :func:`state_walk`'s). The
    class is constructed with the context once per check and may narrow its subscriptions by
    setting ``self.types`` (e.g. to ``()`` when the log already answers its question); it
    must define ``finish()``."""
    if not rule_ids:
        raise ValueError("a rule walk must declare the rules it reports")
    declared = _declared(types)

    def register(cls: _C) -> _C:
        setattr(cls, "types", declared)  # an attribute of any walk class, which an instance may narrow
        name = f"{cls.__module__}.{cls.__qualname__}"
        WALKS.append(Walk(frozenset(RuleId(r) for r in rule_ids), cls, declared, name, next(_registered),
                          reads=frozenset(reads), publishes=frozenset(publishes)))
        return cls

    return register


def state_walk(
    *, types: Iterable[str] | Mapping[str, str] | _EveryEvent | EveryEventBut,
    publishes: Iterable[Shared[Any]], reads: Iterable[Shared[Any]] = (),
) -> Callable[[_C], _C]:
    """Register the decorated class as a walk that reports nothing but derives the state
    ``publishes`` declares, for other walks and passes to read (e.g. the positions by type).
    It runs on every check (what it publishes is always there), after the publishers of what
    it ``reads`` and before its own readers: it sees each event before them and finishes
    before them."""
    declared = _declared(types)
    published = frozenset(publishes)
    if not published:
        raise ValueError("a state walk must declare the state it publishes")

    def register(cls: _C) -> _C:
        setattr(cls, "types", declared)  # an attribute of any walk class, which an instance may narrow
        WALKS.append(Walk(frozenset(), cls, declared, f"{cls.__module__}.{cls.__qualname__}", next(_registered),
                          reads=frozenset(reads), publishes=published))
        return cls

    return register


def _ordered(walks: Iterable[Walk], passes: Iterable[Pass] = ()) -> list[Walk]:
    """``walks`` in the one order a check runs them: each after the walks publishing what it
    reads, otherwise by registration (a stable topological sort). Raises :class:`ValueError`
    on a read no walk among ``walks`` publishes (of a walk or of one of ``passes``), on
    state published twice, and on a cycle."""
    pending = sorted(walks, key=lambda w: w.order)
    publisher: dict[Shared[Any], Walk] = {}
    for walk in pending:
        for key in walk.publishes:
            if key in publisher:
                raise ValueError(f"{key!r} is published by both {publisher[key].name} and {walk.name}")
            publisher[key] = walk
    units: list[Walk | Pass] = [*pending, *passes]
    for unit in units:
        for key in unit.reads:
            if key not in publisher:
                raise ValueError(f"{unit.name} reads {key!r}, which no walk publishes")
    placed: list[Walk] = []
    done: set[Walk] = set()
    while pending:
        ready = next((w for w in pending if all(publisher[k] in done or publisher[k] is w for k in w.reads)), None)
        if ready is None:
            raise ValueError("the walks " + ", ".join(w.name for w in pending) + " read each other's state in a cycle")
        pending.remove(ready)
        placed.append(ready)
        done.add(ready)
    return placed


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


def implementations() -> dict[RuleId, list[str]]:
    """Rule id -> the walks and passes that report it, as ``module.Class`` (or
    ``module.function``) names relative to ``dshfuzz.checker``, in registration order:
    where a reader finds a rule's code (``docs/CONTRACTS.md``'s "implemented in")."""
    _load_rule_modules()
    out: dict[RuleId, list[str]] = {}
    prefix = f"{__package__}."
    reporters: list[Pass | Walk] = [*PASSES, *WALKS]
    for reporter in sorted(reporters, key=lambda r: r.order):
        for rid in reporter.rules:
            out.setdefault(rid, []).append(reporter.name.removeprefix(prefix))
    return out


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

    def add(self, finding: Finding, arrival: int) -> bool:
        """Keep ``finding`` or drop it; whether it was kept (keeping it may drop a later one)."""
        entry = (tuple(-k for k in _location_key(finding)), -arrival, finding)
        if len(self.kept) < self.cap:
            heapq.heappush(self.kept, entry)
        elif self.kept and entry > self.kept[0]:
            self.drop(heapq.heapreplace(self.kept, entry)[2])
        else:
            self.drop(finding)
            return False
        return True

    def drop(self, finding: Finding) -> None:
        self.dropped += 1
        self.refused_by.update(finding.refused_by)
        first = self.first_dropped
        if first is None or _location_key(finding) < _location_key(first):
            self.first_dropped = finding

    def add_run(self, run: FindingRun, arrival: int) -> None:
        """:meth:`add` of each member of ``run``, the first arriving at ``arrival``: once one is
        dropped every later one is (its location is later still, and a drop leaves the kept ones as
        they are), so those are counted, not built."""
        for k in range(run.count):
            if not self.add(run.build(k), arrival + k):
                self.dropped += run.count - k - 1
                return

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

    def __init__(self, report: Report, selected: frozenset[RuleId], cap: int, strict: bool) -> None:
        self.report = report
        self.selected = selected
        self.cap = cap
        self.strict = strict
        self.by_rule: dict[RuleId, _Capped] = {}
        self.arrival = 0
        self.first: dict[RuleId, tuple[int, int]] = {}

    def take(self, findings: Found, unit: Pass | Walk) -> None:
        selected, by_rule, rules = self.selected, self.by_rule, unit.rules
        for f in findings:
            if f.rule not in rules:
                raise AssertionError(f"{unit.name} reported {f.rule}, which it does not declare")
            if f.rule not in selected or (isinstance(f, FindingRun) and f.count <= 0):
                continue
            capped = by_rule.get(f.rule)
            if capped is None:
                capped = by_rule[f.rule] = _Capped(self.cap)
                self.first[f.rule] = (unit.order, self.arrival)
            if isinstance(f, FindingRun):
                capped.add_run(f, self.arrival)
                self.arrival += f.count
            else:
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


class _Routes:
    """Which walks (by position in the check's order) take each event type, and by which method,
    for one combination of subscriptions: worked out once and shared by every check whose walks
    subscribe alike (a campaign's thousands of small checks meet the same few combinations), so a
    check's dispatch costs what its log holds, not what the walks subscribe to. ``subscriptions``
    holds the walks' ``types`` objects themselves: the cache is keyed by their identities."""

    __slots__ = ("subscriptions", "every", "kinds", "by_kind")

    def __init__(self, subscriptions: tuple[Subscriptions, ...]) -> None:
        self.subscriptions = subscriptions
        self.every = tuple(p for p, types in enumerate(subscriptions)
                           if types is EVERY_EVENT or types.__class__ is EveryEventBut)
        # the types an EveryEventBut passes over need a route of their own, like those subscribed to
        self.kinds: frozenset[str] = frozenset().union(
            *(types for types in subscriptions if types is not EVERY_EVENT))
        self.by_kind: dict[str, tuple[tuple[int, str], ...]] = {}

    def route(self, kind: str) -> tuple[tuple[int, str], ...]:
        """The positions and handler names of the walks taking ``kind``, one of :attr:`kinds`."""
        route = self.by_kind.get(kind)
        if route is None:
            found = []
            for position, types in enumerate(self.subscriptions):
                if types is EVERY_EVENT:
                    method: str | None = "visit"
                elif types.__class__ is EveryEventBut:
                    method = None if kind in types else "visit"
                elif types.__class__ is dict or isinstance(types, Mapping):
                    method = types.get(kind)
                else:
                    method = "visit" if kind in types else None
                if method is not None:
                    found.append((position, method))
            route = self.by_kind[kind] = tuple(found)
        return route


_ROUTES: dict[tuple[int, ...], _Routes] = {}


def _routes(subscriptions: tuple[Subscriptions, ...]) -> _Routes:
    """The shared :class:`_Routes` of ``subscriptions``; a walk that builds its own ``types`` per
    check only misses the cache (which stays bounded)."""
    key = tuple(map(id, subscriptions))
    routes = _ROUTES.get(key)
    if routes is None or any(a is not b for a, b in zip(routes.subscriptions, subscriptions)):
        if len(_ROUTES) >= 256:
            _ROUTES.clear()
        routes = _ROUTES[key] = _Routes(subscriptions)
    return routes


_UNSUBSCRIBED_KEPT = 256
"""Entries a check's table keeps at most, counting those of types no walk takes."""


class _Table(dict[str, tuple[_Subscriber, ...]]):
    """The one dict from event type to its subscribers (those to the type and those to every
    event, in the check's order), an entry bound the first time the loop meets its type, from the
    shared :class:`_Routes`. A type no walk subscribes to reaches the every-event subscribers, with
    an entry while the table is small (a hostile log may hold any number of types)."""

    __slots__ = ("every", "routes", "walks", "instances")

    def __init__(self, live: dict[Walk, Any]) -> None:
        super().__init__()
        self.walks = walks = list(live)
        self.instances = instances = list(live.values())
        self.routes = routes = _routes(tuple([instance.types for instance in instances]))
        self.every = tuple([(instances[p].visit, walks[p]) for p in routes.every])

    def __missing__(self, kind: str) -> tuple[_Subscriber, ...]:
        routes = self.routes
        if kind not in routes.kinds:
            if len(self) < _UNSUBSCRIBED_KEPT:  # a selection of rules leaves common types unsubscribed
                self[kind] = self.every
            return self.every
        instances, walks = self.instances, self.walks
        entry = self[kind] = tuple([(getattr(instances[p], method), walks[p]) for p, method in routes.route(kind)])
        return entry


def _dispatch(live: dict[Walk, Any]) -> tuple[_Table, tuple[_Subscriber, ...]]:
    """The dispatch of the walks ``live``: the table by type, and the every-event subscribers alone."""
    table = _Table(live)
    return table, table.every


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


_LOOP: Shared[_Loop] = Shared("the walk loop's subscription state")


class _Window:
    """``ctx.events`` of a whole model as a streamed read gives it: the events read so far
    (``len``), of which only the current head and the rest of its packed run can be read."""

    __slots__ = ("source", "lo", "hi", "count")

    def __init__(self, source: EventView) -> None:
        self.source = source
        self.lo = self.hi = self.count = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> Event:
        if i.__class__ is int and self.lo <= i < self.hi:
            return self.source[i]
        raise LookupError(f"a streamed check reads only the current row (events {self.lo}..{self.hi - 1}), not event {i!r}")

    def __iter__(self) -> Any:
        raise LookupError("a streamed check keeps no events to iterate over")


class _WalkLoop:
    """The walks of one check and the one loop over the heads: :attr:`head` for each head in
    log order, then :meth:`finish` once."""

    __slots__ = ("ctx", "sink", "live", "constructed", "head")

    def __init__(self, ctx: CheckContext, walks: list[Walk], sink: _Sink, runs: dict[int, int]) -> None:
        self.ctx = ctx
        self.sink = sink
        state = ctx.memo(_LOOP, _Loop)
        live: dict[Walk, Any] = {}
        for walk in walks:
            try:
                live[walk] = walk.cls(ctx)
            except Exception:
                sink.crashed(walk.name)
        self.live = live
        self.constructed = [*live.values(), state]
        table, every = _dispatch(live)
        take = sink.take

        def head(i: int, stop: int, ev: Event) -> None:
            """Hand the head ``ev`` at ``i``, whose row ends at ``stop``, to the walks subscribed to
            its type, then to those that want every event; ``runs`` (``ctx.packed_runs[1]``) holds
            its packed run alone. A closure: the loop's state lives in its cells, read without
            attribute lookups, and a streamed read calls it for each row directly."""
            nonlocal table, every
            if runs:
                runs.clear()
            if stop - i > 1:
                runs[i] = stop
            raw = ev.raw
            if raw.__class__ is dict:
                kind = raw.get("type")
                subscribers = table[kind] if kind.__class__ is str else every
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
            if state.changed:
                table, every = _woken(ctx, state, live, subscribers, i, ev, sink)

        self.head: Callable[[int, int, Event], None] = head

    def finish(self) -> None:
        try:
            for walk, instance in self.live.items():
                try:
                    found = instance.finish()
                    if found is not None:
                        self.sink.take(found, walk)
                except Exception:
                    self.sink.crashed(walk.name)
        finally:
            self.ctx.release(self.constructed)


_PLANS: dict[tuple[Any, ...], tuple[frozenset[RuleId], list[Walk]]] = {}


def _plan(version: int | None, rules: frozenset[RuleId] | None) -> tuple[frozenset[RuleId], list[Walk]]:
    """The rules that apply to ``version`` (of ``rules``, when given) and the walks reporting any of
    them (and every state walk), worked out once per selection: a campaign checks thousands of
    small logs a second under a few selections."""
    key = (version, rules, *WALKS, *PASSES)  # the registered units themselves: a test may register and remove some
    plan = _PLANS.get(key)
    if plan is None:
        selected = frozenset(rid for rid, rule in RULES.items()
                             if rule.applies_to(version) and (rules is None or rid in rules))
        chosen = [w for w in WALKS if not w.rules or not selected.isdisjoint(w.rules)]
        publisher = {state: w for w in WALKS for state in w.publishes}
        units: list[Walk | Pass] = [*chosen, *PASSES]
        wanted = [state for unit in units for state in unit.reads]
        while wanted:  # the publishers of what the chosen walks and the passes read run too
            walk = publisher.get(wanted.pop())
            if walk is not None and walk not in chosen:
                chosen.append(walk)
                wanted.extend(walk.reads)
        plan = (selected, _ordered(chosen, PASSES))
        if len(_PLANS) < 256:
            _PLANS[key] = plan
    return plan


class _Check:
    """One check: the rules selected for the log's version, the sink, the walk loop (constructed
    at once: the header is known), and :meth:`report`, which finishes the walks, runs the passes
    and assembles the report."""

    __slots__ = ("ctx", "selected", "sink", "loop")

    def __init__(self, ctx: CheckContext, runs: dict[int, int]) -> None:
        _load_rule_modules()
        options = ctx.options
        self.ctx = ctx
        self.selected, walks = _plan(ctx.version, options.rules)
        log = ctx.log
        report = Report(file=log.path, format_version=None if log.format_version is MISSING else log.format_version,
                        events=0, frames=0)
        self.sink = _Sink(report, self.selected, max(options.max_findings_per_rule, 0), options.strict)
        self.loop = _WalkLoop(ctx, walks, self.sink, runs)

    def report(self) -> Report:
        ctx, sink = self.ctx, self.sink
        self.loop.finish()
        for p in PASSES:
            if self.selected.isdisjoint(p.rules):
                continue
            try:
                sink.take(p.fn(ctx), p)
            except Exception:
                sink.crashed(p.name)
        report = sink.report
        report.events = len(ctx.log.events)
        report.frames = len(ctx.log.frames)
        for rule, capped in sink.ordered():
            report.findings.extend(capped.findings())
            if capped.dropped:
                report.suppressed[rule] = capped.dropped
        report.findings.sort(key=_location_key)
        report.findings = attribute(_past_torn_tail(ctx, report.findings))
        return report


def _past_torn_tail(ctx: CheckContext, findings: list[Finding]) -> list[Finding]:
    """``findings`` with the loader out of ``refused_by`` for those located in a plain log's torn
    tail when the loader recovers no record of it: it cuts the file back before them, unread (Z1
    says where; the tail is known only once the whole file is read)."""
    torn = ctx.log.torn
    if torn is None or torn.recovered_lines or ctx.log.compression == "zstd" or torn.line is None:
        return findings
    dropped = (OfficialLayer.LOAD, OfficialLayer.LOAD_APP)
    kept = [
        replace(f, refused_by=tuple(x for x in f.refused_by if x not in dropped))
        if f.line is not None and f.line >= torn.line and OfficialLayer.LOAD in f.refused_by else f
        for f in findings
    ]
    # a summary of no one place (C1) names the loader only while some finding it restates still does
    loaded = {f.rule for f in kept if OfficialLayer.LOAD in f.refused_by}
    return [
        replace(f, refused_by=tuple(x for x in f.refused_by if x not in dropped))
        if f.line is None and f.rule in SUMMARISES and OfficialLayer.LOAD in f.refused_by
        and SUMMARISES[f.rule].isdisjoint(loaded) else f
        for f in kept
    ]


def _woken(
    ctx: CheckContext, loop: _Loop, live: dict[Walk, Any], served: tuple[_Subscriber, ...], i: int, ev: Event, sink: _Sink
) -> tuple[_Table, tuple[_Subscriber, ...]]:
    """Rebuild the dispatch after a change of subscriptions, and hand the event being
    dispatched to the walks that subscribed to it meanwhile."""
    done = {walk for _, walk in served}
    raw = ev.raw
    kind = raw.get("type") if raw.__class__ is dict else None
    while loop.changed:
        loop.changed = False
        table, every = _dispatch(live)
        for handle, walk in table[kind] if kind.__class__ is str else every:
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


def _run_walks(ctx: CheckContext, walks: list[Walk], sink: _Sink) -> None:
    """Construct ``walks``, hand them the heads of the whole model in ``ctx`` as a check does, and
    finish them."""
    heads, runs = ctx.packed_runs
    window, current = _windowed(ctx)
    loop = _WalkLoop(ctx, _ordered(walks), sink, current)
    _feed_whole(ctx, window, heads, runs, loop)
    loop.finish()


def _windowed(ctx: CheckContext) -> tuple[_Window, dict[int, int]]:
    """Put ``ctx.events`` behind a window; return it and the dict that will hold the current run."""
    heads, _ = ctx.packed_runs
    current: dict[int, int] = {}
    window = _Window(ctx.events)
    ctx.events = window
    ctx._packed = (heads, current)
    return window, current


def _feed_whole(ctx: CheckContext, window: _Window, heads: list[int], runs: dict[int, int], loop: _WalkLoop) -> None:
    events = window.source
    head = loop.head
    for i in heads:
        stop = runs.get(i) or i + 1
        window.lo = i
        window.hi = window.count = stop
        head(i, stop, events[i])
    ctx.packed_runs[1].clear()
    window.lo = window.hi = 0
    window.count = len(events)


def check_log(log: SessionLog, options: CheckOptions = CheckOptions()) -> Report:
    """Run every applicable rule over ``log``, a whole model, exactly as :func:`check_stream` runs
    them over a streamed read: the walks see ``ctx.events`` through a window on the head being
    handed over (see the module docstring). Never raises unless ``options.strict``."""
    ctx = CheckContext(log, options)
    heads, runs = ctx.packed_runs
    window, current = _windowed(ctx)
    check = _Check(ctx, current)
    _feed_whole(ctx, window, heads, runs, check.loop)
    return check.report()


class _StreamedCheck:
    """A check fed by a streamed read (a :class:`~dshfuzz.model.RowConsumer`): the walks are
    constructed when the header is read (:meth:`begin`), and the loop's head is the consumer's
    ``row``: the reader hands it each row's head as it is read; ``ctx.packed_runs[1]`` holds the
    current row's run alone."""

    __slots__ = ("options", "check", "row")

    def __init__(self, options: CheckOptions) -> None:
        self.options = options
        self.check: _Check | None = None

    def begin(self, log: StreamedLog) -> None:
        ctx = CheckContext(log, self.options)
        runs: dict[int, int] = {}
        ctx._packed = ([], runs)
        self.check = _Check(ctx, runs)
        self.row = self.check.loop.head

    def report(self) -> Report:
        assert self.check is not None, "the read began the check"
        self.check.ctx.packed_runs[1].clear()
        return self.check.report()


def check_stream(
    data: bytes | FileBytes,
    *,
    compression: Compression | None = None,
    path: str | None = None,
    options: CheckOptions = CheckOptions(),
    limits: Limits = DEFAULT_LIMITS,
) -> Report:
    """Check a log's bytes in one streamed read: each row's events go through the walks as they
    are read and are dropped, so memory follows what the walks keep, not the log. The report is
    :func:`check_log`'s on the whole model. ``data`` may be a :class:`~dshfuzz.model.FileBytes`, read
    as the check goes. Never raises unless ``options.strict`` (or reading a file fails: ``OSError``)."""
    return stream_check(data, compression=compression, path=path, options=options, limits=limits)[0]


def stream_check(
    data: bytes | FileBytes,
    *,
    compression: Compression | None = None,
    path: str | None = None,
    options: CheckOptions = CheckOptions(),
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Report, StreamedLog]:
    """:func:`check_stream`, and the log of the streamed read: its header and physical layer (the
    compact lines, rows and frames, the torn tail), none of its events."""
    consumer = _StreamedCheck(options)
    log = stream_log(data, consumer, compression=compression, path=path, limits=limits)
    return consumer.report(), log


def check_path(path: str | PathLike[str], options: CheckOptions = CheckOptions()) -> Report:
    """Read ``path`` and check it in one streamed read (:func:`check_stream`). Raises only
    ``OSError`` (an unreadable file). The encoding follows the suffix as :func:`~dshfuzz.model.read_log`'s."""
    name = str(path)
    with FileBytes.open(path) as data:
        return check_stream(data, compression=compression_by_name(name), path=name, options=options)
