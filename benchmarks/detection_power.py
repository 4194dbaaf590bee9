"""Detection power: how often a short campaign catches a checker blind to one incident.

    .venv/bin/python benchmarks/detection_power.py [--mutators a,b,...] [--seeds 20] [--examples 200]
                                                   [--official auto|always|never] [--separate] [--siblings N]

For each incident mutator and seed, one in-process campaign (the default mix of
every mutator, at most ``--examples`` logs) against the built-in checker with the
mutator's declared rules switched off. Prints the seeds that caught it, the median
examples to the catch, which finding caught it (``expected``: the mutator's
declaration; a layer name: that official layer or reference model refusing) and
the CPU seconds per seed. The official layers judge where the rules are refused
only by them (``auto``; see ``dshfuzz.harness._power.needs_official``).

By default each seed runs one campaign of the whole built-in checker per judge set
and derives every crippled checker's trial from it (``shared_trials``: exact, and
a separate campaign runs wherever a crippled one would diverge); ``--separate``
runs one campaign per mutator and seed instead: the same figures, at many times
the cost.

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

from dshfuzz.harness._power import Trial, detection_trial, needs_official, shared_trials
from dshfuzz.mutators import MUTATORS
from dshfuzz.oracle.official import OfficialOracle


def mixed_round_reach(examples: int, seed: int) -> int:
    """Mutators judged by one Hypothesis round of ``examples`` logs over the whole mix."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    from dshfuzz.harness._rounds import round_settings
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


def run_trials(
    names: list[str], seeds: int, examples: int, official: object | None, separate: bool, siblings: int | None = None
) -> tuple[dict[str, list[Trial]], int]:
    """Every (mutator, seed) trial, shared per seed unless ``separate``; and how many
    trials ran a campaign of their own."""
    trials: dict[str, list[Trial]] = {name: [] for name in names}
    own = 0
    for seed in range(seeds):
        shared = {} if separate else shared_trials(names, seed, examples=examples, official=official, siblings=siblings)
        for name in names:
            trial = shared.get(name)
            if trial is None:
                own += 1
                trial = detection_trial(name, seed, examples=examples, official=official, siblings=siblings)
            trials[name].append(trial)
    return trials, own


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutators", default=None, help="comma-separated mutator names (default: all)")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--official", choices=("auto", "always", "never"), default="auto")
    parser.add_argument("--separate", action="store_true", help="one campaign per mutator and seed")
    parser.add_argument("--siblings", type=int, default=None, help="mutants drawn per valid log (default: the campaign's)")
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
    groups = {
        True: [m for m in names if args.official == "always" or (args.official == "auto" and needs_official(m))],
        False: [m for m in names if args.official == "never" or (args.official == "auto" and not needs_official(m))],
    }
    trials: dict[str, list[Trial]] = {}
    cpu: dict[bool, tuple[float, int]] = {}
    with ExitStack() as stack:
        for use, group in groups.items():
            if not group:
                continue
            oracle = stack.enter_context(OfficialOracle()) if use else None
            start = time.process_time()
            group_trials, own = run_trials(group, args.seeds, args.examples, oracle, args.separate, args.siblings)
            trials.update(group_trials)
            cpu[use] = (time.process_time() - start, own)
    for use, (seconds, own) in cpu.items():
        print(f"judges {'with' if use else 'without'} the official layers: {len(groups[use])} mutators x "
              f"{args.seeds} seeds in {seconds:.0f} s of this process' CPU (Node's not counted); "
              f"{own} trials ran a campaign of their own")
    print(f"{'mutator':34} {'official':8} {'caught':>7} {'median':>6}  {'caught by':30} missed seeds")
    below = []
    for name in names:
        hits = [t for t in trials[name] if t.caught]
        median = statistics.median(t.examples for t in hits) if hits else float("nan")
        by = ",".join(sorted({how(t) for t in hits})) or "-"
        missed = [t.seed for t in trials[name] if not t.caught]
        if len(hits) < 0.95 * args.seeds:
            below.append(name)
        use = name in groups[True]
        print(f"{name:34} {'yes' if use else 'no':8} {len(hits):>3}/{args.seeds:<3} {median:>6.0f}  {by:30} {missed or ''}")
    print(f"below 95%: {', '.join(below) or 'none'}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
