"""One drawing interface, two back ends: Hypothesis (shrinkable) and ``random.Random`` (fast, seeded).

The plan grammar in ``_structure`` is written once against :class:`Draw`. Under
Hypothesis every choice becomes a Hypothesis strategy draw and every repeated
structure an ``st.lists`` of a composite, so shrinking deletes whole turns,
steps and tool calls instead of re-drawing a length and looping (which shrinks
badly). Under :class:`RandomDraw` the same grammar runs on a seeded
``random.Random``: deterministic for a seed, independent of Hypothesis' engine,
and fast enough for ``dshfuzz generate``.

Shrink direction is part of the contract: :meth:`Draw.chance` shrinks to
``False``, :meth:`Draw.pick` to the first option, :meth:`Draw.integer` to ``lo``
-- so every vocabulary lists its simplest, most common choice first.
"""

from __future__ import annotations

import enum
import functools
import random
from collections.abc import Callable, Hashable, Sequence
from typing import Final, Literal, Protocol, TypeVar

from hypothesis import strategies as st

__all__ = ["Draw", "HypothesisDraw", "RandomDraw"]

T = TypeVar("T")

_RESOLUTION = 1000
_PRESENCE = 15


class _Absent(enum.Enum):
    """The element a list draw left out (an enum member, so that ``is`` narrows it away)."""

    ABSENT = enum.auto()


_ABSENT: Final = _Absent.ABSENT


class Draw(Protocol):
    """The choices the plan grammar can make."""

    def integer(self, lo: int, hi: int) -> int: ...

    def chance(self, p: float) -> bool: ...

    def pick(self, options: Sequence[T]) -> T: ...

    def weighted(self, options: Sequence[tuple[T, float]]) -> T: ...

    def many(self, element: Callable[..., T], lo: int, hi: int, *args: Hashable) -> list[T]:
        """``element(draw, *args)`` repeated ``lo..hi`` times; ``element`` must be a module-level function."""
        ...


class RandomDraw:
    """:class:`Draw` over a seeded ``random.Random`` (no Hypothesis engine involved)."""

    __slots__ = ("_rng",)

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi) if hi > lo else lo

    def chance(self, p: float) -> bool:
        return p > 0 and self._rng.random() < p

    def pick(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]

    def weighted(self, options: Sequence[tuple[T, float]]) -> T:
        return self._rng.choices([o for o, _ in options], weights=[w for _, w in options])[0]

    def many(self, element: Callable[..., T], lo: int, hi: int, *args: Hashable) -> list[T]:
        return [element(self, *args) for _ in range(self.integer(lo, hi))]


class HypothesisDraw:
    """:class:`Draw` inside a Hypothesis ``@st.composite`` (``draw`` is its draw function).

    Strategies are built once per distinct argument and cached: building a
    composite on every draw would dominate generation time.
    """

    __slots__ = ("_draw",)

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(_integers(lo, hi)) if hi > lo else lo

    def chance(self, p: float) -> bool:
        if p <= 0:
            return False
        # Shrinks to 0, i.e. to "feature off".
        return self._draw(_integers(0, _RESOLUTION - 1)) >= _RESOLUTION * (1 - p)

    def pick(self, options: Sequence[T]) -> T:
        return options[0] if len(options) == 1 else options[self._draw(_integers(0, len(options) - 1))]

    def weighted(self, options: Sequence[tuple[T, float]]) -> T:
        live = [(o, w) for o, w in options if w > 0]
        total = sum(w for _, w in live)
        # Shrinks to the first positive-weight option.
        point = self._draw(_integers(0, _RESOLUTION - 1)) * total / _RESOLUTION
        for option, weight in live:
            if point < weight:
                return option
            point -= weight
        return live[-1][0]

    def many(self, element: Callable[..., T], lo: int, hi: int, *args: Hashable) -> list[T]:
        # Every drawn element stays deletable (min_size=0: Hypothesis cannot delete a forced
        # leading element); a list shorter than ``lo`` is padded with minimal elements.
        drawn = [e for e in self._draw(_lists(element, args, max(lo, hi))) if e is not _ABSENT]
        return drawn + [element(_MINIMAL, *args) for _ in range(lo - len(drawn))]


class _MinimalDraw:
    """:class:`Draw` that makes every choice its shrink target, consuming nothing."""

    __slots__ = ()

    def integer(self, lo: int, hi: int) -> int:
        return lo

    def chance(self, p: float) -> bool:
        return False

    def pick(self, options: Sequence[T]) -> T:
        return options[0]

    def weighted(self, options: Sequence[tuple[T, float]]) -> T:
        return next(o for o, w in options if w > 0)

    def many(self, element: Callable[..., T], lo: int, hi: int, *args: Hashable) -> list[T]:
        return [element(self, *args) for _ in range(lo)]


_MINIMAL = _MinimalDraw()


@functools.cache
def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@functools.cache
def _lists(element: Callable[..., T], args: tuple[Hashable, ...], hi: int) -> st.SearchStrategy[list[T | Literal[_Absent.ABSENT]]]:
    @st.composite
    def one(draw: st.DrawFn) -> T | Literal[_Absent.ABSENT]:
        # The leading presence choice makes "all choices minimal" mean "no element", so
        # Hypothesis' trivial-span pass deletes elements anywhere in the list (its node
        # deletion only removes a few consecutive choices, far fewer than a turn has).
        if draw(_integers(0, _PRESENCE)) == 0:
            return _ABSENT
        return element(HypothesisDraw(draw), *args)

    return st.lists(one(), max_size=hi)
