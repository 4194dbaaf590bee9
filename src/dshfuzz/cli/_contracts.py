"""``dshfuzz contracts [--json | --markdown]``: the rule registry, rendered.

``docs/CONTRACTS.md`` is exactly ``dshfuzz contracts --markdown`` (a unit test
fails when the committed file drifts); regenerate it with
``dshfuzz contracts --markdown > docs/CONTRACTS.md``.
"""

from __future__ import annotations

import argparse
import sys

HELP = "list the contract rules (the registry)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {0: "the rules were printed", 2: "usage error"})
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="the registry as a JSON array")
    fmt.add_argument("--markdown", action="store_true", help="the registry as docs/CONTRACTS.md")


def run(args: argparse.Namespace) -> int:
    from dshfuzz.report import contracts_json, contracts_lines, contracts_markdown

    if args.json:
        sys.stdout.write(contracts_json() + "\n")
    elif args.markdown:
        sys.stdout.write(contracts_markdown())
    else:
        print("\n".join(contracts_lines()))
    return 0
