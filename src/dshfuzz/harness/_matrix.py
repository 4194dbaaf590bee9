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

:func:`run_matrix` is the whole command behind ``dshfuzz matrix``: it loads the checker,
runs the official layers when asked and returns the :class:`KillMatrix`, a value that
renders nothing (``dshfuzz.report`` turns it into a table, Markdown or JSON).
:func:`matrix_preflight` checks everything it needs before the first mutant.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._judge import CAMPAIGN_LAYERS, Example, _framing_rules
from ._judges import CheckerSpecError, CheckerUnderTest, load_checker

__all__ = [
    "KillMatrix",
    "MatrixConfig",
    "MatrixRow",
    "MatrixSetupError",
    "build_matrix",
    "matrix_preflight",
    "run_matrix",
    "sample",
]


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


@dataclass(frozen=True, slots=True)
class MatrixRow:
    """One mutator (or ``valid`` / ``metamorphic:<name>``) across its examples.

    ``recalled <= expecting <= examples`` and ``precise <= examples``; every count is of examples."""

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


@dataclass(frozen=True, slots=True)
class KillMatrix:
    """Every row of one checker's kill matrix, in the order they ran (valid, metamorphic, mutators).

    ``registry_rules`` are the rules the matrix answers for: the whole registry, or the
    rules the chosen mutators expect; ``unmutated`` maps a rule no mutator exercises to why."""

    checker: str
    examples_per_mutator: int
    rows: Mapping[str, MatrixRow] = field(default_factory=dict)
    registry_rules: tuple[str, ...] = ()
    unmutated: Mapping[str, str] = field(default_factory=dict)

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

    @property
    def perfect(self) -> bool:
        """Every row at full recall, every rule in scope killed, no false alarm: ``dshfuzz matrix``'s exit 0."""
        return (all(row.recall in (None, 1.0) for row in self.rows.values())
                and not self.unkilled and not self.false_alarms)

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


def _judge_into(row: MatrixRow, example: Example, checker: CheckerUnderTest, official: Any, scratch: Path) -> MatrixRow:
    """``row`` with ``example`` judged into it: its counts in the row returned, its rules added to the
    row's counters (which the returned row shares: the row passed in is spent)."""
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
    expects = example.expects
    row = replace(row, examples=row.examples + 1, expects=row.expects | expects,
                  expecting=row.expecting + bool(expects))
    if verdict.failure is not None:
        row.failures[verdict.failure] += 1
        return row
    reported = frozenset(f.rule for f in verdict.findings)
    row.fired.update(reported)
    row.killed.update(expects & reported)
    unexpected = verdict.root_error_rules - expects - row.allowed
    row.error_fired.update(verdict.error_rules - row.allowed)
    row.stray_roots.update(unexpected)
    return replace(row, recalled=row.recalled + bool(expects and expects <= reported),
                   precise=row.precise + (not unexpected))


def build_matrix(
    checker: CheckerUnderTest,
    *,
    examples: int = 25,
    seed: int = 0,
    official: Any | None = None,
    mutators: Sequence[str] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> KillMatrix:
    """Run every mutator (and the valid/metamorphic rows) and fold the verdicts; ``official``
    is a running ``OfficialOracle`` or None. ``progress`` hears each row's name as it starts."""
    import tempfile

    from hypothesis import strategies as st

    from dshfuzz.checker import RULES
    from dshfuzz.generators import session_logs
    from dshfuzz.mutators import METAMORPHIC, MUTATORS, logs_for, mutants, variants

    from ._strategy import MAX_EVENTS

    # a matrix of some mutators answers for the rules they expect, not for the whole registry
    in_scope = None if mutators is None else {str(r) for name in mutators for r in MUTATORS[name].expects}
    rows: dict[str, MatrixRow] = {}
    logs = session_logs(max_events=MAX_EVENTS)
    with tempfile.TemporaryDirectory(prefix="dshfuzz-matrix-") as tmp:
        scratch = Path(tmp)
        valid = MatrixRow("valid")
        progress("valid")
        valid_logs = list(sample(logs, examples, seed))
        for i, log in enumerate(valid_logs):
            zstd = i % 2 == 1
            example = Example(log.to_zstd() if zstd else log.to_jsonl(), "zstd" if zstd else "none")
            valid = _judge_into(valid, example, checker, official, scratch)
        rows["valid"] = valid
        for name, transform in sorted(METAMORPHIC.items()):
            allowed = _framing_rules() if transform.framing_only else frozenset()
            row = MatrixRow(f"metamorphic:{name}", allowed=allowed)
            progress(row.name)
            for _, variant in sample(variants(transform, st.sampled_from(valid_logs)), examples, seed):
                row = _judge_into(row, Example(variant.data, variant.compression), checker, official, scratch)
            rows[row.name] = row
        for name in sorted(mutators or MUTATORS):
            mutator = MUTATORS[name]
            row = MatrixRow(name, frozenset(), frozenset(mutator.official))
            progress(name)
            for mutant in sample(mutants(mutator, logs_for(mutator, max_events=MAX_EVENTS)), examples, seed):
                example = Example(mutant.data, mutant.compression, mutant.mutator, frozenset(mutant.expects))
                row = _judge_into(row, example, checker, official, scratch)
            rows[name] = row
    return KillMatrix(
        checker.name,
        examples,
        rows=rows,
        registry_rules=tuple(str(r) for r in RULES if in_scope is None or str(r) in in_scope),
        unmutated={str(r.id): r.unmutated for r in RULES.values() if r.unmutated},
    )


@dataclass(frozen=True, slots=True)
class MatrixConfig:
    """What one kill matrix is asked: the checker spec, mutants per row, the seed (the same
    seed, the same matrix), the mutators (None: all) and whether the official layers judge too."""

    checker: str = "builtin"
    examples: int = 25
    seed: int = 0
    mutators: tuple[str, ...] | None = None
    official: bool = True


class MatrixSetupError(ValueError):
    """A kill matrix that cannot start; the message is one line naming what and the fix."""


def matrix_preflight(config: MatrixConfig) -> None:
    """Everything the matrix needs, checked before its first mutant, cheapest first: the
    mutator names, the number of examples, the official layers when they judge, the checker
    run once on a valid log (the campaign's own probe). Raises :class:`MatrixSetupError`."""
    from ._config import CampaignConfig, CampaignSetupError
    from ._preflight import preflight
    from ._strategy import unknown_mutators

    names = config.mutators
    unknown = unknown_mutators(names, perturbations=False) if names else []
    undeclared = [n for n in unknown if n not in unknown_mutators(unknown)]
    if undeclared:  # a campaign perturbation: no declared rule for a matrix row to kill
        raise MatrixSetupError(
            f"{', '.join(undeclared)}: a perturbation declares no rules, so the kill matrix has nothing to "
            "score; fuzz it with `dshfuzz fuzz --mutators …`, or name incident mutators")
    if unknown:
        raise MatrixSetupError(
            f"unknown mutator{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; `dshfuzz mutators` lists them")
    if names is not None and not names:
        raise MatrixSetupError("--mutators names no mutator; give comma-separated names (`dshfuzz mutators` lists them)")
    if config.examples < 1:
        raise MatrixSetupError(f"--examples {config.examples}: at least 1 mutant per mutator")
    if config.official:
        from dshfuzz.oracle.official import unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            fix = "pass --no-official" if "make setup" in reason else "run `make setup`, or pass --no-official"
            raise MatrixSetupError(f"official layers unavailable: {reason}; {fix}")
    try:
        # the campaign's probe alone: no mutator list or official layers (checked above), no report folder
        preflight(CampaignConfig(checker=config.checker, official=False, out=Path(".")))
    except CampaignSetupError as exc:
        raise MatrixSetupError(str(exc)) from None


def run_matrix(config: MatrixConfig, *, progress: Callable[[str], None] = lambda _: None) -> KillMatrix:
    """The kill matrix ``config`` asks for (:func:`build_matrix` with the checker loaded and the
    official layers running for its duration). Raises :class:`MatrixSetupError` for a checker
    that cannot be loaded; :func:`matrix_preflight` has the rest of what can go wrong."""
    try:
        checker = load_checker(config.checker)
    except CheckerSpecError as exc:
        raise MatrixSetupError(str(exc)) from None
    with ExitStack() as stack:
        official = None
        if config.official:
            from dshfuzz.oracle.official import OfficialOracle

            official = stack.enter_context(OfficialOracle())
        return build_matrix(checker, examples=config.examples, seed=config.seed, official=official,
                            mutators=None if config.mutators is None else list(config.mutators), progress=progress)
