"""``dshfuzz contracts [--json | --markdown]``: the rule registry, rendered.

``docs/CONTRACTS.md`` is exactly ``dshfuzz contracts --markdown`` (a unit test
fails when the committed file drifts); regenerate it with
``dshfuzz contracts --markdown > docs/CONTRACTS.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dshfuzz.contracts.rules import Rule, RuleId

HELP = "list the contract rules (the registry)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {0: "the rules were printed", 2: "usage error"})
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="the registry as a JSON array")
    fmt.add_argument("--markdown", action="store_true", help="the registry as docs/CONTRACTS.md")


_ORIGIN_PHRASES = {
    "seed-001": "from seed 001",
    "seed-002": "from seed 002",
    "issue-7": "for the reader's resource limits of issue 7",
    "fuzzing": "for what the fuzzing campaigns showed no rule modelled",
}


def _added(rules: Iterable[Rule]) -> str:
    """Where the non-catalog rules came from, with their ids, in registry order."""
    by_origin: dict[str, list[str]] = {}
    for r in rules:
        if r.origin != "catalog":
            by_origin.setdefault(r.origin, []).append(str(r.id))
    return "; ".join(f"{_ORIGIN_PHRASES[o]} ({', '.join(ids)})" for o, ids in by_origin.items())


def render_markdown() -> str:
    from dshfuzz.checker import implementations
    from dshfuzz.contracts.rules import RULES

    where = implementations()

    def implemented(rid: RuleId) -> str:
        return ", ".join(f"`{name}`" for name in where.get(rid, ())) or "-"

    def cell(s: str) -> str:
        return s.replace("|", "\\|")

    out = [
        "# Contract rules",
        "",
        "Generated from `dshfuzz.contracts.rules.RULES` by `dshfuzz contracts --markdown`; do not edit by hand.",
        "",
        f"{len(RULES)} rules: the {sum(r.origin == 'catalog' for r in RULES.values())} rules of the contract catalog "
        f"in catalog order, then the rules added {_added(RULES.values())}. *Refused by* names the official moment(s) "
        "that say no to a log breaking the rule (`provider` is the model provider itself, which no harness layer "
        "stands in for); an empty cell means no official layer refuses such a log. *Implemented in* names the "
        "walk or pass reporting the rule, as `module.Class` (or `module.function`) under `src/dshfuzz/checker/`.",
        "",
        "| id | severity | layer | formats | refused by | rule | implemented in |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in RULES.values():
        out.append(
            f"| {r.id} | {r.severity} | {r.layer} | {','.join(map(str, sorted(r.formats)))} | "
            f"{', '.join(map(str, r.refused_by)) or '-'} | {cell(r.title)} | {implemented(r.id)} |"
        )
    out.append("")
    for r in RULES.values():
        out += [
            f"## {r.id} — {r.title}",
            "",
            f"- severity: {r.severity}; layer: {r.layer}; formats: {', '.join(map(str, sorted(r.formats)))}; origin: {r.origin}",
            f"- refused by: {', '.join(map(str, r.refused_by)) or 'no official layer'}",
            f"- implemented in: {implemented(r.id)}",
            f"- source: {r.source}",
            "",
            r.contract,
            "",
        ]
        if r.divergence:
            out += [f"Divergence from the catalog text: {r.divergence}", ""]
        if r.unmutated:
            out += [f"No incident mutator exercises this rule: {r.unmutated}", ""]
    out += _released_checks()
    out += _consequences()
    return "\n".join(out)


def _consequences() -> list[str]:
    """Which rules' findings can follow from which (``causedBy``), from the checker's own tables."""
    from dshfuzz.checker import CAUSAL_ORDER, consequence_table

    out = [
        "## Root causes: which findings follow from which",
        "",
        "One defect often breaks several contracts. Every finding is kept; one that follows from another "
        "carries `causedBy`, the index of its root finding in the report (`dshfuzz check` nests it under its "
        "root, `--roots-only` leaves it out, `--json` keeps both). A finding follows from another at its own "
        "event when that one's rule comes earlier in the causal order; among the tool-call pairing rules, about "
        "one call id; after a finding that lost, renumbered or misread events, when it reads across events; "
        "and the summaries S8 and C1 follow from what they restate. A cause always comes earlier in the order, "
        "so every chain ends at a root. The kill matrix's precision counts root findings only.",
        "",
        "Causal order: " + ", ".join(map(str, CAUSAL_ORDER)) + ".",
        "",
        "| rule | can follow |",
        "|---|---|",
    ]
    out += [f"| {rule} | {text} |" for rule, text in consequence_table()]
    return [*out, ""]


def _released_checks() -> list[str]:
    """The released migration's checks of a format-0 log, each with the rules reporting it."""
    from dshfuzz.contracts.rules import RELEASED_CHECKS

    out = [
        "## What the released v0->v1 migration checks, and which rule reports it",
        "",
        "Every check `@deepseek-ai/dsh-session-format-v0-to-v1` makes of a format-0 log (V01 is its "
        "`lib/index.js`), from its source, mapped to the rules whose findings report it.",
        "",
        "| check | V01 lines | rules |",
        "|---|---|---|",
    ]
    out += [f"| {check} | {where} | {', '.join(map(str, rules))} |" for check, where, rules in RELEASED_CHECKS]
    return [*out, ""]


def run(args: argparse.Namespace) -> int:
    from dshfuzz.contracts.rules import RULES
    from dshfuzz.model import dumps

    if args.json:
        sys.stdout.write(dumps([r.to_json() for r in RULES.values()]) + "\n")
    elif args.markdown:
        sys.stdout.write(render_markdown())
    else:
        for r in RULES.values():
            refused = ",".join(map(str, r.refused_by)) or "-"
            print(f"{r.id:<4} {r.severity:<7} {r.layer:<11} {refused:<40} {r.title}")
    return 0
