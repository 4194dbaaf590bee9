"""The mutation score of a run: overall, per checker module and per rule, and every survivor.

The score is killed / (killed + survived + unreached), equivalent mutants left out: a
survivor listed in the reviewed equivalents file is *equivalent* (no log can tell it from
the checker), any other is a *blind spot* of the generators, mutators or judges. An
unreached mutant (its line never ran in the baseline campaign) counts as not killed, as a
mutant no test covers does in other mutation tools. Errors (the judging failed) are listed
and left out of the score (a re-run judges them again), and so are invalid mutants (the
library's mutant does not compile: no campaign can judge it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ._mutation import mutant_diff
from ._mutation_run import MutantResult, MutantsFinished, MutationConfig

__all__ = ["SUMMARY_FORMAT", "MutationSummary", "Survivor", "Tally", "summarise_mutants"]

SUMMARY_FORMAT = "dshfuzz-mutants-summary/1"


@dataclass(frozen=True, slots=True)
class Tally:
    """Counts of one group of judged mutants."""

    killed: int = 0
    survived: int = 0
    unreached: int = 0
    equivalent: int = 0
    errors: int = 0
    invalid: int = 0

    @property
    def score(self) -> float | None:
        """killed / the non-equivalent mutants judged (``None`` when there are none)."""
        counted = self.killed + self.survived + self.unreached
        return self.killed / counted if counted else None

    def to_json(self) -> dict[str, Any]:
        return {"killed": self.killed, "survived": self.survived, "unreached": self.unreached,
                "equivalent": self.equivalent, "errors": self.errors, "invalid": self.invalid,
                "score": None if self.score is None else round(self.score, 4)}


@dataclass(frozen=True, slots=True)
class Survivor:
    """A mutant not killed: ``verdict`` equivalent (with the reviewed ``reason``) or blind spot."""

    result: MutantResult
    verdict: Literal["equivalent", "blind spot"]
    reason: str
    diff: str
    replay: str

    @property
    def where(self) -> str:
        return f"{self.result.mutant.module}:{self.result.mutant.line}"

    def to_json(self) -> dict[str, Any]:
        m = self.result.mutant
        return {"id": m.id, "where": self.where, "module": m.module, "line": m.line, "operator": m.operator,
                "rule": m.rule, "status": self.result.status, "verdict": self.verdict, "reason": self.reason,
                "how": self.result.how, "diff": self.diff, "replay": self.replay}


@dataclass(frozen=True, slots=True)
class MutationSummary:
    """What ``dshfuzz mutants`` reports (``summary.json``'s content, :meth:`to_json`)."""

    checker: str
    seed: int
    budget: str
    total: int
    skipped: dict[str, int]
    planned: int
    overall: Tally
    modules: dict[str, Tally]
    rules: dict[str, Tally]
    survivors: tuple[Survivor, ...]
    killed: tuple[MutantResult, ...]
    errors: tuple[MutantResult, ...]
    baseline_causes: tuple[str, ...]
    reach_measured: bool
    baseline_witnesses: tuple[tuple[str, str], ...] = ()
    """Each cause of the unmutated checker's own campaign, and the file (in the run's folder) that
    shows it: defects of the checker itself, before any mutant."""

    @property
    def blind_spots(self) -> tuple[Survivor, ...]:
        return tuple(s for s in self.survivors if s.verdict == "blind spot")

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SUMMARY_FORMAT,
            "checker": self.checker,
            "seed": self.seed,
            "budget": self.budget,
            "mutants": {"total": self.total, "skipped": dict(sorted(self.skipped.items())), "planned": self.planned},
            "score": self.overall.to_json(),
            "modules": {k: v.to_json() for k, v in sorted(self.modules.items())},
            "rules": {k: v.to_json() for k, v in sorted(self.rules.items())},
            "survivors": [s.to_json() for s in self.survivors],
            "killed": [{"id": r.mutant.id, "where": f"{r.mutant.module}:{r.mutant.line}", "rule": r.mutant.rule,
                        "how": r.how, "cause": r.cause} for r in self.killed],
            "errors": [{"id": r.mutant.id, "how": r.how, "detail": r.detail} for r in self.errors],
            "baseline": {"causes": list(self.baseline_causes), "reachMeasured": self.reach_measured,
                         "witnesses": [{"cause": c, "file": f} for c, f in self.baseline_witnesses]},
        }


def _tally(results: Iterable[MutantResult], equivalents: dict[str, str]) -> Tally:
    counts = {"killed": 0, "survived": 0, "unreached": 0, "equivalent": 0, "errors": 0, "invalid": 0}
    for r in results:
        if r.status in ("error", "invalid"):
            counts["errors" if r.status == "error" else "invalid"] += 1
        elif r.status != "killed" and r.mutant.id in equivalents:
            counts["equivalent"] += 1
        else:
            counts[r.status] += 1
    return Tally(**counts)


def summarise_mutants(finished: MutantsFinished, config: MutationConfig) -> MutationSummary:
    """The summary of a finished run (diffs read from the checker's current source)."""
    results = finished.results
    target = finished.target
    eq = finished.equivalents
    by_module: dict[str, list[MutantResult]] = {}
    by_rule: dict[str, list[MutantResult]] = {}
    for r in results:
        by_module.setdefault(r.mutant.module, []).append(r)
        if r.mutant.rule is not None:
            by_rule.setdefault(r.mutant.rule, []).append(r)
    survivors = tuple(
        Survivor(r, "equivalent" if r.mutant.id in eq else "blind spot", eq.get(r.mutant.id, ""),
                 mutant_diff(target, r.mutant), config.replay_command(r.mutant.id))
        for r in results if r.status in ("survived", "unreached")
    )
    plan = finished.plan
    return MutationSummary(
        checker=config.checker, seed=config.seed, budget=config.budget_text, total=plan.total,
        skipped=dict(plan.skipped), planned=plan.planned, overall=_tally(results, eq),
        modules={k: _tally(v, eq) for k, v in by_module.items()}, rules={k: _tally(v, eq) for k, v in by_rule.items()},
        survivors=survivors, killed=tuple(r for r in results if r.status == "killed"),
        errors=tuple(r for r in results if r.status == "error"), baseline_causes=plan.baseline.causes,
        reach_measured=plan.baseline.reach is not None, baseline_witnesses=plan.baseline.witnesses,
    )
