"""One log to judge (:class:`Example`), and what the judges said of it
(:class:`JudgedExample`): the values a judgement, the campaign and the minimiser pass
between them. :class:`StillFails` is the minimiser's question about candidate logs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ._classify import Disagreement, Truth, classify
from ._judges import CheckerVerdict, ReportedFinding

if TYPE_CHECKING:
    from dshfuzz.model import Compression

    from dshfuzz.oracle.official import ReachedFirst

__all__ = ["Example", "FreshCoverage", "JudgedExample", "Shape", "StillFails"]


@dataclass(frozen=True, slots=True)
class Example:
    """One log to judge: its bytes, container, and what the mutator promised."""

    data: bytes
    compression: Compression
    mutator: str | None = None
    expects: frozenset[str] = frozenset()
    description: str = ""
    format_version: int | None = 0
    transform: str | None = None
    original: bytes | None = None
    original_compression: Compression = "none"
    framing_only: bool = False

    @property
    def suffix(self) -> str:
        return ".jsonl.zstd" if self.compression == "zstd" else ".jsonl"

    def __repr__(self) -> str:
        """What the log is, not its bytes: Hypothesis writes the repr of every failing example it
        replays in a campaign round, and a log's bytes run to tens of kilobytes."""
        what = self.mutator if self.mutator is not None else "valid"
        via = f" via {self.transform}" if self.transform is not None else ""
        return f"<Example {what}{via}: {len(self.data)} bytes {self.compression}, format {self.format_version}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's pretty-printing protocol, which Hypothesis' reports follow (else they spell a
        dataclass out field by field): the short repr."""
        printer.text(repr(self))


@dataclass(frozen=True, slots=True)
class StillFails:
    """Whether candidate logs still show the finding: ``one`` asks about one, ``first``
    (when the checker answers many logs for about the price of one) about up to ``width``
    at once, answering the index of the first that does. ddmin takes the first that holds
    either way, so ``first`` changes the cost of a minimisation, never its result."""

    one: Callable[[Example], bool]
    first: Callable[[Sequence[Example]], int | None] | None = None
    width: int = 1

    def __call__(self, candidate: Example) -> bool:
        return self.one(candidate)


@dataclass(frozen=True, slots=True)
class Shape:
    """What makes a log hard, for Hypothesis ``target()``: open calls, frames, replaces."""

    events: int
    frames: int
    replaces: int
    open_tool_calls: int


@dataclass(frozen=True, slots=True)
class JudgedExample:
    example: Example
    verdict: CheckerVerdict
    truth: Truth
    official: Mapping[str, Any]
    disagreements: tuple[Disagreement, ...]
    shape: Shape
    reference: CheckerVerdict | None = None
    vocabulary: frozenset[str] | None = None
    checker_seconds: float = 0.0
    """How long the checker under test took on this log (its process start-up included)."""
    layers: frozenset[str] | None = None
    """The official layers the checker answers for (``None``: every layer)."""
    reached: ReachedFirst | None = None
    """The official refusal sites and code this log reached first on its worker's oracle
    (official coverage on; ``None`` otherwise, or when the official layers were not asked)."""
    checker_lines: tuple[tuple[str, int], ...] = ()
    """The checker's own lines this log ran first on its worker (checker coverage on)."""


    @property
    def events(self) -> int:
        return self.shape.events

    @property
    def defects(self) -> tuple[Disagreement, ...]:
        """The disagreements a campaign hunts (checker defects and oracle crashes)."""
        return tuple(d for d in self.disagreements if d.is_reportable)

    def defects_without(self, rules: frozenset[str]) -> tuple[Disagreement, ...]:
        """The defects, in the same order, had the checker reported none of ``rules``:
        what ``builtin:-RULE,...`` shows on this example when the checker was ``builtin``
        (switching rules off only drops their findings), without judging again.

        A metamorphic disagreement keeps the rules it names outside ``rules`` (the
        verdicts' difference less those rules); its detail still names them all.
        """
        findings = _findings_without(self.verdict, rules)
        out = classify(
            replace(self.verdict, findings=findings), self.truth, reference=self.reference, vocabulary=self.vocabulary,
            layers=self.layers,
        )
        for d in self.disagreements:
            if d.kind == "oracle-crash":
                out.append(d)
            elif d.kind == "metamorphic" and (kept := tuple(r for r in d.rules if r not in rules)):
                out.append(replace(d, rules=kept))
        return tuple(d for d in out if d.is_reportable)


@dataclass(frozen=True, slots=True)
class FreshCoverage:
    """Coverage some judgement reached first on a worker, for the campaign to report: the
    stratum (``mutator``) of the log that reached it, official sites and code, checker lines.
    Collected from every judgement (the hunt's and the minimiser's alike), so none is lost."""

    mutator: str | None
    official_sites: tuple[str, ...] = ()
    official_code: int = 0
    checker_lines: tuple[tuple[str, int], ...] = ()


def _findings_without(verdict: CheckerVerdict, rules: frozenset[str]) -> tuple[ReportedFinding, ...]:
    """``verdict``'s findings had the checker reported none of ``rules``, their root causes
    attributed again: exactly, from the built-in checker's own findings (it attributes after
    its rules ran); for any other checker, a finding whose root was dropped becomes a root."""
    if verdict.checked:
        from dshfuzz.checker import attribute

        kept = attribute([replace(f, caused_by=None) for f in verdict.checked if str(f.rule) not in rules])
        return tuple(ReportedFinding(str(f.rule), str(f.severity), f.seq, f.caused_by, tuple(map(str, f.refused_by)))
                     for f in kept)
    at: dict[int, int] = {}
    for i, f in enumerate(verdict.findings):
        if f.rule not in rules:
            at[i] = len(at)
    return tuple(
        replace(f, caused_by=None if f.caused_by is None else at.get(f.caused_by))
        for f in verdict.findings if f.rule not in rules
    )
