"""The table of every perturbation family, by name: the generic ones of :mod:`._perturb` and
the schema (:mod:`._schema`), framing-boundary (:mod:`._boundary`) and aimed (:mod:`._aimed`)
families, each registered through :func:`._perturb.perturbation` as its module is imported.

The table lives apart from :mod:`._perturb` so that the families import the decorator and the
decorator's module imports none of them (no import circle)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import strategies as st

from . import _aimed, _boundary, _schema  # noqa: F401 - each registers its families as it is imported
from ._base import DrawAdapter, Mutant
from ._perturb import _PERTURBATIONS, Perturbation

__all__ = ["PERTURBATIONS", "perturbed"]

PERTURBATIONS: Mapping[str, Perturbation] = MappingProxyType({p.name: p for p in _PERTURBATIONS})


def perturbed(perturbation_: Perturbation | str, logs: st.SearchStrategy[Any]) -> st.SearchStrategy[Mutant]:
    """Perturbed logs drawn from ``logs``."""
    p = PERTURBATIONS[perturbation_] if isinstance(perturbation_, str) else perturbation_

    @st.composite
    def draw_one(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Mutant:
        return p.apply(draw(logs), DrawAdapter(draw))

    return draw_one()
