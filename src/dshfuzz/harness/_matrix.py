"""The kill matrix: which rule catches which incident, for any checker.

Every mutator runs over ``examples`` generated logs; each mutant is judged by the
checker under test and (when available) by the official layers. Per mutator the
matrix records how often each rule fired, recall (the mutator's expected rules
all fired) and precision (no error-level *root* finding outside the expected set:
a consequence the checker attributes to another finding restates its root),
and how often each official layer refused. Valid logs and their metamorphic
variants get rows too: there, any error-level finding is a false alarm. A rule
the registry marks ``unmutated`` (no mutator exercises it, for a stated reason)
is reported apart, with that reason, not as unkilled.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._judge import CAMPAIGN_LAYERS, Example, _framing_rules
from ._judges import CheckerUnderTest

__all__ = ["MatrixRow", "KillMatrix", "build_matrix", "sample"]


def sample(strategy: Any, count: int, seed: int) -> Iterator[Any]:
    """``count`` examples drawn deterministically from ``strategy`` (no shrinking, no database).

    Uses :func:`hypothesis.find` with a condition that never holds, so Hypothesis'
    own engine does the drawing (rejections, filters and all) under a fixed seed.
    """
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    drawn: list[Any] = []

    def keep(example: Any) -> bool:
        drawn.append(example)
        return False

    try:
        find(
            strategy,
            keep,
            settings=settings(
                max_examples=count,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            ),
            random=random.Random(seed),
        )
    except (NoSuchExample, Unsatisfiable):  # fewer than ``count`` exist (or apply): the caller sees how many
        pass
    return iter(drawn[:count])


@dataclass(slots=True)
class MatrixRow:
    """One mutator (or ``valid`` / ``metamorphic:<name>``) across its examples."""

    name: str
    expects: frozenset[str] = frozenset()
    """Every rule some mutant of the row expected (each mutant is judged by its own)."""
    official_expected: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()
    examples: int = 0
    expecting: int = 0
    """Examples that expected some rule: recall's denominator."""
    recalled: int = 0
    precise: int = 0
    fired: Counter[str] = field(default_factory=Counter)
    error_fired: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    killed: Counter[str] = field(default_factory=Counter)
    """Rule -> examples on which it fired where that example expected it."""
    stray_roots: Counter[str] = field(default_factory=Counter)
    """Rule -> examples on which it was an unexpected error-level root: what costs precision."""

    @property
    def recall(self) -> float | None:
        return self.recalled / self.expecting if self.expecting else None

    @property
    def precision(self) -> float | None:
        return self.precise / self.examples if self.examples else None

    def to_json(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "expects": sorted(self.expects),
            "officialExpected": sorted(self.official_expected),
            "recall": self.recall,
            "precision": self.precision,
            "rules": dict(sorted(self.fired.items())),
            "errorRules": dict(sorted(self.error_fired.items())),
            "strayRootRules": dict(sorted(self.stray_roots.items())),
            "officialRefused": dict(sorted(self.refused.items())),
            "checkerFailures": dict(self.failures),
        }


@dataclass(slots=True)
class KillMatrix:
    checker: str
    examples_per_mutator: int
    rows: dict[str, MatrixRow] = field(default_factory=dict)
    registry_rules: tuple[str, ...] = ()
    unmutated: dict[str, str] = field(default_factory=dict)

    def killed_by(self) -> dict[str, list[str]]:
        """Rule -> the mutators that expect it and whose mutants it fired on."""
        out: dict[str, list[str]] = {r: [] for r in self.registry_rules}
        for name, row in self.rows.items():
            for rule in sorted(row.killed):
                out.setdefault(rule, []).append(name)
        return out

    @property
    def unkilled(self) -> list[str]:
        """Rules no mutator killed, except those the registry exempts (:attr:`exempt`)."""
        return sorted(r for r, ms in self.killed_by().items() if not ms and r not in self.unmutated)

    @property
    def exempt(self) -> dict[str, str]:
        """Unkilled rules the registry marks ``unmutated`` -> why no mutator exercises them."""
        return {r: self.unmutated[r] for r, ms in sorted(self.killed_by().items()) if not ms and r in self.unmutated}

    @property
    def false_alarms(self) -> dict[str, int]:
        return {
            name: sum(row.error_fired.values())
            for name, row in self.rows.items()
            if name == "valid" or name.startswith("metamorphic:")
            if row.error_fired
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "dshfuzz-kill-matrix/1",
            "checker": self.checker,
            "examplesPerMutator": self.examples_per_mutator,
            "rows": {name: row.to_json() for name, row in self.rows.items()},
            "killedBy": self.killed_by(),
            "unkilledRules": self.unkilled,
            "unmutatedRules": self.exempt,
            "falseAlarms": self.false_alarms,
        }


def _judge_into(row: MatrixRow, example: Example, checker: CheckerUnderTest, official: Any, scratch: Path) -> None:
    path = scratch / f"m{row.examples}{example.suffix}"
    path.write_bytes(example.data)
    try:
        verdict = checker.check(path)
        if official is not None:
            for layer, v in official.check(path=str(path), layers=CAMPAIGN_LAYERS).items():
                if not v.ok:
                    row.refused[layer] += 1
    finally:
        path.unlink(missing_ok=True)
    row.examples += 1
    expects = example.expects
    row.expects |= expects
    row.expecting += bool(expects)
    if verdict.failure is not None:
        row.failures[verdict.failure] += 1
        return
    reported = frozenset(f.rule for f in verdict.findings)
    row.fired.update(reported)
    row.killed.update(expects & reported)
    if expects and expects <= reported:
        row.recalled += 1
    unexpected = verdict.root_error_rules - expects - row.allowed
    row.error_fired.update(verdict.error_rules - row.allowed)
    row.stray_roots.update(unexpected)
    if not unexpected:
        row.precise += 1


def build_matrix(
    checker: CheckerUnderTest,
    *,
    examples: int = 25,
    seed: int = 0,
    official: Any | None = None,
    mutators: list[str] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> KillMatrix:
    """Run every mutator (and the valid/metamorphic rows) and fold the verdicts."""
    import tempfile

    from hypothesis import strategies as st

    from dshfuzz.checker import RULES
    from dshfuzz.generators import session_logs
    from dshfuzz.mutators import METAMORPHIC, MUTATORS, logs_for, mutants, variants

    from ._strategy import MAX_EVENTS

    # a matrix of some mutators answers for the rules they expect, not for the whole registry
    in_scope = None if mutators is None else {str(r) for name in mutators for r in MUTATORS[name].expects}
    matrix = KillMatrix(
        checker.name,
        examples,
        registry_rules=tuple(str(r) for r in RULES if in_scope is None or str(r) in in_scope),
        unmutated={str(r.id): r.unmutated for r in RULES.values() if r.unmutated},
    )
    logs = session_logs(max_events=MAX_EVENTS)
    with tempfile.TemporaryDirectory(prefix="dshfuzz-matrix-") as tmp:
        scratch = Path(tmp)
        valid = MatrixRow("valid")
        matrix.rows["valid"] = valid
        progress("valid")
        valid_logs = list(sample(logs, examples, seed))
        for i, log in enumerate(valid_logs):
            zstd = i % 2 == 1
            _judge_into(
                valid,
                Example(log.to_zstd() if zstd else log.to_jsonl(), "zstd" if zstd else "none"),
                checker,
                official,
                scratch,
            )
        for name, transform in sorted(METAMORPHIC.items()):
            allowed = _framing_rules() if transform.framing_only else frozenset()
            row = MatrixRow(f"metamorphic:{name}", allowed=allowed)
            matrix.rows[row.name] = row
            progress(row.name)
            for _, variant in sample(variants(transform, st.sampled_from(valid_logs)), examples, seed):
                _judge_into(row, Example(variant.data, variant.compression), checker, official, scratch)
        for name in sorted(mutators or MUTATORS):
            mutator = MUTATORS[name]
            row = MatrixRow(name, frozenset(), frozenset(mutator.official))
            matrix.rows[name] = row
            progress(name)
            for mutant in sample(mutants(mutator, logs_for(mutator, max_events=MAX_EVENTS)), examples, seed):
                example = Example(mutant.data, mutant.compression, mutant.mutator, frozenset(mutant.expects))
                _judge_into(row, example, checker, official, scratch)
    return matrix
