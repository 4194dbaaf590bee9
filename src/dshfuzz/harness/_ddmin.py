"""Zeller's delta debugging (:func:`ddmin`) over any sequence: a 1-minimal subsequence
for which a test holds, for the minimiser's units, blocks, steps and bytes alike.

Runs of interchangeable items count as one item (``key``), and asking about several
candidates at once (``first``) changes the cost of a search, never its result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FirstHolding", "ddmin"]


def ddmin(
    items: Sequence[Any],
    test: Callable[[Sequence[Any]], bool],
    *,
    key: Callable[[Any], Any] | None = None,
    first: FirstHolding | None = None,
    width: int = 1,
) -> list[Any]:
    """Zeller's ddmin: a 1-minimal subsequence of ``items`` for which ``test`` holds.

    ``test(items)`` is assumed to hold (never called on ``items`` itself, nor on the empty
    sequence). Complements are tried before subsets, which removes large chunks first on
    the long logs campaigns produce. Every candidate costs one linear copy of the current list.

    ``key`` says which items are interchangeable: consecutive items with equal keys must
    give ``test`` the same answer whichever of them a candidate holds (the minimiser's
    identical units render to the same bytes). A maximal run of them is then one item to
    the complement search; the final pass tries to drop a run whole, then keeps the fewest
    of it that hold, found by halving. A run of ``n`` costs ``O(log n)`` tests instead of
    ``n``, and one test per run still makes the result 1-minimal: removing any one item of
    a run is the same candidate as removing any other (see :func:`_one_minimal_runs`).

    ``first`` asks about up to ``width`` candidates at once and answers the index of the
    first that holds (a checker that starts a process per question answers many for the
    price of one). Where ddmin would test candidates in a row until one holds, it asks
    about the next ``width`` of them together; since it then takes the first that holds,
    the result is the one the tests one at a time give, whatever ``width`` is.
    """
    ask = _Ask(test, first, max(1, width))
    if key is None:
        return _one_minimal(_complements(list(items), ask), ask)
    runs = _complements(_runs(items, key), ask.over(_flat))
    return _one_minimal_runs(_runs(_flat(runs), key), ask, key)


FirstHolding = Callable[[Sequence[Any]], "int | None"]
"""Asks about several candidates at once: the index of the first that holds, or ``None``."""


@dataclass(frozen=True, slots=True)
class _Ask:
    """ddmin's questions: one candidate (``test``), or the first of a row that holds, asked
    ``width`` at a time through ``first`` when there is one."""

    test: Callable[[Sequence[Any]], bool]
    first: FirstHolding | None = None
    width: int = 1

    def __call__(self, candidate: Sequence[Any]) -> bool:
        return self.test(candidate)

    def first_of(self, candidates: Iterable[Sequence[Any]]) -> int | None:
        """The index of the first of ``candidates`` that holds, taken lazily: ``width`` at a
        time through ``first``, else one at a time."""
        it = iter(candidates)
        done = 0
        while group := list(itertools.islice(it, self.width if self.first is not None else 1)):
            if self.first is not None and len(group) > 1:
                found = self.first(group)
            else:
                found = 0 if self.test(group[0]) else None
            if found is not None:
                return done + found
            done += len(group)
        return None

    def over(self, view: Callable[[Any], Sequence[Any]]) -> _Ask:
        """The same questions about ``view`` of each candidate."""
        first = self.first
        return _Ask(
            lambda c: self.test(view(c)),
            None if first is None else (lambda group: first([view(c) for c in group])),
            self.width,
        )


def _complements(current: list[Any], test: _Ask) -> list[Any]:
    """ddmin's search by complements: drop the first of ``n`` chunks that can go, ``n``
    doubling while none can, until single items remain."""
    n = 2
    while len(current) >= 2:
        bounds = _chunk_bounds(len(current), n)  # n >= 2 chunks: no complement is empty
        found = test.first_of(current[:lo] + current[hi:] for lo, hi in bounds)
        if found is not None:
            lo, hi = bounds[found]
            current, n = current[:lo] + current[hi:], max(n - 1, 2)
            continue
        if n >= len(current):
            break
        n = min(len(current), n * 2)
    return current


def _runs(items: Sequence[Any], key: Callable[[Any], Any]) -> list[list[Any]]:
    """``items`` as maximal runs of consecutive items with equal keys."""
    runs: list[list[Any]] = []
    last: Any = None
    for item in items:
        k = key(item)
        if runs and k == last:
            runs[-1].append(item)
        else:
            runs.append([item])
            last = k
    return runs


def _flat(runs: Sequence[Sequence[Any]]) -> list[Any]:
    return [item for run in runs for item in run]


def _narrow(current: list[Any], test: _Ask, windows: int, *, from_end: bool = False) -> list[Any]:
    """The smallest window reached by repeatedly keeping the first of ``windows`` contiguous
    chunks that holds alone (``current`` itself when none does); ``from_end`` tries the
    chunks last to first. When a test costs in proportion to its size and the cause is
    local, this finds it for about one test of ``current`` in all, where halving by
    complements costs about two."""
    while len(current) >= 2:
        bounds = _chunk_bounds(len(current), min(windows, len(current)))
        order = list(reversed(bounds)) if from_end else bounds
        found = test.first_of(current[lo:hi] for lo, hi in order)
        if found is None:
            return current
        lo, hi = order[found]
        current = current[lo:hi]
    return current


def _chunk_bounds(length: int, n: int) -> list[tuple[int, int]]:
    """``n`` contiguous chunks of ``range(length)`` whose sizes differ by at most one."""
    return [
        (length * i // n, length * (i + 1) // n) for i in range(n) if length * i // n < length * (i + 1) // n
    ]


def _one_minimal(current: list[Any], test: _Ask) -> list[Any]:
    """Remove single items until none can go."""
    i = 0
    while i < len(current) and len(current) > 1:
        found = test.first_of(current[:j] + current[j + 1 :] for j in range(i, len(current)))
        if found is None:
            break
        i += found
        current = current[:i] + current[i + 1 :]
    return current


def _one_minimal_runs(runs: list[list[Any]], test: _Ask, key: Callable[[Any], Any]) -> list[Any]:
    """:func:`_one_minimal` over runs of interchangeable items: drop a run whole, or else keep
    the fewest of it that hold (:func:`_fewest`), then go on to the next run.

    The invariant that makes one test per run enough: which items of a run a candidate
    keeps does not matter, only how many (``key``'s promise), so every single-item removal
    from a run is one and the same candidate, the run kept one shorter. A run left at ``k``
    items was seen to fail at ``k - 1`` (or dropped whole, at 0) with the other runs as they
    are, so no single item of it can go; as with :func:`_one_minimal`, a later removal may
    free an earlier item, and the minimiser repeats its fine stage until nothing changes.
    Runs that meet when the run between them goes merge, and the merged run is tried again.

    Dropping runs in a row is asked about together, up to and including the first run of
    several items (whose failed drop is followed by halving it, which depends on the answer).
    """
    total = sum(map(len, runs))
    i = 0
    while i < len(runs) and total > 1:
        if len(runs) > 1:

            def drops(start: int = i) -> Iterator[list[Any]]:
                for j in range(start, len(runs)):
                    yield _flat(runs[:j] + runs[j + 1 :])
                    if len(runs[j]) > 1:
                        return

            found = test.first_of(drops())
            if found is not None:
                i += found
                total -= len(runs[i])
                del runs[i]
                if 0 < i < len(runs) and key(runs[i - 1][0]) == key(runs[i][0]):
                    runs[i - 1 : i + 1] = [runs[i - 1] + runs[i]]
                    i -= 1
                continue
            # no drop held up to the first run of several items: the single ones before it stay
            i = next((j for j in range(i, len(runs)) if len(runs[j]) > 1), len(runs))
            if i == len(runs):
                break
        run = runs[i]
        if len(run) > 1:

            def holds(
                k: int,
                before: list[list[Any]] = runs[:i],
                run: list[Any] = run,
                after: list[list[Any]] = runs[i + 1 :],
            ) -> bool:
                return test(_flat([*before, run[:k], *after]))

            kept = _fewest(len(run), holds)
            runs[i] = run[:kept]
            total -= len(run) - kept
        i += 1
    return _flat(runs)


def _fewest(n: int, holds: Callable[[int], bool]) -> int:
    """The fewest ``k`` in ``1..n`` items of a run for which ``holds(k)``, given that it holds
    at ``n`` and not at 0: first ``n - 1`` (a run already minimal costs one test), then
    halving between the counts known to fail and to hold. The answer holds and one fewer was
    seen to fail (or is 0); in between, a predicate that is not monotonic may leave a
    smaller count untried."""
    if not holds(n - 1):
        return n
    fails, hold = 0, n - 1
    while hold - fails > 1:
        mid = (fails + hold) // 2
        if holds(mid):
            hold = mid
        else:
            fails = mid
    return hold
