"""Compare a checker's verdict with the truth, and name each disagreement.

The truth is per layer, never one verdict: the official layers disagree with each
other by design (a log can pass ``fold`` and fail ``load``), so a miss is judged
against each refusing layer separately, through the rules the registry maps to
that layer (``Rule.refused_by``).

Kinds:

* ``false-alarm`` — an error-level finding where every official layer and the
  reference oracle accept (rules the mutator declared are not counted: the log
  is broken on purpose, even where no official layer looks);
* ``miss`` — an official layer refuses (or the oracle fails, or the mutator
  declared a rule) and the checker reports none of the rules mapped to it;
* ``wrong-place`` — the checker reports the reference's rule at another seq;
* ``crash`` / ``timeout`` / ``unparsable-output`` — the checker gave no report;
* ``metamorphic`` — a verdict changed under a transform that must not change it;
* ``official-disagreement`` — official layers disagree among themselves; recorded
  for the record (seed 002), never a defect of the checker;
* ``oracle-crash`` — the reference oracle raised: a defect of dshfuzz itself,
  hunted and minimised like a checker defect so that it gets fixed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ._judges import CheckerVerdict

__all__ = ["Disagreement", "DisagreementKind", "Truth", "classify", "rules_refused_by"]

DisagreementKind = Literal[
    "false-alarm",
    "miss",
    "wrong-place",
    "crash",
    "timeout",
    "unparsable-output",
    "metamorphic",
    "official-disagreement",
    "oracle-crash",
]

CHECKER_DEFECTS: frozenset[str] = frozenset(
    {"false-alarm", "miss", "wrong-place", "crash", "timeout", "unparsable-output", "metamorphic"}
)

_LAYER_ALIASES = {"loadApp": "load", "loadDirect": "load"}


@dataclass(frozen=True, slots=True)
class Truth:
    """What the judges other than the checker said about one log.

    ``refusing`` are the official layers (registry names: ``loadApp`` folds into
    ``load``) that refused it; ``accepted`` the ones that accepted; ``oracle_refusing``
    the official layer each failing reference model stands for; ``expected`` the
    rules the mutator declared; ``expected_seq`` where it injected, when known.
    """

    refusing: frozenset[str]
    accepted: frozenset[str]
    oracle_refusing: frozenset[str] = frozenset()
    expected: frozenset[str] = frozenset()
    mutator: str | None = None
    oracle_consulted: bool = True

    @property
    def official_consulted(self) -> bool:
        return bool(self.refusing or self.accepted)

    @property
    def all_accept(self) -> bool:
        return not self.refusing and not self.oracle_refusing


@dataclass(frozen=True, slots=True)
class Disagreement:
    kind: DisagreementKind
    layer: str | None
    rules: tuple[str, ...]
    mutator: str | None
    detail: str

    @property
    def signature(self) -> str:
        """Deduplication key: kind, layer, rule-set difference and mutator."""
        rules = ",".join(self.rules) or "-"
        return f"{self.kind}|{self.layer or '-'}|{rules}|{self.mutator or 'valid'}"

    @property
    def is_checker_defect(self) -> bool:
        return self.kind in CHECKER_DEFECTS

    @property
    def is_reportable(self) -> bool:
        """Worth hunting and minimising: a checker defect, or a crash of our own oracle."""
        return self.kind in CHECKER_DEFECTS or self.kind == "oracle-crash"


def official_layer_name(layer: str) -> str:
    return _LAYER_ALIASES.get(layer, layer)


@cache
def rules_refused_by(layer: str) -> frozenset[str]:
    """The registry's rule ids whose ``refused_by`` names ``layer``."""
    from dshfuzz.checker import RULES

    return frozenset(str(rid) for rid, rule in RULES.items() if layer in {str(x) for x in rule.refused_by})


EXPLAINED_BY = {"wire": "seed"}
"""A refusal of the key layer is explained by a finding the value layer refuses: the
official request serializer builds its Session with ``Session.create`` (seed) first."""

MODELLED_LAYERS = frozenset({"fold", "inbox", "provider"})
"""The layers whose reference model is complete, so that its acceptance alone clears a
finding. The other models judge part of their layer (enclosure without the seed
checks the companion runs behind, the meter without its projection schemas, the
released relationships without the payload shapes); bytes and framing are the
official loader's alone."""


@cache
def rule_is_modelled(rule: str) -> bool:
    """Whether the reference oracle alone can say a log breaking ``rule`` is clean:
    every layer that refuses it is modelled (a rule refused by ``load`` is not)."""
    from dshfuzz.checker import RULES, RuleId

    try:
        refused_by = {str(x) for x in RULES[RuleId(rule)].refused_by}
    except ValueError:
        return False
    return bool(refused_by) and refused_by <= MODELLED_LAYERS


def classify(
    verdict: CheckerVerdict,
    truth: Truth,
    *,
    reference: CheckerVerdict | None = None,
) -> list[Disagreement]:
    """Every disagreement between ``verdict`` and ``truth`` (and ``reference``, when given).

    ``reference`` is a trusted checker's verdict on the same log (the built-in one
    when fuzzing an external checker); it is what ``wrong-place`` compares seqs with.
    """
    mutator = truth.mutator
    if verdict.failure is not None:
        return [Disagreement(verdict.failure, None, (), mutator, verdict.detail[:2000])]
    out: list[Disagreement] = []
    reported = frozenset(f.rule for f in verdict.findings)
    unexplained = verdict.error_rules - truth.expected
    if not truth.official_consulted:
        # no judge said "clean" for the other rules: the reference oracle alone speaks for its models
        modelled = truth.oracle_consulted
        unexplained = frozenset(r for r in unexplained if modelled and rule_is_modelled(r))
    if unexplained and truth.all_accept:
        out.append(
            Disagreement(
                "false-alarm", None, tuple(sorted(unexplained)), mutator, "every official layer and the oracle accept"
            )
        )
    for layer in sorted(truth.refusing | truth.oracle_refusing):
        mapped = rules_refused_by(layer) | rules_refused_by(EXPLAINED_BY.get(layer, layer))
        if not reported & mapped:
            source = "official layer" if layer in truth.refusing else "reference oracle"
            out.append(Disagreement("miss", layer, (), mutator, f"{source} {layer} refuses; no rule mapped to it fired"))
    missing = truth.expected - reported
    if missing:
        out.append(
            Disagreement("miss", "expected", tuple(sorted(missing)), mutator, "the mutator's declared rules did not fire")
        )
    if reference is not None and reference.failure is None:
        for rule in sorted(reported & frozenset(f.rule for f in reference.findings)):
            theirs, ours = verdict.seqs_of(rule), reference.seqs_of(rule)
            if theirs.isdisjoint(ours):
                out.append(
                    Disagreement(
                        "wrong-place", None, (rule,), mutator, f"reported at seq {_seqs(theirs)}, expected {_seqs(ours)}"
                    )
                )
    return out


def official_disagreement(truth: Truth, mutator: str | None) -> Disagreement | None:
    """Official layers that split on one log, worth recording as seed 002 does."""
    if truth.refusing and truth.accepted:
        return Disagreement(
            "official-disagreement",
            "+".join(sorted(truth.refusing)),
            (),
            mutator,
            f"refused by {sorted(truth.refusing)}, accepted by {sorted(truth.accepted)}",
        )
    return None


def metamorphic_disagreement(
    transform: str, before: CheckerVerdict, after: CheckerVerdict, *, ignore: Iterable[str] = ()
) -> Disagreement | None:
    """A verdict change under a verdict-preserving transform (``ignore``: framing-only rules)."""
    skip = frozenset(ignore)
    a, b = before.error_rules - skip, after.error_rules - skip
    if a == b:
        return None
    return Disagreement("metamorphic", transform, tuple(sorted(a ^ b)), None, f"{sorted(a)} became {sorted(b)}")


def _seqs(seqs: Iterable[int | None]) -> str:
    return ",".join("?" if s is None else str(s) for s in sorted(seqs, key=lambda s: -1 if s is None else s))


def truth_from(
    official: Mapping[str, bool],
    *,
    oracle_refusing: Iterable[str] = (),
    expected: Iterable[str] = (),
    mutator: str | None = None,
    oracle_consulted: bool = True,
) -> Truth:
    """Build a :class:`Truth` from per-layer ok flags (bridge layer names accepted)."""
    refusing = frozenset(official_layer_name(k) for k, ok in official.items() if not ok)
    accepted = frozenset(official_layer_name(k) for k, ok in official.items() if ok) - refusing
    return Truth(refusing, accepted, frozenset(oracle_refusing), frozenset(expected), mutator, oracle_consulted)
