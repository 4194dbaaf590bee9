"""Campaign throughput: judged logs per second with every judge, 1 worker vs 2, in one job.

    .venv/bin/python benchmarks/campaign.py [--seconds 60]

Runs the built-in checker's campaign (checker + reference oracle + official layers)
once with one worker and once with two, back to back, and prints examples/s and
the scaling ratio. Minimisation is on, as in ``make fuzz``; the rate counts logs
judged in Hypothesis' generation phase (shrinking and minimising run on top).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from dshfuzz.harness import CampaignConfig, ExampleJudged, run_campaign


def rate(workers: int, seconds: float) -> tuple[int, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        config = CampaignConfig(workers=workers, budget_seconds=seconds, seed=11, out=Path(tmp))
        judged = 0
        elapsed = seconds
        for event in run_campaign(config):
            if isinstance(event, ExampleJudged):
                judged += 1
            elapsed = getattr(event, "elapsed", elapsed)
    return judged, elapsed, judged / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    one = rate(1, args.seconds)
    two = rate(2, args.seconds)
    print(f"1 worker : {one[0]} logs in {one[1]:.1f} s = {one[2]:.2f} logs/s")
    print(f"2 workers: {two[0]} logs in {two[1]:.1f} s = {two[2]:.2f} logs/s")
    print(f"scaling 2/1: {two[2] / one[2]:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
