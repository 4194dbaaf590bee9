"""Judge one log with every judge: the checker under test, the reference oracle and
the official layers, then classify the disagreements.

The judged log is always a file on disk (the official loader and external
checkers read files); it lives in a private scratch directory and is removed
after judging.
"""

from __future__ import annotations

import tempfile
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ._classify import Disagreement, Truth, classify, metamorphic_disagreement, truth_from
from ._judges import CheckerUnderTest, CheckerVerdict

__all__ = ["CAMPAIGN_LAYERS", "LATER_FORMAT_LAYERS", "Example", "Judge", "JudgedExample", "Shape"]

CAMPAIGN_LAYERS = ("fold", "seed", "invariants", "load", "meter", "inbox", "released")
"""The official layers a campaign consults. ``loadApp`` is left out: it agrees with
``load`` on every known input at a fifth of the speed; ``wire`` refuses nothing
the others accept (it is the serialiser, not a validator)."""

LATER_FORMAT_LAYERS = ("fold", "invariants", "meter", "inbox", "released")
"""The layers whose verdict on a later-format log means something: the rc.8 ``seed`` and
``load`` refuse any version but 0 by the version alone; the released layer restores v1."""


@dataclass(frozen=True, slots=True)
class Example:
    """One log to judge: its bytes, container, and what the mutator promised."""

    data: bytes
    compression: str
    mutator: str | None = None
    expects: frozenset[str] = frozenset()
    description: str = ""
    format_version: int | None = 0
    transform: str | None = None
    original: bytes | None = None
    original_compression: str = "none"
    framing_only: bool = False

    @property
    def suffix(self) -> str:
        return ".jsonl.zstd" if self.compression == "zstd" else ".jsonl"


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
        findings = tuple(f for f in self.verdict.findings if f.rule not in rules)
        out = classify(replace(self.verdict, findings=findings), self.truth, reference=self.reference)
        for d in self.disagreements:
            if d.kind == "oracle-crash":
                out.append(d)
            elif d.kind == "metamorphic" and (kept := tuple(r for r in d.rules if r not in rules)):
                out.append(replace(d, rules=kept))
        return tuple(d for d in out if d.is_reportable)


class Judge:
    """Runs the judges; owns the scratch directory and (optionally) an official oracle.

    ``official`` is an ``OfficialOracle`` or ``None`` (then only the reference oracle
    and the mutator's declaration speak for the truth). ``reference`` is a trusted
    checker whose seqs ``wrong-place`` compares against.
    """

    def __init__(
        self,
        checker: CheckerUnderTest,
        *,
        official: Any | None = None,
        reference: CheckerUnderTest | None = None,
        scratch: Path | None = None,
    ) -> None:
        self.checker = checker
        self.official = official
        self.reference = reference
        self._own_scratch = scratch is None
        self.scratch = Path(tempfile.mkdtemp(prefix="dshfuzz-judge-")) if scratch is None else scratch
        self._counter = 0

    def close(self) -> None:
        if self._own_scratch:
            for child in self.scratch.iterdir():
                child.unlink(missing_ok=True)
            self.scratch.rmdir()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _official_verdicts(self, path: Path, format_version: int | None) -> dict[str, Any]:
        """The consulted layers' verdicts; for a log written in a later format, only the layers
        that judge that format (seed and load refuse any version but 0 by the version alone)."""
        if self.official is None:
            return {}
        from dshfuzz.oracle.official import OracleError

        layers = CAMPAIGN_LAYERS if format_version in (0, None) else LATER_FORMAT_LAYERS
        try:
            return dict(self.official.check(path=str(path), layers=layers))
        except OracleError:  # a timeout or crash of the oracle is not the checker's defect: no official verdict
            return {}

    def _metamorphic(self, example: Example, after: CheckerVerdict) -> tuple[Disagreement, ...]:
        """Judge the untransformed twin; a changed verdict is a metamorphic disagreement."""
        if example.transform is None or example.original is None:
            return ()
        suffix = ".jsonl.zstd" if example.original_compression == "zstd" else ".jsonl"
        twin = self.scratch / f"twin-{self._counter}{suffix}"
        twin.write_bytes(example.original)
        try:
            before = self.checker.check(twin)
        finally:
            twin.unlink(missing_ok=True)
        ignore = _framing_rules() if example.framing_only else frozenset()
        found = metamorphic_disagreement(example.transform, before, after, ignore=ignore)
        return () if found is None else (found,)

    def judge(self, example: Example) -> JudgedExample:
        self._counter += 1
        path = self.scratch / f"example-{self._counter}{example.suffix}"
        path.write_bytes(example.data)
        try:
            verdict = self.checker.check(path)
            reference = self.reference.check(path) if self.reference is not None else None
            official = self._official_verdicts(path, example.format_version)
        finally:
            path.unlink(missing_ok=True)
        metamorphic = self._metamorphic(example, verdict)
        try:
            shape, oracle_refusing, consulted = _reference(example)
            oracle_crash: tuple[Disagreement, ...] = ()
        except Exception:  # noqa: BLE001 - our own oracle's crash is a finding, not the end of the run
            shape, oracle_refusing, consulted = Shape(0, 0, 0, 0), frozenset(), False
            detail = traceback.format_exc(limit=6)
            oracle_crash = (Disagreement("oracle-crash", None, (), example.mutator, detail[-2000:]),)
        truth = truth_from(
            {name: v.ok for name, v in official.items()},
            oracle_refusing=oracle_refusing,
            expected=example.expects,
            mutator=example.mutator,
            oracle_consulted=consulted,
        )
        disagreements = tuple(classify(verdict, truth, reference=reference)) + metamorphic + oracle_crash
        return JudgedExample(example, verdict, truth, official, disagreements, shape, reference)


def _framing_rules() -> frozenset[str]:
    from dshfuzz.checker import RULES

    return frozenset(str(rid) for rid, rule in RULES.items() if str(rule.layer) == "framing")


def _reference(example: Example) -> tuple[Shape, frozenset[str], bool]:
    """The log's shape, the layers the reference oracle says refuse it, and whether the
    oracle judges this log at all (one parse)."""
    from dshfuzz.model import parse_log

    from ._reference import judges, reference_refusals

    log = parse_log(example.data, compression=example.compression)  # type: ignore[arg-type]
    events = [e.raw for e in log.events]
    calls: set[Any] = set()
    replaces = 0
    for ev in events:
        if not isinstance(ev, dict):
            continue
        data = ev.get("data")
        if isinstance(ev.get("surfaceOp"), dict):
            replaces += 1
        if ev.get("type") == "tool/call" and isinstance(data, dict):
            calls.add(data.get("callId"))
        elif ev.get("type") == "tool/result" and isinstance(data, dict):
            source = (data.get("message") or {}).get("source") if isinstance(data.get("message"), dict) else None
            calls.discard(source.get("callId") if isinstance(source, dict) else None)
    shape = Shape(len(events), len(log.frames), replaces, len(calls))
    header = log.header.raw if log.header is not None else None
    return shape, reference_refusals(events, header, log.format_version), judges(header, log.format_version)
