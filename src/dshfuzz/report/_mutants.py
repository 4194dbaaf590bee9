"""A mutation run rendered: progress lines, the terminal tables, ``summary.json`` and ``report.html``.

Every renderer reads one :class:`~dshfuzz.harness.MutationSummary` through its JSON form
(``MutationSummary.to_json``), so the tables and the file always say the same thing. ``report.html`` is
the run's own page (a mutation run is not a campaign: the campaign report has no section for it).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshfuzz._atomic import write_atomic

if TYPE_CHECKING:
    from rich.console import Console

    from dshfuzz.harness import MutantJudged, MutantsPlanned, MutationSummary

__all__ = ["mutants_plan_line", "mutant_line", "render_mutants", "write_mutants_summary"]


def _pct(score: float | None) -> str:
    return "—" if score is None else f"{100 * score:.0f}%"


def mutants_plan_line(plan: MutantsPlanned) -> str:
    """One line: what the run will judge, what it skips and why, what an earlier run did."""
    skipped = sum(plan.skipped.values())
    reasons = "; ".join(f"{n} {why}" for why, n in sorted(plan.skipped.items(), key=lambda kv: -kv[1]))
    base = plan.baseline
    known = f"{len(base.causes)} known cause{'' if len(base.causes) == 1 else 's'}"
    return (f"{plan.total} mutants of {plan.checker}: {plan.planned} to judge ({plan.done} already judged), "
            f"{skipped} skipped{f' ({reasons})' if reasons else ''}; baseline: {base.examples} examples, {known}"
            f"{', cached' if base.cached else ''}{'' if base.reach is not None else ', reach not measured'}")


def mutant_line(event: MutantJudged) -> str:
    """One line per judged mutant: progress, status, where, operator and why."""
    r = event.result
    m = r.mutant
    return (f"[{event.done}/{event.planned}] {r.status:<9} {m.module}:{m.line} {m.operator.removeprefix('core/')} "
            f"({m.rule or '-'}): {r.how}{f' [{r.cause}]' if r.cause else ''}")


def write_mutants_summary(summary: MutationSummary, folder: Path) -> dict[str, Path]:
    """Write ``summary.json`` and a self-contained ``report.html`` into ``folder``, each
    atomically; their paths by kind (``json``, ``html``)."""
    return {
        "json": write_atomic(folder / "summary.json", json.dumps(summary.to_json(), indent=1) + "\n"),
        "html": write_atomic(folder / "report.html", render_mutants_html(summary)),
    }


def _html_table(title: str, groups: dict[str, Any], total: dict[str, Any]) -> str:
    e = html.escape
    head = "".join(f"<th>{c}</th>" for c in (title, "killed", "survived", "unreached", "equivalent", "errors", "score"))
    rows = "".join(f"<tr>{''.join(f'<td>{e(c)}</td>' for c in _tally_row(name, tally))}</tr>"
                   for name, tally in groups.items())
    last = "".join(f"<th>{e(c)}</th>" for c in _tally_row("all", total))
    return f"<table><tr>{head}</tr>{rows}<tr>{last}</tr></table>"


def render_mutants_html(summary: MutationSummary) -> str:
    """The run as one self-contained page: the scores per module and per rule, then every
    survivor (blind spots first) with its diff and the command that replays it."""
    from ._files import _CSS

    e = html.escape
    data = summary.to_json()
    score = data["score"]
    parts = [f"<h1>Mutation analysis of {e(data['checker'])}</h1>",
             f"<p>seed {data['seed']}, {e(data['budget'])} per mutant; {data['mutants']['total']} mutants, "
             f"{data['mutants']['planned']} judged, {sum(data['mutants']['skipped'].values())} skipped. "
             f"<b>Mutation score {_pct(score['score'])}</b>: {score['killed']} killed of "
             f"{score['killed'] + score['survived'] + score['unreached']} non-equivalent mutants.</p>",
             "<h2>Per module</h2>", _html_table("module", data["modules"], score)]
    if data["rules"]:
        parts += ["<h2>Per rule</h2>", _html_table("rule", data["rules"], score)]
    own = data["baseline"]["witnesses"]
    if own:
        parts.append(f"<h2>The unmutated checker's own causes ({len(own)})</h2><p>Its campaign found these "
                     "before any mutant (no mutant is killed by them): defects of the checker itself.</p><ul>"
                     + "".join(f"<li><code>{e(w['cause'])}</code>: <a href=\"{e(w['file'])}\">{e(w['file'])}</a></li>"
                               for w in own) + "</ul>")
    survivors = sorted(data["survivors"], key=lambda s: s["verdict"] != "blind spot")
    parts.append(f"<h2>Survivors ({len(survivors)})</h2>")
    for s in survivors:
        why = f" — {e(s['reason'])}" if s["reason"] else ""
        parts.append(
            f"<details{' open' if s['verdict'] == 'blind spot' else ''}><summary><b>{e(s['verdict'])}</b> "
            f"<code>{e(s['where'])}</code> {e(s['operator'])} (rule {e(s['rule'] or '-')}; {e(s['status'])}){why}"
            f"</summary><pre>{e(s['diff'])}</pre><p>replay: <code>{e(s['replay'])}</code></p></details>")
    if data["mutants"]["skipped"]:
        parts.append("<h2>Skipped</h2><ul>" + "".join(
            f"<li>{n} {e(why)}</li>" for why, n in data["mutants"]["skipped"].items()) + "</ul>")
    title = f"dshfuzz mutants: {e(data['checker'])}"
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title><style>{_CSS}</style>"
            f"</head><body>{''.join(parts)}</body></html>\n")


def _tally_row(name: str, tally: dict[str, Any]) -> list[str]:
    return [name, str(tally["killed"]), str(tally["survived"]), str(tally["unreached"]), str(tally["equivalent"]),
            str(tally["errors"]), _pct(tally["score"])]


def render_mutants(summary: MutationSummary, console: Console, *, diffs: bool = True, folder: Path | None = None) -> None:
    """The score overall, per module and per rule, then every survivor (its diff and replay), and
    the unmutated checker's own causes with their witnesses (files in ``folder``, the run's)."""
    from rich.table import Table

    data = summary.to_json()
    score = data["score"]
    for title, groups in (("module", data["modules"]), ("rule", data["rules"])):
        if not groups:
            continue
        table = Table(title=f"mutation score per {title}", title_justify="left")
        for col in (title, "killed", "survived", "unreached", "equivalent", "errors", "score"):
            table.add_column(col, justify="left" if col == title else "right", no_wrap=col == title)
        for name, tally in groups.items():
            table.add_row(*_tally_row(name, tally))
        table.add_row(*_tally_row("all", score), style="bold")
        console.print(table)
    for s in data["survivors"]:
        head = f"[bold]{s['verdict']}[/bold] {s['where']} {s['operator']} (rule {s['rule'] or '-'}; {s['status']})"
        console.print(head, highlight=False, soft_wrap=True)
        if s["reason"]:
            console.print(f"  equivalent: {s['reason']}", highlight=False, markup=False)
        if diffs:
            console.print(s["diff"].rstrip("\n"), highlight=False, markup=False, soft_wrap=True)
        console.print(f"  replay: {s['replay']}", highlight=False, markup=False, soft_wrap=True)
    for e in data["errors"]:
        console.print(f"[red]error[/red] {e['id']}: {e['how']}", highlight=False)
    for w in data["baseline"]["witnesses"]:
        shown = str(folder / w["file"]) if folder is not None else w["file"]
        console.print(f"[bold]the unmutated checker's own cause[/bold] {w['cause']}: witness {shown}",
                      highlight=False, soft_wrap=True)
    counted = score["killed"] + score["survived"] + score["unreached"]
    console.print(
        f"mutation score {_pct(score['score'])}: {score['killed']} of {counted} non-equivalent mutants killed "
        f"({score['survived']} survived, {score['unreached']} unreached, {score['equivalent']} equivalent, "
        f"{score['errors']} errors, {score['invalid']} invalid); {len(summary.blind_spots)} blind "
        f"spot{'' if len(summary.blind_spots) == 1 else 's'}",
        highlight=False, soft_wrap=True,
    )
