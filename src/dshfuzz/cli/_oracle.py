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
    """One row per file: the layers that accept it, and each refusal with its reason.

    Three columns fit any terminal (a column per layer needed 160 to 220 whatever the
    width) and fold when piped. ``readRaw`` (the official reader decoding the rows for the
    event layers) runs on every file whatever the layers asked for, so every row shows it,
    accepted or refused, not only the rows it refuses."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from dshfuzz.oracle.official import EVENT_LAYERS
    from dshfuzz.report._terminal import fit

    table = Table(
        title="official verdicts", show_lines=True, title_justify="left", caption_justify="left",
        caption=f"{_READ_RAW}: the official reader decoding the file's rows, which the event layers "
                f"({', '.join(sorted(EVENT_LAYERS))}) judge; when it refuses, they are not run",
    )
    for column in ("file", "accepted by", "refused by (why)"):
        table.add_column(column)
    for path, cells in report.items():
        verdicts = {_READ_RAW: {"ok": True}, **cells}  # readRaw ran on every file; it is reported only when it refuses
        accepted = [name for name in [_READ_RAW, *layers] if verdicts.get(name, {}).get("ok")]
        refused = Text()
        for name in ([_READ_RAW] if _READ_RAW in cells else []) + layers:
            cell = cells.get(name)
            if cell is None or cell["ok"]:
                continue
            error = cell["error"]
            message = (error.get("message") or "").splitlines()[0] if error.get("message") else ""
            refused.append(f"{name}: ", "bold red").append(f"{error.get('class', 'Error')}: {message}\n")
        skipped = [name for name in layers if name not in cells]
        if skipped:
            refused.append(f"not run (the rows did not decode): {', '.join(skipped)}", "dim")
        refused.rstrip()
        table.add_row(path, Text(", ".join(accepted) or "—", "green" if accepted else "dim"), refused or Text("—", "dim"))
    console = Console(highlight=False)
    console.print(fit(table, console.width))
