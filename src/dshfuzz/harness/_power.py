"""Detection power: does a short campaign catch a checker blind to one incident?

For an incident mutator, the crippled checker is the built-in one with every rule
the mutator declares switched off (``builtin:-S5,-S8`` for ``partial-coverage``):
it cannot see that incident at all. A trial runs one in-process campaign of the
default mix (every mutator, as a user's campaign is) against it, and the trial
catches the defect when the campaign reports a finding that

* is a miss involving a switched-off rule: the rule among the missed ones, or the
  refusing layer among the layers the registry maps it to, and
* is the switch's doing: the whole built-in checker does not show it on that log
  (a miss the whole checker shares is a defect of the checker, not a catch).

The campaign reports one finding per round, the round's first defect with a fresh
signature; that is the finding that must catch.

The judges are the reference oracle always, and the official layers where the
switched-off rules are refused only by layers the reference oracle does not model
completely (:func:`needs_official`): there only the official layers can say the
crippled checker's silence is wrong.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ._campaign import run_campaign
from ._config import SIBLINGS, CampaignConfig
from ._classify import Disagreement, classify
from ._events import WorkerFailed
from ._judge import JudgedExample
from ._judges import BuiltinChecker

if TYPE_CHECKING:
    from dshfuzz.oracle.official import OfficialOracle

__all__ = [
    "Trial",
    "caught",
    "crippled_checker",
    "detection_trial",
    "needs_official",
    "shared_trials",
    "switched_off",
]


@dataclass(frozen=True, slots=True)
class Trial:
    """One seed's campaign against one crippled checker.

    ``examples`` is how many logs were judged when the defect was caught (the
    catching one included), or all that were judged when it was not;
    ``signature`` is the catching finding's.
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


def caught(found: Disagreement, rules: Iterable[str], whole: Iterable[str]) -> bool:
    """Whether ``found`` is the campaign noticing that ``rules`` are switched off, where
    ``whole`` are the signatures of the whole built-in checker's defects on the same log."""
    off = frozenset(rules)
    involved = bool(off & set(found.rules)) or found.layer in _layers(off)
    return found.kind in ("miss", "miss-model-only", "rule-id") and involved and found.signature not in set(whole)


class _Hunt:
    """What one campaign reports, followed example by example: the round's first fresh
    defect is the finding it reports, and its signature is seen from then on."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.judged = 0

    def first_fresh(self, defects: tuple[Disagreement, ...]) -> Disagreement | None:
        return next((d for d in defects if d.signature not in self.seen), None)

    def report(self, found: Disagreement | None) -> None:
        if found is not None:
            self.seen.add(found.signature)


def _run(config: CampaignConfig, official: OfficialOracle | None, observe: Callable[[JudgedExample], None], done: Callable[[], bool]) -> None:
    campaign = run_campaign(config, official=official, observe=observe)
    try:
        for event in campaign:
            if isinstance(event, WorkerFailed):
                raise RuntimeError(f"the campaign against {config.checker} (seed {config.seed}) died:\n{event.error}")
            if done():
                break
    finally:
        campaign.close()


def _whole_defects(judged: JudgedExample) -> frozenset[str]:
    """The signatures of the whole built-in checker's defects on ``judged``'s log (its misses
    and false alarms: all a catch is compared with)."""
    with tempfile.TemporaryDirectory(prefix="dshfuzz-power-") as scratch:
        path = Path(scratch) / f"log{judged.example.suffix}"
        path.write_bytes(judged.example.data)
        verdict = BuiltinChecker().check(path)
    return frozenset(
        d.signature for d in classify(verdict, judged.truth, reference=judged.reference, vocabulary=judged.vocabulary)
    )


def detection_trial(
    mutator: str,
    seed: int,
    *,
    examples: int = 200,
    official: OfficialOracle | None = None,
    mutators: tuple[str, ...] | None = None,
    siblings: int | None = None,
) -> Trial:
    """Run one campaign of at most ``examples`` logs against ``mutator``'s crippled checker.

    ``official`` is a running ``OfficialOracle`` (or ``None``: the reference oracle
    and the mutators' declarations judge alone); ``mutators`` narrows the mix
    (default: all, the product's campaign); ``siblings`` overrides the campaign's
    (``CampaignConfig.siblings``). Findings are neither shrunk nor
    minimised: the trial asks whether the defect is found (shrinking keeps a
    finding's signature, and later rounds do not depend on it), and stops at the
    first catching finding.
    """
    rules = switched_off(mutator)
    hunt = _Hunt()
    result: list[Trial] = []

    def observe(judged: JudgedExample) -> None:
        hunt.judged += 1
        found = hunt.first_fresh(judged.defects)
        if found is not None and not result and caught(found, rules, _whole_defects(judged)):
            result.append(Trial(mutator, seed, True, hunt.judged, found.signature))
        hunt.report(found)

    config = _trial_config(crippled_checker(mutator), seed, examples, official, mutators, siblings)
    _run(config, official, observe, lambda: bool(result))
    return result[0] if result else Trial(mutator, seed, False, hunt.judged)


def shared_trials(
    mutator_names: Iterable[str],
    seed: int,
    *,
    examples: int = 200,
    official: OfficialOracle | None = None,
    mutators: tuple[str, ...] | None = None,
    siblings: int | None = None,
) -> dict[str, Trial | None]:
    """The trials of many crippled checkers from one campaign of the whole built-in checker.

    Exact, not an estimate: a campaign's examples depend on its checker only through
    where rounds end (at each round's first fresh defect; ``target()`` scores the
    log's shape), and a checker with rules switched off shows, on each example, the
    defects :meth:`JudgedExample.defects_without` derives. So while a crippled
    checker's first fresh defect on every example is the whole checker's, the two
    campaigns judge the same examples; the crippled one's trial ends when its first
    fresh defect catches it. Where the two would end a round differently, the
    crippled campaign would go its own way: its entry is ``None``, and only a
    separate :func:`detection_trial` can say what happens.
    """
    alive = {name: switched_off(name) for name in mutator_names}
    trials: dict[str, Trial | None] = {}
    hunt = _Hunt()

    def observe(judged: JudgedExample) -> None:
        hunt.judged += 1
        whole = hunt.first_fresh(judged.defects)
        signatures = [d.signature for d in judged.defects]
        for name, rules in list(alive.items()):
            own = hunt.first_fresh(judged.defects_without(rules))
            if own is not None and caught(own, rules, signatures):
                trials[name] = Trial(name, seed, True, hunt.judged, own.signature)
            elif (own and own.signature) != (whole and whole.signature):
                trials[name] = None
            else:
                continue
            del alive[name]
        hunt.report(whole)

    _run(_trial_config("builtin", seed, examples, official, mutators, siblings), official, observe, lambda: not alive)
    trials.update({name: Trial(name, seed, False, hunt.judged) for name in alive})
    return trials


def _trial_config(
    checker: str,
    seed: int,
    examples: int,
    official: OfficialOracle | None,
    mutators: tuple[str, ...] | None,
    siblings: int | None = None,
) -> CampaignConfig:
    return CampaignConfig(
        siblings=SIBLINGS if siblings is None else siblings,
        checker=checker,
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
