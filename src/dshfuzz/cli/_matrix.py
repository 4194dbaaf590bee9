"""``dshfuzz matrix``: the kill matrix of every mutator against a checker."""

from __future__ import annotations

import argparse
import json
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
        "fired; precision is the share on which no error-level rule fired outside what the mutant expects."
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


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.0f}%"


def _markdown(data: dict) -> str:
    lines = [
        f"# Kill matrix — checker `{data['checker']}`, {data['examplesPerMutator']} examples per row",
        "",
        "| row | n | recall | precision | expects | rules fired | official refused |",
        "| --- | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for name, row in data["rows"].items():
        fired = ", ".join(f"{r}×{n}" for r, n in row["rules"].items())
        refused = ", ".join(f"{k}×{n}" for k, n in row["officialRefused"].items())
        lines.append(
            f"| {name} | {row['examples']} | {_pct(row['recall'])} | {_pct(row['precision'])} | "
            f"{', '.join(row['expects']) or '—'} | {fired or '—'} | {refused or '—'} |"
        )
    lines += ["", f"Rules no mutator kills: {', '.join(data['unkilledRules']) or 'none'}", ""]
    for rule, why in data["unmutatedRules"].items():
        lines += [f"Rule {rule} has no mutator by design: {why}", ""]
    lines.append(f"False alarms on valid/metamorphic logs: {data['falseAlarms'] or 'none'}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from dshfuzz._atomic import write_atomic
    from dshfuzz.harness._judges import CheckerSpecError, load_checker
    from dshfuzz.harness._matrix import build_matrix
    from dshfuzz.harness._strategy import unknown_mutators

    try:
        checker = load_checker(args.checker)
    except CheckerSpecError as exc:
        print(f"dshfuzz matrix: {exc}", file=sys.stderr)
        return 2
    names = [m for m in args.mutators.split(",") if m] if args.mutators else None
    if names and unknown_mutators(names):
        print(f"dshfuzz matrix: unknown mutators: {', '.join(unknown_mutators(names))}", file=sys.stderr)
        return 2
    err = Console(stderr=True)
    official_cm = None
    if not args.no_official:
        from dshfuzz.oracle.official import OfficialOracle, unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            print(f"dshfuzz matrix: official layers unavailable: {reason} (or pass --no-official)", file=sys.stderr)
            return 2
        official_cm = OfficialOracle()
    official = official_cm.__enter__() if official_cm is not None else None
    try:
        with err.status("building the kill matrix") as status:
            matrix = build_matrix(
                checker,
                examples=args.examples,
                seed=args.seed,
                official=official,
                mutators=names,
                progress=lambda name: status.update(f"kill matrix: {name}"),
            )
    finally:
        if official_cm is not None:
            official_cm.__exit__(None, None, None)
    data = matrix.to_json()
    if args.out is not None:
        write_atomic(args.out / "matrix.json", json.dumps(data, indent=1) + "\n")
        write_atomic(args.out / "matrix.md", _markdown(data))
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        table = Table(title=f"kill matrix — {data['checker']}")
        for col in ("row", "n", "recall", "precision", "rules fired", "official refused"):
            table.add_column(col)
        for name, row in data["rows"].items():
            table.add_row(
                name,
                str(row["examples"]),
                _pct(row["recall"]),
                _pct(row["precision"]),
                ", ".join(f"{r}×{n}" for r, n in list(row["rules"].items())[:6]),
                ", ".join(f"{k}×{n}" for k, n in row["officialRefused"].items()),
            )
        Console().print(table)
        print(f"rules no mutator kills: {', '.join(data['unkilledRules']) or 'none'}")
        print(f"rules no mutator exercises, by design: {', '.join(data['unmutatedRules']) or 'none'}")
    perfect = all(r["recall"] in (None, 1.0) for r in data["rows"].values())
    return 0 if perfect and not data["unkilledRules"] and not data["falseAlarms"] else 1
