"""``dshfuzz mutants``: mutation analysis of a Python checker, each mutant judged by a campaign."""

from __future__ import annotations

import argparse
import signal
import sys
from contextlib import closing
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "every non-equivalent mutant judged was killed",
        1: "a blind spot: a mutant survived (or was never reached) and is not in the equivalents file",
        2: "bad input (a checker that is not Python, an unknown --module or --only, a results file of "
           "another run or broken, the mutation library not installed, a --cluster that cannot be reached: "
           "one line), or the unmutated checker's own campaign failed",
    }, description=(
        "Mutation analysis of a Python checker (builtin, or py:module:function): cosmic-ray's mutants of its "
        "code, each a copy in a temporary folder (nothing of yours is modified), each judged by a short "
        "campaign against the unmutated checker's campaign (same seed, same budget). A mutant is killed when "
        "its campaign finds a cause the baseline did not, or it fails the pre-flight log. Results are appended "
        "to OUT/results.jsonl as they come: re-running the same command resumes. Needs "
        "pip install 'dshfuzz[mutation]'."
    ))
    parser.add_argument("--checker", default="builtin", help="builtin (default) or py:module:function")
    parser.add_argument("--module", action="append", default=[], metavar="MODULE",
                        help="mutate only this module (repeatable; default: every module of the built-in "
                             "checker, or the py: checker's own module)")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="judge N mutants drawn with --seed (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's and every campaign's seed (default 0)")
    parser.add_argument("--budget", default="20s",
                        help="each mutant's campaign: a time (default 20s), or 60examples for campaigns whose "
                             "verdicts do not depend on the machine's load")
    parser.add_argument("--jobs", type=int, default=None,
                        help="mutants judged at once (default: one per core; with --cluster, every thread "
                             "the cluster offers, and for local one process per core)")
    parser.add_argument("--cluster", default=None, metavar="tcp://HOST:8786|local",
                        help="judge each mutant as a task on a Dask cluster: a scheduler's address, or local "
                             "for a LocalCluster of processes started here (pip install 'dshfuzz[cluster]'); "
                             "its workers need the same dshfuzz and checker files at the same paths; the "
                             "baseline and the results file stay here (default: local processes, no Dask)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds one checker run may take (default 5)")
    parser.add_argument("--out", type=Path, default=Path("reports/mutants"),
                        help="folder of results.jsonl and summary.json (default reports/mutants)")
    parser.add_argument("--only", action="append", default=[], metavar="MUTANT_ID",
                        help="judge exactly this mutant (repeatable): a survivor's replay")
    parser.add_argument("--equivalents", type=Path, default=None, metavar="FILE",
                        help="the reviewed equivalent mutants (default: dshfuzz's own for builtin, none otherwise)")
    parser.add_argument("--mutators", default=None,
                        help="comma-separated mutator names every campaign draws from (default: all)")
    parser.add_argument("--checker-rules", default=None, metavar="FILE|IDS",
                        help="the rule ids the checker implements (a file, or a comma list); default: the "
                             "registry for the built-in checker, the 46 catalog ids for a py: checker")
    parser.add_argument("--no-official", action="store_true", help="judge without the official layers")
    parser.add_argument("--no-diffs", action="store_true", help="list the survivors without their diffs")


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _refused(problem: str) -> int:
    print(f"dshfuzz mutants: {problem}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from dshfuzz.harness import (
        MutantJudged,
        MutantsFinished,
        MutantsPlanned,
        MutationConfig,
        MutationSetupError,
        default_workers,
        parse_budget,
        parse_checker_rules,
        run_mutants,
        summarise_mutants,
    )
    from dshfuzz.report import mutant_line, mutants_plan_line, render_mutants, write_mutants_summary

    try:
        seconds, examples = parse_budget(args.budget)
        rules = None if args.checker_rules is None else tuple(sorted(parse_checker_rules(args.checker_rules)))
    except ValueError as exc:
        return _refused(str(exc))
    if args.sample is not None and args.sample < 1:
        return _refused("--sample must be at least 1")
    mutators = None if args.mutators is None else tuple(m.strip() for m in args.mutators.split(",") if m.strip())
    jobs = args.jobs or (0 if args.cluster else default_workers())  # 0 on a cluster: its thread count
    config = MutationConfig(
        checker=args.checker, modules=tuple(args.module), sample=args.sample, seed=args.seed,
        budget_seconds=seconds, budget_examples=examples, jobs=jobs, out=args.out,
        timeout=args.timeout, official=not args.no_official, only=tuple(args.only), equivalents=args.equivalents,
        checker_rules=rules, mutators=mutators, cluster=args.cluster,
    )
    err = Console(stderr=True, highlight=False)
    finished: MutantsFinished | None = None
    previous = signal.signal(signal.SIGTERM, _terminated)  # a kill stops the judging processes as Ctrl-C does
    try:
        with closing(run_mutants(config)) as events:
            for event in events:
                if isinstance(event, MutantsPlanned):
                    err.print(mutants_plan_line(event), markup=False, soft_wrap=True)
                elif isinstance(event, MutantJudged):
                    err.print(mutant_line(event), markup=False, soft_wrap=True)
                else:
                    finished = event
    except MutationSetupError as exc:
        return _refused(str(exc))
    except KeyboardInterrupt:
        print(f"interrupted: the mutants judged so far are in {args.out / 'results.jsonl'}; "
              "the same command goes on from there", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert finished is not None
    summary = summarise_mutants(finished, config)
    try:
        paths = write_mutants_summary(summary, args.out)
    except OSError as exc:
        return _refused(f"cannot write to --out {args.out}: {exc.strerror or exc}")
    out = Console()
    render_mutants(summary, out, diffs=not args.no_diffs, folder=args.out)
    out.print(f"report: {paths['html']} (also {paths['json'].name}; results: {args.out / 'results.jsonl'})",
              highlight=False, soft_wrap=True)
    return 1 if summary.blind_spots else 0
