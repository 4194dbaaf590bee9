"""``dshfuzz check LOG... [--json] [--format-version N] [--redact]``.

Checks each log against every rule of the registry that applies to its format
version. ``--json`` prints one report object per file, one per line. A rule keeps at most
``--max-findings-per-rule`` findings (default 1000); one more finding says how many
were suppressed and from where. Exit status:
0 no error-level finding, 1 error-level findings, 2 a file could not be read, a
usage error, or an internal checker error (reported, never hidden).
``--prewrite EDIT.json --log LOG`` validates an edit before it lands
(:func:`dshfuzz.checker.prewrite_bytes`). ``--serve`` answers check requests on stdin and
stdout in the ``dshfuzz-checker/1`` protocol (:func:`dshfuzz.checker.serve`,
``docs/CHECKER_PROTOCOL.md``) until end of input.
"""

from __future__ import annotations

import argparse
import sys

HELP = "check session logs against the contract catalog"
EXIT_WITHOUT_TEARDOWN = True
"""Checking starts no child process and writes no file: the process may end without
freeing the logs it read (see :func:`dshfuzz.cli.main`)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "no error-level finding in any LOG (--prewrite: the edit is accepted; --serve: end of input)",
        1: "some LOG has an error-level finding (--prewrite: the edit is refused)",
        2: "usage error, a LOG (or EDIT.json) that cannot be read, or an internal checker error (reported, "
           "never hidden)",
    })
    parser.add_argument("logs", nargs="*", metavar="LOG", help="session log (.jsonl or .jsonl.zstd)")
    parser.add_argument("--json", action="store_true", help="machine-readable report, one JSON object per file")
    parser.add_argument(
        "--format-version", type=int, choices=(0, 1, 2, 3), default=None, metavar="N",
        help="check as format version N instead of the header's version",
    )
    parser.add_argument(
        "--max-findings-per-rule", type=int, default=None, metavar="N",
        help="keep at most N findings per rule (default 1000); one more finding counts the rest",
    )
    parser.add_argument("--redact", action="store_true", help="replace ids, arguments and text in the output with stable hashes")
    parser.add_argument(
        "--roots-only", action="store_true",
        help="print only root findings, leaving out those that follow from another (a finding's causedBy names "
             "its root; docs/CONTRACTS.md lists which rules can follow which); the exit status is unchanged",
    )
    parser.add_argument("--prewrite", metavar="EDIT.json", help="validate an appended event or an edited event list before it lands")
    parser.add_argument("--log", dest="prewrite_log", metavar="LOG", help="the log a --prewrite edit applies to")
    parser.add_argument(
        "--serve", action="store_true",
        help="serve check requests on stdin/stdout (the dshfuzz-checker/1 protocol, docs/CHECKER_PROTOCOL.md) until end of input",
    )


def run(args: argparse.Namespace) -> int:
    from . import cyclic_gc_paused

    if args.serve:
        return _serve(args)
    if args.prewrite is not None:
        with cyclic_gc_paused():
            return _prewrite(args)
    if not args.logs:
        print("dshfuzz check: no LOG given (usage: dshfuzz check LOG... [--json] [--format-version N] [--redact])", file=sys.stderr)
        return 2
    if args.max_findings_per_rule is not None and args.max_findings_per_rule < 1:
        print("dshfuzz check: --max-findings-per-rule must be at least 1", file=sys.stderr)
        return 2

    with cyclic_gc_paused():
        return _check_all(args)


def _serve(args: argparse.Namespace) -> int:
    if args.logs or args.prewrite is not None or args.prewrite_log is not None:
        print("dshfuzz check: --serve reads its logs' paths from stdin (no LOG, --prewrite or --log)", file=sys.stderr)
        return 2
    if args.max_findings_per_rule is not None and args.max_findings_per_rule < 1:
        print("dshfuzz check: --max-findings-per-rule must be at least 1", file=sys.stderr)
        return 2
    from dshfuzz.checker import CheckOptions, serve

    from . import cyclic_gc_paused

    cap = {} if args.max_findings_per_rule is None else {"max_findings_per_rule": args.max_findings_per_rule}
    # paused per request, not for the whole loop: the collector runs between requests
    return serve(sys.stdin.buffer, sys.stdout.buffer, CheckOptions(format_version=args.format_version, **cap),
                 around=cyclic_gc_paused)


def _check_all(args: argparse.Namespace) -> int:
    from dshfuzz.checker import CheckOptions, check_stream
    from dshfuzz.model import FileBytes, compression_by_name

    cap = {} if args.max_findings_per_rule is None else {"max_findings_per_rule": args.max_findings_per_rule}
    options = CheckOptions(format_version=args.format_version, **cap)
    console = None
    status = 0
    for path in args.logs:
        name = str(path)
        compression = compression_by_name(name)
        try:
            # the file is read as the check goes (and again only for --redact), never held whole
            with FileBytes.open(path) as data:
                report = check_stream(data, compression=compression, path=name, options=options)
                if args.redact:
                    from dshfuzz.checker import redact_streamed

                    report = redact_streamed(report, data, compression)
        except OSError as exc:
            print(f"dshfuzz check: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            status = 2
            continue
        if compression == "zstd" and not report.events and _looks_like_jsonl(path):
            print(f"dshfuzz check: note: {path} is named .zstd but starts with '{{': it looks like plain JSONL "
                  "(a .jsonl name reads it as such)", file=sys.stderr)
        if args.json:
            from dshfuzz.report import check_json

            sys.stdout.write(check_json(report, roots_only=args.roots_only) + "\n")
        else:
            from dshfuzz.report import render_check

            if console is None:
                from rich.console import Console

                console = Console(highlight=False, soft_wrap=False)
            render_check(report, console, roots_only=args.roots_only)
        if report.internal_errors:
            print(f"dshfuzz check: internal checker error on {path}: {report.internal_errors[0].splitlines()[0]}", file=sys.stderr)
            status = 2
        elif not report.ok and status == 0:
            status = 1
    return status


def _prewrite_failed(message: str) -> int:
    print(f"dshfuzz check --prewrite: {message}", file=sys.stderr)
    return 2


def _prewrite(args: argparse.Namespace) -> int:
    """``dshfuzz check --prewrite EDIT.json --log LOG``: exit 0 accepted, 1 refused, 2 unusable input."""
    from pathlib import Path

    from dshfuzz.checker import CheckOptions, EditError, edit_mode, prewrite_bytes
    from dshfuzz.model import FileBytes, JsonDecodeError, compression_by_name, dumps, loads

    if args.prewrite_log is None:
        return _prewrite_failed("--log LOG is required with --prewrite")
    if args.logs:
        return _prewrite_failed("give the log with --log, not as a positional LOG")
    try:
        edit = loads(Path(args.prewrite).read_bytes())
        edit_mode(edit)
    except OSError as exc:
        return _prewrite_failed(f"cannot read {args.prewrite}: {exc.strerror or exc}")
    except (JsonDecodeError, EditError) as exc:
        return _prewrite_failed(f"{args.prewrite}: {exc}")
    name = str(args.prewrite_log)
    try:
        # the log is read as the check goes; the edited file is built in memory (it is the result)
        with FileBytes.open(name) as data:
            result = prewrite_bytes(data, edit, compression=compression_by_name(name), path=name,
                                    options=CheckOptions(format_version=args.format_version))
    except OSError as exc:
        return _prewrite_failed(f"cannot read {args.prewrite_log}: {exc.strerror or exc}")
    if result.report.internal_errors:
        return _prewrite_failed(f"internal checker error: {result.report.internal_errors[0].splitlines()[0]}")
    if args.redact:
        from dshfuzz.checker import redact_prewrite

        result = redact_prewrite(result)
    if args.json:
        sys.stdout.write(dumps(result.to_json()) + "\n")
    else:
        from dshfuzz.report import prewrite_lines

        print("\n".join(prewrite_lines(result, str(args.prewrite_log))))
    return 0 if result.accepted else 1


def _looks_like_jsonl(path: str) -> bool:
    """Whether the file starts (after blanks) with ``{``: a zstd frame starts with its magic number."""
    try:
        with open(path, "rb") as fh:
            return fh.read(64).lstrip().startswith(b"{")
    except OSError:
        return False
