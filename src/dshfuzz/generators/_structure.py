"""Typed session *plans* and the grammar that draws them.

A plan says what happens in a session -- which turns, which steps, which tool
calls, how each turn ends, what happens between turns -- and nothing about seqs,
times, ids or surface bookkeeping. ``_render.render`` turns any plan into a
valid event log, so every plan (including every shrink of one) is a valid log.
Mutators may build or edit plans directly (they are frozen dataclasses; use
``dataclasses.replace``) and render them.

The grammar draws through :class:`~dshfuzz.generators._draw.Draw`, so the same
code backs the Hypothesis strategy and the seeded ``generate``. Repeated
structures (turns, steps, tool calls, side events) are ``Draw.many`` lists, so
Hypothesis shrinks by deleting whole turns and steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._draw import Draw
from ._vocabulary import ABORT_CAUSES, FAILURE_CODES, TOOLS, USER_SOURCE_KINDS

__all__ = [
    "BETWEEN_TURN_SIDES",
    "SESSION_START_SIDES",
    "CompactionPlan",
    "FailedAttemptPlan",
    "FeatureWeights",
    "SessionPlan",
    "SidePlan",
    "StepPlan",
    "ToolCallPlan",
    "TurnEndPlan",
    "TurnPlan",
    "draw_session",
]

# Side events the harness writes between turns (each a small self-contained group).
BETWEEN_TURN_SIDES: tuple[str, ...] = (
    "title-user",
    "goal",
    "command",
    "plan-mode",
    "schedule",
    "feedback",
    "team",
    "workflow",
    "cancel",
    "sandbox",
    "permission",
    "agent-preset",
    "approval-policy",
    "ignorable",
    "model-selection",
    "delivery",
    "model-policy",
)
# Settings the harness records when a session starts.
SESSION_START_SIDES: tuple[str, ...] = (
    "approval-policy",
    "sandbox",
    "permission",
    "agent-preset",
    "plan-mode",
    "model-policy",
)


@dataclass(frozen=True, slots=True)
class FeatureWeights:
    """Probabilities (0..1) of each optional feature, and relative weights of turn endings.

    The defaults make 300 logs cover the whole v0 vocabulary while keeping the
    real sessions' shape: mostly completed turns of 1-3 steps, tool calls in
    about half the steps. ``side`` and ``code_dispatch`` are set for the
    Hypothesis strategy a campaign draws from, whose small-biased draws cut
    mid-range chances (0.25 comes out near 0.15): with them the rarest type
    still appears in about 1 log in 300 there (docs/VOCABULARY.md).

    ``working_step`` is the probability that a turn with steps leads with one
    working step (a step that may call tools, answered by the steps after it)
    drawn on its own rather than as a member of the working-step list, which
    Hypothesis draws empty most of the time. At its default 0 the grammar makes
    no draw for it, so the same seed gives the same plan as without the knob.

    ``full_turns`` is the probability that the turns a session's minimum count
    requires are drawn in full, each feature at its weight, ahead of the turn
    list; otherwise a turn list drawn short is padded with minimal turns (no
    optional feature at all). At its default 0 it makes no draw either.

    ``compact_all`` is the probability that a compaction keeps none of the surface
    (``keep=0``) instead of drawing how many nodes it keeps; no draw at 0 either.
    """

    tool_calls: float = 0.6
    parallel: float = 0.4
    tool_error: float = 0.15
    hook: float = 0.08
    approval: float = 0.08
    code_dispatch: float = 0.08
    web_search: float = 0.04
    todo: float = 0.08
    reasoning: float = 0.6
    retry: float = 0.06
    overflow: float = 0.04
    compaction: float = 0.1
    prune: float = 0.1
    title: float = 0.7
    steering: float = 0.05
    queued: float = 0.08
    runtime_context: float = 0.5
    header_change: float = 0.05
    non_user_source: float = 0.3
    prompt_hook: float = 0.04
    side: float = 0.5
    fork: float = 0.08
    subagent: float = 0.1
    ignorable: float = 0.15
    end_completed: float = 0.7
    end_error: float = 0.06
    end_aborted: float = 0.08
    end_interrupted: float = 0.08
    end_max_tokens: float = 0.04
    end_blocked: float = 0.04
    empty: float = 0.02
    working_step: float = 0.0
    full_turns: float = 0.0
    compact_all: float = 0.0

    def endings(self) -> list[tuple[str, float]]:
        return [
            ("completed", self.end_completed),
            ("error", self.end_error),
            ("aborted", self.end_aborted),
            ("interrupted", self.end_interrupted),
            ("max-tokens", self.end_max_tokens),
            ("blocked", self.end_blocked),
        ]


@dataclass(frozen=True, slots=True)
class Words:
    """A deterministic phrase: ``length`` words of the vocabulary starting at ``offset``."""

    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class ToolCallPlan:
    """One tool call advertised by the model, started and answered (unless a crash cuts it)."""

    tool: int
    args: Words
    error: bool = False
    result: Words = Words(0, 3)
    hook: str | None = None
    approval: str | None = None
    dispatches: int = 0
    web_search: bool = False
    pieces: int = 1


@dataclass(frozen=True, slots=True)
class FailedAttemptPlan:
    """A model attempt that failed before the step's final one.

    ``retry``: provider error, then ``llm/retry`` + ``llm/retry-started``;
    ``overflow``: context-window overflow, then an in-step compaction (the
    headless compaction-recovery snapshot).
    """

    kind: str = "retry"
    failure: int = 0
    partial: int = 0


@dataclass(frozen=True, slots=True)
class StepPlan:
    """One step: a user-visible model response plus its tool round."""

    text: Words = Words(0, 4)
    reasoning: Words | None = None
    calls: tuple[ToolCallPlan, ...] = ()
    pieces: int = 1
    parallel: bool = False
    failures: tuple[FailedAttemptPlan, ...] = ()
    header_change: bool = False
    todo: bool = False
    steer: bool = False


@dataclass(frozen=True, slots=True)
class TurnEndPlan:
    """How a turn ends. ``crash`` applies to ``interrupted`` (closed by the official crash closers):
    ``stream`` cuts mid-stream, ``message`` after the assistant message, ``tools`` after
    ``started`` tool/calls of which ``finished`` got results."""

    kind: str = "completed"
    cause: str = "user"
    failure: int = 0
    crash: str = "stream"
    started: int = 0
    finished: int = 0


@dataclass(frozen=True, slots=True)
class SidePlan:
    """A self-contained group of non-turn events (see ``BETWEEN_TURN_SIDES``)."""

    kind: str
    variant: int = 0


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """Compact the surface except its last ``keep`` nodes; ``manual`` runs via a ``/compact`` command."""

    keep: int = 0
    manual: bool = False
    failed: bool = False


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """One turn: the prompt that starts it, its steps, its ending, and what precedes it."""

    steps: tuple[StepPlan, ...] = (StepPlan(),)
    end: TurnEndPlan = TurnEndPlan()
    source: str = "user"
    prompt: Words = Words(0, 6)
    before: tuple[SidePlan, ...] = ()
    compaction: CompactionPlan | None = None
    prune: bool = False
    title: str | None = None
    queued: bool = False
    runtime_context: bool = False
    prompt_hook: bool = False


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """A whole session. ``origin``: ``root``; ``fork`` (``prefix`` is the inherited parent
    history, then ``session/end-seed``); ``subagent`` (a delegated child that starts with
    its ``subagent/descriptor``)."""

    turns: tuple[TurnPlan, ...] = (TurnPlan(),)
    origin: str = "root"
    prefix: tuple[TurnPlan, ...] = ()
    preamble: tuple[SidePlan, ...] = ()
    descriptor: str = "one-shot"
    cwd: bool = True
    agent_preset: bool = False
    format_version: int = 0
    id_salt: int = 0


def _words(d: Draw, lo: int, hi: int) -> Words:
    return Words(0, d.integer(lo, hi))


def _rare(d: Draw, *odds: float) -> tuple[bool, ...]:
    """Independent rare features behind one gate: a single draw when none is on (the common case),
    which keeps Hypothesis' per-example work (and so shrinking time) low."""
    total = sum(odds)
    if not d.chance(min(1.0, total)):
        return (False,) * len(odds)
    return tuple(d.chance(p / total) for p in odds)


def _tool_call(d: Draw, w: FeatureWeights) -> ToolCallPlan:
    """One advertised call (bash/read/write/subagent, as in the snapshots), with its streamed-argument
    pieces, an optional tool error, PreToolUse hook, approval prompt, code dispatches or web search."""
    tool = d.integer(0, len(TOOLS) - 1)
    args = _words(d, 1, 6)
    error = d.chance(w.tool_error)
    result = _words(d, 1, 12)
    pieces = d.integer(1, 4)
    hook, approval, dispatch, web = _rare(d, w.hook, w.approval, w.code_dispatch, w.web_search)
    return ToolCallPlan(
        tool=tool,
        args=args,
        error=error,
        result=result,
        hook=d.pick(("allow", "block")) if hook else None,
        approval=d.pick(("allowed-once", "rejected", "cancelled", "unavailable")) if approval else None,
        dispatches=d.integer(1, 2) if dispatch else 0,
        web_search=web,
        pieces=pieces,
    )


def _failure(d: Draw, w: FeatureWeights) -> FailedAttemptPlan:
    """A failed model attempt before the step's final one: a retried provider error, or a context
    overflow recovered by compaction (headless compaction-recovery snapshot)."""
    kind = "overflow" if d.chance(w.overflow / max(w.retry + w.overflow, 1e-9)) else "retry"
    return FailedAttemptPlan(kind=kind, failure=d.integer(0, len(FAILURE_CODES) - 1), partial=d.integer(0, 2))


def _step(d: Draw, w: FeatureWeights, working: bool) -> StepPlan:
    """One step; ``working`` steps may call tools (the model keeps going), the final one answers in
    text, as the real turns do (acp bash-tool-turn, parallel-tool-calls)."""
    calls = tuple(d.many(_tool_call, 1, 3, w)) if working and d.chance(w.tool_calls) else ()
    text = _words(d, 1, 12) if not calls or d.chance(0.3) else Words(0, 0)
    reasoning = _words(d, 2, 16) if d.chance(w.reasoning) else None
    pieces = d.integer(1, 5)
    parallel = len(calls) > 1 and d.chance(w.parallel)
    retry, header_change, todo, steer = _rare(d, w.retry + w.overflow, w.header_change, w.todo, w.steering)
    return StepPlan(
        text=text,
        reasoning=reasoning,
        calls=calls,
        pieces=pieces,
        parallel=parallel,
        failures=tuple(d.many(_failure, 1, 2, w)) if retry else (),
        header_change=header_change,
        todo=todo,
        steer=working and steer,
    )


def _end(d: Draw, w: FeatureWeights) -> TurnEndPlan:
    """How the turn ends, weighted by ``FeatureWeights.endings`` (completed dominates, as in real logs)."""
    kind = d.weighted(w.endings())
    cause = d.pick(ABORT_CAUSES) if kind == "aborted" else "user"
    failure = d.integer(0, len(FAILURE_CODES) - 1) if kind == "error" else 0
    crash = d.pick(("stream", "message", "tools")) if kind == "interrupted" else "stream"
    started = d.integer(1, 3) if crash == "tools" else 0
    return TurnEndPlan(
        kind=kind,
        cause=cause,
        failure=failure,
        crash=crash,
        started=started,
        finished=d.integer(0, started),
    )


def _side(d: Draw, kinds: tuple[str, ...]) -> SidePlan:
    """A non-turn event group of one of ``kinds`` (settings, goals, commands, team and workflow events)."""
    return SidePlan(kind=d.pick(kinds), variant=d.integer(0, 5))


def _turn(d: Draw, w: FeatureWeights, max_steps: int) -> TurnPlan:
    """One turn in write order: side events and compaction before it, the prompt of one of the released
    source kinds, its steps and its ending."""
    end = _end(d, w)
    steps: tuple[StepPlan, ...] = ()
    # Blocked and hook-aborted turns stop before any step; some provider errors do too (subagent snapshot).
    if end.kind != "blocked" and end.cause != "hook" and not (end.kind == "error" and d.chance(0.3)):
        # Most turns take 1-2 steps; a few run long (the 5-step subagent-continuable turn).
        most = max(0, min(d.weighted([(1, 0.75), (max_steps - 1, 0.25)]), max_steps - 1))
        # ``working_step`` leads with a working step of its own (no draw at 0; shrinks to off).
        lead = (_step(d, w, True),) if most > 0 and d.chance(w.working_step) else ()
        working = d.many(_step, 0, most - len(lead), w, True)
        steps = (*lead, *working, _step(d, w, end.kind == "interrupted"))
    source = d.pick(USER_SOURCE_KINDS[1:]) if d.chance(w.non_user_source) else "user"
    prompt = _words(d, 2, 20)
    before = tuple(d.many(_side, 1, 3, BETWEEN_TURN_SIDES)) if d.chance(w.side) else ()
    title = d.pick(("fallback", "provider", "llm")) if d.chance(w.title) else None
    runtime_context = d.chance(w.runtime_context)
    compaction, prune, queued, prompt_hook = _rare(d, w.compaction, w.prune, w.queued, w.prompt_hook)
    return TurnPlan(
        steps=steps,
        end=end,
        source=source,
        prompt=prompt,
        before=before,
        compaction=(
            CompactionPlan(keep=0 if d.chance(w.compact_all) else d.integer(0, 3), manual=d.chance(0.3),
                           failed=d.chance(0.15))
            if compaction
            else None
        ),
        prune=prune,
        title=title,
        queued=queued,
        runtime_context=runtime_context,
        prompt_hook=prompt_hook,
    )


def draw_session(
    d: Draw,
    *,
    weights: FeatureWeights,
    format_version: int,
    turns: tuple[int, int],
    max_steps: int,
) -> SessionPlan:
    """Draw one session plan; ``turns`` bounds the number of (own, non-inherited) turns."""
    origin = d.weighted([("root", 1.0), ("fork", weights.fork), ("subagent", weights.subagent)])
    prefix = tuple(d.many(_turn, 1, 2, weights, max_steps)) if origin == "fork" else ()
    # A prompt blocked before anything was written leaves a header-only log (v1 snapshot).
    empty = turns[0] == 0 and d.chance(weights.empty)
    own: tuple[TurnPlan, ...] = ()
    if not empty:
        # ``full_turns`` draws the required turns ahead of the list (no draw at 0; shrinks to off).
        required = max(1, turns[0])
        own = tuple(_turn(d, weights, max_steps) for _ in range(required)) if d.chance(weights.full_turns) else ()
        own += tuple(d.many(_turn, required - len(own), turns[1] - len(own), weights, max_steps))
    return SessionPlan(
        turns=own,
        origin=origin,
        prefix=prefix,
        preamble=tuple(d.many(_side, 1, 2, SESSION_START_SIDES)) if d.chance(weights.side) else (),
        descriptor=d.pick(("one-shot", "continuable")),
        cwd=not d.chance(0.05),
        agent_preset=d.chance(0.1),
        format_version=format_version,
        id_salt=d.integer(0, 2**31 - 1),
    )
