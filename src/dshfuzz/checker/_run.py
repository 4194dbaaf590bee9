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
"""

from __future__ import annotations

import heapq
import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from os import PathLike

from dshfuzz.model import MISSING, SessionLog

from ._context import CheckContext, CheckOptions
from ._finding import Finding, Report
from .rules import RULES, OfficialLayer, RuleId

__all__ = ["PASSES", "RULE_MODULES", "Pass", "check_log", "check_path", "implemented_rules", "rule_pass"]

RULE_MODULES = ("_persistence", "_surface", "_framing", "_engine", "_plugin", "_wire", "_migration")
"""The modules holding rule passes, imported (when present) on the first check."""

PassFn = Callable[[CheckContext], Iterable[Finding]]


@dataclass(frozen=True, slots=True)
class Pass:
    rules: frozenset[RuleId]
    fn: PassFn

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


PASSES: list[Pass] = []
_loaded = False
_RULE_ORDER = {rid: i for i, rid in enumerate(RULES)}


def rule_pass(*rule_ids: RuleId) -> Callable[[PassFn], PassFn]:
    """Register the decorated function as the pass reporting ``rule_ids``."""
    if not rule_ids:
        raise ValueError("a rule pass must declare the rules it reports")

    def register(fn: PassFn) -> PassFn:
        PASSES.append(Pass(frozenset(RuleId(r) for r in rule_ids), fn))
        return fn

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
    """The rule ids some registered pass reports."""
    _load_rule_modules()
    return frozenset().union(*(p.rules for p in PASSES))


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
    by_rule: dict[RuleId, _Capped] = {}
    cap = max(options.max_findings_per_rule, 0)
    arrival = 0
    for p in PASSES:
        if selected.isdisjoint(p.rules):
            continue
        try:
            for f in p.fn(ctx):
                if f.rule not in p.rules:
                    raise AssertionError(f"{p.name} reported {f.rule}, which it does not declare")
                if f.rule not in selected:
                    continue
                capped = by_rule.get(f.rule)
                if capped is None:
                    capped = by_rule[f.rule] = _Capped(cap)
                capped.add(f, arrival)
                arrival += 1
        except Exception:
            if options.strict:
                raise
            import traceback  # only a checker bug gets here

            report.internal_errors.append(f"{p.name} crashed:\n{traceback.format_exc()}")
    for rule, capped in by_rule.items():
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
