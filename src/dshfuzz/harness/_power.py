"""Detection power: does a short campaign catch a checker blind to one incident?

For an incident mutator, the crippled checker is the built-in one with every rule
the mutator declares switched off (``builtin:-S5,-S8`` for ``partial-coverage``):
it cannot see that incident at all. A trial runs one in-process campaign of the
default mix (every mutator, as a user's campaign is) against it, and the trial
catches the defect when the campaign reports a miss that involves a switched-off
rule: the rule among the missed ones, or the refusing layer among the layers the
registry maps it to. Any other finding does not count.

The judges are the reference oracle always, and the official layers where the
switched-off rules are refused only by layers the reference oracle does not model
completely (:func:`needs_official`): there only the official layers can say the
crippled checker's silence is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ._campaign import CampaignConfig, run_campaign
from ._events import DisagreementFound, ExampleJudged, WorkerFailed

__all__ = ["Trial", "caught", "crippled_checker", "detection_trial", "needs_official", "switched_off"]


@dataclass(frozen=True, slots=True)
class Trial:
    """One seed's campaign against one crippled checker.

    ``examples`` is how many logs were judged when the defect was caught (the
    catching one included), or the whole budget when it was not; ``signature``
    is the catching finding's.
    """

    mutator: str
    seed: int
    caught: bool
    examples: int
    signature: str | None = None


def switched_off(mutator: str) -> frozenset[str]:
    """The rules ``mutator`` declares must fire: what its crippled checker lacks."""
    from dshfuzz.mutators import MUTATORS

    return frozenset(str(rule) for rule in MUTATORS[mutator].expects)


def crippled_checker(mutator: str) -> str:
    """The ``--checker`` spec of the built-in checker blind to ``mutator``'s incident."""
    return "builtin:" + ",".join(f"-{rule}" for rule in sorted(switched_off(mutator)))


def needs_official(mutator: str) -> bool:
    """Whether some rule ``mutator`` declares is refused by official layers only: by some
    layer, and by none the reference oracle models completely."""
    from ._classify import MODELLED_LAYERS

    return any((layers := _layers(frozenset({rule}))) and not layers & MODELLED_LAYERS for rule in switched_off(mutator))


@cache
def _layers(rules: frozenset[str]) -> frozenset[str]:
    from dshfuzz.checker import RULES, RuleId

    return frozenset(str(layer) for rule in rules for layer in RULES[RuleId(rule)].refused_by)


def caught(found: DisagreementFound, rules: Iterable[str]) -> bool:
    """Whether ``found`` is the campaign noticing that ``rules`` are switched off."""
    off = frozenset(rules)
    return found.kind == "miss" and (bool(off & set(found.rules)) or found.layer in _layers(off))


def detection_trial(
    mutator: str,
    seed: int,
    *,
    examples: int = 200,
    official: object | None = None,
    mutators: tuple[str, ...] | None = None,
) -> Trial:
    """Run one campaign of at most ``examples`` logs against ``mutator``'s crippled checker.

    ``official`` is a running ``OfficialOracle`` (or ``None``: the reference oracle
    and the mutators' declarations judge alone); ``mutators`` narrows the mix
    (default: all, the product's campaign). Findings are neither shrunk nor
    minimised: the trial asks whether the defect is found (shrinking keeps a
    finding's signature, and the round's examples do not depend on it), and stops
    at the first catching finding.
    """
    rules = switched_off(mutator)
    config = CampaignConfig(
        checker=crippled_checker(mutator),
        seed=seed,
        workers=0,
        budget_seconds=None,
        budget_examples=examples,
        official=official is not None,
        mutators=mutators,
        minimise=False,
        shrink=False,
        out=Path("reports"),
    )
    judged = 0
    campaign = run_campaign(config, official=official)
    try:
        for event in campaign:
            if isinstance(event, ExampleJudged):
                judged += 1
            elif isinstance(event, DisagreementFound) and caught(event, rules):
                return Trial(mutator, seed, True, judged, event.signature)
            elif isinstance(event, WorkerFailed):
                raise RuntimeError(f"the campaign against {config.checker} (seed {seed}) died:\n{event.error}")
    finally:
        campaign.close()
    return Trial(mutator, seed, False, judged)
