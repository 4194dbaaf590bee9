"""Coverage statistics over generated logs, and their comparison with the real sessions.

``coverage_stats`` counts what a batch of logs exercised: event types, turn/end
reasons, user source kinds, surface replace kinds, tool outcomes, and the turn
and step shapes. ``real_shapes`` reads the recorded sessions (format 0 and 1;
packed chunk rows counted as their member events) and ``Stats.comparison``
says, aspect by aspect, whether what the real harness wrote lies within what
the generators produce. Legacy types the rc.8 vocabulary retired
(``compact/*``, ``steering/message``, ``prompt/blocked``) are reported, not
required.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import JsonDecodeError, loads
from ._vocabulary import (
    ABORT_CAUSES,
    KNOWN_V0_EVENT_TYPES,
    RELEASED_EXTRA_EVENT_TYPES,
    TURN_END_KINDS,
    USER_SOURCE_KINDS,
)

__all__ = ["Comparison", "Shapes", "Stats", "coverage_stats", "real_shapes"]

_PACKED: dict[object, str] = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}
_LEGACY_ENDS = frozenset({"rejected"})
_LEGACY = frozenset(
    {"compact/start", "compact/summary", "compact/end", "compact/prune", "steering/message", "prompt/blocked"}
)
_TOOL_OUTCOMES = ("success", "tool-error", "not-started", "outcome-unknown")
_REPLACE_KINDS = ("compaction-checkpoint", "tool-result-prune")


@dataclass
class Shapes:
    """Structural shape counts of a set of logs.

    A turn's shape is ``(steps, end kind)``; a step's shape is ``(tool calls,
    model attempts)`` where an attempt is one ``finish`` chunk (a crash-cut
    stream counts as none).
    """

    logs: int = 0
    event_types: Counter[Any] = field(default_factory=Counter)
    events_per_log: Counter[Any] = field(default_factory=Counter)
    turns_per_log: Counter[Any] = field(default_factory=Counter)
    turn_shapes: Counter[Any] = field(default_factory=Counter)
    step_shapes: Counter[Any] = field(default_factory=Counter)

    def add(self, events: Iterable[dict[str, Any]]) -> None:
        self.logs += 1
        n = turns = 0
        steps = 0
        calls = attempts = 0
        for event in events:
            n += 1
            kind = event.get("type")
            self.event_types[kind] += 1
            raw = event.get("data")
            data: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if kind == "turn/start":
                turns += 1
                steps = 0
            elif kind == "step/start":
                steps += 1
                calls = attempts = 0
            elif kind == "tool/call":
                calls += 1
            elif (
                kind == "assistant/chunk"
                and isinstance(data.get("chunk"), dict)
                and data["chunk"].get("type") == "finish"
            ):
                attempts += 1
            elif kind == "step/end":
                self.step_shapes[(calls, attempts)] += 1
            elif kind == "turn/end":
                reason = data.get("reason")
                end = reason.get("kind") if isinstance(reason, dict) else str(reason)
                self.turn_shapes[(steps, end)] += 1
        self.events_per_log[n] += 1
        self.turns_per_log[turns] += 1


@dataclass(frozen=True, slots=True)
class Comparison:
    """One aspect of the real sessions checked against the generated logs."""

    aspect: str
    real: str
    generated: str
    within: bool
    note: str = ""


@dataclass
class Stats:
    """What a batch of generated logs covers (see ``coverage_stats``)."""

    shapes: Shapes = field(default_factory=Shapes)
    turn_end_reasons: Counter[Any] = field(default_factory=Counter)
    abort_causes: Counter[Any] = field(default_factory=Counter)
    source_kinds: Counter[Any] = field(default_factory=Counter)
    replace_kinds: Counter[Any] = field(default_factory=Counter)
    tool_outcomes: Counter[Any] = field(default_factory=Counter)
    origins: Counter[Any] = field(default_factory=Counter)
    format_versions: Counter[Any] = field(default_factory=Counter)

    def missing(self) -> dict[str, list[str]]:
        """Vocabulary items no log exercised (empty lists when coverage is complete)."""
        return {
            "event types": sorted((KNOWN_V0_EVENT_TYPES | RELEASED_EXTRA_EVENT_TYPES) - set(self.shapes.event_types)),
            "turn/end reasons": [k for k in TURN_END_KINDS if not self.turn_end_reasons[k]],
            "abort causes": [k for k in ABORT_CAUSES if not self.abort_causes[k]],
            "user source kinds": [k for k in USER_SOURCE_KINDS if not self.source_kinds[k]],
            "replace kinds": [k for k in _REPLACE_KINDS if not self.replace_kinds[k]],
            "tool outcomes": [k for k in _TOOL_OUTCOMES if not self.tool_outcomes[k]],
        }

    def comparison(self, real: Shapes) -> list[Comparison]:
        """Whether each real-session aspect lies within what these logs produce."""
        gen = self.shapes
        out: list[Comparison] = []
        real_types = set(real.event_types) - _LEGACY - set(_PACKED)
        absent = sorted(real_types - set(gen.event_types))
        legacy = sorted(set(real.event_types) & _LEGACY)
        out.append(
            Comparison(
                "event types",
                f"{len(real_types)} current types",
                f"{len(gen.event_types)} types",
                not absent,
                ("never generated: " + ", ".join(absent) + "; " if absent else "")
                + ("legacy, not generated by design: " + ", ".join(legacy) if legacy else ""),
            )
        )
        out.append(_range("turns per log", real.turns_per_log, gen.turns_per_log))
        out.append(_range("events per log", real.events_per_log, gen.events_per_log))
        for name, real_set, gen_set in (
            ("turn shapes (steps, end)", real.turn_shapes, gen.turn_shapes),
            ("step shapes (tool calls, attempts)", real.step_shapes, gen.step_shapes),
        ):
            unseen = sorted((s for s in set(real_set) - set(gen_set) if s[1] not in _LEGACY_ENDS), key=str)
            out.append(
                Comparison(
                    name,
                    f"{len(real_set)} distinct",
                    f"{len(gen_set)} distinct",
                    not unseen,
                    "not generated: " + ", ".join(map(str, unseen)) if unseen else "",
                )
            )
        return out


def _range(name: str, real: Counter[Any], gen: Counter[Any]) -> Comparison:
    lo, hi = (min(gen), max(gen)) if gen else (0, -1)
    outside = sorted(v for v in real if not lo <= v <= hi)
    return Comparison(
        name,
        f"{min(real, default=0)}..{max(real, default=0)}",
        f"{lo}..{hi}",
        not outside,
        "outside: " + ", ".join(map(str, outside)) if outside else "",
    )


def coverage_stats(logs: Iterable[Any]) -> Stats:
    """Count what ``logs`` (``GeneratedLog``s, or anything with ``events``) exercise."""
    stats = Stats()
    for log in logs:
        stats.shapes.add(log.events)
        plan = getattr(log, "plan", None)
        if plan is not None:
            stats.origins[plan.origin] += 1
        stats.format_versions[log.header.get("version")] += 1
        for event in log.events:
            _count(stats, event)
    return stats


def _count(stats: Stats, event: dict[str, Any]) -> None:
    kind, data = event["type"], event["data"]
    if kind == "turn/end":
        reason = data["reason"]
        stats.turn_end_reasons[reason["kind"]] += 1
        if reason["kind"] == "aborted":
            stats.abort_causes[reason["reason"]["kind"]] += 1
    elif kind == "user/message":
        stats.source_kinds[data["source"]["kind"]] += 1
        if event.get("surfaceOp") != "append":
            stats.replace_kinds["compaction-checkpoint"] += 1
    elif kind == "tool/result":
        if event.get("surfaceOp") != "append":
            stats.replace_kinds["tool-result-prune"] += 1
            return
        code = data.get("error", {}).get("code")
        if code == "TOOL_NOT_STARTED":
            stats.tool_outcomes["not-started"] += 1
        elif code == "TOOL_OUTCOME_UNKNOWN":
            stats.tool_outcomes["outcome-unknown"] += 1
        elif data["message"]["content"][0].get("isError"):
            stats.tool_outcomes["tool-error"] += 1
        else:
            stats.tool_outcomes["success"] += 1


def real_shapes(directory: Path) -> Shapes:
    """Shapes of the real sessions in ``directory`` (``*.jsonl``, format 0 and 1 headers only).

    Packed chunk rows count as their member ``assistant/chunk`` events; unreadable
    lines are skipped (the real set is trusted material, not input under test).
    """
    shapes = Shapes()
    for path in sorted(directory.glob("*.jsonl")):
        records = []
        for line in path.read_bytes().splitlines():
            try:
                records.append(loads(line))
            except JsonDecodeError:
                continue
        if not records or not isinstance(records[0], dict) or records[0].get("version") not in (0, 1):
            continue
        shapes.add(_expand(records[1:]))
    return shapes


def _expand(rows: list[Any]) -> Iterable[dict[str, Any]]:
    for row in rows:
        if not isinstance(row, dict):
            continue
        member_key = _PACKED.get(row.get("type"))
        if member_key is None:
            yield row
            continue
        data = row.get("data", {})
        for _ in data.get(member_key, ()):
            yield {"type": "assistant/chunk", "data": {"chunk": {"type": "delta"}}}
