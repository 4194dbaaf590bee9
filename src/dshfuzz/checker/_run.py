"""The runner: rule passes register themselves here and :func:`check_log` runs the
ones whose rules apply to the log's format version.

A pass is a function ``(ctx) -> Iterable[Finding]`` declared with
:func:`rule_pass` for the rule ids it may report. Passes are independent, each
walks what it needs once, and a rule's findings are kept in log order up to the
per-rule cap (the rest are counted in :attr:`Report.suppressed`).

A pass that raises is a checker bug. In production the report still comes back,
with the traceback in :attr:`Report.internal_errors` (the CLI turns it into exit
status 2); with ``CheckOptions(strict=True)`` the exception propagates, which is
how the tests prove that no pass ever raises.
"""

from __future__ import annotations

import importlib
import importlib.util
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from os import PathLike

from dshfuzz.model import MISSING, SessionLog

from ._context import CheckContext, CheckOptions
from ._finding import Finding, Report
from .rules import RULES, RuleId

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
    counts: dict[RuleId, int] = {}
    cap = options.max_findings_per_rule
    for p in PASSES:
        if selected.isdisjoint(p.rules):
            continue
        try:
            for f in p.fn(ctx):
                if f.rule not in p.rules:
                    raise AssertionError(f"{p.name} reported {f.rule}, which it does not declare")
                if f.rule not in selected:
                    continue
                n = counts.get(f.rule, 0)
                if n >= cap:
                    report.suppressed[f.rule] = report.suppressed.get(f.rule, 0) + 1
                    continue
                counts[f.rule] = n + 1
                report.findings.append(f)
        except Exception:
            if options.strict:
                raise
            report.internal_errors.append(f"{p.name} crashed:\n{traceback.format_exc()}")
    report.findings.sort(key=_location_key)
    return report


def check_path(path: str | PathLike[str], options: CheckOptions = CheckOptions()) -> Report:
    """Read ``path`` through the model's reader and check it. Raises only ``OSError``
    (an unreadable file)."""
    from dshfuzz.model import read_log

    return check_log(read_log(path), options)
