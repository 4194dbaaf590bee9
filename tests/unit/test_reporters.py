"""The reporters render one summary: the HTML stands alone, the kill matrix marks what each
mutator declares, the throughput chart marks each finding, and the terminal never stays silent."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

from rich.console import Console

from dshfuzz.harness import CampaignFinished, CampaignStarted, DisagreementFound, ExampleJudged
from dshfuzz.report import CampaignSummary, LiveReporter, final_summary, progress_line, render_html, render_markdown
from dshfuzz.report._summary import rule_order

T0 = 1_000.0


def _judged(mutator: str | None, fired: set[str], expected: set[str], at: float) -> ExampleJudged:
    return ExampleJudged(0, mutator, 12, frozenset(fired), frozenset(expected), frozenset({"fold"}), (), at)


def _found(signature: str, at: float) -> DisagreementFound:
    kind, layer, rule, mutator = signature.split("|")
    return DisagreementFound(
        signature=signature, kind=kind, layer=layer, rules=(rule,), mutator=mutator, detail="planted <defect>",
        data=b'{"type":"session","version":0}\n', compression="none", format_version=0, events_found=40,
        events_minimal=2, checker_rules=(), expected_rules=(rule,),
        official={"fold": {"ok": False, "error": {"name": "SessionLogError", "message": "gap", "seq": 7}}}, at=at,
    )


def _campaign(findings: int) -> list:
    events: list = [CampaignStarted("run", "builtin", 0, 1, 20.0, None, True, "/tmp/run", T0, ("seq-gap", "torn-tail-line"))]
    for i in range(60):
        if i % 3 == 0:
            events.append(_judged(None, set(), set(), T0 + i / 3))
        elif i % 3 == 1:
            events.append(_judged("seq-gap", {"E2", "C1"}, {"E2"}, T0 + i / 3))
        else:
            events.append(_judged("torn-tail-line", {"Z1"} if i % 2 else set(), {"Z1"}, T0 + i / 3))
    for n in range(findings):
        events.append(_found(f"miss|expected|Z1|torn-tail-line{n}", T0 + 5 + n))
    events.append(CampaignFinished("budget", 60, 20.0, T0 + 20))
    return events


def _summary(findings: int) -> CampaignSummary:
    summary = CampaignSummary()
    for event in _campaign(findings):
        summary.add(event)
    return summary


def test_the_html_report_needs_no_network_and_its_chart_is_well_formed_svg():
    page = render_html(_summary(2))
    assert not re.search(r"(src|href)\s*=", page), "the report must not load anything"
    assert "http" not in page
    svg = re.search(r"<svg.*?</svg>", page, re.S)
    assert svg is not None
    chart = ET.fromstring(svg.group(0))
    marks = [el for el in chart.iter("line") if el.get("stroke") == "#c33"]
    assert len(marks) == 2, "one mark per distinct finding"
    assert "planted &lt;defect&gt;" in page and "<defect>" not in page


def test_the_kill_matrix_outlines_each_mutators_declared_rules_and_shades_by_share():
    page = render_html(_summary(0))
    declared = re.findall(r"<td class=exp style='[^']*' title='([^']*)'", page)
    assert sorted(declared) == ["seq-gap × E2: 20 of 20 logs (declared)", "torn-tail-line × Z1: 10 of 20 logs (declared)"]
    assert "seq-gap × C1: 20 of 20 logs'" in page


def test_the_summary_says_what_was_reached_and_fired():
    s = _summary(1).to_json()
    assert s["mutatorsPlanned"] == ["seq-gap", "torn-tail-line"]
    assert s["mutatorsReached"] == 2
    assert s["rulesFired"] == ["C1", "E2", "Z1"]
    assert sorted(["E10", "E2", "C1", "E1"], key=rule_order) == ["C1", "E1", "E2", "E10"]
    assert s["expectedRules"] == {"seq-gap": ["E2"], "torn-tail-line": ["Z1"]}
    assert s["findings"][0]["foundAfterSeconds"] == 5.0
    markdown = render_markdown(_summary(1))
    assert "mutators reached: 2 of 2" in markdown and "fold refuses (SessionLogError: gap (seq 7))" in markdown


def _terminal_text(renderable) -> str:
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(renderable)
    return out.getvalue()


def test_the_final_summary_says_plainly_when_nothing_was_found_and_lists_low_recall():
    text = _terminal_text(final_summary(_summary(0)))
    assert "no disagreement" in text and "distinct finding" not in text
    assert "torn-tail-line" in text and "50%" in text, "a mutator whose rules fired on half its logs"
    found = _terminal_text(final_summary(_summary(2)))
    assert "2 checker findings" in found and "miss|expected" not in found and "torn-tail-line1" in found


def test_off_a_terminal_the_live_reporter_prints_findings_and_periodic_progress():
    out = io.StringIO()
    reporter = LiveReporter(Console(file=out, width=100), interval=0.0)
    assert list(reporter.consume(_campaign(1))) == _campaign(1)
    lines = out.getvalue().splitlines()
    assert any(line.startswith("dshfuzz: finding 1: miss miss|expected|Z1|torn-tail-line0") for line in lines)
    assert sum(line.startswith("dshfuzz: ") and "logs judged" in line for line in lines) >= 60
    assert all(len(line) > 0 for line in lines)
    assert progress_line(reporter.summary).startswith("dshfuzz: 60 logs judged")


def test_on_a_terminal_the_live_view_folds_every_event_and_draws_the_findings():
    out = io.StringIO()
    reporter = LiveReporter(Console(file=out, width=120, force_terminal=True, color_system=None))
    assert list(reporter.consume(_campaign(2))) == _campaign(2)
    assert reporter.summary.examples == 60 and len(reporter.summary.findings) == 2
    assert "torn-tail-line1" in out.getvalue(), "a new finding is drawn at once"


def test_a_silent_loss_is_in_every_report_with_its_meaning_and_the_loaders_count():
    import html

    from dshfuzz.report._summary import KIND_MEANING

    detail = "the official loader recovers 2 events from the file; the checker says it judged 1 and reported nothing"
    events = _campaign(0)
    events.insert(-1, DisagreementFound(
        signature="silent-loss|load|-|v0", kind="silent-loss", layer="load", rules=(), mutator=None, detail=detail,
        data=b'{"type":"session","version":0}\n', compression="zstd", format_version=0, events_found=40,
        events_minimal=2, checker_rules=(), expected_rules=(), official={"load": {"ok": True, "events": 2}},
        at=T0 + 6, stage="minimal",
    ))
    summary = CampaignSummary()
    for event in events:
        summary.add(event)
    [entry] = summary.to_json()["findings"]
    assert entry["kind"] == "silent-loss" and entry["official"] == {"load": {"ok": True, "events": 2}}
    assert summary.failing, "a silent loss counts against the checker"
    meaning = KIND_MEANING["silent-loss"]
    for page in (render_markdown(summary), render_html(summary)):
        assert "silent-loss" in page and detail in page
        assert meaning in page or html.escape(meaning) in page
    assert "silent-loss" in _terminal_text(final_summary(summary))
