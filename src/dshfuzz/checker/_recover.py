"""Recovery planning (seed 001): the latest complete turn a session can safely fork at.

A session log is append-only, and a defect the provider or the loader refuses is
replayed by every later request, so the repair is a fork: a new session seeded
with a prefix of the old one. The planner proposes the prefix; it never writes.

Candidates are the complete-turn boundaries (the position just after a
``turn/end``) whose turn/end seq is at or before ``at``, latest first. A candidate
is safe when the prefix, as the fork would write it (the header plus the events up
to and including that turn/end, one batch), has no *blocking* finding: no
error-level finding, and no finding of any severity that an official moment
(a harness layer, the migration, or the provider) refuses. That is what makes the
recommended prefix pass every official layer. Each candidate is checked in full
and independently where it matters, because a shorter prefix can lose or gain
findings (a later marker can strand an earlier tool result; a later compaction can
hide an earlier gap); only findings that provably persist into shorter prefixes
let the planner skip candidates.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from dshfuzz.model import DEFAULT_LIMITS, Limits, SessionLog

from ._context import CheckOptions, is_safe_int
from ._finding import Finding, Report
from ._prewrite import edit_bytes
from ._run import check_stream
from .rules import RuleId

__all__ = ["PREFIX_STABLE", "WIRE_STABLE", "ForkPoint", "RecoveryPlan", "Rejected", "blocking", "fork_bytes", "fork_limits",
           "recover_plan"]

_SHOWN = 5


def blocking(finding: Finding) -> bool:
    """Whether a finding rules a prefix out: an error, or anything an official moment refuses."""
    return finding.is_error or bool(finding.refused_by)


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """Where to fork: after the turn/end with ``seq`` (``events`` events kept) that ends ``turn``.

    ``line`` is that turn/end's 1-based line. ``offset`` is the byte offset in the
    original file just past the boundary, when the boundary falls on a record (plain
    JSONL) or frame (zstd) end; for zstd ``frame`` is the frame holding the turn/end,
    and when later events share that frame ``offset`` is ``None`` and
    ``frame_offset`` is where that frame starts: the fork must re-frame its head.
    """

    seq: int
    turn: Any
    events: int
    line: int | None
    frame: int | None
    offset: int | None
    frame_offset: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "turn": self.turn,
            "events": self.events,
            "line": self.line,
            "frame": self.frame,
            "offset": self.offset,
            "frameOffset": self.frame_offset,
        }


@dataclass(frozen=True, slots=True)
class Rejected:
    """A candidate boundary ruled out, with its first blocking findings."""

    point: ForkPoint
    findings: tuple[Finding, ...]
    total: int

    def to_json(self) -> dict[str, Any]:
        return {"boundary": self.point.to_json(), "blocking": self.total,
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True, slots=True)
class RecoveryPlan:
    """The plan: ``fork`` is the recommended boundary, or ``None`` when a new session is needed."""

    file: str | None
    at: int | None
    fork: ForkPoint | None
    rejected: tuple[Rejected, ...] = ()
    candidates: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def found(self) -> bool:
        return self.fork is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "at": self.at,
            "found": self.found,
            "fork": None if self.fork is None else self.fork.to_json(),
            "candidates": self.candidates,
            "rejected": [r.to_json() for r in self.rejected],
            "notes": list(self.notes),
        }


def _byte_end(log: SessionLog, line_number: int | None) -> tuple[int | None, int | None, int | None]:
    """(offset just past the line if it ends a record/frame, its frame, the frame's start)."""
    if line_number is None or not 0 < line_number <= len(log.lines):
        return None, None, None
    line = log.lines[line_number - 1]
    if log.compression != "zstd":
        if line.offset is None:
            return None, None, None
        return line.offset + len(line.text.encode("utf-8", "surrogatepass")) + 1, None, None
    frame = next((f for f in log.frames if line_number in f.lines), None)
    if frame is None:
        return None, line.frame, None
    if frame.lines and line_number == frame.lines[-1]:
        return frame.offset + frame.size, frame.index, frame.offset
    return None, frame.index, frame.offset


def _candidates(log: SessionLog, at: int | None) -> Iterator[ForkPoint]:
    """Complete-turn boundaries with turn/end seq <= ``at``, latest first."""
    for index in range(len(log.events) - 1, -1, -1):
        event = log.events[index]
        seq = event.seq
        if event.type != "turn/end" or not is_safe_int(seq):
            continue
        if at is not None and seq > at:
            continue
        data = event.data
        turn = data.get("turn") if type(data) is dict else None
        offset, frame, frame_offset = _byte_end(log, event.line)
        yield ForkPoint(int(seq), turn, index + 1, event.line, frame, offset, frame_offset)


def fork_bytes(log: SessionLog, point: ForkPoint) -> bytes:
    """The prefix a fork at ``point`` would seed, as one batch after the header (what the planner checks)."""
    return edit_bytes(log, [e.raw for e in log.events[: point.events]])


def fork_limits(limits: Limits) -> Limits:
    """The reader's limits on a fork's file: ``limits`` (the log's), but none on its size. The fork
    is dshfuzz's own output, re-encoded from events already read under ``limits`` (its plaintext was
    in memory to be compressed), so it is no bomb; but as the writer leaves it, its events are one
    batch, so one frame, which for a log of over 64 MiB of plaintext would exceed the frame limit (L1)
    and rule out every long prefix. No official layer limits plaintext (see L1's divergence)."""
    return replace(limits, frame_bytes=sys.maxsize, file_bytes=sys.maxsize, ratio_floor=sys.maxsize,
                   line_floor=sys.maxsize)


def _prefix_report(log: SessionLog, point: ForkPoint, options: CheckOptions, limits: Limits) -> Report:
    """The report on the fork's file, checked as it is streamed (no second model of the log)."""
    return check_stream(fork_bytes(log, point), compression=log.compression, path=log.path, options=options,
                        limits=fork_limits(limits))


PREFIX_STABLE = frozenset({
    RuleId.T1, RuleId.T2, RuleId.T3, RuleId.T4, RuleId.T5, RuleId.M1, RuleId.I1,
    RuleId.P1, RuleId.P2, RuleId.P3, RuleId.P4, RuleId.P5, RuleId.G1, RuleId.G2, RuleId.G3,
})
"""Rules whose finding at seq ``s`` in a prefix also holds in every shorter prefix that
still contains ``s``: their state machines only look backwards (P3 only gains
findings as a prefix shrinks). The physical rules are absent because the fork
re-encodes the prefix."""

WIRE_STABLE = frozenset({RuleId.W1, RuleId.W2, RuleId.W3, RuleId.W4, RuleId.W5})
"""Rules whose finding at seq ``s`` persists (as some wire finding) into a shorter prefix
containing ``s`` *when no surface replace lies in between*: the shorter request history
is then a prefix of the longer one (complete-turn boundaries have no crash closers),
a dangling or wrong-id tool message stays so, and an unanswered or late-answered call
stays unanswered. A later replace can strand or hide an earlier message, so across a
replace the shorter prefix must be checked."""


@dataclass(frozen=True, slots=True)
class _Carried:
    """What a checked prefix proves about shorter ones: the first stable blocker, and
    the first wire blocker with the prefix's end, which it covers down to the latest replace."""

    stable: Finding | None
    wire: Finding | None
    checked_seq: int

    def covers(self, point: ForkPoint, replaces: list[int]) -> Finding | None:
        if self.stable is not None and self.stable.seq is not None and self.stable.seq <= point.seq:
            return self.stable
        wire = self.wire
        if wire is not None and wire.seq is not None and wire.seq <= point.seq:
            # No replace event after the shorter prefix and inside the checked one.
            if bisect.bisect_right(replaces, point.seq) == bisect.bisect_right(replaces, self.checked_seq):
                return wire
        return None


def _first(findings: list[Finding], rules: frozenset[RuleId]) -> Finding | None:
    located = [f for f in findings if f.rule in rules and f.seq is not None]
    return min(located, key=lambda f: f.seq, default=None)  # type: ignore[arg-type,return-value]


def _replace_seqs(log: SessionLog) -> list[int]:
    out = []
    for event in log.events:
        op, seq = event.surfaceOp, event.seq
        if type(op) is dict and is_safe_int(seq):
            out.append(int(seq))
    return sorted(out)


def recover_plan(
    log: SessionLog, at: int | None = None, options: CheckOptions = CheckOptions(), limits: Limits = DEFAULT_LIMITS
) -> RecoveryPlan:
    """The latest safe complete-turn boundary at or before ``at`` (read-only; never raises); ``log``
    was read under ``limits``, which judge the fork's lines too (not its size: :func:`fork_limits`).

    Each candidate's prefix is checked in full unless an already checked longer prefix
    proves it blocked: a :data:`PREFIX_STABLE` blocker at seq ``s`` rules out every
    shorter candidate still containing ``s``, and a :data:`WIRE_STABLE` one does the same
    while no surface replace lies between the two boundaries. This keeps a log with an
    early defect from costing one full check per turn.
    """
    rejected: list[Rejected] = []
    notes: list[str] = []
    count = 0
    carried: _Carried | None = None
    replaces = _replace_seqs(log)
    for point in _candidates(log, at):
        count += 1
        proof = carried.covers(point, replaces) if carried is not None else None
        if proof is not None:
            rejected.append(Rejected(point, (proof,), 1))
            continue
        report = _prefix_report(log, point, options, limits)
        if report.internal_errors:
            notes.append(f"the checker failed on the prefix ending at seq {point.seq}; it was not recommended")
            rejected.append(Rejected(point, (), 0))
            continue
        blockers = [f for f in report.findings if blocking(f)]
        if not blockers:
            return RecoveryPlan(log.path, at, point, tuple(rejected), count, tuple(notes))
        rejected.append(Rejected(point, tuple(blockers[:_SHOWN]), len(blockers)))
        carried = _Carried(_first(blockers, PREFIX_STABLE), _first(blockers, WIRE_STABLE), point.seq)
    if count == 0:
        notes.append("the log holds no complete turn at or before the anchor")
    return RecoveryPlan(log.path, at, None, tuple(rejected), count, tuple(notes))
