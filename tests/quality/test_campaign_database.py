"""A campaign keeps the examples that failed in the database it is given, and the next
campaign, anywhere that reaches it, replays them before anything new (a real redis-server,
or a folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshfuzz.harness import CampaignConfig, CampaignSetupError, DisagreementFound, ExampleJudged, preflight, run_campaign

PLANTED = "miss|expected|T3|v"


def _campaign(database: str, seed: int, tmp_path: Path) -> list[object]:
    # no shrink and no minimisation: the saved example is the generated one, which no other seed draws again
    config = CampaignConfig(
        checker="builtin:-T3", mutators=("step-key-reuse",), valid_fraction=0.0, workers=0, official=False,
        seed=seed, budget_seconds=None, budget_examples=6, database=database, out=tmp_path / f"run{seed}",
        minimise=False, shrink=False,
    )
    return list(run_campaign(config))


def _witnesses(events: list[object]) -> dict[str, bytes]:
    """Each signature's settled witness."""
    return {e.signature: e.data for e in events if isinstance(e, DisagreementFound) and e.stage == "off"}


def _replays_first(database: str, tmp_path: Path) -> None:
    saved = _witnesses(_campaign(database, seed=1, tmp_path=tmp_path))
    assert any(s.startswith(PLANTED) for s in saved), f"the first campaign should find the planted miss: {saved}"
    events = _campaign(database, seed=2, tmp_path=tmp_path)
    again = _witnesses(events)
    for signature in saved:
        # judged before anything new, a saved witness (one log may show several) claims the signature again
        assert again.get(signature) in set(saved.values()), f"{signature}: found on a log of the second campaign's own"
    judged = [e for e in events if isinstance(e, ExampleJudged)]
    assert len(judged) >= len(saved)


def test_a_second_campaign_replays_the_first_ones_failing_example_first_through_redis(redis_server, tmp_path):
    _replays_first(redis_server, tmp_path)


def test_a_second_campaign_replays_the_first_ones_failing_example_first_through_a_folder(tmp_path):
    _replays_first(str(tmp_path / "examples"), tmp_path)


def test_an_unreachable_database_stops_the_campaign_before_it_starts_in_one_line(tmp_path):
    config = CampaignConfig(workers=0, official=False, database="redis://127.0.0.1:1/0", out=tmp_path)
    with pytest.raises(CampaignSetupError, match=r"^--database redis://127\.0\.0\.1:1/0: cannot reach the redis server"):
        preflight(config)
