"""Hypothesis strategies of mutants, and seeded one-shot application for the CLI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from ._base import DrawAdapter, Mutant, Mutator
from ._draft import Inapplicable, as_draft
from ._registry import get

__all__ = ["apply_seeded", "mutants"]


def mutants(mutator: Mutator | str, logs: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Mutant]:
    """Mutants of ``mutator`` applied to logs drawn from ``logs`` (default: valid v0
    ``session_logs()``). Logs that miss the mutator's precondition are rejected."""
    m = get(mutator) if isinstance(mutator, str) else mutator
    if logs is None:
        from dshfuzz.generators import session_logs

        logs = session_logs()

    @st.composite
    def draw_mutant(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Mutant:
        return m.apply(draw(logs), DrawAdapter(draw))

    return draw_mutant()


def apply_seeded(mutator: Mutator, log: object, seed_value: int, *, attempts: int = 200) -> Mutant:
    """Apply ``mutator`` to one fixed ``log`` with choices drawn from Hypothesis seeded by
    ``seed_value``: the same seed gives the same mutant. Raises :class:`Inapplicable`
    when no attempt meets the precondition."""
    draft = as_draft(log)
    found: list[Mutant] = []

    @seed(seed_value)
    @settings(max_examples=1, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def once(data: Any) -> None:
        found.append(mutator.apply(draft, data))

    try:
        once()
    except Unsatisfiable:
        pass
    if not found:
        raise Inapplicable(f"mutator {mutator.name!r} does not apply to this log")
    return found[-1]
