"""The checker's reports for a reader: ``dshfuzz check``'s tables, ``--prewrite``'s verdict and
``dshfuzz recover``'s plan.

The checker builds typed reports (:class:`dshfuzz.checker.Report`,
:class:`dshfuzz.checker.PrewriteResult`, :class:`dshfuzz.checker.RecoveryPlan`) and never
prints; these render them. A
report's root findings are grouped by rule layer, and each is followed by the
findings that follow from it (``caused_by``), wherever their layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dshfuzz.checker import RULES, Finding, Report, RuleLayer, Severity

if TYPE_CHECKING:
    from rich.console import Console

    from dshfuzz.checker import PrewriteResult, RecoveryPlan

__all__ = ["check_json", "prewrite_lines", "recovery_lines", "render_check"]


_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}


def _where(f: Finding) -> str:
    parts = []
    if f.seq is not None:
        parts.append(f"seq {f.seq}")
    if f.line is not None:
        parts.append(f"line {f.line}")
    if f.frame is not None:
        parts.append(f"frame {f.frame}")
    if f.offset is not None:
        parts.append(f"byte {f.offset}")
    return ", ".join(parts) or "-"


def _by_layer(findings: list[tuple[int, Finding]]) -> Iterator[tuple[RuleLayer, list[tuple[int, Finding]]]]:
    for layer in RuleLayer:
        group = [(i, f) for i, f in findings if f.layer is layer]
        if group:
            yield layer, group


def check_json(report: Report, *, roots_only: bool = False) -> str:
    """One line of ``dshfuzz check --json``: the report's JSON; ``roots_only`` drops the findings
    that follow from another and counts them (``consequencesOmitted``)."""
    from dshfuzz.model import dumps

    out = report.to_json()
    if roots_only:
        kept = [f for f in out["findings"] if f["causedBy"] is None]
        out["consequencesOmitted"] = len(out["findings"]) - len(kept)
        out["findings"] = kept
    return dumps(out)


def render_check(report: Report, console: Console, *, roots_only: bool = False) -> None:
    """The report as rich tables, one per rule layer of the root findings, each root
    followed by the findings that follow from it (wherever their layer), with a one-line
    verdict. ``roots_only`` leaves the consequences out and says how many."""
    from rich.table import Table  # rich costs a tenth of a second to import; --json never needs it
    from rich.text import Text

    verdict = Text("OK", style="bold green") if report.ok else Text("FAIL", style="bold red")
    roots = [i for i, f in enumerate(report.findings) if f.caused_by is None]
    followers: dict[int, list[Finding]] = {}
    for f in report.findings:
        if f.caused_by is not None:
            followers.setdefault(f.caused_by, []).append(f)
    rooted = len(report.findings) - len(roots)
    head = Text.assemble(
        verdict,
        f"  {report.file or '<log>'}  "
        + ("format unknown  " if report.format_version is None else f"format v{report.format_version}  "),
        f"{_count(report.events, 'event')}, {_count(report.frames, 'frame')}, ",
        (_count(report.errors, "error"), "red" if report.errors else ""),
        ", ",
        (_count(report.warnings, "warning"), "yellow" if report.warnings else ""),
        f" ({_count(len(roots), 'root cause')})" if rooted else "",
    )
    console.print(head, soft_wrap=True)
    for layer, group in _by_layer([(i, report.findings[i]) for i in roots]):
        table = Table(title=f"{layer} ({len(group)})", title_justify="left", expand=True, show_lines=False)
        table.add_column("rule", no_wrap=True)
        table.add_column("where", no_wrap=True)
        table.add_column("message (refused by)", ratio=1)
        for i, f in group:
            table.add_row(Text(str(f.rule), style=_STYLE[f.severity]), _where(f), _message(f))
            if roots_only:
                continue
            for c in followers.get(i, ()):
                table.add_row(Text.assemble(("└ ", "dim"), (str(c.rule), _STYLE[c.severity])), _where(c),
                              Text.assemble(("follows: ", "dim"), _message(c)))
        console.print(table)
    if roots_only and rooted:
        console.print(f"[dim]{_count(rooted, 'finding')} that follow from these not shown (without --roots-only, "
                      "each is listed under its root)[/dim]")
    for rule, n in report.suppressed.items():
        console.print(f"[dim]{n} more {rule} finding(s) suppressed ({RULES[rule].title})[/dim]")
    for err in report.internal_errors:
        console.print(Text("internal checker error: " + err.splitlines()[0], style="bold magenta"))


def _message(f: Finding) -> Any:
    from rich.text import Text

    refused = ", ".join(map(str, f.refused_by)) or "no official layer"
    return Text.assemble(f.message, (f"  [{refused}]", "dim"))


def _count(n: int, noun: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def prewrite_lines(result: PrewriteResult, log: str) -> list[str]:
    """``dshfuzz check --prewrite``'s human verdict on an edit of ``log``: a verdict line,
    then one line per error-level finding the edit adds."""
    added = result.added
    verdict = "ACCEPTED" if result.accepted else "REFUSED"
    lines = [f"{verdict}  {result.mode} to {log}: {len(added)} new error-level finding(s)"]
    for f in added:
        where = f"seq {f.seq}" if f.seq is not None else f"line {f.line}"
        lines.append(f"  {f.rule} {where}: {f.message}  (refused by: {', '.join(map(str, f.refused_by)) or 'none'})")
    return lines


def recovery_lines(plan: RecoveryPlan) -> list[str]:
    """``dshfuzz recover``'s plan: FORK and where to cut, or NEW SESSION; then each skipped
    turn with its blocking findings, and the notes."""
    fork = plan.fork
    anchor = "the end of the log" if plan.at is None else f"seq {plan.at}"
    if fork is not None:
        where = f"line {fork.line}"
        if fork.frame is not None:
            where += f", zstd frame {fork.frame}"
        cut = (f"byte offset {fork.offset}" if fork.offset is not None
               else f"re-frame frame {fork.frame} (starts at byte {fork.frame_offset})")
        lines = [f"FORK  {plan.file}: after turn {fork.turn} (turn/end seq {fork.seq}, {fork.events} events, "
                 f"{where}; {cut})"]
    else:
        lines = [f"NEW SESSION  {plan.file}: no complete turn at or before {anchor} is safe to fork at"]
    for rejected in plan.rejected:
        point = rejected.point
        lines.append(f"  skipped turn {point.turn} (turn/end seq {point.seq}): {rejected.total} blocking finding(s)")
        for f in rejected.findings:
            layers = ", ".join(map(str, f.refused_by)) or "none"
            lines.append(f"    {f.rule} seq {f.seq}: {f.message}  (refused by: {layers})")
    lines += [f"  note: {note}" for note in plan.notes]
    return lines
