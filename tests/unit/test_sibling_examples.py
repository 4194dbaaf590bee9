"""A campaign draws a valid log once and mutates it several times (``sibling_examples``):
siblings are distinct examples of one log, and a family shrinks as one example does, down
to a single sibling of the simplest log, so a witness stays as small as before."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, Phase, find, settings

from dshfuzz.harness._strategy import sibling_examples, stratum_examples
from dshfuzz.model import parse_log


def _find(strategy, condition, *, shrink: bool):  # noqa: ANN001, ANN202 - a strategy and a predicate
    phases = [Phase.generate, *([Phase.shrink] if shrink else [])]
    return find(strategy, condition, settings=settings(max_examples=60, database=None, phases=phases, deadline=None,
                                                       suppress_health_check=list(HealthCheck)),
                random=random.Random(7))


def test_siblings_are_distinct_mutants_of_one_log() -> None:
    families: list[tuple] = []

    def record(family: tuple) -> bool:
        families.append(family)
        return len(families) >= 30

    _find(sibling_examples("seq-gap", 4), record, shrink=False)
    assert all(1 <= len(f) <= 4 for f in families)
    assert all(len({e.data for e in f}) == len(f) for f in families), "two siblings alike"
    assert all(e.mutator == "seq-gap" and e.expects for f in families for e in f)
    assert any(len(f) > 1 for f in families), "no family held more than one mutant"
    for family in families:
        heads = {parse_log(e.data, compression=e.compression).header.raw["id"] for e in family}  # type: ignore[arg-type]
        assert len(heads) == 1, "siblings of different logs"


def test_a_family_shrinks_to_one_sibling_as_small_as_a_single_example_shrinks() -> None:
    def events(example) -> int:  # noqa: ANN001 - an Example
        return len(parse_log(example.data, compression=example.compression).events)  # type: ignore[arg-type]

    def big(family: tuple) -> bool:  # a sibling with more than a few events
        return any(events(e) > 4 for e in family)

    found = _find(sibling_examples("seq-gap", 4), big, shrink=True)
    alone = _find(stratum_examples("seq-gap"), lambda e: events(e) > 4, shrink=True)
    assert len(found) == 1, f"the shrunk family kept {len(found)} siblings"
    assert events(found[0]) == events(alone), (
        f"the shrunk sibling has {events(found[0])} events, a shrunk single example {events(alone)}"
    )
