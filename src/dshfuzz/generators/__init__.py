"""Valid DSH session-log generators: typed plans, a deterministic renderer, coverage statistics.

``session_logs(...)`` is the Hypothesis strategy; ``generate(count, seed, ...)``
the seeded, engine-free stream behind ``dshfuzz generate``; ``coverage_stats``
summarises what a batch of logs exercised and compares it with the real sessions.
"""

from ._render import interrupted_turn_closers, render
from ._stats import Shapes, Stats, coverage_stats, real_shapes
from ._strategies import GeneratedLog, generate, session_logs
from ._structure import (
    CompactionPlan,
    FailedAttemptPlan,
    FeatureWeights,
    SessionPlan,
    SidePlan,
    StepPlan,
    ToolCallPlan,
    TurnEndPlan,
    TurnPlan,
)

__all__ = [
    "CompactionPlan",
    "FailedAttemptPlan",
    "FeatureWeights",
    "GeneratedLog",
    "SessionPlan",
    "Shapes",
    "SidePlan",
    "Stats",
    "StepPlan",
    "ToolCallPlan",
    "TurnEndPlan",
    "TurnPlan",
    "coverage_stats",
    "generate",
    "interrupted_turn_closers",
    "real_shapes",
    "render",
    "session_logs",
]
