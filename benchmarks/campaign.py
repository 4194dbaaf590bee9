"""Campaign throughput: judged logs per second with every judge, 1 worker vs 2, in one job.

    .venv/bin/python benchmarks/campaign.py [--seconds 60] [--workers 1 2] [--checker SPEC]

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


def rate(workers: int, seconds: float, checker: str = "builtin") -> tuple[int, float, float, str]:
    """One campaign: judged logs, elapsed seconds, logs/s and its time breakdown (the line the
    campaign's summary prints: milliseconds per judged log per part, and the harness overhead)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = CampaignConfig(checker=checker, workers=workers, budget_seconds=seconds, seed=11, out=Path(tmp))
        summary = CampaignSummary()
        elapsed = seconds
        for event in run_campaign(config):
            summary.add(event)
            elapsed = getattr(event, "elapsed", elapsed)
    return summary.examples, elapsed, summary.examples / elapsed, summary.time_line() or "no breakdown"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="the worker counts to run, in order")
    parser.add_argument("--checker", default="builtin", help="the checker under test (a --checker SPEC)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    rates = {}
    for workers in args.workers:
        logs, elapsed, per_second, breakdown = rate(workers, args.seconds, args.checker)
        rates[workers] = per_second
        print(f"{workers} worker(s): {logs} logs in {elapsed:.1f} s = {per_second:.2f} logs/s\n           {breakdown}")
    if 1 in rates and 2 in rates:
        print(f"scaling 2/1: {rates[2] / rates[1]:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
