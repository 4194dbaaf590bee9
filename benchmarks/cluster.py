"""Cluster campaigns (issue 18): what Dask costs, and how far one coordinator goes.

    .venv/bin/python benchmarks/cluster.py [--seconds 30] [--repeats 2] [--official] [--synthetic-seconds 20]

1. Throughput: the built-in checker's campaign (seed 11, minimisation on) on local
   worker processes and through ``--cluster local`` (a ``LocalCluster`` started by the
   campaign, inside its budget), with 1 and 2 workers, interleaved in one run so that the
   machine's load hits every configuration alike; logs/s over the campaign's elapsed time
   (start-up included) and from the first judged log to the last (start-up left out), and
   the ratio cluster / processes per worker count.
2. Absorption: synthetic worker slots on a ``LocalCluster`` send ``ExampleJudged`` events
   as fast as they can through the campaign's own transport; the coordinator runs its
   ordinary loop (deduplication, the summary every report is made of). Events absorbed per
   second, and the coordinator process's CPU microseconds per event (that process also
   hosts the ``LocalCluster``'s scheduler, so this is an upper bound of the coordinator's
   own cost).
   Then many paced slots (each sending what one real slot sends) show what each slot costs
   the coordinator and the scheduler together, polling included.
3. From both: how many 2-core machines (each as fast as this one with 2 workers) one
   coordinator can serve, from its CPU cost per event (one core's worth) and from the
   absorbed rate.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dshfuzz.harness import CampaignConfig, ExampleJudged, run_campaign
from dshfuzz.report import CampaignSummary


@dataclass
class Measured:
    """One campaign as the benchmark sees it: its summary, when each log was judged, and this
    process's CPU seconds over it (the coordinator's; with ``cluster="local"`` its scheduler's too)."""

    summary: CampaignSummary
    stamps: list[float]
    cpu: float


def measure(config: CampaignConfig, *, slot_work: Callable[..., None] | None = None) -> Measured:
    """The benchmark's one campaign loop, through the public API; ``slot_work`` replaces what each
    cluster slot runs (``_cluster.SLOT_WORK``, the worker loop), for synthetic slots."""
    import dshfuzz.harness._cluster as cluster

    real = cluster.SLOT_WORK
    if slot_work is not None:
        cluster.SLOT_WORK = slot_work
    try:
        summary, stamps = CampaignSummary(), []
        cpu = time.process_time()
        for event in run_campaign(config):
            summary.add(event)
            if isinstance(event, ExampleJudged):
                stamps.append(time.time())
        return Measured(summary, stamps, time.process_time() - cpu)
    finally:
        cluster.SLOT_WORK = real


def rate(workers: int, seconds: float, *, cluster: str | None, official: bool) -> tuple[int, float, float]:
    """One campaign: judged logs, logs/s over its elapsed time, and logs/s from its first
    judged log to its last (start-up left out)."""
    with tempfile.TemporaryDirectory() as tmp:
        run = measure(CampaignConfig(workers=workers, budget_seconds=seconds, seed=11, out=Path(tmp),
                                     official=official, cluster=cluster))
    stamps = run.stamps
    steady = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0
    return run.summary.examples, run.summary.examples / run.summary.elapsed, steady


def synthetic(config, worker, put, should_stop, inbox=None, **resume) -> None:  # noqa: ANN001 - run_guarded's shape
    """A worker slot that judges nothing: it sends a typical ``ExampleJudged`` as fast as it can."""
    rules = frozenset({"S5", "E2", "T3"})
    try:
        while not should_stop():
            for _ in range(200):
                put(ExampleJudged(worker, "partial-coverage", 40, rules, frozenset({"S5"}), frozenset(), (),
                                  time.time(), 0.004, 0.01))
            time.sleep(0)  # let the pump thread take its batch
    finally:
        put(("done", worker))


def paced(config, worker, put, should_stop, inbox=None, **resume) -> None:  # noqa: ANN001 - run_guarded's shape
    """A worker slot that sends ``PACE`` typical ``ExampleJudged`` a second: a real slot's rate."""
    rules = frozenset({"S5", "E2", "T3"})
    try:
        while not should_stop():
            put(ExampleJudged(worker, "partial-coverage", 40, rules, frozenset({"S5"}), frozenset(), (),
                              time.time(), 0.004, 0.01))
            time.sleep(1 / PACE)
    finally:
        put(("done", worker))


PACE = 32.0
"""Events a second from one paced slot: one of two workers of a 2-core machine."""


def many_slots(slots: int, seconds: float) -> tuple[float, float]:
    """``slots`` paced slots (threads of 2 worker processes, the scheduler in this process):
    events/s absorbed and this process's CPU milliseconds per wall second per slot."""
    import logging

    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=slots // 2, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0",
                                  silence_logs=logging.ERROR) as local, tempfile.TemporaryDirectory() as tmp:
        run = measure(CampaignConfig(workers=slots, budget_seconds=seconds, official=False, out=Path(tmp),
                                     cluster=local.scheduler_address), slot_work=paced)
    return run.summary.examples / run.summary.elapsed, 1000 * run.cpu / run.summary.elapsed / slots


def absorption(slots: int, seconds: float) -> tuple[int, float, float]:
    """Events absorbed, events/s and coordinator CPU microseconds per event."""
    with tempfile.TemporaryDirectory() as tmp:
        run = measure(CampaignConfig(workers=slots, budget_seconds=seconds, official=False, out=Path(tmp),
                                     cluster="local"), slot_work=synthetic)
    examples = run.summary.examples
    return examples, examples / run.summary.elapsed, 1e6 * run.cpu / max(1, examples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--official", action="store_true", help="judge with the official layers too")
    parser.add_argument("--synthetic-seconds", type=float, default=20.0)
    parser.add_argument("--only-synthetic", action="store_true", help="skip the throughput comparison")
    parser.add_argument("--many-slots", type=int, default=32, help="paced synthetic slots for the per-slot cost")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    rates: dict[tuple[str, int], list[tuple[float, float]]] = {}
    if args.only_synthetic:
        args.repeats = 0
    for repeat in range(args.repeats):
        for workers in (1, 2):
            for path, cluster in (("processes", None), ("cluster local", "local")):
                logs, per_second, steady = rate(workers, args.seconds, cluster=cluster, official=args.official)
                rates.setdefault((path, workers), []).append((per_second, steady))
                print(f"run {repeat + 1}: {path:13} {workers} worker(s): {logs} logs, {per_second:.1f} logs/s, "
                      f"{steady:.1f} logs/s after start-up", flush=True)
    print("\n| workers | processes logs/s | cluster local logs/s | cluster / processes "
          "| after start-up: processes | cluster local | cluster / processes |")
    print("|---|---|---|---|---|---|---|")
    two_core = 64.0  # this machine's 2-worker rate after start-up (RESULTS.md), when the comparison is skipped
    for workers in (1, 2) if args.repeats else ():
        mp_rate, mp_steady = (sum(x) / args.repeats for x in zip(*rates[("processes", workers)]))
        dask_rate, dask_steady = (sum(x) / args.repeats for x in zip(*rates[("cluster local", workers)]))
        two_core = dask_steady if workers == 2 else two_core
        print(f"| {workers} | {mp_rate:.1f} | {dask_rate:.1f} | {dask_rate / mp_rate:.2f} "
              f"| {mp_steady:.1f} | {dask_steady:.1f} | {dask_steady / mp_steady:.2f} |")
    print("\n| synthetic slots | events absorbed | events/s | coordinator CPU µs per event |")
    print("|---|---|---|---|")
    best_rate, best_cost = 0.0, float("inf")
    for slots in (1, 2):
        events, per_second, cost = absorption(slots, args.synthetic_seconds)
        best_rate, best_cost = max(best_rate, per_second), min(best_cost, cost)
        print(f"| {slots} | {events} | {per_second:.0f} | {cost:.1f} |", flush=True)
    rate_many, per_slot = many_slots(args.many_slots, args.synthetic_seconds)
    print(f"\n{args.many_slots} slots paced at {PACE:.0f} events/s each: {rate_many:.0f} events/s absorbed; "
          f"coordinator and scheduler CPU {per_slot:.2f} ms per second per slot", flush=True)
    by_cpu = 1e6 / best_cost  # events/s one core spent on nothing else would absorb
    print(f"\none 2-core machine with 2 workers sends {two_core:.1f} events/s (one per judged log)")
    print(f"machines one coordinator serves: {best_rate / two_core:.0f} at the absorbed rate measured, "
          f"{by_cpu / two_core:.0f} from its CPU cost (one core, {by_cpu:.0f} events/s)")
    print(f"machines one coordinator and its scheduler serve on one core, from the per-slot cost at "
          f"{PACE:.0f} events/s: {1000 / (2 * per_slot):.0f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
