"""Minimise one finding's witness within a time box, keeping the best so far.

The campaign and ``dshfuzz corpus minimise`` share this: a minimisation judges hundreds
of candidates, each with the judges the finding's signature depends on
(:meth:`Judge.still_fails`), so a slow checker makes it slow. It therefore checks its
deadline and an ``interrupted`` callable before every judgement and, when either ends
it, answers the smallest candidate that still showed the signature (stage ``cut``)
instead of nothing: a witness only ever gets smaller. :func:`keep_minimised` stores what
``corpus minimise`` polished; :func:`add_witness` keeps a log with the built-in checker's verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pathlib import Path
from typing import Any

from ._classify import signature_cause
from ._corpus import Corpus, CorpusEntry
from ._judge import Example, Judge, JudgedExample, StillFails
from ._judges import BuiltinChecker, CheckerUnderTest
from ._minimise import minimise

__all__ = ["Cut", "Polished", "add_witness", "keep_minimised", "minimise_entry", "minimise_finding"]


class Cut(BaseException):
    """Raised inside a minimisation (or a Hypothesis shrink) to end it at once; a
    BaseException so that no ``except Exception`` on the way swallows it."""


@dataclass(frozen=True, slots=True)
class Polished:
    """A witness after minimisation: the log, its judgement, and how far it got
    (``minimal``: 1-minimal; ``cut``: the best so far; ``off``: not minimisable, since
    nothing can tell a smaller log that kept the defect from one that lost it)."""

    example: Example
    judged: JudgedExample
    stage: Literal["minimal", "cut", "off"]


def minimise_finding(
    judge: Judge,
    signature: str,
    example: Example,
    judged: JudgedExample,
    *,
    deadline: float | None = None,
    interrupted: Callable[[], bool] = lambda: False,
    on_better: Callable[[Example, JudgedExample], None] | None = None,
) -> Polished:
    """Minimise ``example`` (judged ``judged``, showing ``signature``) until it is 1-minimal,
    ``time.monotonic()`` passes ``deadline`` or ``interrupted()`` holds; ``on_better`` sees
    each smaller candidate that keeps the signature, with its (narrowed) judgement."""
    best: list[tuple[Example, JudgedExample]] = [(example, judged)]

    def on_hold(candidate: Example, candidate_judged: JudgedExample) -> None:
        if len(candidate.data) < len(best[-1][0].data):
            best.append((candidate, candidate_judged))
            if on_better is not None:
                on_better(candidate, candidate_judged)

    defect = next(d for d in judged.disagreements if d.signature == signature)
    still_fails = judge.still_fails(defect, example, on_hold)
    if still_fails is None:
        return Polished(example, judged, "off")

    def check_time() -> None:
        if interrupted() or (deadline is not None and time.monotonic() > deadline):
            raise Cut

    def guarded(candidate: Example) -> bool:
        check_time()
        return still_fails(candidate)

    def guarded_first(candidates: Sequence[Example]) -> int | None:
        check_time()
        assert still_fails.first is not None
        return still_fails.first(candidates)

    first = None if still_fails.first is None else guarded_first
    try:
        data = minimise(example, StillFails(guarded, first, still_fails.width))
    except Cut:
        return Polished(*best[-1], "cut")
    final = judge.judge(replace(example, data=data))
    if signature in {d.signature for d in final.disagreements}:
        return Polished(final.example, final, "minimal")
    return Polished(*best[-1], "minimal")  # the full judgement lost it (an official timeout): keep the narrowed one


def minimise_entry(
    path: Path,
    entry: CorpusEntry,
    checker: CheckerUnderTest,
    *,
    official: Any | None = None,
    seconds: float | None = None,
) -> Polished | None:
    """Continue minimising a corpus entry's witness against ``checker`` (with ``official``, a
    running ``OfficialOracle``, or none), for at most ``seconds``; Ctrl-C ends it with the
    best so far. ``None`` when the entry's disagreement no longer shows on its witness."""
    example = Example(
        data=path.read_bytes(),
        compression=entry.compression,
        mutator=entry.mutator,
        expects=frozenset(entry.expected.get("rules", ())),
        format_version=entry.format_version if isinstance(entry.format_version, int) else None,
    )
    reference = None if isinstance(checker, BuiltinChecker) else BuiltinChecker()
    with Judge(checker, official=official, reference=reference) as judge:
        judged = judge.judge(example)
        cause = signature_cause(entry.signature)
        defect = next((d for d in judged.defects if signature_cause(d.signature) == cause), None)
        if defect is None:
            return None
        deadline = None if seconds is None else time.monotonic() + seconds
        best: list[Polished] = [Polished(example, judged, "cut")]

        def on_better(candidate: Example, candidate_judged: JudgedExample) -> None:
            best[0] = Polished(candidate, candidate_judged, "cut")

        try:
            return minimise_finding(
                judge, defect.signature, example, judged,
                deadline=deadline, on_better=on_better,
            )
        except KeyboardInterrupt:
            return best[0]


def keep_minimised(corpus: Corpus, entry: CorpusEntry, polished: Polished, checker: str) -> CorpusEntry:
    """Store ``polished`` in ``corpus`` as a new entry with ``entry``'s signature, kind and claims
    (expected rules, mutator, seed, official verdicts); its actual rules are what ``checker``
    (the spec it was minimised against) reported on the smaller log."""
    new_entry, _ = corpus.add(
        polished.example.data,
        signature=entry.signature,
        kind=entry.kind,
        compression=entry.compression,
        format_version=entry.format_version,
        expected=entry.expected,
        actual={"rules": sorted({f.rule for f in polished.judged.verdict.findings})},
        checker=checker,
        mutator=entry.mutator,
        seed=entry.seed,
        official=entry.official,
        stage=polished.stage,
    )
    return new_entry


def add_witness(corpus: Corpus, log: Path, signature: str | None = None) -> tuple[CorpusEntry, bool]:
    """Keep the log file ``log`` in ``corpus`` as a witness of the built-in checker's verdict on
    it (expected and actual alike); the signature defaults to ``witness|`` and the rules reported
    (``clean`` for none). The entry, and whether it is new. Raises OSError for an unreadable log."""
    from dshfuzz.model import read_log

    data = log.read_bytes()
    parsed = read_log(log)
    rules = sorted({f.rule for f in BuiltinChecker().check(log).findings})
    return corpus.add(
        data,
        signature=signature or "witness|" + (",".join(rules) or "clean"),
        kind="witness",
        compression=parsed.compression,
        format_version=parsed.format_version if isinstance(parsed.format_version, int) else None,
        expected={"rules": rules},
        actual={"rules": rules},
    )
