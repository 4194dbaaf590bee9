"""``dshfuzz oracle LOG...``: every official layer's verdict on each log.

Exit 0 when every requested layer accepts every file, 1 when any layer refuses
any file, 2 on a usage error, an unreadable file, or an oracle that is not set up
or could not judge a file (a one-line reason on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

HELP = "every official layer's verdict on each log"

_READ_RAW = "readRaw"  # the pseudo-layer reported when a file's rows cannot be decoded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "every requested layer accepts every file",
        1: "some layer refuses some file",
        2: "usage error, an unreadable file, the official layers not set up (`make setup`), or a file "
           "they could not judge (one line each on stderr)",
    })
    parser.add_argument("logs", nargs="+", metavar="LOG", help="session logs (*.jsonl or *.jsonl.zstd)")
    parser.add_argument("--layers", metavar="L,...", help="comma-separated subset of the layers (default: all)")
    parser.add_argument("--json", action="store_true", help="print {file: {layer: {ok, error?}}} as JSON")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per file (default 120)")


def _fail(message: str) -> int:
    print(f"dshfuzz oracle: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from dshfuzz.oracle.official import LAYERS, OfficialOracle, OracleError, unavailable_reason

    layers = list(LAYERS)
    if args.layers:
        layers = [name.strip() for name in args.layers.split(",") if name.strip()]
        unknown = [name for name in layers if name not in LAYERS]
        if unknown or not layers:
            return _fail(f"unknown layer(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(LAYERS)}")
    for path in args.logs:
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            return _fail(f"cannot read {path}: not a readable file")
    reason = unavailable_reason()
    if reason is not None:
        return _fail(f"official oracle unavailable: {reason}")

    report: dict[str, dict[str, Any]] = {}
    unjudged = False
    with OfficialOracle(timeout=args.timeout) as oracle:
        for path in args.logs:
            try:
                result = oracle.check_report(path=path, layers=layers)
            except OracleError as exc:
                print(f"dshfuzz oracle: {path}: {exc}".splitlines()[0], file=sys.stderr)
                unjudged = True
                continue
            cells: dict[str, Any] = {}
            if result.decode_error is not None:
                cells[_READ_RAW] = {"ok": False, "error": result.decode_error.to_json()}
            cells.update({name: verdict.to_json() for name, verdict in result.layers.items()})
            report[path] = cells

    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print_table(report, layers)
    if unjudged:
        return 2
    return 0 if all(cell["ok"] for cells in report.values() for cell in cells.values()) else 1


def _print_table(report: dict[str, dict[str, Any]], layers: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    columns = ([_READ_RAW] if any(_READ_RAW in cells for cells in report.values()) else []) + layers
    table = Table(title="official verdicts", show_lines=True)
    table.add_column("file", overflow="fold", min_width=20)
    for name in columns:
        table.add_column(name, overflow="fold")
    for path, cells in report.items():
        row = [os.path.basename(path)]
        for name in columns:
            cell = cells.get(name)
            if cell is None:
                row.append("[dim]n/a[/dim]")
            elif cell["ok"]:
                row.append("[green]ok[/green]")
            else:
                error = cell["error"]
                short = error["message"] if len(error["message"]) <= 60 else error["message"][:57] + "..."
                row.append(f"[red]{error['class']}[/red]\n{_escape(short)}")
        table.add_row(*row)
    console = Console()
    if not console.is_terminal:
        console = Console(width=240)
    console.print(table)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
