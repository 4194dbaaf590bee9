"""Every millisecond of a campaign is accounted for: each worker reports where its time
went (drawing, each judge, shrinking, minimising, the rest), the parts add up to its wall
time, and the summary prints them per judged log with the harness overhead."""

from __future__ import annotations

import time

from dshfuzz.harness import CampaignConfig, ExampleJudged, TimeSpent, run_campaign
from dshfuzz.report import CampaignSummary
from dshfuzz.report._summary import JUDGING_PARTS, TIME_PARTS


def test_a_workers_time_parts_add_up_to_its_wall_time_and_name_every_judge_it_ran(tmp_path):
    config = CampaignConfig(
        workers=0, official=False, mutators=("seq-gap", "non-json-line"), seed=5, budget_seconds=None,
        budget_examples=40, out=tmp_path,
    )
    began = time.monotonic()
    events = list(run_campaign(config))
    wall = time.monotonic() - began
    spent: dict[str, float] = {}
    for event in events:
        if isinstance(event, TimeSpent):
            for part, seconds in event.seconds.items():
                spent[part] = spent.get(part, 0.0) + seconds
    assert set(spent) <= set(TIME_PARTS), sorted(set(spent) - set(TIME_PARTS))
    assert {"drawing", "mutating", "checker", "reference oracle"} <= set(spent), sorted(spent)
    assert "files" not in spent, "the built-in checker and the reference oracle judge bytes: no judge needed a file"
    assert all(seconds >= 0 for seconds in spent.values())
    # the worker's parts are its whole life, which the campaign's own wall time contains
    assert 0 < sum(spent.values()) <= wall + 0.5, (sum(spent.values()), wall)

    summary = CampaignSummary()
    for event in events:
        summary.add(event)
    assert summary.examples == len([e for e in events if isinstance(e, ExampleJudged)]) == 40
    rows = summary.time_breakdown()
    assert [r["part"] for r in rows] == [p for p in TIME_PARTS if p in spent]
    assert abs(sum(r["share"] for r in rows) - 1) < 0.01
    assert summary.harness_overhead is not None and summary.harness_overhead >= 1.0
    line = summary.time_line() or ""
    assert line.startswith("ms per judged log: ") and "harness overhead" in line


def test_the_breakdown_is_per_judged_log_and_the_overhead_divides_by_the_judges_alone():
    summary = CampaignSummary()
    summary.examples = 10
    summary.add(TimeSpent(0, {"drawing": 0.3, "checker": 0.1, "official layers": 0.1}))
    summary.add(TimeSpent(1, {"drawing": 0.1, "minimising": 0.4}))
    rows = {r["part"]: r for r in summary.time_breakdown()}
    assert rows["drawing"]["msPerLog"] == 40.0 and rows["minimising"]["msPerLog"] == 40.0
    assert set(JUDGING_PARTS) >= {"checker", "official layers"}
    assert summary.harness_overhead == 5.0  # 1.0 s of worker time over 0.2 s of judging
    assert (summary.time_line() or "").startswith("ms per judged log: drawing 40.0, minimising 40.0")
