"""What a batch of generated logs covers, for a reader (``dshfuzz generate --stats``).

The generators count (:func:`dshfuzz.generators.coverage_stats`) and compare with the real
sessions (:meth:`~dshfuzz.generators.Stats.comparison`); this renders the result as text.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dshfuzz.generators import Shapes, Stats

__all__ = ["coverage_text"]


def coverage_text(stats: Stats, real: Shapes | None = None) -> str:
    """``dshfuzz generate --stats``: what a batch of generated logs covers, its gaps, the
    event-type mix and (with ``real``, the recorded sessions' shapes) the comparison with them."""
    gen = stats.shapes
    lines = [
        f"logs: {gen.logs}  origins: {_fmt(stats.origins)}  format versions: {_fmt(stats.format_versions)}"
    ]
    total = sum(gen.event_types.values()) or 1
    per_log, turns = _spread(gen.events_per_log), _spread(gen.turns_per_log)
    lines.append(f"events: {total}  per log: {per_log}  turns per log: {turns}")
    lines.append(f"turn/end reasons: {_fmt(stats.turn_end_reasons)}")
    lines.append(f"abort causes: {_fmt(stats.abort_causes)}")
    lines.append(f"user source kinds: {_fmt(stats.source_kinds)}")
    lines.append(f"replace kinds: {_fmt(stats.replace_kinds)}")
    lines.append(f"tool outcomes: {_fmt(stats.tool_outcomes)}")
    gaps = {k: v for k, v in stats.missing().items() if v}
    lines.append(
        "coverage: complete"
        if not gaps
        else "coverage gaps: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in gaps.items())
    )
    lines.append("")
    real_total = sum(real.event_types.values()) if real else 0
    lines.append(f"{'event type':40} {'generated':>12}" + (f" {'real':>12}" if real else ""))
    types = set(gen.event_types) | (set(real.event_types) if real else set())
    for kind in sorted(types, key=lambda t: (-gen.event_types[t], t)):
        row = f"{kind:40} {gen.event_types[kind]:>6} {100 * gen.event_types[kind] / total:4.1f}%"
        if real:
            row += (
                f" {real.event_types[kind]:>6} {100 * real.event_types[kind] / (real_total or 1):4.1f}%"
            )
        lines.append(row)
    if real:
        lines.append("")
        lines.append(f"comparison with {real.logs} real sessions (format 0 and 1):")
        for c in stats.comparison(real):
            mark = "within" if c.within else "OUTSIDE"
            lines.append(
                f"  {mark:7} {c.aspect}: real {c.real}; generated {c.generated}"
                + (f" -- {c.note}" if c.note else "")
            )
    return "\n".join(lines)


def _fmt(counter: Counter[Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counter.most_common()) or "-"


def _spread(counter: Counter[Any]) -> str:
    if not counter:
        return "-"
    values = sorted(counter.elements())
    return f"min {values[0]}, median {values[len(values) // 2]}, max {values[-1]}"
