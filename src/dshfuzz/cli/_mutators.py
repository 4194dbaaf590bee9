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


def _ids(values: frozenset[str]) -> str:
    return ", ".join(sorted(map(str, values))) or "-"


def render_markdown() -> str:
    from dshfuzz.mutators import METAMORPHIC, PERTURBATIONS, load_mutators

    # Plugins are listed by the plain and JSON outputs, never in the committed doc.
    builtins = load_mutators(plugins=False)
    out = [
        "# Incident mutators",
        "",
        "Generated from `dshfuzz.mutators` by `dshfuzz mutators --markdown`; do not edit by hand.",
        "",
        f"{len(builtins)} built-in mutators. Each reproduces one incident, works at one level of the log "
        "(event, row, line, frame, byte) and draws every choice from Hypothesis, so one mutator yields many "
        "mutants. *Expects* are the rule ids that must fire on every mutant (restricted to the rules of the "
        "log's format version); *official* are the official layers that must refuse every format-v0 mutant, "
        "as measured by `tests/conformance/test_mutators_official.py`.",
        "",
        "| mutator | level | container | formats | expects | official |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| {m.name} | {m.level} | {m.compression} | {','.join(map(str, sorted(m.formats)))} | "
        f"{_ids(m.expects)} | {_ids(m.official)} |"
        for m in builtins.values()
    ]
    out.append("")
    for m in builtins.values():
        out += [f"## {m.name}", "", m.incident, "", m.doc, ""]
    out += ["# Metamorphic transforms", "",
            "A checker's verdict must not change under these, except that a *framing-only* transform may "
            "change framing (Z) verdicts.", "",
            "| transform | level | framing-only | what it does |", "|---|---|---|---|"]
    out += [f"| {t.name} | {t.level} | {'yes' if t.framing_only else 'no'} | {t.summary} |" for t in METAMORPHIC.values()]
    out += ["", "# Robustness perturbations", "",
            "A checker must return a report (never crash) on these; where *must find* is yes, with at least "
            "one finding.", "",
            "| perturbation | level | must find | what it does |", "|---|---|---|---|"]
    out += [f"| {p.name} | {p.level} | {'yes' if p.must_find else 'no'} | {p.summary} |" for p in PERTURBATIONS.values()]
    return "\n".join(out) + "\n"


def run(args: argparse.Namespace) -> int:
    from dshfuzz.model import dumps
    from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS

    if args.json:
        doc = {
            "mutators": [m.to_json() for m in MUTATORS.values()],
            "metamorphic": [{"name": t.name, "level": str(t.level), "framingOnly": t.framing_only,
                             "summary": t.summary} for t in METAMORPHIC.values()],
            "perturbations": [{"name": p.name, "level": str(p.level), "mustFind": p.must_find,
                               "summary": p.summary} for p in PERTURBATIONS.values()],
        }
        sys.stdout.write(dumps(doc) + "\n")
    elif args.markdown:
        sys.stdout.write(render_markdown())
    else:
        for m in MUTATORS.values():
            print(f"{m.name:<34} {m.level:<6} expects {_ids(m.expects):<12} official {_ids(m.official)}")
    return 0
