"""The registries for a reader: ``dshfuzz contracts`` and ``dshfuzz mutators``, as text,
tables, JSON and the generated ``docs/CONTRACTS.md`` and ``docs/MUTATORS.md``.

Each renders the registry it names (:data:`dshfuzz.contracts.rules.RULES`, the mutators'
registries) and nothing else, so the committed docs change only when a registry does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

    from dshfuzz.contracts.rules import Rule, RuleId

__all__ = ["contracts_json", "contracts_lines", "contracts_markdown", "mutators_json", "mutators_markdown",
           "mutators_tables", "one_line"]


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


def contracts_markdown() -> str:
    """``docs/CONTRACTS.md``: every rule of the registry with where it is implemented, what the
    released migration checks and which findings follow from which."""
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


def _ids(values: frozenset[str]) -> str:
    return ", ".join(sorted(map(str, values))) or "-"


def mutators_markdown() -> str:
    """``docs/MUTATORS.md``: the built-in incident mutators (never plugins), the metamorphic
    transforms and the robustness perturbations."""
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


def mutators_tables(width: int) -> list[Table]:
    """The mutators, the metamorphic transforms and the perturbations, one titled table each,
    laid out for ``width`` columns: below :data:`_WIDE` a mutator's incident is a dim line
    under its name, since five columns cannot share 80 without cropping a long word."""
    from rich.table import Table
    from rich.text import Text

    from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS

    from ._terminal import fit

    def table(title: str, caption: str, columns: tuple[str, ...]) -> Table:
        made = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
        for column in columns:
            made.add_column(column)
        return made

    wide = width >= _WIDE
    mutators = table(f"incident mutators ({len(MUTATORS)})",
                     "expects: the rules that must fire on every mutant; official: the official layers "
                     "that must refuse a format-v0 mutant; the whole incident: dshfuzz mutators --markdown",
                     ("mutator", "level", "expects", "official", "incident") if wide
                     else ("mutator: incident", "level", "expects", "official"))
    for m in MUTATORS.values():
        cells = [_ids(m.expects), _ids(m.official)]
        if wide:
            mutators.add_row(m.name, str(m.level), *cells, one_line(m.incident))
        else:
            mutators.add_row(Text.assemble((m.name, "bold"), "\n", (one_line(m.incident), "dim")), str(m.level), *cells)
    transforms = table(f"metamorphic transforms ({len(METAMORPHIC)})",
                       "a checker's verdict must not change under these (a framing-only one may change "
                       "framing (Z) verdicts)", ("transform", "level", "framing-only", "what it does"))
    for t in METAMORPHIC.values():
        transforms.add_row(t.name, str(t.level), "yes" if t.framing_only else "no", t.summary)
    perturbations = table(f"robustness perturbations ({len(PERTURBATIONS)})",
                          "a checker must return a report on these, never crash; must find: with at least "
                          "one finding", ("perturbation", "level", "must find", "what it does"))
    for p in PERTURBATIONS.values():
        perturbations.add_row(p.name, str(p.level), "yes" if p.must_find else "no", p.summary)
    mutators.columns[3].max_width = 24  # the layer lists wrap, the incidents get the room
    return [fit(t, width) for t in (mutators, transforms, perturbations)]


def contracts_lines() -> list[str]:
    """``dshfuzz contracts``: one line per rule, its id, severity, layer, refusing moments and title."""
    from dshfuzz.contracts.rules import RULES

    return [f"{r.id:<4} {r.severity:<7} {r.layer:<11} {','.join(map(str, r.refused_by)) or '-':<40} {r.title}"
            for r in RULES.values()]


def contracts_json() -> str:
    """``dshfuzz contracts --json``: the registry as one JSON array (no final newline)."""
    from dshfuzz.contracts.rules import RULES
    from dshfuzz.model import dumps

    return dumps([r.to_json() for r in RULES.values()])


def mutators_json() -> str:
    """``dshfuzz mutators --json``: the mutators (plugins included), transforms and perturbations (no final newline)."""
    from dshfuzz.model import dumps
    from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS

    return dumps({
        "mutators": [m.to_json() for m in MUTATORS.values()],
        "metamorphic": [{"name": t.name, "level": str(t.level), "framingOnly": t.framing_only,
                         "summary": t.summary} for t in METAMORPHIC.values()],
        "perturbations": [{"name": p.name, "level": str(p.level), "mustFind": p.must_find,
                           "summary": p.summary} for p in PERTURBATIONS.values()],
    })
