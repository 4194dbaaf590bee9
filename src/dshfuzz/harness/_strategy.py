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
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from hypothesis import strategies as st

from ._judge import Example

__all__ = ["FIRST_ROUND", "MAX_EVENTS", "VALID", "examples", "schedule", "stratum_examples", "unknown_mutators"]

MAX_EVENTS = 120
"""Campaign logs stay small: defects are local, and small logs judge and shrink fast."""

FIRST_ROUND = 3
"""Examples per round in the first cycle, which takes ``3 x strata`` examples: 54
mutators and 10 valid strata take 192, so a 200-example campaign (issue 6's
detection-power budget) judges every incident class. Past 57 mutators the first
cycle outgrows 200 and this must drop to 2."""

VALID = None
"""The stratum of valid logs (plain or metamorphic), beside one stratum per mutator."""


def unknown_mutators(names: Sequence[str]) -> list[str]:
    from dshfuzz.mutators import MUTATORS

    return [n for n in names if n not in MUTATORS]


def _checked(mutator_names: Sequence[str] | None) -> list[str]:
    from dshfuzz.mutators import MUTATORS

    names = sorted(MUTATORS) if mutator_names is None else list(mutator_names)
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
    """``(stratum, round examples)`` forever: a stratum is a mutator name or :data:`VALID`.

    Each cycle visits every mutator once and enough valid strata for their share to
    be ``valid_fraction``, in an order drawn from ``seed``; round sizes start at
    ``first_round`` and double every cycle up to ``max_round``.
    """
    cycle = _cycle(_checked(mutator_names), valid_fraction)
    rng = random.Random(f"schedule:{seed}")
    size = first_round
    while True:
        rng.shuffle(cycle)
        for stratum in cycle:
            yield stratum, size
        size = min(2 * size, max_round)


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
    def draw_example(draw) -> Example:  # noqa: ANN001 - Hypothesis' draw
        if draw(st.integers(0, 999)) >= 1000 - valid_permille:
            return draw(valid)
        return draw(incident[draw(st.sampled_from(names))])

    return draw_example()


def _mutant_examples(name: str) -> st.SearchStrategy[Example]:
    from dshfuzz.mutators import MUTATORS, logs_for, mutants

    def from_mutant(mutant) -> Example:  # noqa: ANN001 - a dshfuzz.mutators.Mutant
        return Example(
            data=mutant.data,
            compression=mutant.compression,
            mutator=mutant.mutator,
            expects=frozenset(mutant.expects),
            description=mutant.description,
            format_version=mutant.format_version,
        )

    return mutants(MUTATORS[name], logs_for(name, max_events=MAX_EVENTS)).map(from_mutant)


def _valid_examples() -> st.SearchStrategy[Example]:
    """Valid logs, half of them rewritten by a metamorphic transform and carrying their original."""
    from dshfuzz.generators import session_logs
    from dshfuzz.mutators import METAMORPHIC, DrawAdapter

    logs = session_logs(max_events=MAX_EVENTS)

    @st.composite
    def draw_valid(draw) -> Example:  # noqa: ANN001 - Hypothesis' draw
        log = draw(logs)
        zstd = draw(st.booleans())
        plain = Example(
            data=log.to_zstd() if zstd else log.to_jsonl(),
            compression="zstd" if zstd else "none",
            format_version=log.format_version,
        )
        if not draw(st.booleans()):
            return plain
        transform = METAMORPHIC[draw(st.sampled_from(sorted(METAMORPHIC)))]
        variant = transform.apply(log, DrawAdapter(draw))
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

    return draw_valid()
