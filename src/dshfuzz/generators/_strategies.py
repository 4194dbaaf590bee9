"""Public entry points: the ``session_logs`` Hypothesis strategy and the seeded ``generate``.

Both run the same plan grammar (``_structure.draw_session``) and the same
renderer; they differ only in who makes the choices (see ``_draw``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any
from dataclasses import dataclass

from hypothesis import strategies as st

from ._draw import HypothesisDraw, RandomDraw
from ._render import render
from ._structure import FeatureWeights, SessionPlan, draw_session

__all__ = ["DEFAULT_WEIGHTS", "GeneratedLog", "generate", "session_logs"]

DEFAULT_WEIGHTS = FeatureWeights()


@dataclass(frozen=True, slots=True)
class GeneratedLog:
    """A valid generated log.

    ``events`` are unpacked (seq == index); ``batches`` are the end indices of the
    append batches the official writer would flush (one zstd frame each);
    ``plan`` is the plan it was rendered from (mutators may edit and re-render it).
    """

    header: dict[str, Any]
    events: list[dict[str, Any]]
    batches: list[int]
    format_version: int
    plan: SessionPlan

    def batch_events(self) -> list[list[dict[str, Any]]]:
        """The events split into the writer's append batches."""
        out, start = [], 0
        for end in self.batches:
            out.append(self.events[start:end])
            start = end
        return out

    def to_jsonl(self, pack: bool = True) -> bytes:
        """The plain ``.jsonl`` bytes the official writer produces (chunk runs packed by default)."""
        from ..model import encode_jsonl

        return encode_jsonl(self.header, self.batch_events(), pack=pack)

    def to_zstd(self) -> bytes:
        """The ``.jsonl.zstd`` bytes: header frame, then one checksummed frame per batch."""
        from ..model import encode_zstd

        return encode_zstd(self.header, self.batch_events())


def _log(plan: SessionPlan, max_events: int | None) -> GeneratedLog:
    rendered = render(plan, max_events=max_events)
    return GeneratedLog(rendered.header, rendered.events, rendered.batches, plan.format_version, plan)


def _max_steps(max_events: int, max_steps: int | None) -> int:
    # A step with tool calls is ~15-25 events; by default keep one turn well inside the budget.
    return max(1, max_steps if max_steps is not None else min(6, max_events // 25))


def session_logs(
    *,
    format_version: int = 0,
    min_events: int = 0,
    max_events: int = 200,
    turns: tuple[int, int] = (0, 3),
    max_steps: int | None = None,
    weights: FeatureWeights = DEFAULT_WEIGHTS,
) -> st.SearchStrategy[GeneratedLog]:
    """Valid DSH session logs written in the agent loop's order (reference §1.5).

    Each log is a root session, a fork (inherited prefix, ``seedLength``,
    ``session/end-seed``) or a subagent child (``origin: subagent``, descriptor),
    of ``turns`` turns; each turn starts from an inbox splice and claim with a
    user message of one of the released source kinds, runs steps of streamed
    chunks (packed as the official writer packs them on encode), an assistant
    message citing its chunks and its (optionally parallel) tool calls and
    results, and ends completed, max-tokens, aborted, in error, blocked, or
    interrupted and closed by the official crash closers. Between and inside
    turns: compactions and prunes, titles, retries, hooks, approvals, todos,
    goals, schedules, commands, team and workflow events, released's three
    inventory types rc.8 does not know (marked ignorable, the one form every
    layer accepts), and (format 1 only) unknown plugin events marked ignorable.
    Every v0 type the official packages accept, and every member of every
    released payload disposition, appears (docs/VOCABULARY.md).

    Knobs: ``max_events`` (and ``min_events``), ``turns`` (own turns, lo..hi;
    lo 0 admits the rare header-only log), ``max_steps`` per turn (default from
    ``max_events``), ``weights`` for every optional feature and turn ending.

    Shrinking deletes turns, steps and tool calls (they are ``st.lists``) and
    switches features off, so failures shrink to small readable logs. Logs are
    cut at turn boundaries to ``max_events`` and filtered to ``min_events..max_events``,
    so keep ``min_events`` well below the typical size.
    """

    @st.composite
    def plans(draw: st.DrawFn) -> SessionPlan:
        d = HypothesisDraw(draw)
        return draw_session(
            d,
            weights=weights,
            format_version=format_version,
            turns=turns,
            max_steps=_max_steps(max_events, max_steps),
        )

    # Rendering cuts at turn boundaries; a first turn alone may still overflow (rare above ~60 events).
    return (
        plans()
        .map(lambda plan: _log(plan, max_events))
        .filter(lambda log: min_events <= len(log.events) <= max_events)
    )


def generate(
    count: int,
    seed: int,
    *,
    format_version: int = 0,
    min_events: int = 0,
    max_events: int = 200,
    turns: tuple[int, int] = (0, 3),
    max_steps: int | None = None,
    weights: FeatureWeights = DEFAULT_WEIGHTS,
) -> Iterator[GeneratedLog]:
    """Yield ``count`` logs, deterministically for ``seed``, independent of Hypothesis' engine.

    The plan grammar runs on ``random.Random(seed)``; logs outside
    ``min_events..max_events`` are redrawn (the stream stays deterministic).
    """
    rng = random.Random(seed)
    d = RandomDraw(rng)
    produced = 0
    attempts = 0
    while produced < count:
        attempts += 1
        if attempts > 1000 * (count + 1):
            raise ValueError(f"cannot draw logs of {min_events}..{max_events} events; widen the range")
        plan = draw_session(
            d,
            weights=weights,
            format_version=format_version,
            turns=turns,
            max_steps=_max_steps(max_events, max_steps),
        )
        log = _log(plan, max_events)
        if min_events <= len(log.events) <= max_events:
            produced += 1
            yield log
