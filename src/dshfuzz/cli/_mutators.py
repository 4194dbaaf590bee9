"""``dshfuzz mutators [--json | --markdown]``: the incident mutators, metamorphic transforms
and robustness perturbations, rendered from the registry.

``docs/MUTATORS.md`` is exactly ``dshfuzz mutators --markdown`` (a unit test fails when
the committed file drifts); regenerate it with ``dshfuzz mutators --markdown > docs/MUTATORS.md``.
"""

from __future__ import annotations

import argparse
import sys

HELP = "list the incident mutators"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {0: "the registry was printed", 2: "usage error"})
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="mutators, transforms and perturbations as JSON")
    fmt.add_argument("--markdown", action="store_true", help="the registry as docs/MUTATORS.md")


def run(args: argparse.Namespace) -> int:
    from dshfuzz.report import mutators_json, mutators_markdown, mutators_tables

    if args.json:
        sys.stdout.write(mutators_json() + "\n")
    elif args.markdown:
        sys.stdout.write(mutators_markdown())
    else:
        from rich.console import Console

        console = Console(highlight=False)
        for table in mutators_tables(console.width):
            console.print(table)
            console.print()
    return 0
