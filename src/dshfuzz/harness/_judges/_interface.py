"""What a campaign sees of a checker under test, whatever it is: a verdict per log.

A verdict holds the findings it reported, "not assessable", or how it failed (crash,
timeout, unparsable output). A checker failing is a finding about the checker, never an
exception in the campaign. Every checker has ``rules``, the rule ids it claims to
implement (its vocabulary), ``check``, ``check_many`` and ``close``, and is a context
manager.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

__all__ = [
    "DEFAULT_TIMEOUT",
    "CheckerFailure",
    "CheckerSpecError",
    "CheckerUnderTest",
    "CheckerVerdict",
    "LoadedChecker",
    "ReportedFinding",
]


CheckerFailure = Literal["crash", "timeout", "unparsable-output"]
DEFAULT_TIMEOUT = 20.0


class CheckerSpecError(ValueError):
    """A ``--checker`` value that names no usable checker."""


@dataclass(frozen=True, slots=True)
class ReportedFinding:
    """One finding as the checker under test reported it (rule id, severity, seq), the
    index of its root finding in the same report when the checker says it follows from one
    (``causedBy``), and the official layers it says refuse the log for it (``refusedBy``:
    ``None`` when the checker does not say, as most do not; ``loadApp`` is ``load``)."""

    rule: str
    severity: str = "error"
    seq: int | None = None
    caused_by: int | None = None
    refused_by: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class CheckerVerdict:
    """What one checker said about one log.

    ``failure`` is set when the checker did not produce a usable report; then
    ``detail`` says why (stderr tail, traceback or the unparsable output).
    """

    findings: tuple[ReportedFinding, ...] = ()
    failure: CheckerFailure | None = None
    detail: str = ""
    exit_code: int | None = None
    assessable: bool = True
    """False when the checker said it cannot judge this log (exit 3, or ``"assessable":
    false`` in its report): no verdict, so never a miss. Its findings, if any, are kept."""
    checked: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    """The built-in checker's own findings behind ``findings`` (``dshfuzz.checker.Finding``):
    enough to attribute root causes again when rules are switched off (empty for any other
    checker)."""
    events: int | None = None
    """How many events the checker says it judged (its report's optional ``events``): a packed
    chunk row counts as the events it holds. ``None`` when it does not say, and then it is never
    judged for a silent loss of events."""

    @property
    def error_rules(self) -> frozenset[str]:
        return frozenset(f.rule for f in self.findings if f.severity == "error")

    @property
    def root_error_rules(self) -> frozenset[str]:
        """The rules of error findings that follow from no other finding: what the kill
        matrix's precision counts."""
        return frozenset(f.rule for f in self.findings if f.severity == "error" and f.caused_by is None)

    @property
    def standalone_error_rules(self) -> frozenset[str]:
        """The rules of error findings no other *error* explains: the roots, and the
        errors whose root is only a warning (a warning cannot excuse a refusal)."""
        findings = self.findings
        return frozenset(
            f.rule for f in findings
            if f.severity == "error" and (f.caused_by is None or findings[f.caused_by].severity != "error")
        )

    def seqs_of(self, rule: str) -> frozenset[int | None]:
        return frozenset(f.seq for f in self.findings if f.rule == rule)


class CheckerUnderTest(Protocol):
    """Anything the campaign can fuzz: ``check`` reads the file at ``path``, read-only.

    ``rules`` is the checker's vocabulary: the rule ids it claims to implement (a rule
    outside it is "not implemented", never missed). ``check_many`` judges several logs,
    in order (one invocation for a ``{logs}`` command); ``close`` ends whatever the
    checker keeps running (a ``serve:`` process) and is safe to call twice.
    """

    @property
    def name(self) -> str: ...

    @property
    def rules(self) -> frozenset[str]: ...

    def check(self, path: Path) -> CheckerVerdict: ...

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]: ...

    def close(self) -> None: ...


class LoadedChecker(CheckerUnderTest, Protocol):
    """A checker :func:`load_checker` made: a context manager too, whose exit closes it."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


class _Checker:
    """What every checker class shares: ``check_many`` as a loop, a no-op ``close``, ``with``."""

    if TYPE_CHECKING:  # each class has its own (a field or a property)

        @property
        def name(self) -> str: ...

        @property
        def rules(self) -> frozenset[str]: ...

    __slots__ = ()

    def check(self, path: Path) -> CheckerVerdict:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        return [self.check(path) for path in paths]

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
