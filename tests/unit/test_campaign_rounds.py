"""A round of a time-budgeted campaign ends at its time cap, and says so; a campaign on an
exact example budget is never cut, so its example sequence does not depend on load."""

from __future__ import annotations

import pytest

from dshfuzz.harness import CampaignConfig, ExampleJudged, RoundCut, run_campaign
from dshfuzz.harness import _worker
from dshfuzz.harness._rounds import ROUND_FLOOR_SECONDS, ROUND_SLACK, round_cap


def test_the_cap_is_slack_times_the_rounds_cost_at_the_recent_median_and_never_under_the_floor():
    assert round_cap(3, []) == ROUND_FLOOR_SECONDS
    assert round_cap(3, [0.05] * 10) == ROUND_FLOOR_SECONDS
    assert round_cap(200, [0.01, 0.2, 0.05, 0.05, 9.0]) == pytest.approx(ROUND_SLACK * 200 * 0.05)


def _events(monkeypatch, **budget) -> list:
    monkeypatch.setattr(_worker, "round_cap", lambda size, costs: 0.0)
    config = CampaignConfig(workers=0, official=False, mutators=("seq-gap", "torn-tail-line"), seed=3, **budget)
    return list(run_campaign(config))


def test_a_time_budgeted_round_past_its_cap_ends_and_is_reported(monkeypatch):
    events = _events(monkeypatch, budget_seconds=4.0)
    cuts = [e for e in events if isinstance(e, RoundCut)]
    assert cuts, "every round should have been cut at a zero cap"
    assert {c.stratum for c in cuts} <= {"seq-gap", "torn-tail-line", None}
    assert all(c.examples <= 1 and c.planned >= 3 for c in cuts)
    judged = [e for e in events if isinstance(e, ExampleJudged)]
    assert len(judged) <= len(cuts) + 1, "a cut round judges at most the one example it was judging"


def test_a_campaign_on_an_example_budget_is_never_cut(monkeypatch):
    events = _events(monkeypatch, budget_seconds=None, budget_examples=12)
    assert not [e for e in events if isinstance(e, RoundCut)]
    assert len([e for e in events if isinstance(e, ExampleJudged)]) == 12
