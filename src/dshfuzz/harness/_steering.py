"""Steering: what each judged family tells Hypothesis, through ``target()`` and ``event()``.

``target()`` scores hard shapes (open tool calls, zstd frames, replace depth) and coverage no log
reached before (official sites and code, the checker's own lines); Hypothesis optimises them during
generation, which it does only with ``Phase.target`` enabled (``_rounds.round_settings``).
``event()`` labels each example's incident class in the round's Hypothesis statistics. Each
function runs inside a Hypothesis test (a round's condition).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._judge import Example, JudgedExample, Shape

__all__ = ["steer_checker", "steer_official", "steer_shapes", "steer_unjudged"]


def steer_shapes(family: Sequence[Example], shapes: Sequence[Shape]) -> None:
    """Label the incident class and steer generation towards hard shapes (a family scores
    its hardest sibling: Hypothesis takes one score per label and example)."""
    from hypothesis import event, target

    event(f"mutator: {family[0].mutator or 'valid'}")
    target(float(max(s.open_tool_calls for s in shapes)), label="open tool calls")
    target(float(max(s.frames for s in shapes)), label="zstd frames")
    target(float(max(s.replaces for s in shapes)), label="replace depth")


def steer_official(verdicts: Sequence[JudgedExample]) -> None:
    """Steer generation towards official code no log reached before: the family scores the
    refusal sites and official code its logs reached first, and each new site is an ``event()``.
    Only a family whose official verdict decides at once can: a family left in flight is
    resolved after Hypothesis moved on (its coverage is still counted and reported)."""
    from hypothesis import event, target

    sites = [site for v in verdicts if v.reached is not None for site in v.reached.sites]
    for site in sites:
        event(f"official site reached first: {site}")
    target(float(len(sites)), label="official sites reached first")
    target(float(sum(v.reached.code for v in verdicts if v.reached is not None)), label="official code reached first")


def steer_checker(lines: Sequence[tuple[str, int]]) -> None:
    """Steer generation towards the checker's own lines no log ran before (known as soon as the
    checker judged the family): the family scores them, each file with new lines an ``event()``."""
    from hypothesis import event, target

    for file in dict.fromkeys(f for f, _ in lines):
        event(f"checker lines reached first in {file}")
    target(float(len(lines)), label="checker lines reached first")


def steer_unjudged(family: Sequence[Example]) -> None:
    """:func:`steer_shapes` for logs held back for a batch: their shapes read now, their verdicts later."""
    from ._judge import shape_of

    steer_shapes(family, [shape_of(e) for e in family])
