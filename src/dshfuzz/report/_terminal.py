"""The terminal reporter: a live rich display while the campaign runs, tables at the end.

On a terminal the live view redraws four times a second; elsewhere (CI logs, a
pipe) it prints one plain progress line every ``interval`` seconds and one line per
new finding, so a long campaign is never silent and never floods a log.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator

from rich.console import Console, Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from dshfuzz.harness._events import CampaignEvent, DisagreementFound, WorkerLost

from ._summary import UNCONFIRMED_MEANING, CampaignSummary

__all__ = ["LiveReporter", "final_summary", "final_table", "fit", "folding", "progress_line"]

_KIND_STYLE = {
    "false-alarm": "yellow",
    "miss": "red",
    "rule-id": "red",
    "wrong-place": "magenta",
    "silent-loss": "red",
    "crash": "bold red",
    "timeout": "bold red",
    "unparsable-output": "bold red",
    "metamorphic": "cyan",
    "official-disagreement": "blue",
    "oracle-crash": "bold red",
}


def folding(table: Table) -> Table:
    """``table`` with every column folding a long word onto the next line, never cutting it
    with an ellipsis (rich's default, which turned ``metamorphic:relabel-ids`` into
    ``metamorphic:re…`` in an 80-column pipe)."""
    for column in table.columns:
        column.overflow = "fold"
        column.no_wrap = False
    return table


_SHORT = 12  # a column this narrow (a count, a percentage, a level) keeps its width


def fit(table: Table, width: int, *, keep: int = 1) -> Table:
    """``table`` folded (:func:`folding`) and laid out to fit ``width`` columns exactly.

    rich measures a column by its longest word and, when the sum is too wide, collapses
    columns in a way that can still exceed the width (the excess is then cropped at the
    edge, and a ``min_width`` makes that worse). Here every column gets a fixed width
    instead: the first ``keep`` columns (the names a reader looks rows up by) keep their
    natural width up to half the room (less when the others need it for their longest
    word), short columns keep theirs, and the rest share what is left, narrow ones first. A table that fits as it is is left alone."""
    folding(table)
    columns = table.columns
    if not columns:
        return table
    console = Console(width=width)
    # rich's own per-column measure and padding: the layout must agree with its rendering
    measured = [table._measure_column(console, console.options, c) for c in columns]  # noqa: SLF001
    natural = [m.maximum for m in measured]
    pads = [table._get_padding_width(i) for i in range(len(columns))]  # noqa: SLF001
    room = width - table._extra_width  # noqa: SLF001
    if sum(natural) <= room:
        return table
    widths = list(natural)
    fixed = {i for i, n in enumerate(natural) if i < keep or n <= _SHORT + pads[i]}
    # what the other columns need for their longest word (a few characters at least; a word
    # longer than half the room folds anyway, so it reserves no more)
    reserve = sum(widths[i] for i in fixed if i >= keep) + sum(
        max(min(measured[i].minimum, room // 2), pads[i] + 8) for i in range(len(columns)) if i not in fixed)
    for i in range(min(keep, len(columns))):
        widths[i] = min(natural[i], max(min(room - reserve, room // 2), _SHORT))
    left = room - sum(widths[i] for i in fixed)
    flexible = sorted((i for i in range(len(columns)) if i not in fixed), key=natural.__getitem__)
    for k, i in enumerate(flexible):
        widths[i] = max(min(natural[i], left // (len(flexible) - k)), pads[i] + 4)
        left -= widths[i]
    for column, w, pad in zip(columns, widths, pads):
        column.width = max(1, w - pad)
    return table


def _budget_fraction(summary: CampaignSummary) -> float | None:
    started = summary.started
    if started is None:
        return None
    fractions = []
    if started.budget_seconds:
        fractions.append(summary.elapsed / started.budget_seconds)
    if started.budget_examples:
        fractions.append(summary.examples / started.budget_examples)
    return min(1.0, max(fractions)) if fractions else None


def _reach(summary: CampaignSummary) -> str:
    planned = len(summary.planned_mutators)
    return f"{summary.mutators_reached}/{planned}" if planned else str(summary.mutators_reached)


def progress_line(summary: CampaignSummary) -> str:
    """One plain line of the campaign's state (the non-terminal live view)."""
    fraction = _budget_fraction(summary)
    budget = "" if fraction is None else f" [{100 * fraction:.0f}% of budget]"
    return (
        f"dshfuzz: {summary.examples} logs judged ({summary.rate:.1f}/s, {summary.elapsed:.0f}s){budget}; "
        f"mutators reached {_reach(summary)}; rules fired {len(summary.rules_fired)}; "
        f"findings {len(summary.checker_defects)}"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _finding_line(summary: CampaignSummary, f: DisagreementFound) -> Text:
    return Text.assemble(
        (f"{f.kind:<21}", _KIND_STYLE.get(f.kind, "bold")),
        f" {f.signature}  ",
        (f"{f.events_found}→{f.events_minimal} events, after {summary.since_start(f.at):.0f}s"
         + ("" if f.stage in ("minimal", "off") else f" ({_STAGE_WORD.get(f.stage, f.stage)})"), "dim"),
    )


_STAGE_WORD = {"found": "minimising", "minimising": "minimising", "cut": "minimisation cut"}


def _status(summary: CampaignSummary) -> Group:
    """The live view below the findings: the counts, the budget bar on a line of its own
    (a bare ProgressBar ends no line, so what came next was glued onto it and cut off), and
    the coverage so far. Findings are printed above it, one line each, as they come."""
    parts: list[RenderableType] = []
    head = Text.assemble(
        ("dshfuzz ", "bold"),
        f"{summary.examples} logs judged ({summary.mutants} mutants), {summary.rate:.1f}/s, "
        f"{summary.elapsed:.0f}s — mutators reached {_reach(summary)}, rules fired {len(summary.rules_fired)} — ",
        (_count(len(summary.checker_defects), "finding"), "bold red" if summary.checker_defects else "green"),
    )
    parts.append(head)
    fraction = _budget_fraction(summary)
    if fraction is not None:
        bar = Table.grid(padding=(0, 1))  # a grid row ends its line, as the bar alone does not
        bar.add_row(ProgressBar(total=1.0, completed=fraction, width=60), Text(f"{100 * fraction:.0f}% of budget", "dim"))
        parts.append(bar)
    coverage = Table(title="mutator × rule coverage so far", show_edge=False, pad_edge=False, title_justify="left")
    coverage.add_column("mutator")
    coverage.add_column("logs", justify="right")
    coverage.add_column("recall", justify="right")
    coverage.add_column("rules fired (expected in bold)")
    for name, n in summary.mutator_examples.most_common(12):
        recall = summary.recall(name)
        expected = summary.expected.get(name, set())
        fired = Text()
        for rule, count in summary.coverage[name].most_common(6):
            fired.append(f"{rule}×{count} ", "bold" if rule in expected else "")
        coverage.add_row(name, str(n), "—" if recall is None else f"{100 * recall:.0f}%", fired)
    parts.append(folding(coverage))
    return Group(*parts)


def _lost_line(event: WorkerLost) -> str:
    slots = ", ".join(map(str, event.slots))
    return f"dshfuzz: worker {event.worker} lost" + (f"; slot {slots} restarts at its round on another worker" if slots else "")


class LiveReporter:
    """Folds events into a summary and shows it: a live view on a terminal, plain lines elsewhere."""

    def __init__(self, console: Console | None = None, *, interval: float = 10.0) -> None:
        self.console = console or Console(stderr=True)
        self.summary = CampaignSummary()
        self.interval = interval

    def consume(self, events: Iterable[CampaignEvent]) -> Iterator[CampaignEvent]:
        if not self.console.is_terminal:
            yield from self._plain(events)
            return
        from rich.live import Live

        with Live(_status(self.summary), console=self.console, refresh_per_second=4, transient=True) as live:
            drawn = 0.0
            for event in events:
                known = len(self.summary.findings)
                self.summary.add(event)
                for f in self.summary.findings[known:]:
                    # above the live view, on a line of its own, and still there when the view goes
                    live.console.print(_finding_line(self.summary, f), soft_wrap=True)
                if isinstance(event, WorkerLost):
                    live.console.print(Text(_lost_line(event), "yellow"), soft_wrap=True)
                now = time.monotonic()
                # the view redraws 4 times a second: rebuilding it for each of 60 logs a second is waste
                if now - drawn >= 0.25 or len(self.summary.findings) > known:
                    drawn = now
                    live.update(_status(self.summary))
                yield event

    def _plain(self, events: Iterable[CampaignEvent]) -> Iterator[CampaignEvent]:
        last = time.monotonic()
        for event in events:
            known = len(self.summary.findings)
            self.summary.add(event)
            if len(self.summary.findings) > known:
                f = self.summary.findings[-1]
                self.console.print(f"dshfuzz: finding {len(self.summary.findings)}: {f.kind} {f.signature} "
                                   f"({f.events_found}→{f.events_minimal} events)", highlight=False, soft_wrap=True)
            if isinstance(event, WorkerLost):
                self.console.print(_lost_line(event), highlight=False, soft_wrap=True)
            now = time.monotonic()
            if now - last >= self.interval:
                last = now
                self.console.print(progress_line(self.summary), highlight=False, soft_wrap=True)
            yield event


def final_table(summary: CampaignSummary) -> Table:
    """The distinct findings, one row per cause (a defect showing in several formats is one row)."""
    causes = summary.causes()
    title = _count(len(summary.findings), "distinct finding")
    if len(causes) != len(summary.findings):
        title += f" ({_count(len(causes), 'cause')})"
    table = Table(title=title, show_lines=False)
    for col in ("kind", "layer", "rules", "formats", "reached by", "seen", "events", "after"):
        table.add_column(col)
    for group in causes.values():
        f = group[0]
        reached: Counter[str] = Counter()
        for g in group:
            reached.update(summary.reached_by.get(g.signature, Counter({g.mutator or "valid": 1})))
        table.add_row(
            Text(f.kind + (" (unconfirmed)" if f.confirmed is False else ""),
                 "yellow" if f.confirmed is False else _KIND_STYLE.get(f.kind, "")),
            "+".join(dict.fromkeys(g.layer or "—" for g in group)),
            " / ".join(dict.fromkeys(",".join(g.rules) or "—" for g in group)),
            ",".join(dict.fromkeys(f"v{g.format_version}" for g in group)),
            ", ".join(f"{m} {n}" for m, n in reached.most_common(3)) + (" …" if len(reached) > 3 else ""),
            str(sum(summary.signature_counts.get(g.signature, 1) for g in group)),
            f"{f.events_found}→{f.events_minimal}" + ("" if f.stage in ("minimal", "off") else " (cut)"),
            f"{summary.since_start(f.at):.0f}s",
        )
    return table


def final_summary(summary: CampaignSummary, width: int | None = None) -> Group:
    """What the campaign did and found: a run table, then the findings (or a clear none),
    then the mutators whose declared rules the checker did not always report. With
    ``width`` every table is laid out to fit it (:func:`fit`); without, each still folds."""
    run = Table(title="dshfuzz campaign", show_header=False, title_justify="left")
    run.add_column(style="bold")
    run.add_column()
    started = summary.started
    if started is not None:
        judges = "checker, reference oracle" + (", official layers" if started.official else "")
        run.add_row("checker", started.checker)
        run.add_row("judges", judges)
        run.add_row("seed / workers", f"{started.seed} / {started.workers}")
    stop = summary.finished.reason if summary.finished is not None else "—"
    run.add_row("stopped by", f"{stop} after {summary.elapsed:.1f}s")
    run.add_row("logs judged", f"{summary.examples} ({summary.mutants} mutants), {summary.rate:.1f}/s")
    run.add_row("mutators reached", _reach(summary))
    run.add_row("rules fired", str(len(summary.rules_fired)))
    if summary.examples and summary.mutators_not_reached:
        run.add_row("not reached", Text(summary.coverage_advice or "", "yellow"))
    if summary.examples and summary.rules_never_fired:
        run.add_row("rules never fired", " ".join(summary.rules_never_fired))
    if summary.round_cuts:
        run.add_row("rounds cut at their time cap", ", ".join(f"{k} {v}" for k, v in summary.round_cuts.most_common()))
    if summary.lost_workers:
        lost = "; ".join(f"{w.worker} (slots {', '.join(map(str, w.slots)) or 'none'})" for w in summary.lost_workers)
        run.add_row("lost workers", Text(lost, "yellow"))
    if summary.refusals:
        run.add_row("official refusals", ", ".join(f"{k} {v}" for k, v in summary.refusals.most_common()))
    reach = summary.official_reach
    if reach is not None and reach.sites:
        per = ", ".join(f"{p['package'].removeprefix('dsh-')} {p['reached']}/{p['reachable']}" for p in reach.by_package())
        run.add_row("official sites reached", f"{reach.reached_count} of {reach.reachable} ({per}); "
                    f"`dshfuzz coverage` lists the {len(reach.unreached())} unreached")
    lines = summary.checker_reach
    if lines is not None and lines.total:
        off = lines.to_json()["offPathLines"]
        run.add_row("checker lines exercised", f"{lines.exercised} of {lines.total} "
                    f"({100 * lines.exercised / lines.total:.1f}%)"
                    + (f"; {off} of the rest listed as off a campaign's path" if off else "")
                    + "; `dshfuzz coverage` lists the rest")
    if summary.out_of_scope:
        run.add_row("out of scope", ", ".join(f"{k} {v}" for k, v in summary.out_of_scope.most_common())
                    + " (refused only by layers the checker does not answer for: never a miss)")
    verdict = (
        Text(_count(len(summary.checker_defects), "checker finding"), "bold red")
        if summary.checker_defects
        else Text("no disagreement: the checker agreed with every judge on every log", "green")
    )
    comparison = summary.baseline_comparison
    if comparison is not None and summary.baseline is not None:
        run.add_row("baseline", f"{len(comparison.known)} known, {len(comparison.new)} new, {len(comparison.gone)} "
                    f"gone ({summary.baseline.source})")
        for label, causes, style in (("new", comparison.new, "bold red"), ("gone", comparison.gone, "green")):
            if causes:
                run.add_row(label, Text("\n".join(causes), style))
        verdict = (Text(_count(len(comparison.new), "new cause"), "bold red") if comparison.new
                   else Text("no new cause: every finding is known to the baseline", "green"))
    if summary.startup_advice:
        run.add_row("start-up", Text(summary.startup_advice, "yellow"))
    if summary.exit_advice:
        run.add_row("exit status", Text(summary.exit_advice, "yellow"))
    if summary.unconfirmed:
        run.add_row("unconfirmed", Text(f"{_count(len(summary.unconfirmed), 'finding')}: {UNCONFIRMED_MEANING}",
                                        "yellow"))
    if summary.time_line():
        run.add_row("time", summary.time_line() or "")
    run.add_row("verdict", verdict)
    parts: list[Table] = [run]
    if summary.findings:
        parts.append(final_table(summary))
    low = summary.low_recall()
    if low:
        recall = Table(title="mutators whose declared rules were not always reported", title_justify="left")
        recall.add_column("mutator")
        recall.add_column("recall", justify="right")
        recall.add_column("expected")
        for name, value in low[:12]:
            recall.add_row(name, f"{100 * value:.0f}%", ", ".join(sorted(summary.expected.get(name, ()))))
        parts.append(recall)
    return Group(*(fit(p, width) if width is not None else folding(p) for p in parts))
