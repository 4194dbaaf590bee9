"""The state every rule pass reads: the log, its effective format version, the
options, shared derived indexes, and the finding factory.

Numbers follow ``JSON.parse``: ``1.0`` is the integer 1 and big integers become
doubles, so a "safe integer" is an ``int`` (never a ``bool``) or an integral
``float`` with magnitude at most 2**53-1. :mod:`dshfuzz.contracts.js` is the one
place that says so; :func:`is_safe_int` and :func:`is_nonneg_safe_int` are its
``Number.isSafeInteger`` and ``isEventSeq`` under the checker's names.

The checker is judged against the reference oracle (:mod:`dshfuzz.oracle`) and the
official layers, so it imports neither: every rule, G4's walk of released's relations
included (:mod:`._relations`), is the checker's own reading of the official code. What
it shares with the oracle is the vocabulary below both, :mod:`dshfuzz.contracts`
(``===``, ``String()``, deep equality, ``isEventSeq``), not a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from dshfuzz.contracts import MAX_SAFE_INTEGER, is_event_seq, is_safe_integer
from dshfuzz.contracts.rules import RULES, OfficialLayer, RuleId, Severity
from dshfuzz.model import MISSING, Event, SessionLog, StreamedLog

from ._finding import Finding

__all__ = [
    "MAX_FINDINGS_PER_RULE",
    "MAX_SAFE_INTEGER",
    "CheckContext",
    "CheckOptions",
    "Shared",
    "effective_version",
    "is_nonneg_safe_int",
    "is_safe_int",
]

KNOWN_VERSIONS = frozenset({0, 1, 2, 3})
MAX_FINDINGS_PER_RULE = 1000
"""The default cap on the findings one rule keeps per check (see :mod:`dshfuzz.checker._run`)."""

T = TypeVar("T")


class Shared(Generic[T]):
    """A piece of state that one part of a check publishes and others read
    (:meth:`CheckContext.memo`), declared once, beside its producer, with the type of what it
    holds: a reader names the declaration, and the type checker holds producer and readers to
    that type. The key is the declaration itself, so no two of them can collide by name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Shared({self.name!r})"


is_safe_int = is_safe_integer
is_nonneg_safe_int = is_event_seq


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How to check. ``format_version`` overrides the header's version; ``rules``
    restricts the run to those ids; ``max_findings_per_rule`` caps the findings one
    rule keeps (the earliest; one more finding counts the rest); ``strict`` re-raises
    a crashing pass (tests) instead of recording it in :attr:`Report.internal_errors`
    (production)."""

    format_version: int | None = None
    rules: frozenset[RuleId] | None = None
    max_findings_per_rule: int = MAX_FINDINGS_PER_RULE
    strict: bool = False


def effective_version(log: SessionLog | StreamedLog, options: CheckOptions) -> int | None:
    """The format version whose rules run: the override, else the header's version
    when it is a known one, else ``None`` (only version-agnostic rules run)."""
    if options.format_version is not None:
        return options.format_version
    v = log.format_version
    if is_safe_int(v) and int(v) in KNOWN_VERSIONS:
        return int(v)
    return None


class EventView(Protocol):
    """The events of a log as a check reads them: their count, and the event at a position
    (a streamed read, or a window on a whole model, holds only the current row's)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int, /) -> Event: ...


class CheckContext:
    """Shared, read-only inputs of every pass, plus memoised derived state.

    ``events`` is the log's events as the walks may read them: in a check (whole model or
    streamed read alike) only the head being handed over and the rest of its packed run can
    be read, and ``len(events)`` counts the events read so far (all of them once the loop
    has ended). Walks and passes share derived state through :meth:`memo`, computed once per
    check.
    """

    def __init__(self, log: SessionLog | StreamedLog, options: CheckOptions = CheckOptions()) -> None:
        self.log = log
        self.options = options
        self.version = effective_version(log, options)
        self.events: EventView = log.events
        self._memo: dict[Shared[Any], Any] = {}
        self._packed: tuple[list[int], dict[int, int]] | None = None

    @property
    def packed_runs(self) -> tuple[list[int], dict[int, int]]:
        """``(heads, runs)``: ``runs`` maps the position of each packed chunk row's first
        member to the position after its last, and ``heads`` lists every position of the
        log except the members after a run's first, in log order.

        The reader expands a packed row into members that share one type, one turn and
        step (the same objects) and one delta chunk kind, with consecutive seqs from the
        row's ``seq0``; so a pass that reads only those decides the whole run from its
        first member. A row whose range does not hold its members (a hand-built log) is
        no run."""
        if self._packed is None:  # a whole model outside a check (the checks set their own)
            events = self.events
            n = len(events)
            runs: dict[int, int] = {}
            for row in self.log.rows:
                if row.kind == "packed":
                    r = row.events
                    if 1 < len(r) and r.stop <= n and events[r.start].member == 0 and events[r.stop - 1].member == len(r) - 1:
                        runs[r.start] = r.stop
            heads: list[int] = []
            done = 0
            for start, stop in runs.items():
                heads.extend(range(done, start + 1))
                done = stop
            heads.extend(range(done, n))
            self._packed = (heads, runs)
        return self._packed

    def release(self, values: list[Any]) -> None:
        """Forget the memos holding one of ``values`` (by identity): the walks of a check are
        published here while the loop runs and refer back to the context, and a cycle would
        keep the whole log alive after the check (the CLI runs without the cyclic collector)."""
        held = {id(v) for v in values}
        for key in [k for k, v in self._memo.items() if id(v) in held]:
            del self._memo[key]

    def memo(self, key: Shared[T], factory: Callable[[], T]) -> T:
        """Compute ``factory()`` once per check under ``key`` and share the result (the first
        caller's value stays: a publisher that finds a value already there leaves it)."""
        if key in self._memo:
            shared: T = self._memo[key]
            return shared
        value = self._memo[key] = factory()
        return value

    def finding(
        self,
        rule: RuleId,
        message: str,
        *,
        event: Event | None = None,
        seq: int | None = None,
        line: int | None = None,
        frame: int | None = None,
        offset: int | None = None,
        context: Mapping[str, Any] | None = None,
        refused_by: tuple[OfficialLayer, ...] | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of ``rule``; coordinates not given are taken from ``event``
        (its seq when that is a safe integer, its line and frame). ``severity`` overrides the
        rule's for one instance the harness can still use (a legacy shape the loader and the
        released migration upgrade on read), and ``refused_by`` narrows its layers."""
        r = RULES[rule]
        if event is not None:
            if seq is None:
                s = event.seq
                seq = int(s) if s is not MISSING and is_safe_int(s) else None
            if line is None:
                line = event.line
            if frame is None:
                frame = event.frame
        return Finding(
            rule=r.id,
            severity=r.severity if severity is None else severity,
            layer=r.layer,
            message=message,
            seq=seq,
            line=line,
            frame=frame,
            offset=offset,
            context=dict(context) if context else {},
            refused_by=r.refused_by if refused_by is None else refused_by,
        )
