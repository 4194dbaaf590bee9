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
    parser.add_argument("--json", action="store_true", help="print the reach as JSON (summary.json's officialReach)")
    parser.add_argument("--no-unreached", action="store_true", help="count the unreached sites, do not list them")


def _fail(message: str) -> int:
    print(f"dshfuzz coverage: {message}", file=sys.stderr)
    return 2


def _from_report(path: Path) -> dict[str, Any] | str:
    """The ``officialReach`` of a report folder or summary.json, or why there is none."""
    file = path / "summary.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{file}: cannot read a campaign summary ({exc})"
    reach = data.get("officialReach") if isinstance(data, dict) else None
    if reach is None:
        return f"{file}: this campaign measured no official reach (run it with --official-coverage function)"
    problem = _malformed(reach)
    return f"{file}: officialReach {problem}" if problem else reach


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
                            budget_examples=examples, official_coverage=args.granularity)
    reporter = LiveReporter(Console(stderr=True))
    try:
        for _ in reporter.consume(run_campaign(config, check_first=True)):
            pass
    except CampaignSetupError as exc:
        return str(exc)
    paths = write_reports(reporter.summary, config.run_dir)
    print(f"report: {paths['html']}", file=sys.stderr)
    reach = reporter.summary.to_json()["officialReach"]
    return reach if isinstance(reach, dict) else "the campaign measured no official reach"


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from dshfuzz.report import render_reach

    reach = _from_report(args.report) if args.report is not None else _from_campaign(args)
    if isinstance(reach, str):
        return _fail(reach)
    if args.json:
        print(json.dumps(reach, indent=1))
    else:
        render_reach(reach, Console(highlight=False), all_unreached=not args.no_unreached)
    return 0
