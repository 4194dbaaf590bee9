"""Campaign throughput: judged logs per second with every judge, 1 worker vs 2, in one job.

    .venv/bin/python benchmarks/campaign.py [--seconds 60]

Runs the built-in checker's campaign (checker + reference oracle + official layers)
once with one worker and once with two, back to back, and prints examples/s, where
each campaign's time went (its summary's breakdown) and the scaling ratio. Minimisation is on, as in ``make fuzz``; the rate counts logs
judged in Hypothesis' generation phase (shrinking and minimising run on top).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from dshfuzz.harness import CampaignConfig, run_campaign
from dshfuzz.report import CampaignSummary


def rate(workers: int, seconds: float) -> tuple[int, float, float, str]:
    """One campaign: judged logs, elapsed seconds, logs/s and its time breakdown (the line the
    campaign's summary prints: milliseconds per judged log per part, and the harness overhead)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = CampaignConfig(workers=workers, budget_seconds=seconds, seed=11, out=Path(tmp))
        summary = CampaignSummary()
        elapsed = seconds
        for event in run_campaign(config):
            summary.add(event)
            elapsed = getattr(event, "elapsed", elapsed)
    return summary.examples, elapsed, summary.examples / elapsed, summary.time_line() or "no breakdown"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    one = rate(1, args.seconds)
    two = rate(2, args.seconds)
    print(f"1 worker : {one[0]} logs in {one[1]:.1f} s = {one[2]:.2f} logs/s\n           {one[3]}")
    print(f"2 workers: {two[0]} logs in {two[1]:.1f} s = {two[2]:.2f} logs/s\n           {two[3]}")
    print(f"scaling 2/1: {two[2] / one[2]:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
