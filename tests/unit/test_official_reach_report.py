"""The campaign's official reach, as the summary folds it and the reports show it.

Specification: a site counts once, for the stratum that reached it first; the reach is
counted against the sites not listed unreachable, and a listed site that a log reached is
shown, never hidden; every unreached reachable site is listed with its place and message
template in summary.json, report.md and report.html.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.harness import CampaignStarted, CoverageReached, ExampleJudged, OfficialSitesMapped
from dshfuzz.oracle.official import RefusalSite, UnreachableSite
from dshfuzz.report import CampaignSummary, write_reports
from dshfuzz.report._reach import OfficialReach

SITES = (
    RefusalSite("dsh-session/lib/index.js:10:2", "dsh-session", "lib/index.js", 10, 2, "`seq ${seq} repeats`"),
    RefusalSite("dsh-session/lib/index.js:20:4", "dsh-session", "lib/index.js", 20, 4, "`no header`"),
    RefusalSite("dsh-token-meter/lib/index.js:5:1", "dsh-token-meter", "lib/index.js", 5, 1, "`meter | pipe`"),
    RefusalSite("dsh-token-meter/lib/index.js:9:1", "dsh-token-meter", "lib/index.js", 9, 1, "`write only`"),
)
UNREACHABLE = {SITES[3].id: UnreachableSite(SITES[3].id, SITES[3].message, "write-path", "guards an append")}


def judged(mutator: str | None, sites: tuple[str, ...], code: int = 0, at: float = 101.0) -> CoverageReached:
    return CoverageReached(0, mutator, at, official_sites=sites, official_code=code)


@pytest.fixture
def summary(monkeypatch: pytest.MonkeyPatch) -> CampaignSummary:
    monkeypatch.setattr("dshfuzz.oracle.official.unreachable_sites", lambda: UNREACHABLE)
    s = CampaignSummary()
    s.add(CampaignStarted("run", "builtin", 1, 2, 60.0, None, True, "out", 100.0))
    s.add(OfficialSitesMapped(0, SITES, "function"))
    s.add(OfficialSitesMapped(1, SITES, "function"))  # every worker maps the same table: counted once
    s.add(judged("seq-gap", (SITES[0].id,), code=7))
    s.add(judged(None, (SITES[0].id, SITES[3].id), code=2, at=105.0))  # a second worker reaching it again
    return s


def test_a_site_counts_once_for_the_stratum_that_reached_it_first(summary: CampaignSummary) -> None:
    reach = summary.official_reach
    assert reach is not None
    assert reach.reachable == 3 and reach.reached_count == 1
    assert reach.first[SITES[0].id] == ("seq-gap", 1.0)
    assert reach.headline == "official refusal sites reached: 1 of 3"
    assert reach.code == 9
    assert [s.id for s in reach.unreached()] == [SITES[1].id, SITES[2].id]


def test_a_listed_site_that_a_log_reached_is_shown(summary: CampaignSummary) -> None:
    reach = summary.official_reach
    assert reach is not None
    assert [s.id for s in reach.listed_but_reached()] == [SITES[3].id]
    assert summary.to_json()["officialReach"]["listedButReached"] == [SITES[3].id]


def test_per_package_rows_add_up(summary: CampaignSummary) -> None:
    rows = {r["package"]: r for r in summary.to_json()["officialReach"]["byPackage"]}
    assert rows["dsh-session"] == {"package": "dsh-session", "sites": 2, "unreachable": 0, "reachable": 2, "reached": 1}
    assert rows["dsh-token-meter"] == {"package": "dsh-token-meter", "sites": 2, "unreachable": 1, "reachable": 1,
                                       "reached": 0}


def test_every_report_lists_the_unreached_sites(summary: CampaignSummary, tmp_path: Path) -> None:
    written = write_reports(summary, tmp_path)
    data = json.loads(written["json"].read_text("utf-8"))
    assert [u["id"] for u in data["officialReach"]["unreached"]] == [SITES[1].id, SITES[2].id]
    markdown, page = written["markdown"].read_text("utf-8"), written["html"].read_text("utf-8")
    assert "official refusal sites reached: 1 of 3" in markdown
    for site in (SITES[1], SITES[2]):
        assert f"`{site.id}`" in markdown and site.id in page
    assert "`'meter \\| pipe'`" in markdown  # a template's pipe and backquotes cannot break the table
    assert "Official reach" in page and "1 of 3" in page


def test_no_reach_section_without_official_coverage() -> None:
    s = CampaignSummary()
    s.add(CampaignStarted("run", "builtin", 1, 2, 60.0, None, True, "out", 100.0))
    s.add(ExampleJudged(0, "seq-gap", 3, frozenset(), frozenset(), frozenset(), (), 101.0))
    s.add(judged("seq-gap", ()))
    assert s.official_reach is None and s.to_json()["officialReach"] is None


def test_the_table_of_a_later_worker_does_not_replace_the_first() -> None:
    reach = OfficialReach()
    reach.mapped(SITES[:2], "block")
    reach.mapped(SITES, "function")
    assert reach.sites == SITES[:2] and reach.granularity == "block"
