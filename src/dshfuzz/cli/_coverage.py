"""``dshfuzz coverage [REPORT]``: which official refusal sites a campaign reached, and which not.

Reads a campaign's report folder (or its ``summary.json``); without one, runs a fresh short
campaign on the built-in checker (``--budget``, default 20 s) and reads that. Exit 0 when
the tables were printed, 2 when the report cannot be read or holds no official reach (a
campaign run with ``--official-coverage off`` or ``--no-official``), one line saying why.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "the official refusal sites a campaign reached, and those it did not"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "the tables were printed",
        2: "the report cannot be read or measured no official reach, or a fresh campaign could not start",
    })
    parser.add_argument("report", nargs="?", type=Path, metavar="REPORT",
                        help="a campaign's report folder or summary.json (default: run a fresh short campaign)")
    parser.add_argument("--budget", default="20s", help="the fresh campaign's budget (default 20s)")
    parser.add_argument("--seed", type=int, default=0, help="the fresh campaign's seed (default 0)")
    parser.add_argument("--checker", default="builtin", help="the fresh campaign's checker (default builtin)")
    parser.add_argument("--granularity", choices=("function", "block"), default="function",
                        help="how the fresh campaign counts official code reached (default function)")
    parser.add_argument("--checker-coverage", action="store_true",
                        help="the fresh campaign also measures the checker's own lines (builtin, py: checkers)")
    parser.add_argument("--json", action="store_true",
                        help="print summary.json's officialReach and checkerCoverage as one JSON object")
    parser.add_argument("--no-unreached", action="store_true", help="count the unreached sites, do not list them")


def _fail(message: str) -> int:
    print(f"dshfuzz coverage: {message}", file=sys.stderr)
    return 2


def _from_report(path: Path) -> dict[str, Any] | str:
    """The ``officialReach`` and ``checkerCoverage`` of a report folder or summary.json, or why
    there are none."""
    file = path / "summary.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{file}: cannot read a campaign summary ({exc})"
    if not isinstance(data, dict):
        return f"{file}: not a campaign summary (a JSON object)"
    return _measured(data, str(file))


def _measured(summary: dict[str, Any], where: str) -> dict[str, Any] | str:
    reach, lines = summary.get("officialReach"), summary.get("checkerCoverage")
    if reach is None and lines is None:
        return f"{where}: this campaign measured no coverage (run it with --official-coverage function)"
    problem = None if reach is None else _malformed(reach)
    if problem:
        return f"{where}: officialReach {problem}"
    problem = None if lines is None else _malformed_lines(lines)
    if problem:
        return f"{where}: checkerCoverage {problem}"
    return {"officialReach": reach, "checkerCoverage": lines}


def _malformed_lines(lines: Any) -> str | None:
    """Why ``lines`` is not a ``checkerCoverage`` this command can print, or ``None``."""
    if not (isinstance(lines, dict) and isinstance(lines.get("exercised"), int)
            and isinstance(lines.get("statements"), int) and isinstance(lines.get("byFile"), list)):
        return "needs integer exercised and statements and a byFile list"
    keys = ("file", "statements", "exercised", "unexercised")
    if not all(isinstance(f, dict) and all(k in f for k in keys) for f in lines["byFile"]):
        return f"byFile must list objects with {', '.join(keys)}"
    return None


_COUNTS = ("reached", "reachable", "listedUnreachable", "code")
_PACKAGE_KEYS = ("package", "sites", "unreachable", "reachable", "reached")


def _malformed(reach: Any) -> str | None:
    """Why ``reach`` is not an ``officialReach`` this command can print, or ``None``."""
    if not isinstance(reach, dict):
        return "is not an object"
    if not all(isinstance(reach.get(k), int) for k in _COUNTS) or not isinstance(reach.get("granularity"), str):
        return f"needs integer {', '.join(_COUNTS)} and a granularity"
    packages, unreached = reach.get("byPackage"), reach.get("unreached")
    if not (isinstance(packages, list) and all(isinstance(p, dict) and all(k in p for k in _PACKAGE_KEYS)
                                               for p in packages)):
        return f"byPackage must list objects with {', '.join(_PACKAGE_KEYS)}"
    if not (isinstance(unreached, list) and all(isinstance(u, dict) and isinstance(u.get("id"), str)
                                                and isinstance(u.get("message"), str) for u in unreached)):
        return "unreached must list objects with string id and message"
    if not isinstance(reach.get("listedButReached", []), list):
        return "listedButReached must be a list"
    return None


def _from_campaign(args: argparse.Namespace) -> dict[str, Any] | str:
    from rich.console import Console

    from dshfuzz.harness import CampaignConfig, CampaignSetupError, default_workers, parse_budget, run_campaign
    from dshfuzz.report import LiveReporter, write_reports

    try:
        seconds, examples = parse_budget(args.budget)
    except ValueError as exc:
        return str(exc)
    config = CampaignConfig(checker=args.checker, seed=args.seed, workers=default_workers(), budget_seconds=seconds,
                            budget_examples=examples, official_coverage=args.granularity,
                            checker_coverage=args.checker_coverage)
    reporter = LiveReporter(Console(stderr=True))
    try:
        for _ in reporter.consume(run_campaign(config, check_first=True)):
            pass
    except CampaignSetupError as exc:
        return str(exc)
    paths = write_reports(reporter.summary, config.run_dir)
    print(f"report: {paths['html']}", file=sys.stderr)
    return _measured(reporter.summary.to_json(), "the campaign")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from dshfuzz.report import render_checker_reach, render_reach

    measured = _from_report(args.report) if args.report is not None else _from_campaign(args)
    if isinstance(measured, str):
        return _fail(measured)
    if args.json:
        print(json.dumps(measured, indent=1))
        return 0
    console = Console(highlight=False)
    if measured["officialReach"] is not None:
        render_reach(measured["officialReach"], console, all_unreached=not args.no_unreached)
    if measured["checkerCoverage"] is not None:
        render_checker_reach(measured["checkerCoverage"], console)
    return 0
