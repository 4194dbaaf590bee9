"""Detection power against planted defects: a short campaign finds and minimises each one.

Each checker in ``tests/broken_checkers`` is the built-in checker with one defect
planted. The campaign (one worker, reference oracle and mutator declarations as
the truth; the official layers are exercised by the conformance suite) must find
the defect and shrink its witness to a small event-level log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dshfuzz.harness import CampaignConfig, DisagreementFound, run_campaign

REPO = Path(__file__).resolve().parents[2]
MAX_MINIMAL_EVENTS = 12


def _planted(kind: str, rule: str | None):
    def matches(found: DisagreementFound) -> bool:
        return found.kind == kind and (rule is None or rule in found.rules)

    return matches


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, matches",
    [
        ("miss_rule", _planted("miss", "S5")),
        ("false_alarm", _planted("false-alarm", "T3")),
        ("wrong_seq", _planted("wrong-place", "E2")),
        ("crashes", _planted("crash", None)),
    ],
)
def test_a_short_campaign_finds_and_minimises_the_planted_defect(module, matches, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    config = CampaignConfig(
        checker=f"py:tests.broken_checkers.{module}:check",
        seed=1,
        workers=1,
        budget_seconds=240,
        budget_examples=600,
        official=False,
        out=tmp_path,
    )
    seen = []
    campaign = run_campaign(config)
    planted = None
    for event in campaign:
        if isinstance(event, DisagreementFound):
            seen.append(event.signature)
            if matches(event):
                planted = event
                break
    campaign.close()
    assert planted is not None, f"{module}: the planted defect was not found; found instead: {seen}"
    witness = planted.data.decode("utf-8", "replace")
    assert planted.events_minimal <= MAX_MINIMAL_EVENTS, f"witness not minimal ({planted.events_minimal} events):\n{witness}"
