"""The ``dshfuzz`` command line.

Each subcommand lives in its own module ``dshfuzz.cli._<name>`` exposing
``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``; modules
are imported only when their command runs, so ``dshfuzz --help`` stays fast.
Exit codes follow one convention: 0 success, 1 findings, 2 usage or unreadable input.

A command is a thin face: it parses its arguments, calls the packages' public names (never
a private module of another package; ``tests/unit/test_architecture.py`` reads the imports)
and hands the typed result to a renderer of :mod:`dshfuzz.report`. The engines never print.

Process-wide effects belong to the command line and nowhere in the library: the library
never switches the cyclic collector off and never ends the process, so that an embedding
program (a test run, a service with threads) keeps its own settings. A command that reads
whole logs pauses the collector around that work itself (:func:`cyclic_gc_paused`);
:func:`main`, run as the process, ends it without teardown for a command that sets
``EXIT_WITHOUT_TEARDOWN``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import os
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import NoReturn

from dshfuzz import __version__

__all__ = ["COMMANDS", "HelpFormatter", "build_parser", "cyclic_gc_paused", "explain", "main"]

COMMANDS: dict[str, str] = {
    "oracle": "every official layer's verdict on each log",
    "generate": "write valid session logs drawn from the generators",
    "check": "check session logs against the contract catalog",
    "contracts": "list the contract rules (the registry)",
    "recover": "plan a read-only recovery: the latest safe complete-turn boundary",
    "mutators": "list the incident mutators",
    "mutate": "inject one incident into a log",
    "matrix": "the kill matrix: which rule catches which incident",
    "mutants": "mutation analysis of a Python checker: how many planted faults campaigns kill",
    "fuzz": "run a differential fuzz campaign against a checker",
    "coverage": "the official refusal sites a campaign reached, and those it did not",
    "corpus": "list, replay, add, minimise or mark-fixed corpus witnesses",
    "atheris": "coverage-guided fuzzing of the readers and the checker (libFuzzer)",
}


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block and restore the state found (a collector
    the caller had already paused stays paused).

    For a command's reading and checking of logs: parsed JSON is acyclic, so reference
    counting frees it, and the collector's repeated traversals of the many young objects
    a read allocates only cost time. Not for a whole long-running command (``fuzz``,
    ``matrix``, a ``--serve`` loop): the few cycles each unit of work leaves would pile
    up, so such a command pauses around each unit and lets the collector run between."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"dshfuzz.cli._{name}")


def _available(name: str) -> bool:
    return importlib.util.find_spec(f"dshfuzz.cli._{name}") is not None


def _exit_without_teardown(status: int) -> NoReturn:
    """End the process at once: freeing a checked log (a million small objects) costs a
    quarter of a second, and nothing but the standard streams is left to flush."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def _save_traceback(command: str) -> str:
    """Write the current exception's traceback to a temporary file; its path (or why not)."""
    import tempfile
    import traceback

    try:
        with tempfile.NamedTemporaryFile("w", prefix=f"dshfuzz-{command}-", suffix=".txt", delete=False) as out:
            traceback.print_exc(file=out)
            return out.name
    except OSError as exc:
        return f"nowhere: {exc}"


class HelpFormatter(argparse.HelpFormatter):
    """Fills prose paragraphs to the terminal's width like argparse's default, but keeps an
    indented list (the ``exit status:`` section) one item a line, each item folded under itself."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if len(lines) > 1 and all(line.startswith("  ") for line in lines[1:]):
                out.append(indent + lines[0])
                for line in lines[1:]:
                    lead = re.match(r"\s*\S+\s+", line)  # "  2    " : the item's text hangs under its first word
                    hang = " " * (lead.end() if lead else 2)
                    out.append(textwrap.fill(line.strip(), width, initial_indent=indent + line[: len(line) - len(line.lstrip())],
                                             subsequent_indent=indent + hang))
            else:
                out.append(textwrap.fill(" ".join(paragraph.split()), width, initial_indent=indent,
                                         subsequent_indent=indent))
            out.append("")
        return "\n".join(out).rstrip("\n")


def explain(parser: argparse.ArgumentParser, exits: Mapping[int, str], description: str | None = None) -> None:
    """Give a (sub)command's help its ``exit status:`` section (and a longer description).

    Every command calls it from ``add_arguments`` (``tests/unit/test_cli_help.py`` fails for
    one that does not); 130 (interrupted) holds for every command, so it is added here."""
    parser.formatter_class = HelpFormatter
    if description is not None:
        parser.description = description
    codes = {**exits, 130: exits.get(130, "interrupted (Ctrl-C)")}  # a command may say more of its 130
    parser.epilog = "exit status:\n" + "\n".join(f"  {code:<3}  {text}" for code, text in codes.items())


def build_parser(wanted: Sequence[str] = ()) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and one subparser per available command; only the commands in
    ``wanted`` get their arguments (importing every command module would slow ``--help``)."""
    parser = argparse.ArgumentParser(prog="dshfuzz", description="Fuzz and mutation-test DSH session-log checkers.",
                                     formatter_class=HelpFormatter,
                                     epilog="exit status:\n  0    success\n  1    findings (each command's help says "
                                            "which)\n  2    usage error, unreadable input or a failed pre-flight "
                                            "check\n  130  interrupted (Ctrl-C)\n\n"
                                            "`dshfuzz COMMAND --help` states a command's arguments and exit codes.")
    parser.add_argument("--version", action="version", version=f"dshfuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands: dict[str, argparse.ArgumentParser] = {}
    for name, help_text in COMMANDS.items():
        if not _available(name):
            continue
        p = commands[name] = sub.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)
        if name in wanted:
            _module(name).add_arguments(p)
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Called without ``argv`` it is the process entry (``python -m
    dshfuzz`` and the ``dshfuzz`` script): a command module that sets
    ``EXIT_WITHOUT_TEARDOWN`` (it leaves no child process, temporary file or buffered
    writer behind) then ends the process as soon as it returns."""
    entry = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    wanted = next((a for a in argv if not a.startswith("-")), None)
    parser, commands = build_parser([wanted] if wanted else [])
    args, extras = parser.parse_known_args(argv)
    if extras:  # named by the command's own usage, not the top level's
        (commands.get(args.command) or parser).error(f"unrecognized arguments: {' '.join(extras)}")
    if args.command is None:
        parser.print_help()
        return 2
    command = _module(args.command)
    try:
        status = int(command.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the last resort: one line for the user, the traceback on file
        print(f"dshfuzz {args.command}: internal error: {type(exc).__name__}: {str(exc)[:200]} "
              f"(traceback saved in {_save_traceback(args.command)}; please report it)", file=sys.stderr)
        return 2
    if entry and getattr(command, "EXIT_WITHOUT_TEARDOWN", False):
        _exit_without_teardown(status)
    return status
