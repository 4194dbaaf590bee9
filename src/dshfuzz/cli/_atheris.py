"""``dshfuzz atheris``: coverage-guided fuzzing of the readers, the row decoder and the checker."""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path


def _shared_guess() -> Path | None:
    guess = Path(__file__).resolve().parents[4] / "shared"
    return guess if guess.is_dir() else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dshfuzz.harness import atheris_targets

    from . import explain

    explain(parser, {
        0: "no target found a failing input",
        1: "some target found one (a crash, a hang or a memory blow-up: listed in the summary, saved to "
           "--corpus unless --no-save)",
        2: "usage error (an unknown target, a bad option value) or libFuzzer stopped without an input to show",
    })

    parser.add_argument("target", help=f"all, or one of: {', '.join(atheris_targets())}")
    parser.add_argument(
        "--runs", type=int, default=None, help="executions per target (default 50000 without --max-time)"
    )
    parser.add_argument("--max-time", type=float, default=None, metavar="S", help="seconds per target")
    parser.add_argument(
        "--out", type=Path, default=None, help="report directory (default reports/atheris-<time>)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="targets fuzzed at once, one child process each")
    parser.add_argument("--max-len", type=int, default=1024, help="largest input in bytes (default 1024)")
    parser.add_argument("--seed", type=int, default=1, help="libFuzzer's -seed")
    parser.add_argument(
        "--structured-share",
        type=float,
        default=0.15,
        help="share of mutations made by dshfuzz's edits rather than libFuzzer's (default 0.15)",
    )
    parser.add_argument(
        "--corpus", type=Path, default=Path("corpus"), help="where findings are saved (and seeds read)"
    )
    parser.add_argument("--no-save", action="store_true", help="do not add findings to the corpus")
    parser.add_argument(
        "--shared",
        type=Path,
        default=_shared_guess(),
        help="the shared reference directory (fixtures and real sessions seed the run)",
    )


def run(args: argparse.Namespace) -> int:
    from dshfuzz.harness import AtherisConfig, AtherisError, SeedSources, atheris_targets, run_atheris
    from dshfuzz.report import atheris_markdown, atheris_status, write_atheris_summary

    try:
        names = atheris_targets(args.target)
        shared = args.shared
        config = AtherisConfig(
            out=args.out or Path("reports") / f"atheris-{_dt.datetime.now(_dt.UTC):%Y%m%dT%H%M%SZ}",
            runs=args.runs if args.runs is not None or args.max_time is not None else 50_000,
            max_time=args.max_time,
            max_len=args.max_len,
            structured_share=args.structured_share,
            seed=args.seed,
            sources=SeedSources(
                corpus=args.corpus,
                fixtures=shared / "reference" / "fixtures" if shared else None,
                real_sessions=shared / "real-sessions" / "concrete" if shared else None,
            ),
            corpus=None if args.no_save else args.corpus,
        )
    except (KeyError, ValueError) as exc:
        print(f"dshfuzz atheris: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    try:
        summary = run_atheris(names, config, jobs=args.jobs, on_status=atheris_status())
    except AtherisError as exc:
        print(f"dshfuzz atheris: {exc}", file=sys.stderr)
        return 2
    write_atheris_summary(config.out, summary)
    print(atheris_markdown(summary), end="")
    print(f"summary written to {config.out / 'summary.json'}", file=sys.stderr)
    return 1 if summary.findings else 0
