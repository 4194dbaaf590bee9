"""Detection power: how often a short campaign catches a checker blind to one incident.

    .venv/bin/python benchmarks/detection_power.py [--mutators a,b,...] [--seeds 20] [--examples 200]
                                                   [--official auto|always|never]

For each incident mutator, runs one in-process campaign per seed (the default mix
of every mutator, at most ``--examples`` logs) against the built-in checker with
the mutator's declared rules switched off, and prints the seeds that caught it,
the median examples to the catch, which finding caught it (``expected``: the
mutator's declaration; a layer name: that official layer or reference model
refusing) and the seconds per seed. The official layers judge where the rules
are refused only by them (``auto``; see ``dshfuzz.harness._power.needs_official``).

The reference measured in the same run is the campaign before its schedule: one
Hypothesis round over the whole mix. It prints how many mutators each reaches in
``--examples`` logs, the reason the schedule exists.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from contextlib import ExitStack

from dshfuzz.harness._power import Trial, detection_trial, needs_official
from dshfuzz.mutators import MUTATORS


def mixed_round_reach(examples: int, seed: int) -> int:
    """Mutators judged by one Hypothesis round of ``examples`` logs over the whole mix."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    from dshfuzz.harness._campaign import round_settings
    from dshfuzz.harness._strategy import examples as mixed

    reached: set[str] = set()

    def record(example) -> bool:  # noqa: ANN001 - an Example
        if example.mutator is not None:
            reached.add(example.mutator)
        return False

    try:
        find(mixed(), record, settings=round_settings(examples), random=random.Random(seed))
    except NoSuchExample:
        pass
    return len(reached)


def schedule_reach(examples: int, seed: int) -> int:
    """Mutators the campaign's schedule gives a round within ``examples`` logs (rounds run full)."""
    from dshfuzz.harness._strategy import schedule

    reached: set[str] = set()
    spent = 0
    for stratum, size in schedule(seed=seed):
        if spent >= examples:
            break
        if stratum is not None:
            reached.add(stratum)
        spent += size
    return len(reached)


def how(trial: Trial) -> str:
    return "-" if trial.signature is None else trial.signature.split("|")[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutators", default=None, help="comma-separated mutator names (default: all)")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--official", choices=("auto", "always", "never"), default="auto")
    args = parser.parse_args()
    names = sorted(MUTATORS) if args.mutators is None else [m for m in args.mutators.split(",") if m]
    unknown = [m for m in names if m not in MUTATORS]
    if unknown:
        print(f"unknown mutators: {', '.join(unknown)}", file=sys.stderr)
        return 2
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    mixed = [mixed_round_reach(args.examples, seed) for seed in range(3)]
    planned = [schedule_reach(args.examples, seed) for seed in range(3)]
    print(f"reference: mutators reached in {args.examples} logs, seeds 0-2: one mixed round {mixed}, "
          f"the schedule {planned} (of {len(MUTATORS)}); ratio {sum(planned) / max(1, sum(mixed)):.2f}x")
    print(f"{'mutator':34} {'official':8} {'caught':>7} {'median':>6}  {'caught by':24} {'s/seed':>6}  missed seeds")
    below = []
    with ExitStack() as stack:
        oracle = None
        for name in names:
            use = args.official == "always" or (args.official == "auto" and needs_official(name))
            if use and oracle is None:
                from dshfuzz.oracle.official import OfficialOracle

                oracle = stack.enter_context(OfficialOracle())
            start = time.perf_counter()
            trials = [detection_trial(name, seed, examples=args.examples, official=oracle if use else None)
                      for seed in range(args.seeds)]
            per_seed = (time.perf_counter() - start) / args.seeds
            hits = [t for t in trials if t.caught]
            median = statistics.median(t.examples for t in hits) if hits else float("nan")
            by = ",".join(sorted({how(t) for t in hits})) or "-"
            missed = [t.seed for t in trials if not t.caught]
            if len(hits) < 0.95 * args.seeds:
                below.append(name)
            print(f"{name:34} {'yes' if use else 'no':8} {len(hits):>3}/{args.seeds:<3} {median:>6.0f}  {by:24} "
                  f"{per_seed:>6.1f}  {missed or ''}", flush=True)
    print(f"below 95%: {', '.join(below) or 'none'}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
