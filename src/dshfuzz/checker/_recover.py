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

:func:`recover_plan` plans over a log's model; :func:`recover_bytes` (what ``dshfuzz recover``
runs) over a file's bytes, holding no model: one streamed read finds the candidates, and
each fork checked is written by streaming the file again up to its boundary.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from io import BytesIO
from operator import attrgetter
from typing import Any

from dshfuzz.contracts.rules import OfficialLayer, RuleId
from dshfuzz.model import (
    DEFAULT_LIMITS,
    ChunkPacker,
    Compression,
    Event,
    FileBytes,
    Limits,
    SessionLog,
    StreamedLog,
    compress_frame,
    dumpb,
    frame_compressor,
    header_text,
    stream_log,
)

from ._context import CheckOptions, is_safe_int
from ._finding import Finding, Report
from ._prewrite import edit_bytes
from ._run import check_stream

__all__ = ["PREFIX_STABLE", "WIRE_STABLE", "ForkPoint", "RecoveryPlan", "Rejected", "advice", "blocking", "fork_bytes", "fork_limits",
           "recover_bytes", "recover_plan", "stream_fork_bytes"]

_SHOWN = 5


def blocking(finding: Finding) -> bool:
    """Whether a finding rules a prefix out: an error, or anything an official moment refuses,
    except a legacy shape the official loader and the released migration upgrade on read (a
    warning whose refusing layers read the raw events, which the harness never does once it
    has loaded them)."""
    if finding.is_error:
        return True
    return bool(finding.refused_by) and finding.context.get("upgraded") is not True


_MOMENTS = (
    (OfficialLayer.LOAD, "the session does not open: the official loader refuses"),
    (OfficialLayer.PROVIDER, "requests fail: a strict provider refuses"),
    (OfficialLayer.RELEASED, "it will not migrate (the released v0->v1 migration refuses) until these are fixed"),
)


def advice(findings: Iterable[Finding]) -> list[str]:
    """Which official moment blocks what, for the blocking ``findings`` of a session: one line per
    moment that refuses some of them (the loader, the provider, the released migration), naming
    the findings; the rest are judged by readers of the raw events the harness does not run."""
    by_moment: dict[OfficialLayer, list[str]] = {}
    for f in findings:
        if not blocking(f):
            continue
        named = f"{f.rule}" + ("" if f.seq is None else f" seq {f.seq}")
        for layer, _ in _MOMENTS:
            if layer in f.refused_by and named not in by_moment.setdefault(layer, []):
                by_moment[layer].append(named)
    opens = OfficialLayer.LOAD not in by_moment or not by_moment[OfficialLayer.LOAD]
    out = []
    for layer, text in _MOMENTS:
        names = by_moment.get(layer)
        if names:
            out.append(f"{text}: {', '.join(names)}")
    if opens and out:
        out.insert(0, "the session opens today: the official loader refuses none of its blocking findings")
    return out


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


def _byte_end(log: SessionLog | StreamedLog, line_number: int | None) -> tuple[int | None, int | None, int | None]:
    """(offset just past the line if it ends a record/frame, its frame, the frame's start)."""
    if line_number is None or not 0 < line_number <= len(log.lines):
        return None, None, None
    line = log.lines[line_number - 1]
    if log.compression != "zstd":
        if line.offset is None:
            return None, None, None
        return line.offset + line.size + 1, None, None
    # the frame the line starts in is the one whose lines hold it
    frame = log.frames[line.frame] if line.frame is not None and 0 <= line.frame < len(log.frames) else None
    if frame is None or line_number not in frame.lines:
        return None, line.frame, None
    if frame.lines and line_number == frame.lines[-1]:
        return frame.offset + frame.size, frame.index, frame.offset
    return None, frame.index, frame.offset


_Boundary = tuple[int, int, Any, "int | None"]
"""A complete-turn boundary as read: the turn/end's position, seq, turn and line."""


def _boundary(index: int, event: Event, at: int | None) -> _Boundary | None:
    """The boundary after ``event`` at ``index``, if it is a turn/end with a safe seq <= ``at``."""
    seq = event.seq
    if event.type != "turn/end" or not is_safe_int(seq) or (at is not None and seq > at):
        return None
    data = event.data
    return index, int(seq), data.get("turn") if type(data) is dict else None, event.line


def _points(log: SessionLog | StreamedLog, boundaries: Iterable[_Boundary]) -> Iterator[ForkPoint]:
    for index, seq, turn, line in boundaries:
        offset, frame, frame_offset = _byte_end(log, line)
        yield ForkPoint(seq, turn, index + 1, line, frame, offset, frame_offset)


def _candidates(log: SessionLog, at: int | None) -> Iterator[ForkPoint]:
    """Complete-turn boundaries with turn/end seq <= ``at``, latest first."""
    found = (_boundary(index, log.events[index], at) for index in range(len(log.events) - 1, -1, -1))
    return _points(log, (b for b in found if b is not None))


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
    return min(located, key=attrgetter("seq"), default=None)


def _replace_seq(event: Event) -> int | None:
    op, seq = event.surfaceOp, event.seq
    return int(seq) if type(op) is dict and is_safe_int(seq) else None


def _replace_seqs(log: SessionLog) -> list[int]:
    return sorted(seq for event in log.events if (seq := _replace_seq(event)) is not None)


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
    return _plan(log.path, at, _candidates(log, at), _replace_seqs(log),
                 lambda point: _prefix_report(log, point, options, limits))


def _plan(
    path: str | None, at: int | None, candidates: Iterable[ForkPoint], replaces: list[int],
    prefix_report: Callable[[ForkPoint], Report],
) -> RecoveryPlan:
    rejected: list[Rejected] = []
    notes: list[str] = []
    count = 0
    carried: _Carried | None = None
    for point in candidates:
        count += 1
        proof = carried.covers(point, replaces) if carried is not None else None
        if proof is not None:
            rejected.append(Rejected(point, (proof,), 1))
            continue
        report = prefix_report(point)
        if report.internal_errors:
            notes.append(f"the checker failed on the prefix ending at seq {point.seq}; it was not recommended")
            rejected.append(Rejected(point, (), 0))
            continue
        blockers = [f for f in report.findings if blocking(f)]
        if not blockers:
            return RecoveryPlan(path, at, point, tuple(rejected), count, tuple(notes))
        if not rejected:  # the latest boundary: say which moment blocks what in the session as it stands
            notes.extend(advice(blockers))
        rejected.append(Rejected(point, tuple(blockers[:_SHOWN]), len(blockers)))
        carried = _Carried(_first(blockers, PREFIX_STABLE), _first(blockers, WIRE_STABLE), point.seq)
    if count == 0:
        notes.append("the log holds no complete turn" + ("" if at is None else f" at or before seq {at}"))
    return RecoveryPlan(path, at, None, tuple(rejected), count, tuple(notes))


class _Boundaries:
    """A :class:`~dshfuzz.model.RowConsumer` keeping what the planner reads of a log: its complete-turn
    boundaries at or before ``at`` and the seqs of its surface replaces (O(turns + replaces)).
    A packed row's members are chunks, so its head alone can be either."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.boundaries: list[_Boundary] = []
        self.replaces: list[int] = []

    def begin(self, log: StreamedLog) -> None:
        return None

    def row(self, first: int, stop: int, head: Event) -> None:
        found = _boundary(first, head, self.at)
        if found is not None:
            self.boundaries.append(found)
        seq = _replace_seq(head)
        if seq is not None:
            self.replaces.append(seq)


class _Enough(Exception):
    """Raised by :class:`_ForkWriter` once it has the fork's events: the rest of the file is not read."""


class _ForkWriter:
    """A :class:`~dshfuzz.model.RowConsumer` writing the fork of the first ``events`` events of a log:
    its header, then the events as one batch, as :func:`~dshfuzz.model.batch_text` writes it (the chunk
    runs packed across the log's own batches). It keeps the chunk run being packed and under
    ``_FLUSH`` bytes of batch text, no event once written; for zstd the batch is compressed as it
    grows, so the fork's plaintext is never held. The text is gathered in one buffer: orjson's
    output for a short row holds a far larger allocation than its length (a million held 1.8 GB)."""

    def __init__(self, events: int, compression: Compression) -> None:
        self.events = events
        self.fork = BytesIO()  # getvalue() hands its buffer over, where bytes(bytearray) copies it
        self.text = bytearray()
        self.rows = 0
        self.packer = ChunkPacker(self._write)
        self.zstd = frame_compressor() if compression == "zstd" else None
        self.read: Sequence[Event] = ()  # the streamed read's events, from begin()

    def begin(self, log: StreamedLog) -> None:
        self.read = log.events
        head = header_text(log.header.raw if log.header is not None else None)
        self.fork.write(head if self.zstd is None else compress_frame(head))
        if self.events == 0:
            raise _Enough

    def row(self, first: int, stop: int, head: Event) -> None:
        add = self.packer.add
        for event in self.read[first : min(stop, self.events)]:  # a packed row's from one expansion of the row
            add(event.raw)
        if stop >= self.events:
            raise _Enough

    def _write(self, row: Any) -> None:
        text = self.text
        text += dumpb(row)
        text += b"\n"
        self.rows += 1
        if len(text) >= _FLUSH:
            self._flush()

    def _flush(self) -> None:
        self.fork.write(self.text if self.zstd is None else self.zstd.compress(self.text))
        self.text.clear()

    def close(self) -> bytes:
        """The fork's bytes (an empty batch is a lone newline, as the writer leaves it)."""
        self.packer.close()
        if self.rows == 0:
            self.text += b"\n"
        self._flush()
        if self.zstd is not None:
            self.fork.write(self.zstd.flush())
        return self.fork.getvalue()


_FLUSH = 1 << 20


def stream_fork_bytes(data: bytes | FileBytes, point: ForkPoint, *, compression: Compression, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """:func:`fork_bytes` of the log whose bytes are ``data``, written by streaming them again up to the
    boundary: the same bytes, without a model of the log or, for zstd, the fork's plaintext."""
    writer = _ForkWriter(point.events, compression)
    try:
        stream_log(data, writer, compression=compression, limits=limits)
    except _Enough:
        pass
    return writer.close()


def recover_bytes(
    data: bytes | FileBytes, at: int | None = None, *, compression: Compression | None = None, path: str | None = None,
    options: CheckOptions = CheckOptions(), limits: Limits = DEFAULT_LIMITS,
) -> RecoveryPlan:
    """:func:`recover_plan` of the log file whose bytes are ``data``, holding no model of it: one
    streamed read finds the candidates, and each fork checked is written (:func:`stream_fork_bytes`)
    and checked (:func:`~dshfuzz.checker.check_stream`) as a stream. Memory follows the file, the
    fork being checked and what the rules keep, not the log's length."""
    found = _Boundaries(at)
    log = stream_log(data, found, compression=compression, path=path, limits=limits)
    kind = log.compression

    def prefix_report(point: ForkPoint) -> Report:
        fork = stream_fork_bytes(data, point, compression=kind, limits=limits)
        return check_stream(fork, compression=kind, path=path, options=options, limits=fork_limits(limits))

    return _plan(path, at, _points(log, reversed(found.boundaries)), sorted(found.replaces), prefix_report)
