"""``dshfuzz oracle LOG...``: every official layer's verdict on each log.

Exit 0 when every requested layer accepts every file, 1 when any layer refuses
any file, 2 on a usage error, an unreadable file, or an oracle that is not set up
or could not judge a file (a one-line reason on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys

HELP = "every official layer's verdict on each log"

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
    from dshfuzz.oracle.official import LAYERS, CheckReport, OfficialOracle, OracleError, unavailable_reason
    from dshfuzz.report import official_verdicts_json, render_official_verdicts

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

    verdicts: dict[str, CheckReport] = {}
    unjudged = False
    with OfficialOracle(timeout=args.timeout) as oracle:
        for path in args.logs:
            try:
                verdicts[path] = oracle.check_report(path=path, layers=layers)
            except OracleError as exc:
                print(f"dshfuzz oracle: {path}: {exc}".splitlines()[0], file=sys.stderr)
                unjudged = True

    if args.json:
        print(official_verdicts_json(verdicts))
    else:
        from rich.console import Console

        render_official_verdicts(verdicts, layers, Console(highlight=False))
    if unjudged:
        return 2
    return 0 if all(result.ok for result in verdicts.values()) else 1
