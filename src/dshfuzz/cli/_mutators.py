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


_ONE_LINE = 100  # characters of an incident the table shows; the full text is in --markdown


def one_line(text: str, limit: int = _ONE_LINE) -> str:
    """An incident's first sentence; past ``limit``, its first clause (up to a colon, a dash
    or a semicolon) when that says something, else its words up to ``limit`` and an ellipsis.
    The table gives each mutator a line or two; the whole text is the --markdown doc's."""
    import re

    sentence = re.split(r"(?<=[.;!?])\s", " ".join(text.split()), maxsplit=1)[0].rstrip(".;")
    if len(sentence) <= limit:
        return sentence
    clause = re.split(r":\s| -- |;\s", sentence, maxsplit=1)[0]
    if 25 <= len(clause) <= limit:
        return clause
    return sentence[: sentence.rfind(" ", 0, limit)].rstrip(",;: ") + " …"


_WIDE = 120  # columns from which an incident gets a column of its own, not a line under its mutator


def _tables(width: int) -> list:
    """The mutators, the metamorphic transforms and the perturbations, one titled table each,
    laid out for ``width`` columns: below :data:`_WIDE` a mutator's incident is a dim line
    under its name, since five columns cannot share 80 without cropping a long word."""
    from rich.table import Table
    from rich.text import Text

    from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS
    from dshfuzz.report._terminal import fit

    mutators = Table(title=f"incident mutators ({len(MUTATORS)})", title_justify="left",
                     caption="expects: the rules that must fire on every mutant; official: the official layers "
                             "that must refuse a format-v0 mutant; the whole incident: dshfuzz mutators --markdown",
                     caption_justify="left")
    wide = width >= _WIDE
    for column in ("mutator", "level", "expects", "official", "incident") if wide else \
            ("mutator: incident", "level", "expects", "official"):
        mutators.add_column(column)
    for m in MUTATORS.values():
        cells = [_ids(m.expects), _ids(m.official)]
        if wide:
            mutators.add_row(m.name, str(m.level), *cells, one_line(m.incident))
        else:
            mutators.add_row(Text.assemble((m.name, "bold"), "\n", (one_line(m.incident), "dim")), str(m.level), *cells)
    transforms = Table(title=f"metamorphic transforms ({len(METAMORPHIC)})", title_justify="left",
                       caption="a checker's verdict must not change under these (a framing-only one may change "
                               "framing (Z) verdicts)", caption_justify="left")
    for column in ("transform", "level", "framing-only", "what it does"):
        transforms.add_column(column)
    for t in METAMORPHIC.values():
        transforms.add_row(t.name, str(t.level), "yes" if t.framing_only else "no", t.summary)
    perturbations = Table(title=f"robustness perturbations ({len(PERTURBATIONS)})", title_justify="left",
                          caption="a checker must return a report on these, never crash; must find: with at least "
                                  "one finding", caption_justify="left")
    for column in ("perturbation", "level", "must find", "what it does"):
        perturbations.add_column(column)
    for p in PERTURBATIONS.values():
        perturbations.add_row(p.name, str(p.level), "yes" if p.must_find else "no", p.summary)
    mutators.columns[3].max_width = 24  # the layer lists wrap, the incidents get the room
    return [fit(t, width) for t in (mutators, transforms, perturbations)]


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
        from rich.console import Console

        console = Console(highlight=False)
        for table in _tables(console.width):
            console.print(table)
            console.print()
    return 0
