"""The terminal reporter: a live rich display while the campaign runs, a table at the end."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from dshfuzz.harness._events import CampaignEvent

from ._summary import CampaignSummary

__all__ = ["LiveReporter", "final_table"]


def _status(summary: CampaignSummary) -> Group:
    head = Text.assemble(
        ("dshfuzz ", "bold"),
        f"{summary.examples} logs judged, {summary.rate:.1f}/s, {summary.elapsed:.0f}s — ",
        (f"{len(summary.checker_defects)} findings", "bold red" if summary.checker_defects else "green"),
    )
    coverage = Table(title="mutator × rule coverage so far", show_edge=False, pad_edge=False)
    coverage.add_column("mutator")
    coverage.add_column("logs", justify="right")
    coverage.add_column("recall", justify="right")
    coverage.add_column("rules fired")
    for name, n in summary.mutator_examples.most_common(12):
        recall = summary.recall(name)
        fired = ", ".join(f"{r}×{c}" for r, c in summary.coverage[name].most_common(5))
        coverage.add_row(name, str(n), "—" if recall is None else f"{100 * recall:.0f}%", fired)
    return Group(head, coverage)


class LiveReporter:
    """Folds events into a summary and redraws a live view (plain lines when not a TTY)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.summary = CampaignSummary()

    def consume(self, events: Iterable[CampaignEvent]) -> Iterator[CampaignEvent]:
        with Live(_status(self.summary), console=self.console, refresh_per_second=4, transient=True) as live:
            for event in events:
                self.summary.add(event)
                live.update(_status(self.summary))
                yield event


def final_table(summary: CampaignSummary) -> Table:
    table = Table(title=f"{len(summary.findings)} distinct findings", show_lines=False)
    for col in ("kind", "layer", "rules", "mutator", "seen", "events"):
        table.add_column(col)
    for f in summary.findings:
        table.add_row(
            f.kind,
            f.layer or "—",
            ",".join(f.rules) or "—",
            f.mutator or "valid",
            str(summary.signature_counts.get(f.signature, 1)),
            f"{f.events_found}→{f.events_minimal}",
        )
    return table
