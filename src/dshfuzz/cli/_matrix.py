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


LEGEND = (
    "recall: the share of a row's mutants on which every rule the mutant expects fired (a miss lowers it).",
    "precision: the share of a row's logs on which no error-level root finding fired beyond what the log "
    "expects; a finding marked as following from another (causedBy) restates its root and is not counted "
    "(on valid and metamorphic rows, a false alarm lowers it). stray roots: the rules that cost precision.",
)


def _shortfall_style(row: dict) -> str:
    """Red for a row that misses incidents, yellow for one that reports more than it should."""
    if row["recall"] is not None and row["recall"] < 1:
        return "red"
    if row["precision"] is not None and row["precision"] < 1:
        return "yellow"
    return ""


def _out_problem(out: Path) -> str | None:
    """Why matrix.json and matrix.md cannot be written under ``out``, or None. A missing
    folder is created (like fuzz's report folder): the last pre-flight step, so a failed
    check leaves nothing behind."""
    import os

    if out.exists() and not out.is_dir():
        return f"--out {out}: not a folder; pass a folder for matrix.json and matrix.md"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--out {out}: cannot create the folder ({exc.strerror or exc}); pass a folder you can write"
    if not os.access(out, os.W_OK | os.X_OK):
        return f"--out {out}: the folder is not writable; pass one you can write"
    return None


def preflight(args: argparse.Namespace, names: list[str] | None) -> str | None:
    """Everything the matrix needs, checked before its first mutant, cheapest first: the
    mutator names, --examples, the official layers when they judge, the checker run once
    on a valid log (the campaign's own probe), then --out. The first problem as one line
    naming the fix, or None."""
    from dshfuzz.harness import CampaignConfig, CampaignSetupError
    from dshfuzz.harness import preflight as probe
    from dshfuzz.harness._strategy import unknown_mutators

    unknown = unknown_mutators(names, perturbations=False) if names else []
    undeclared = [n for n in unknown if n not in unknown_mutators(unknown)]
    if undeclared:  # a campaign perturbation: no declared rule for a matrix row to kill
        return (f"{', '.join(undeclared)}: a perturbation declares no rules, so the kill matrix has nothing to "
                "score; fuzz it with `dshfuzz fuzz --mutators …`, or name incident mutators")
    if unknown:
        return f"unknown mutator{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; `dshfuzz mutators` lists them"
    if names is not None and not names:
        return "--mutators names no mutator; give comma-separated names (`dshfuzz mutators` lists them)"
    if args.examples < 1:
        return f"--examples {args.examples}: at least 1 mutant per mutator"
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        return f"--out {args.out}: not a folder; pass a folder for matrix.json and matrix.md"
    if not args.no_official:
        from dshfuzz.oracle.official import unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            fix = "pass --no-official" if "make setup" in reason else "run `make setup`, or pass --no-official"
            return f"official layers unavailable: {reason}; {fix}"
    try:
        # the campaign's probe alone: no mutator list or official layers (checked above), no report folder
        probe(CampaignConfig(checker=args.checker, official=False, out=Path(".")))
    except CampaignSetupError as exc:
        return str(exc)
    return None if args.out is None else _out_problem(args.out)


def _per_row(data: dict) -> str:
    n = data["examplesPerMutator"]
    return f"{n} example{'' if n == 1 else 's'} per row"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.0f}%"


def _stray(row: dict) -> str:
    return ", ".join(f"{r}×{n}" for r, n in row.get("strayRootRules", {}).items())


def _markdown(data: dict) -> str:
    lines = [
        f"# Kill matrix — checker `{data['checker']}`, {_per_row(data)}",
        "",
        "| row | n | recall | precision | stray roots | expects | rules fired | official refused |",
        "| --- | ---: | ---: | ---: | --- | --- | --- | --- |",
    ]
    for name, row in data["rows"].items():
        fired = ", ".join(f"{r}×{n}" for r, n in row["rules"].items())
        refused = ", ".join(f"{k}×{n}" for k, n in row["officialRefused"].items())
        lines.append(
            f"| {name} | {row['examples']} | {_pct(row['recall'])} | {_pct(row['precision'])} | "
            f"{_stray(row) or '—'} | {', '.join(row['expects']) or '—'} | {fired or '—'} | {refused or '—'} |"
        )
    lines += ["", *LEGEND[:1], "", *LEGEND[1:]]
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
    from dshfuzz.report._terminal import fit

    names = [m.strip() for m in args.mutators.split(",") if m.strip()] if args.mutators is not None else None
    problem = preflight(args, names)
    if problem is not None:
        print(f"dshfuzz matrix: {problem}", file=sys.stderr)
        return 2
    try:
        checker = load_checker(args.checker)
    except CheckerSpecError as exc:  # the probe loaded it a moment ago: only a changed checker gets here
        print(f"dshfuzz matrix: {exc}", file=sys.stderr)
        return 2
    err = Console(stderr=True)
    official_cm = None
    if not args.no_official:
        from dshfuzz.oracle.official import OfficialOracle

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
        try:
            write_atomic(args.out / "matrix.json", json.dumps(data, indent=1) + "\n")
            write_atomic(args.out / "matrix.md", _markdown(data))
        except OSError as exc:
            print(f"dshfuzz matrix: cannot write to --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        table = Table(title=f"kill matrix — {data['checker']}, {_per_row(data)}",
                      caption="\n".join(LEGEND) + "\nred: below 100% recall; yellow: below 100% precision",
                      caption_justify="left")
        columns = ["row", "n", "recall", "precision", "rules fired"] + ([] if args.no_official else ["official refused"])
        for col in columns:
            table.add_column(col, justify="right" if col in ("n", "recall", "precision") else "left")
        for name, row in data["rows"].items():
            cells = [name, str(row["examples"]), _pct(row["recall"]), _pct(row["precision"]),
                     ", ".join(f"{r}×{n}" for r, n in row["rules"].items()),
                     ", ".join(f"{k}×{n}" for k, n in row["officialRefused"].items())]
            table.add_row(*cells[: len(columns)], style=_shortfall_style(row))
        out = Console(highlight=False)
        out.print(fit(table, out.width))
        stray = [f"{name}: {_stray(row)}" for name, row in data["rows"].items() if _stray(row)]
        out.print(f"stray roots (what costs precision): {'; '.join(stray) or 'none'}")
        out.print(f"rules no mutator kills: {', '.join(data['unkilledRules']) or 'none'}")
        out.print(f"rules no mutator exercises, by design: {', '.join(data['unmutatedRules']) or 'none'}")
    perfect = all(r["recall"] in (None, 1.0) for r in data["rows"].values())
    return 0 if perfect and not data["unkilledRules"] and not data["falseAlarms"] else 1
