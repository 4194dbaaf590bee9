"""The campaign's example strategies and its schedule of strata.

Most examples are mutants (one incident mutator applied to a generated log);
``valid_fraction`` of them are valid logs, where any error-level finding is a
false alarm, and half of those valid logs are rewritten by a metamorphic
transform and judged beside their original (a changed verdict is a metamorphic
disagreement). Every choice is a Hypothesis draw so found examples shrink.

A campaign does not draw the mutator per example from one mixed strategy: within
a round Hypothesis spends most calls mutating the examples it already has (and
``target()`` pulls towards the mutators whose shapes score high), so 200 examples
of the mix reach fewer than half of 51 mutators. It runs a :func:`schedule`
instead: one round per *stratum* (a mutator, or valid logs), every stratum once
per cycle in a seeded order, rounds short in the first cycle so that every
incident class is judged early, and doubling each cycle so later rounds explore
and optimise their targets in depth.

Besides the incident mutators, :data:`CAMPAIGN_PERTURBATIONS` are strata too: robustness
perturbations that declare no rule (``expects`` is empty), so the official layers and
the reference oracle alone say what each perturbed log is. A stratum name is a mutator
or one of them, wherever a campaign takes names (``--mutators``).
"""

from __future__ import annotations

import collections
import random
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from ._events import charge
from ._judge import Example

if TYPE_CHECKING:
    from dshfuzz.mutators import Edit, Mutant

__all__ = [
    "CAMPAIGN_PERTURBATIONS",
    "FIRST_CYCLE_EXAMPLES",
    "FIRST_ROUND",
    "MAX_EVENTS",
    "REPEATS_ON_FRESH_COVERAGE",
    "VALID",
    "RepeatOnFreshCoverage",
    "campaign_strata",
    "examples",
    "schedule",
    "sibling_examples",
    "stratum_examples",
    "unknown_mutators",
]

MAX_EVENTS = 120
"""Campaign logs stay small: defects are local, and small logs judge and shrink fast."""

FIRST_ROUND = 3
"""Examples per incident round in the first cycle. A 200-example campaign (issue 6's
detection-power budget, :data:`FIRST_CYCLE_EXAMPLES`) must judge every incident class, so
the first cycle's incident classes take ``3 x (mutators + valid strata)`` examples while
that fits, and its valid rounds give way to 2 examples when it does not (a catch is a miss,
never a valid log): up to 59 mutators (with their 10 valid strata) fit in 197. A 60th
makes 202: then this must drop to 2. The campaign perturbations come after the incident
classes in the first cycle and take nothing from that budget (:func:`schedule`)."""

FIRST_CYCLE_EXAMPLES = 200
"""The examples the first cycle's incident classes and valid strata must fit in."""

Draw = Callable[[st.SearchStrategy[Any]], Any]
"""A ``@st.composite`` draw function."""

Variant = Callable[[Any, Draw, bool], Example]
"""Draws one example of a stratum from a drawn log: ``(log, draw, reject)``, where ``reject``
rejects a log the edit cannot take (else :class:`~dshfuzz.mutators.Inapplicable` is raised)."""

VALID = None
"""The stratum of valid logs (plain or metamorphic), beside one stratum per mutator."""

CAMPAIGN_PERTURBATIONS: tuple[str, ...] = (
    "type-confusion", "out-of-domain", "header-out-of-domain", "duplicate-id", "seq-encoding", "framing-boundary",
    "aimed-retry", "aimed-schedule", "aimed-subagent", "aimed-reference", "aimed-command", "aimed-dispatch",
    "aimed-loader", "aimed-turns", "aimed-released", "aimed-storage", "aimed-meter", "aimed-migration",
)
"""The robustness perturbations a campaign runs, one stratum each, every one declaring no rule.
Each family's draws choose among its variants, so one stratum covers every shape of it (a
stratum per variant would outgrow the first cycle's budget). ``type-confusion`` subsumes
``not-an-event``, ``wrong-type-envelope`` and ``wrong-type-field``; the schema families
(``out-of-domain``, ``header-out-of-domain``, ``duplicate-id``, ``seq-encoding``) and ``framing-boundary`` aim at the
refusals type confusion cannot make (issue 32 item 4); the ``aimed-*`` families bring the rare event
types their checks need with them, one stratum per family so that each of their few variants is
drawn in a minute's campaign (:mod:`dshfuzz.mutators._aimed`). The others stay out: ``deep-nesting`` and
``huge-string`` write megabyte-sized logs that slow every judge and the minimiser (and
nesting past the limit is the ``nesting-over-limit`` mutator's incident), ``invalid-utf8``
and ``bom`` are single byte-level shapes a fixed test covers, and every official layer
accepts ``crlf``."""


def campaign_strata() -> list[str]:
    """Every stratum a campaign runs when none are named: the mutators, then the campaign
    perturbations."""
    from dshfuzz.mutators import MUTATORS

    return [*MUTATORS, *(p for p in CAMPAIGN_PERTURBATIONS if p not in MUTATORS)]


def unknown_mutators(names: Sequence[str], *, perturbations: bool = True) -> list[str]:
    """The ``names`` that name no stratum: no mutator and (with ``perturbations``) no campaign
    perturbation. A caller that needs incident mutators (their ``expects``, their official
    claims: the kill matrix) passes ``perturbations=False``."""
    from dshfuzz.mutators import MUTATORS

    known = {*MUTATORS, *CAMPAIGN_PERTURBATIONS} if perturbations else set(MUTATORS)
    return [n for n in names if n not in known]


def _checked(mutator_names: Sequence[str] | None) -> list[str]:
    names = sorted(campaign_strata()) if mutator_names is None else list(mutator_names)
    missing = unknown_mutators(names)
    if missing:
        raise ValueError(f"unknown mutators: {', '.join(missing)}")
    return names


def schedule(
    mutator_names: Sequence[str] | None = None,
    *,
    valid_fraction: float = 0.15,
    seed: int = 0,
    first_round: int = FIRST_ROUND,
    max_round: int = 200,
) -> Iterator[tuple[str | None, int]]:
    """``(stratum, round examples)`` forever: a stratum is a mutator or campaign perturbation
    name, or :data:`VALID`.

    Each cycle visits every named stratum once and enough valid strata for their share to
    be ``valid_fraction`` of the incident strata, in an order drawn from ``seed``; round
    sizes start at ``first_round`` (the valid rounds one less when the first cycle would not
    fit :data:`FIRST_CYCLE_EXAMPLES`) and double every cycle up to ``max_round``. When no names
    are given (every stratum), the campaign perturbations close the first cycle, after
    every incident class and valid stratum, so that they never push an incident class past
    the first cycle's budget (see :data:`FIRST_ROUND`); later cycles shuffle them in.
    """
    names = _checked(mutator_names)
    late = [n for n in names if n in CAMPAIGN_PERTURBATIONS] if mutator_names is None else []
    cycle = _cycle([n for n in names if n not in late], valid_fraction)
    rng = random.Random(f"schedule:{seed}")
    size = first_round
    # valid rounds give way first: a detection-power campaign catches on mutants only
    valid_size = size if size * len(cycle) <= FIRST_CYCLE_EXAMPLES else max(1, size - 1)
    rng.shuffle(cycle)
    yield from ((stratum, valid_size if stratum is VALID else size) for stratum in [*cycle, *late])
    cycle += late
    while True:
        size = min(2 * size, max_round)
        rng.shuffle(cycle)
        for stratum in cycle:
            yield stratum, size


REPEATS_ON_FRESH_COVERAGE = 2
"""Rounds a stratum may have again in a row, each because its last one reached new coverage."""


class RepeatOnFreshCoverage:
    """A :func:`schedule` where a stratum whose round reached coverage no log reached before
    (official refusal sites or code, the checker's own lines) has the next round again, up to
    ``repeats`` times in a row: the energy a coverage-guided fuzzer gives the input that found
    new coverage, given here to the stratum that drew it (AFL's favoured inputs, libFuzzer's
    corpus weighting). A repeat is a new round with fresh draws of the same stratum.

    Repeats start once every stratum in ``strata`` had a round: in the first cycle almost every
    round reaches something new, and repeating them all would only delay the strata not yet
    drawn (a short campaign's guarantee that every incident class is judged). Coverage is
    credited by stratum (:meth:`credit`) as its judgements arrive; what arrives after the
    schedule moved on to another stratum counts for nothing, since the repeat it earns is gone.
    """

    def __init__(self, rounds: Iterator[tuple[str | None, int]], strata: set[str | None], *,
                 repeats: int = REPEATS_ON_FRESH_COVERAGE) -> None:
        self._rounds = rounds
        self._unvisited = set(strata)
        self._repeats = repeats
        self._current: tuple[str | None, int] | None = None
        self._in_a_row = 0
        self._fresh = 0
        self.repeated = 0
        """Rounds given again so far."""

    def __iter__(self) -> RepeatOnFreshCoverage:
        return self

    def __next__(self) -> tuple[str | None, int]:
        again = (self._current is not None and self._fresh > 0 and not self._unvisited
                 and self._in_a_row < self._repeats)
        self._fresh = 0
        if again:
            assert self._current is not None
            self._in_a_row += 1
            self.repeated += 1
            return self._current
        self._in_a_row = 0
        self._current = next(self._rounds)
        self._unvisited.discard(self._current[0])
        return self._current

    def credit(self, stratum: str | None, fresh: int) -> None:
        """``fresh`` new coverage points (sites, blocks, lines) reached by a log of ``stratum``."""
        if self._current is not None and stratum == self._current[0]:
            self._fresh += fresh


def _cycle(names: list[str], valid_fraction: float) -> list[str | None]:
    if not names or valid_fraction >= 1:
        return [VALID]
    valid = 0 if valid_fraction <= 0 else max(1, round(len(names) * valid_fraction / (1 - valid_fraction)))
    return [*names, *[VALID] * valid]


def stratum_examples(stratum: str | None) -> st.SearchStrategy[Example]:
    """One stratum's examples: ``stratum``'s mutants, or valid logs when it is :data:`VALID`."""
    return _valid_examples() if stratum is VALID else _mutant_examples(_checked([stratum])[0])


def examples(mutator_names: Sequence[str] | None = None, *, valid_fraction: float = 0.15) -> st.SearchStrategy[Example]:
    """The whole mix as one strategy (for properties; campaigns follow :func:`schedule`).
    The mutant branch is drawn first so that shrinking keeps a mutant a mutant."""
    names = _checked(mutator_names)
    valid_permille = round(1000 * valid_fraction) if names else 1000
    valid = _valid_examples()
    incident = {name: _mutant_examples(name) for name in names}

    @st.composite
    def draw_example(draw: st.DrawFn) -> Example:
        if draw(st.integers(0, 999)) >= 1000 - valid_permille:
            return draw(valid)
        return draw(incident[draw(st.sampled_from(names))])

    return draw_example()


def sibling_examples(
    stratum: str | None, most: int, *, timing: collections.Counter[str] | None = None
) -> st.SearchStrategy[tuple[Example, ...]]:
    """Up to ``most`` examples of ``stratum`` drawn from one valid log, no two alike: a first
    one exactly as :func:`stratum_examples` draws it (a log the edit cannot take is rejected),
    then each further sibling behind a presence draw that shrinks to "absent". Hypothesis
    shrinks a family as it shrinks one example (the log, each sibling's choices) and can
    delete any sibling, so a witness shrinks to one example of the simplest log.
    ``timing["mutating"]``, when given, adds up the seconds spent editing drawn logs (the rest
    of a draw is the log's)."""
    from dshfuzz.mutators import Inapplicable

    logs, edit = _valid_variants() if stratum is VALID else _mutant_variants(_checked([stratum])[0])

    def variant(log: object, draw: Draw, reject: bool) -> Example:
        if timing is None:
            return edit(log, draw, reject)
        began = time.perf_counter()
        try:
            return edit(log, draw, reject)
        finally:
            charge(timing, "mutating", time.perf_counter() - began)

    @st.composite
    def draw_siblings(draw: st.DrawFn) -> tuple[Example, ...]:
        log = draw(logs)
        family = {(first := variant(log, draw, True)).data: first}
        for _ in range(most - 1):
            if not draw(st.integers(0, 7)):
                continue
            try:
                sibling = variant(log, draw, False)
            except Inapplicable:  # a sibling's own choices missed: the family is still good
                continue
            family.setdefault(sibling.data, sibling)
        return tuple(family.values())

    return draw_siblings()


def _mutant_variants(name: str) -> tuple[st.SearchStrategy[Any], Variant]:
    """The logs ``name`` edits, and the function drawing one example of it from a drawn log
    (rejecting the log when the edit cannot take it and ``reject``, else raising
    :class:`~dshfuzz.mutators.Inapplicable`)."""
    from dshfuzz.mutators import MUTATORS, PERTURBATIONS, DrawAdapter, incident_logs, logs_for

    edit: Edit
    if name in MUTATORS:
        edit, logs = MUTATORS[name], logs_for(name, max_events=MAX_EVENTS)
    else:
        edit = PERTURBATIONS[name]
        logs = st.one_of([incident_logs(format_version=v, max_events=MAX_EVENTS) for v in edit.formats])

    def variant(log: Any, draw: Draw, reject: bool) -> Example:  # a generated log
        data = DrawAdapter(draw)
        return _from_mutant(edit.apply(log, data) if reject else edit.apply_or_raise(log, data))

    return logs, variant


def _from_mutant(mutant: Mutant) -> Example:
    return Example(
        data=mutant.data,
        compression=mutant.compression,
        mutator=mutant.mutator,
        expects=frozenset(mutant.expects),
        description=mutant.description,
        format_version=mutant.format_version,
    )


def _mutant_examples(name: str) -> st.SearchStrategy[Example]:
    """``name``'s mutants as examples: a mutator's on the logs of the formats its incident
    exists in, a campaign perturbation's on generated v0 and v1 logs, with no rule expected."""
    return sibling_examples(name, 1).map(_only)


def _valid_examples() -> st.SearchStrategy[Example]:
    """Valid logs, half of them rewritten by a metamorphic transform and carrying their original."""
    return sibling_examples(VALID, 1).map(_only)


def _only(family: tuple[Example, ...]) -> Example:
    """The one example of a family of one (a family always holds its first example)."""
    return family[0]


def _valid_variants() -> tuple[st.SearchStrategy[Any], Variant]:
    """Valid logs, and the function drawing one example of a drawn log: the log itself, or
    (half of the time) rewritten by a metamorphic transform and carrying its original."""
    from dshfuzz.generators import session_logs
    from dshfuzz.mutators import METAMORPHIC, DrawAdapter

    logs = session_logs(max_events=MAX_EVENTS)

    def variant(log: Any, draw: Draw, reject: bool) -> Example:
        zstd = draw(st.booleans())
        plain = Example(
            data=log.to_zstd() if zstd else log.to_jsonl(),
            compression="zstd" if zstd else "none",
            format_version=log.format_version,
        )
        if not draw(st.booleans()):
            return plain
        transform = METAMORPHIC[draw(st.sampled_from(sorted(METAMORPHIC)))]
        data = DrawAdapter(draw)
        variant = transform.apply(log, data) if reject else transform.apply_or_raise(log, data)
        return Example(
            data=variant.data,
            compression=variant.compression,
            format_version=log.format_version,
            description=variant.description,
            transform=transform.name,
            original=plain.data,
            original_compression=plain.compression,
            framing_only=transform.framing_only,
        )

    return logs, variant
