"""What the checker says: one :class:`Finding` per broken contract instance, and the
:class:`Report` over one file.

A finding is self-contained: it names its rule and copies the rule's severity,
layer and ``refused_by`` (which a pass may narrow to the layers that refuse this
particular instance), locates itself by seq, 1-based line, 0-based zstd frame and
byte offset where known, and carries the actionable facts in ``context`` (the
seqs a replace failed to cover, the call ids left unanswered, ...). A finding that
follows from another names its root's index in the report (``caused_by``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dshfuzz.contracts.rules import OfficialLayer, RuleId, RuleLayer, Severity

__all__ = ["Finding", "Report"]


@dataclass(frozen=True, slots=True)
class Finding:
    rule: RuleId
    severity: Severity
    layer: RuleLayer
    message: str
    seq: int | None = None
    line: int | None = None
    frame: int | None = None
    offset: int | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    refused_by: tuple[OfficialLayer, ...] = ()
    caused_by: int | None = None
    """The index in the report of the root finding this one follows from (see
    :mod:`dshfuzz.checker._causes`); ``None`` for a root."""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": str(self.rule),
            "severity": str(self.severity),
            "layer": str(self.layer),
            "seq": self.seq,
            "line": self.line,
            "frame": self.frame,
            "message": self.message,
            "refusedBy": [str(x) for x in self.refused_by],
            "offset": self.offset,
            "context": dict(self.context),
            "causedBy": self.caused_by,
        }


@dataclass(slots=True)
class Report:
    """The checker's verdict on one file.

    ``ok`` is true exactly when there is no error-level finding and no internal
    error. ``suppressed`` counts findings dropped by the per-rule cap (the first
    ``cap`` findings of a rule are kept, in log order). ``internal_errors`` holds
    the tracebacks of passes that crashed: a checker bug, reported rather than
    hidden, and turned into exit status 2 by the CLI.
    """

    file: str | None
    format_version: Any
    events: int
    frames: int
    findings: list[Finding] = field(default_factory=list)
    suppressed: dict[RuleId, int] = field(default_factory=dict)
    internal_errors: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.is_error)

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.errors

    @property
    def ok(self) -> bool:
        return not self.internal_errors and self.errors == 0

    def rules_fired(self) -> frozenset[RuleId]:
        return frozenset(f.rule for f in self.findings)

    def roots(self) -> list[Finding]:
        """The findings that follow from no other, in report order."""
        return [f for f in self.findings if f.caused_by is None]

    def consequences(self, root: int) -> list[Finding]:
        """The findings whose root is ``self.findings[root]``, in report order."""
        return [f for f in self.findings if f.caused_by == root]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "ok": self.ok,
            "formatVersion": self.format_version,
            "events": self.events,  # the checker protocol's count of events judged (docs/CHECKER_PROTOCOL.md)
            "summary": {
                "events": self.events,
                "frames": self.frames,
                "errors": self.errors,
                "warnings": self.warnings,
                "roots": sum(1 for f in self.findings if f.caused_by is None),
            },
            "findings": [f.to_json() for f in self.findings],
        }
        if self.suppressed:
            out["suppressed"] = {str(k): v for k, v in self.suppressed.items()}
        if self.internal_errors:
            out["internalErrors"] = list(self.internal_errors)
        return out
