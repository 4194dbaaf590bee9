"""Replay corpus entries against a checker and say what became of each.

Replay re-runs the entry's checker on its witness and re-classifies the verdict
against the truth *recorded in the entry* (official verdicts, oracle refusals,
the mutator's declared rules), so it needs no Node and is deterministic; a
``wrong-place`` entry is judged against the built-in checker, as the campaign was.

Statuses:

* ``STILL FAILING`` — the recorded disagreement is still there (a known checker bug);
* ``FIXED`` — the checker now agrees with the truth on this log;
* ``HOLDS`` — a witness (no disagreement recorded) still gets the same verdict;
* ``CHANGED VERDICT`` — anything else: the checker now says something new.

An entry *reproduces* when its status is STILL FAILING or HOLDS, or when it is
FIXED and its meta names the fix (``fixedBy``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ._classify import classify, signature_cause, truth_from
from ._corpus import Corpus, CorpusEntry
from ._judges import BuiltinChecker, CheckerUnderTest, load_checker

__all__ = ["ReplayResult", "ReplayStatus", "replay", "replay_entry"]


class ReplayStatus(StrEnum):
    STILL_FAILING = "STILL FAILING"
    FIXED = "FIXED"
    HOLDS = "HOLDS"
    CHANGED = "CHANGED VERDICT"


@dataclass(frozen=True, slots=True)
class ReplayResult:
    path: Path
    entry: CorpusEntry
    status: ReplayStatus
    rules_now: tuple[str, ...]
    detail: str

    @property
    def reproduces(self) -> bool:
        if self.status in (ReplayStatus.STILL_FAILING, ReplayStatus.HOLDS):
            return True
        return self.status is ReplayStatus.FIXED and bool(self.entry.fixed_by)


def replay_entry(path: Path, entry: CorpusEntry, checker: CheckerUnderTest | None = None) -> ReplayResult:
    checker = checker or load_checker(entry.checker)
    verdict = checker.check(path)
    rules_now = tuple(sorted({f.rule for f in verdict.findings}))
    official = {k: bool(v.get("ok")) for k, v in entry.official.items() if isinstance(v, dict)}
    truth = truth_from(
        official,
        oracle_refusing=entry.expected.get("oracleRefusing", ()),
        expected=entry.expected.get("rules", ()),
        mutator=entry.mutator,
        format_version=entry.format_version if isinstance(entry.format_version, int) else None,
    )
    # wrong-place is judged against the built-in checker, as the campaign judged it
    reference = BuiltinChecker().check(path) if entry.checker != "builtin" else None
    vocabulary = getattr(checker, "rules", None)
    found = classify(verdict, truth, reference=reference, vocabulary=vocabulary)
    # causes, not signatures: a signature of an earlier format named the mutator, not the format
    signatures = {signature_cause(d.signature) for d in found if d.is_checker_defect}
    recorded = tuple(sorted(entry.actual.get("rules", ())))
    if entry.kind == "witness":
        same = rules_now == recorded and verdict.failure is None
        status = ReplayStatus.HOLDS if same else ReplayStatus.CHANGED
    elif signature_cause(entry.signature) in signatures:
        status = ReplayStatus.STILL_FAILING
    elif not signatures:
        status = ReplayStatus.FIXED
    else:
        status = ReplayStatus.CHANGED
    detail = f"rules now {list(rules_now)}, recorded {list(recorded)}"
    if verdict.failure is not None:
        detail = f"checker {verdict.failure}: {verdict.detail.splitlines()[-1] if verdict.detail else ''}"
    return ReplayResult(path, entry, status, rules_now, detail)


def replay(corpus: Corpus, checker: CheckerUnderTest | None = None) -> Iterator[ReplayResult]:
    for path, entry in corpus.entries():
        yield replay_entry(path, entry, checker)
