"""``dshfuzz recover LOG [--at SEQ] [--json] [--redact]``: plan a read-only recovery.

Names the latest complete-turn boundary at or before ``--at`` whose prefix no
official moment refuses (:func:`dshfuzz.checker.recover_bytes`), or says that a new
session is needed. Never writes. Exit status: 0 a safe fork boundary was found,
1 a new session is needed, 2 the log or the arguments are unusable.
"""

from __future__ import annotations

import argparse
import sys

HELP = "plan a read-only recovery: the latest safe complete-turn boundary"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "a safe fork boundary was found (FORK)",
        1: "no complete turn is safe to fork at: start a new session (NEW SESSION)",
        2: "usage error (--at must be a seq, >= 0) or a LOG that cannot be read",
    })
    parser.add_argument("log", metavar="LOG", help="session log (.jsonl or .jsonl.zstd)")
    parser.add_argument("--at", type=int, default=None, metavar="SEQ",
                        help="consider only boundaries whose turn/end seq is at or before SEQ (a seq, >= 0)")
    parser.add_argument("--json", action="store_true", help="machine-readable plan")
    parser.add_argument("--format-version", type=int, choices=(0, 1, 2, 3), default=None, metavar="N",
                        help="check as format version N instead of the header's version")
    parser.add_argument("--redact", action="store_true", help="replace ids and text in quoted findings with stable hashes")


def run(args: argparse.Namespace) -> int:
    """0 a fork boundary, 1 a new session is needed, 2 unusable input or arguments."""
    from dshfuzz.checker import CheckOptions, recover_bytes, redact_plan
    from dshfuzz.model import FileBytes, compression_by_name

    from . import cyclic_gc_paused

    if args.at is not None and args.at < 0:
        print(f"dshfuzz recover: --at {args.at}: a seq is a non-negative integer", file=sys.stderr)
        return 2
    name, compression = str(args.log), compression_by_name(str(args.log))
    try:
        # the file is read as each pass goes, never held whole
        with FileBytes.open(args.log) as data:
            with cyclic_gc_paused():  # the library leaves the collector to its caller
                plan = recover_bytes(data, args.at, compression=compression, path=name,
                                     options=CheckOptions(format_version=args.format_version))
            if args.redact:
                plan = redact_plan(plan, data, compression)
    except OSError as exc:
        print(f"dshfuzz recover: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        from dshfuzz.model import dumps

        sys.stdout.write(dumps(plan.to_json()) + "\n")
    else:
        from dshfuzz.report import recovery_lines

        print("\n".join(recovery_lines(plan)))
    return 0 if plan.found else 1
