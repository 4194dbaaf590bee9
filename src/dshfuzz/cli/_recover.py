"""``dshfuzz recover LOG [--at SEQ] [--json] [--redact]``: plan a read-only recovery.

Names the latest complete-turn boundary at or before ``--at`` whose prefix no
official moment refuses (:mod:`dshfuzz.checker._recover`), or says that a new
session is needed. Never writes. Exit status: 0 a safe fork boundary was found,
1 a new session is needed, 2 the log or the arguments are unusable.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dshfuzz.checker import RecoveryPlan
    from dshfuzz.model import FileBytes

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
    from dshfuzz.model import FileBytes

    if args.at is not None and args.at < 0:
        print(f"dshfuzz recover: --at {args.at}: a seq is a non-negative integer", file=sys.stderr)
        return 2
    try:
        # the file is read as each pass goes, never held whole
        with FileBytes.open(args.log) as data:
            plan = _plan(args, data)
    except OSError as exc:
        print(f"dshfuzz recover: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        from dshfuzz.model import dumps

        sys.stdout.write(dumps(plan.to_json()) + "\n")
    else:
        _render(plan)
    return 0 if plan.found else 1


def _plan(args: argparse.Namespace, data: FileBytes) -> RecoveryPlan:
    from dataclasses import replace

    from dshfuzz.checker import CheckOptions
    from dshfuzz.checker._recover import Rejected, recover_bytes
    from dshfuzz.model import compression_by_name

    from . import cyclic_gc_paused

    name, compression = str(args.log), compression_by_name(str(args.log))
    with cyclic_gc_paused():  # the library leaves the collector to its caller
        plan = recover_bytes(data, args.at, compression=compression, path=name,
                             options=CheckOptions(format_version=args.format_version))
    if args.redact:
        from dshfuzz.checker._finding import Report
        from dshfuzz.checker import redact_streamed

        def scrub(r: Rejected) -> Rejected:
            hidden = redact_streamed(Report(name, None, 0, 0, list(r.findings)), data, compression).findings
            return replace(r, findings=tuple(hidden))

        plan = replace(plan, rejected=tuple(scrub(r) for r in plan.rejected))
    return plan


def _render(plan: RecoveryPlan) -> None:
    fork = plan.fork
    anchor = "the end of the log" if plan.at is None else f"seq {plan.at}"
    if fork is not None:
        where = f"line {fork.line}"
        if fork.frame is not None:
            where += f", zstd frame {fork.frame}"
        cut = (f"byte offset {fork.offset}" if fork.offset is not None
               else f"re-frame frame {fork.frame} (starts at byte {fork.frame_offset})")
        print(f"FORK  {plan.file}: after turn {fork.turn} (turn/end seq {fork.seq}, {fork.events} events, {where}; {cut})")
    else:
        print(f"NEW SESSION  {plan.file}: no complete turn at or before {anchor} is safe to fork at")
    for rejected in plan.rejected:
        point = rejected.point
        print(f"  skipped turn {point.turn} (turn/end seq {point.seq}): {rejected.total} blocking finding(s)")
        for f in rejected.findings:
            layers = ", ".join(map(str, f.refused_by)) or "none"
            print(f"    {f.rule} seq {f.seq}: {f.message}  (refused by: {layers})")
    for note in plan.notes:
        print(f"  note: {note}")
