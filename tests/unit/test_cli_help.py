"""Every command's help states its arguments and its exit codes (issue 22, help and display).

The commands are read from the parser ``dshfuzz`` itself builds, sub-subcommands
(``corpus replay``) included, so a command added without an ``exit status:`` section, or
with an argument nobody explained, fails here.
"""

from __future__ import annotations

import argparse
import re

import pytest

from dshfuzz.cli import COMMANDS, build_parser


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    yield path, parser
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, child in action.choices.items():
                yield from _walk(child, (*path, name))


def _every_parser() -> list[tuple[str, argparse.ArgumentParser]]:
    top, _ = build_parser(list(COMMANDS))
    return [(" ".join(path) or "dshfuzz", p) for path, p in _walk(top, ())]


PARSERS = _every_parser()


def test_the_walk_reaches_every_command_and_the_corpus_actions():
    names = {name for name, _ in PARSERS}
    assert {f"{c}" for c in COMMANDS} <= names
    assert {"corpus replay", "corpus mark-fixed", "corpus list", "corpus add", "corpus minimise"} <= names


@pytest.mark.parametrize(("name", "parser"), PARSERS, ids=[name for name, _ in PARSERS])
def test_help_has_an_exit_status_section_listing_success_and_usage_errors(name, parser):
    text = parser.format_help()
    assert "\nexit status:\n" in text, text
    section = text.split("\nexit status:\n", 1)[1]
    codes = re.findall(r"^  (\d+) ", section, re.M)
    assert "0" in codes and "2" in codes, section  # every command can succeed and can be misused


@pytest.mark.parametrize(("name", "parser"), PARSERS, ids=[name for name, _ in PARSERS])
def test_every_argument_is_explained(name, parser):
    unexplained = [
        action.option_strings[0] if action.option_strings else action.dest
        for action in parser._actions  # noqa: SLF001
        if not isinstance(action, argparse._SubParsersAction)  # noqa: SLF001 - its choices carry the help
        if not (action.help and action.help.strip())
    ]
    assert not unexplained, f"{name}: no help for {unexplained}"


def test_exit_items_fold_under_their_text_at_a_narrow_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    top, _ = build_parser(["fuzz"])
    [fuzz] = [p for name, p in _walk(top, ()) if name == ("fuzz",)]
    section = fuzz.format_help().split("\nexit status:\n", 1)[1]
    lines = section.splitlines()
    assert all(len(line) <= 60 for line in lines), section
    continued = [line for line in lines if line and not re.match(r"^  \d+ ", line)]
    assert continued and all(line.startswith(" " * 7) for line in continued), section
