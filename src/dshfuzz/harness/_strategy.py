"""The campaign's example strategy: valid generated logs and incident mutants.

Most examples are mutants (one incident mutator applied to a generated log);
``valid_fraction`` of them are valid logs, where any error-level finding is a
false alarm, and half of those valid logs are rewritten by a metamorphic
transform and judged beside their original (a changed verdict is a metamorphic
disagreement). The mutant branch is drawn first so that shrinking keeps a mutant
a mutant, and every choice is a Hypothesis draw so found examples shrink.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from ._judge import Example

__all__ = ["MAX_EVENTS", "examples", "unknown_mutators"]

MAX_EVENTS = 120
"""Campaign logs stay small: defects are local, and small logs judge and shrink fast."""


def unknown_mutators(names: Sequence[str]) -> list[str]:
    from dshfuzz.mutators import MUTATORS

    return [n for n in names if n not in MUTATORS]


def examples(mutator_names: Sequence[str] | None = None, *, valid_fraction: float = 0.15) -> st.SearchStrategy[Example]:
    from dshfuzz.generators import session_logs
    from dshfuzz.mutators import METAMORPHIC, MUTATORS, DrawAdapter, logs_for, mutants

    names = sorted(MUTATORS) if mutator_names is None else list(mutator_names)
    missing = unknown_mutators(names)
    if missing:
        raise ValueError(f"unknown mutators: {', '.join(missing)}")
    logs = session_logs(max_events=MAX_EVENTS)
    incident = {name: logs_for(name, max_events=MAX_EVENTS) for name in names}
    valid_permille = round(1000 * valid_fraction) if names else 1000

    def from_mutant(mutant) -> Example:  # noqa: ANN001 - a dshfuzz.mutators.Mutant
        return Example(
            data=mutant.data,
            compression=mutant.compression,
            mutator=mutant.mutator,
            expects=frozenset(mutant.expects),
            description=mutant.description,
            format_version=mutant.format_version,
        )

    @st.composite
    def draw_example(draw) -> Example:  # noqa: ANN001 - Hypothesis' draw
        if draw(st.integers(0, 999)) >= 1000 - valid_permille:
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
        name = draw(st.sampled_from(names))
        return from_mutant(draw(mutants(MUTATORS[name], incident[name])))

    return draw_example()
