"""``dshfuzz fuzz``: a differential campaign against a checker, with a live display and reports."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from dshfuzz.harness import CHECKER_SPEC_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "no checker finding: the checker agreed with every judge (the summary still names what was not reached)",
        1: "checker findings (false alarms, misses, crashes, ...): listed in the summary and the report",
        2: "a failed pre-flight check (an unknown mutator, a checker that cannot run, the official layers not "
           "set up, an --out that cannot be written, a bad --budget, a --cluster that cannot be reached: one "
           "line, no report), a worker that "
           "failed, or the reference oracle crashing (a dshfuzz bug; the report keeps its witness)",
        130: "interrupted (Ctrl-C) before any checker finding (with findings: 1); the report is written either way",
    })
    parser.add_argument(
        "--budget", default="60s",
        help="60s, 5m, 1h, or 500examples (default 60s): a time ends the campaign within a few seconds of it; "
             "an example budget is exact, each worker judging its share (the same logs for the same seed "
             "and --workers); either way the report is written",
    )
    parser.add_argument("--seed", type=int, default=0, help="the campaign's seed: the same seed replays the same examples")
    parser.add_argument(
        "--workers", type=int, default=None,
        help="worker processes (default: one per core); with --cluster, worker slots (default: every thread "
             "the cluster offers; for local, one process per core)",
    )
    parser.add_argument(
        "--cluster", default=None, metavar="tcp://HOST:8786|local",
        help="run the workers as tasks on a Dask cluster: a scheduler's address, or local for a LocalCluster "
             "of processes started here (pip install 'dshfuzz[cluster]'); this process still deduplicates "
             "and writes the report and the corpus (default: local worker processes, no Dask)",
    )
    parser.add_argument(
        "--checker",
        default="builtin",
        help=CHECKER_SPEC_HELP,
    )
    parser.add_argument(
        "--checker-rules", default=None, metavar="FILE|IDS",
        help="the rule ids the checker implements (a file, or a comma list); default: its serve handshake, "
             "the 46 catalog ids for an external checker, the registry for the built-in one",
    )
    parser.add_argument(
        "--checker-exit", default=None, metavar="CODE=MEANING,...",
        help="what a cmd: checker's own exit statuses mean: clean, findings, not-assessable or crash "
             "(e.g. 4=findings for a checker that exits 4 on a report with warnings); default: 0 clean, "
             "1 findings, 3 not assessable, anything else a crash",
    )
    parser.add_argument(
        "--checker-layers", default=None, metavar="LAYER,...",
        help="the official layers the checker answers for (e.g. load,released); a refusal only the others "
             "make is out of scope, never a miss (default: its serve handshake's layers, else every layer)",
    )
    parser.add_argument(
        "--minimise-seconds", type=float, default=None, metavar="S",
        help="time box of one finding's minimisation (default: the larger of 10 s and 5%% of the budget)",
    )
    parser.add_argument("--out", type=Path, default=None, help="report directory (default reports/<run>)")
    parser.add_argument("--mutators", default=None, help="comma-separated mutator names (default: all)")
    parser.add_argument("--no-official", action="store_true", help="judge without the official layers")
    parser.add_argument(
        "--checker-coverage", action="store_true",
        help="measure the checker's own lines (builtin and py: checkers; needs coverage.py, in dshfuzz[coverage]): "
             "the reports list the unexercised ones and generation is steered toward lines no log ran",
    )
    parser.add_argument(
        "--steer-official", action="store_true",
        help="wait for each log's official verdict so that every log steers generation by the official sites it "
             "reached first (otherwise only the logs whose verdict decides at once steer)",
    )
    parser.add_argument(
        "--official-coverage", choices=("function", "block", "off"), default="function",
        help="measure which official refusal sites the logs reach, and how much official code by function or by "
             "V8 block (block slows the official layers by about a third); the reports list the unreached sites "
             "and generation is steered toward new ones (default: function)",
    )
    parser.add_argument("--no-minimise", action="store_true", help="keep Hypothesis-shrunk logs as they are")
    parser.add_argument(
        "--save", action="store_true",
        help="add every finding to the corpus as it arrives (its latest witness; a stopped campaign keeps them)",
    )
    parser.add_argument("--corpus", type=Path, default=Path("corpus"), help="where --save adds findings (default corpus/)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds one checker run may take")
    parser.add_argument(
        "--database", default=None, metavar="URL|DIR",
        help="keep failing examples for later campaigns, which replay them first: redis://HOST:PORT/N "
             "(shared between machines; pip install 'dshfuzz[cluster]') or a folder (default: none, "
             "the corpus is the record)",
    )
    parser.add_argument("--stop-after", type=int, default=None, metavar="N", help="stop after N distinct findings")
    parser.add_argument(
        "--baseline", type=Path, default=None, metavar="PATH",
        help="causes already known (an earlier campaign's summary.json or report folder, or a corpus folder): "
             "they are counted, not new, and only a new cause makes the exit status 1",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from dshfuzz.harness import (
        CampaignConfig,
        CampaignSetupError,
        Corpus,
        DisagreementFound,
        FindingRecorder,
        default_workers,
        load_baseline,
        parse_budget,
        parse_checker_exits,
        parse_checker_layers,
        parse_checker_rules,
        run_campaign,
    )
    from dshfuzz.report import LiveReporter, final_summary, write_reports

    err = Console(stderr=True)
    try:
        seconds, examples = parse_budget(args.budget)
        rules = None if args.checker_rules is None else tuple(sorted(parse_checker_rules(args.checker_rules)))
        layers = None if args.checker_layers is None else tuple(sorted(parse_checker_layers(args.checker_layers)))
        baseline = None if args.baseline is None else load_baseline(args.baseline)
        exits = () if args.checker_exit is None else tuple(sorted(parse_checker_exits(args.checker_exit).items()))
        if args.workers is not None and args.workers < (0 if args.cluster else 1):
            raise ValueError(f"--workers must be at least 1 (0 only with --cluster: every thread it offers), "
                             f"not {args.workers}")
    except ValueError as exc:
        print(f"dshfuzz fuzz: {exc}", file=sys.stderr)
        return 2
    config = CampaignConfig(
        checker=args.checker,
        seed=args.seed,
        workers=(0 if args.cluster else default_workers()) if args.workers is None else args.workers,
        budget_seconds=seconds,
        budget_examples=examples,
        official=not args.no_official,
        checker_coverage=args.checker_coverage,
        steer_official=args.steer_official,
        official_coverage=None if args.official_coverage == "off" or args.no_official else args.official_coverage,
        mutators=tuple(m for m in args.mutators.split(",") if m) if args.mutators else None,
        checker_timeout=args.timeout,
        minimise=not args.no_minimise,
        stop_after_findings=args.stop_after,
        checker_rules=rules,
        checker_layers=layers,
        checker_exits=exits,
        minimise_seconds=args.minimise_seconds,
        database=args.database,
        cluster=args.cluster,
    )
    if args.out is not None:
        config = replace(config, out=args.out.parent, run_id=args.out.name)
    reporter = LiveReporter(err)
    # --save: each finding goes into the corpus as it arrives, so a coordinator that dies loses none
    recorder = FindingRecorder(Corpus(args.corpus), checker=config.checker, seed=config.seed) if args.save else None
    try:
        for event in reporter.consume(run_campaign(config, check_first=True)):
            if recorder is not None and isinstance(event, DisagreementFound):
                recorder.record(event)
    except CampaignSetupError as exc:
        print(f"dshfuzz fuzz: {exc}", file=sys.stderr)
        return 2
    summary = reporter.summary
    summary.baseline = baseline
    paths = write_reports(summary, config.run_dir)
    out = Console()
    out.print(final_summary(summary, width=out.width))
    where = f"report: {paths['html']} (also {paths['markdown'].name}, {paths['json'].name})"
    out.print(where, highlight=False, soft_wrap=True)
    for w in summary.worker_errors:
        err.print(f"[red]worker {w.worker} failed[/red]\n{w.error}")
    for f in summary.oracle_crashes:
        err.print(f"[red]the reference oracle crashed[/red] (a dshfuzz bug; witness in the report)\n{f.detail}")
    if summary.worker_errors or summary.oracle_crashes:
        return 2
    if summary.failing:
        return 1
    # an interrupted campaign that found nothing has not shown the checker agrees with every judge
    return 130 if summary.finished is not None and summary.finished.reason == "interrupted" else 0
