"""Confirm a missed declared rule on a second, independently drawn mutant.

A ``miss|expected`` finding says: the mutator's incident needs rule X, and the checker did
not report it. One witness can mislead: the incident drawn where X cannot apply (text put
inside a span a later compaction hides), or riding on a context the checker reads rightly
as something else. Before such a finding is reported, the campaign draws fresh mutants of
the same mutator (a seed of their own, never the witness's log) until one carries the
incident (the built-in checker with every rule on reports every missed rule on it) in the
witness's format, and asks the checker about that one. The finding is confirmed when the
checker misses every one of its rules there too, under the same kind; otherwise it is
reported apart, as unconfirmed, with what the second mutant was. A confirmed finding whose
own witness does not carry the incident (the built-in checker does not see it there either)
takes the second mutant as its witness: a witness always shows the incident it is about.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from ._classify import Disagreement
from ._judge import Example, Judge, JudgedExample, scope_of

__all__ = ["CONFIRM_DRAWS", "Confirmation", "better_witness", "confirm_expected_miss", "needs_confirmation"]

CONFIRM_DRAWS = 40
"""Mutants drawn at most while looking for one that carries the incident: a mutator's
precondition rejects some logs, and a log of the other format does not count."""


@dataclass(frozen=True, slots=True)
class Confirmation:
    """Whether a second mutant reproduced the finding, in one line what it was, and (when it
    did) the mutant itself."""

    confirmed: bool
    detail: str
    example: Example | None = None


class _Decided(BaseException):
    """Ends the search at the first mutant that carries the incident (a BaseException, as the
    campaign's own round signals are: Hypothesis would replay an Exception as a failure)."""

    def __init__(self, outcome: Confirmation) -> None:
        super().__init__(outcome.detail)
        self.outcome = outcome


def needs_confirmation(defect: Disagreement) -> bool:
    """Whether ``defect`` is a verdict on the mutator's declaration (``miss|expected`` and its
    kin), which only a second mutant can confirm."""
    return defect.layer == "expected" and defect.is_checker_defect


def confirm_expected_miss(
    judge: Judge,
    defect: Disagreement,
    mutator: str,
    witness: Example,
    *,
    seed: int,
    avoid: frozenset[bytes] = frozenset(),
    draws: int = CONFIRM_DRAWS,
    interrupted: Callable[[], bool] = lambda: False,
) -> Confirmation:
    """Draw mutants of ``mutator`` (seeded from ``seed`` and the defect's signature, skipping
    ``witness`` and the logs in ``avoid``) until one of ``witness``'s format carries the
    incident, and say whether ``defect`` shows there: the same kind, every rule of it missed.
    ``interrupted()`` is asked before each judgement; when it holds, the answer is
    unconfirmed ("not tried")."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    from ._strategy import stratum_examples

    wanted = frozenset(defect.rules)
    skip = avoid | {witness.data}
    scope = scope_of(defect)

    def condition(example: Example) -> bool:
        if interrupted():
            raise _Decided(Confirmation(False, "not tried: the campaign ended first"))
        if example.data in skip or example.format_version != witness.format_version:
            return False
        if not wanted <= judge.reported_by_builtin(example):
            return False  # the incident is not in this mutant (its rules cannot apply here)
        judged = judge.judge(example, scope)
        shown = [d for d in judged.disagreements if d.kind == defect.kind and d.layer == "expected"]
        if any(wanted <= frozenset(d.rules) for d in shown):
            raise _Decided(Confirmation(True, f"reproduced on a second mutant: {example.description}", example))
        said = sorted(f.rule for f in judged.verdict.findings)
        raise _Decided(Confirmation(
            False,
            f"a second mutant ({example.description}) did not reproduce it: the checker reported "
            f"{', '.join(said) or 'nothing'}",
        ))

    key = zlib.crc32(defect.cause.encode())
    try:
        find(
            stratum_examples(mutator), condition,
            settings=settings(max_examples=draws, database=None, deadline=None, phases=[Phase.generate],
                              suppress_health_check=list(HealthCheck)),
            random=random.Random(f"confirm:{seed}:{key}"),
        )
    except _Decided as decided:
        return decided.outcome
    except (NoSuchExample, Unsatisfiable):
        pass
    return Confirmation(False, f"no second mutant of {mutator} carried the incident in {draws} draws")


def better_witness(
    judge: Judge, defect: Disagreement, witness: Example, confirmation: Confirmation
) -> JudgedExample | None:
    """The second mutant's full judgement, when it should be the finding's witness: the finding
    is confirmed, the built-in checker does not see every missed rule on ``witness`` (its
    incident is not there), and the second mutant shows the finding's signature. ``None``
    otherwise: the witness stays."""
    second = confirmation.example
    if not confirmation.confirmed or second is None or frozenset(defect.rules) <= judge.reported_by_builtin(witness):
        return None
    judged = judge.judge(second)
    return judged if defect.signature in {d.signature for d in judged.disagreements} else None
