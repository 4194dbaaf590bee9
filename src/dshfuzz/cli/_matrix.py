"""``dshfuzz matrix``: the kill matrix of every mutator against a checker."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dshfuzz.harness import CHECKER_SPEC_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "every row at full recall, every rule killed by some mutator, no false alarm on a valid or "
           "metamorphic log",
        1: "a row below full recall, a rule no mutator kills, or a false alarm",
        2: "a failed pre-flight check (an unknown mutator, a checker that cannot run, the official layers not "
           "set up, an --out that cannot be written: one line, nothing written) or a usage error",
    }, description=(
        "The kill matrix: every mutator's mutants (and valid logs with their metamorphic variants) judged "
        "by the checker. Recall is the share of a row's mutants on which every rule the mutant expects "
        "fired; precision is the share on which no error-level root finding fired outside what the mutant expects "
        "(a finding the checker marks as following from another, causedBy, restates its root)."
    ))
    parser.add_argument("--examples", type=int, default=25, help="mutants per mutator (default 25)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the generated logs and the mutators' choices: the same seed, the same matrix "
                             "(default 0)")
    parser.add_argument("--checker", default="builtin", help=CHECKER_SPEC_HELP)
    parser.add_argument("--mutators", default=None, help="comma-separated mutator names (default: all)")
    parser.add_argument("--no-official", action="store_true", help="skip the official layers' verdicts")
    parser.add_argument("--json", action="store_true", help="print the matrix as JSON")
    parser.add_argument("--out", type=Path, default=None, help="also write matrix.json and matrix.md here")



def _refused(problem: str) -> int:
    print(f"dshfuzz matrix: {problem}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from dshfuzz.harness import MatrixConfig, MatrixSetupError, matrix_preflight, run_matrix
    from dshfuzz.report import matrix_json, matrix_out_problem, matrix_progress, render_matrix, write_matrix

    names = None if args.mutators is None else tuple(m.strip() for m in args.mutators.split(",") if m.strip())
    config = MatrixConfig(checker=args.checker, examples=args.examples, seed=args.seed, mutators=names,
                          official=not args.no_official)
    try:
        matrix_preflight(config)
        problem = None if args.out is None else matrix_out_problem(args.out)  # creates the folder: last
        if problem is not None:
            return _refused(problem)
        with matrix_progress(Console(stderr=True)) as progress:
            matrix = run_matrix(config, progress=progress)
    except MatrixSetupError as exc:
        return _refused(str(exc))
    if args.out is not None:
        try:
            write_matrix(args.out, matrix)
        except OSError as exc:
            return _refused(f"cannot write to --out {args.out}: {exc.strerror or exc}")
    if args.json:
        print(matrix_json(matrix))
    else:
        render_matrix(matrix, Console(highlight=False), official=config.official)
    return 0 if matrix.perfect else 1
