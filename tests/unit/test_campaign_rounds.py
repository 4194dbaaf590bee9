"""A round of a time-budgeted campaign ends at its time cap, and says so; a campaign on an
exact example budget is never cut, so its example sequence does not depend on load."""

from __future__ import annotations

import pytest

from dshfuzz.harness import CampaignConfig, ExampleJudged, RoundCut, run_campaign
from dshfuzz.harness import _worker
from dshfuzz.harness._config import slot_share
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


@pytest.mark.parametrize("budget, slots", [(400, 2), (7, 3), (2, 5), (1000, 8), (0, 1)])
def test_an_example_budget_splits_into_shares_that_add_up_and_differ_by_at_most_one(budget, slots):
    shares = [slot_share(budget, slots, slot) for slot in range(slots)]
    assert sum(shares) == budget
    assert max(shares) - min(shares) <= 1


def test_worker_processes_on_an_example_budget_judge_exactly_the_budget_the_same_logs_each_run(tmp_path):
    """Each worker process stops itself at its share: no log is judged past the budget while the
    coordinator's stop travels, so two runs of the same seed judge the same logs."""

    def judged(out: str) -> list[tuple[int, str, int]]:
        config = CampaignConfig(workers=2, official=False, mutators=("seq-gap", "torn-tail-line"), seed=3,
                                budget_seconds=None, budget_examples=30, out=tmp_path / out)
        return sorted((e.worker, e.mutator or "", e.events) for e in run_campaign(config) if isinstance(e, ExampleJudged))

    first = judged("a")
    assert len(first) == 30
    assert first == judged("b")
