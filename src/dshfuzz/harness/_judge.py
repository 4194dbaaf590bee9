"""Judge one log with every judge: the checker under test, the reference oracle and
the official layers, then classify the disagreements.

The judged log is always a file on disk (the official loader and external
checkers read files); it lives in a private scratch directory and is removed
after judging.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._classify import Disagreement, Truth, classify, truth_from
from ._judges import CheckerUnderTest, CheckerVerdict

__all__ = ["Example", "JudgedExample", "Judge"]


@dataclass(frozen=True, slots=True)
class Example:
    """One log to judge: its bytes, container, and what the mutator promised."""

    data: bytes
    compression: str
    mutator: str | None = None
    expects: frozenset[str] = frozenset()
    description: str = ""
    format_version: int | None = 0

    @property
    def suffix(self) -> str:
        return ".jsonl.zstd" if self.compression == "zstd" else ".jsonl"


@dataclass(frozen=True, slots=True)
class JudgedExample:
    example: Example
    verdict: CheckerVerdict
    truth: Truth
    official: Mapping[str, Any]
    disagreements: tuple[Disagreement, ...]
    events: int

    @property
    def defects(self) -> tuple[Disagreement, ...]:
        return tuple(d for d in self.disagreements if d.is_checker_defect)


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

    def _official_verdicts(self, path: Path) -> dict[str, Any]:
        if self.official is None:
            return {}
        verdicts = self.official.check(path=str(path))
        return {name: v for name, v in verdicts.items() if name != "wire"}

    def judge(self, example: Example) -> JudgedExample:
        self._counter += 1
        path = self.scratch / f"example-{self._counter}{example.suffix}"
        path.write_bytes(example.data)
        try:
            verdict = self.checker.check(path)
            reference = self.reference.check(path) if self.reference is not None else None
            official = self._official_verdicts(path)
            events = _event_count(example.data, example.compression)
        finally:
            path.unlink(missing_ok=True)
        truth = truth_from(
            {name: v.ok for name, v in official.items()},
            oracle_refusing=_oracle_refusals(example),
            expected=example.expects,
            mutator=example.mutator,
        )
        disagreements = tuple(classify(verdict, truth, reference=reference))
        return JudgedExample(example, verdict, truth, official, disagreements, events)


def _event_count(data: bytes, compression: str) -> int:
    from dshfuzz.model import parse_log

    return len(parse_log(data, compression=compression).events)  # type: ignore[arg-type]


def _oracle_refusals(example: Example) -> frozenset[str]:
    """The official layer each failing reference model stands for."""
    from dshfuzz.harness._reference import reference_refusals

    return reference_refusals(example.data, example.compression)
