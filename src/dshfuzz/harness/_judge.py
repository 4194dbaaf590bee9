"""Judge one log with every judge: the checker under test, the reference oracle and
the official layers, then classify the disagreements.

The built-in checker and the reference oracle judge a log's bytes. Only judges
that must read a file (the official layers, an external checker) get one, written
once per log to a private scratch directory (in RAM where the platform offers
one) and removed after judging.

:meth:`Judge.submit` leaves the official verdicts in flight (a :class:`PendingJudgement`,
:mod:`._pending`). The minimiser's predicate (:meth:`Judge.still_fails`) runs only the
judges a finding's signature depends on (:func:`scope_of`, :mod:`._scope`). The log and
its judgement are in :mod:`._example`.
"""

from __future__ import annotations

import collections
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from dshfuzz.contracts.layers import CAMPAIGN_LAYERS
from dshfuzz.contracts.layers import OfficialLayer as L

from ._classify import Disagreement, classify, metamorphic_disagreement, official_verdict_key, truth_from
from ._events import charge
from ._example import Example, FreshCoverage, JudgedExample, Shape, StillFails
from ._judges import BATCH_LOGS, BatchCommandChecker, BuiltinChecker, CheckerUnderTest, CheckerVerdict, registry_rules
from ._pending import PendingJudgement, _Heard
from ._scope import _CHECKER_ALONE, EVERY_JUDGE, LATER_FORMAT_LAYERS, Scope, official_layers_for, scope_of

if TYPE_CHECKING:
    from dshfuzz.model import Compression

    from ._checker_coverage import CheckerLines
    from dshfuzz.oracle.official import Flight, ReachedFirst

__all__ = [
    "CAMPAIGN_LAYERS",
    "FreshCoverage",
    "EVERY_JUDGE",
    "LATER_FORMAT_LAYERS",
    "Example",
    "Judge",
    "JudgedExample",
    "PendingJudgement",
    "Scope",
    "Shape",
    "StillFails",
    "official_layers_for",
    "scope_of",
]


JUDGE_PARTS = ("checker", "reference checker", "official layers", "reference oracle", "files")
"""What :attr:`Judge.seconds` counts: the checker under test (its metamorphic twins
included), the built-in checker placing findings, the official layers, the reference
oracle (and the shape it reads), and writing each log to a scratch file."""


class Judge:
    """Runs the judges; owns the scratch directory and (optionally) an official oracle.

    ``official`` is an ``OfficialOracle`` or ``None`` (then only the reference oracle
    and the mutator's declaration speak for the truth). ``reference`` is a trusted
    checker whose seqs ``wrong-place`` compares against. ``batch_width`` overrides how
    many logs the checker is best asked about at once (:attr:`batch_width`). ``layers``
    are the official layers the checker answers for (``--checker-layers``); by default the
    checker's own ``layers`` (a ``serve:`` handshake's), else every layer.
    """

    def __init__(
        self,
        checker: CheckerUnderTest,
        *,
        official: Any | None = None,
        reference: CheckerUnderTest | None = None,
        scratch: Path | None = None,
        batch_width: int | None = None,
        layers: frozenset[str] | None = None,
        checker_coverage: CheckerLines | None = None,
    ) -> None:
        self.checker = checker
        self.checker_coverage = checker_coverage
        self._unreported: list[FreshCoverage] = []
        self._batch_width = batch_width
        self.official = official
        self.reference = reference
        self.vocabulary: frozenset[str] | None = getattr(checker, "rules", None)
        self.layers: frozenset[str] | None = layers if layers is not None else getattr(checker, "layers", None)
        self._claims_part = self.vocabulary is not None and not registry_rules() <= self.vocabulary
        """Whether the checker claims only part of the registry: a refusal it is silent on may
        then be one it never claimed to check, which the reference checker tells."""
        self._own_scratch = scratch is None
        self.scratch = Path(tempfile.mkdtemp(prefix="dshfuzz-judge-", dir=_ram_dir())) if scratch is None else scratch
        self._counter = 0
        self._open: collections.deque[PendingJudgement] = collections.deque()
        self.server_seconds = 0.0
        """Seconds the official server spent judging (its own clock, while the other judges ran)."""
        self.seconds: collections.Counter[str] = collections.Counter()
        """Seconds spent so far per judge (:data:`JUDGE_PARTS`): what a campaign's time
        breakdown charges to judging."""

    @contextmanager
    def _timed(self, part: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            charge(self.seconds, part, time.perf_counter() - began)

    def close(self) -> None:
        while self._open:  # a judgement never asked for: its server is not waited for
            self._open[-1].abandon()
        if self._own_scratch:
            for child in self.scratch.iterdir():
                child.unlink(missing_ok=True)
            self.scratch.rmdir()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _official_wanted(self, example: Example, wanted: tuple[str, ...] | None) -> tuple[str, ...]:
        """The official layers consulted on ``example`` (of ``wanted`` only, when given): for a
        log written in a later format, only the layers that judge that format (seed and load
        refuse any version but 0 by the version alone)."""
        if self.official is None:
            return ()
        layers = official_layers_for(example.format_version)
        return layers if wanted is None else tuple(layer for layer in layers if layer in wanted)

    @contextmanager
    def _official_in_flight(
        self, files: Sequence[tuple[Path, tuple[str, ...]]]
    ) -> Iterator[Flight[list[tuple[dict[str, Any], ReachedFirst | None]]]]:
        """The official layers asked about every file at once; yields the flight that
        waits for their verdicts (``{}`` for a file when the oracle timed out or crashed: that
        is not the checker's defect), each with the coverage it reached first (coverage on).
        Only the wait is charged to the official layers: the judge works while the server
        judges."""
        from dshfuzz.oracle.official import Flight, OracleError

        unanswered: list[tuple[dict[str, Any], ReachedFirst | None]] = [({}, None) for _ in files]
        if self.official is None or not any(layers for _, layers in files):
            yield Flight(lambda: unanswered, lambda: True)
            return
        reach: list[ReachedFirst | None] = [None] * len(files)
        heard = reach.__setitem__ if getattr(self.official, "coverage", False) else None
        try:
            with self._timed("official layers"):
                flight = self.official.checking(files, server_seconds=self._served, reached=heard)
                collect = flight.__enter__()
        except OracleError:
            yield Flight(lambda: unanswered, lambda: True)
            return
        answered: list[list[tuple[dict[str, Any], ReachedFirst | None]]] = []

        def verdicts() -> list[tuple[dict[str, Any], ReachedFirst | None]]:
            if not answered:
                with self._timed("official layers"):
                    try:
                        got: list[Any] = collect()
                    except OracleError:  # the server broke its protocol: it was replaced, no verdict
                        got = [{} for _ in files]
                    answered.append(
                        [({} if isinstance(v, OracleError) else dict(v), r) for v, r in zip(got, reach, strict=True)]
                    )
                    flight.__exit__(None, None, None)
            return answered[0]

        try:
            yield Flight(verdicts, lambda: bool(answered) or collect.ready())
        except BaseException as exc:
            if not answered:
                flight.__exit__(type(exc), exc, exc.__traceback__)
            raise
        verdicts()

    def _served(self, seconds: float) -> None:
        self.server_seconds += seconds

    @contextmanager
    def _on_disk(self, example: Example) -> Iterator[Path]:
        """``example`` written to a fresh scratch file, removed afterwards."""
        self._counter += 1
        path = self.scratch / f"example-{self._counter}{example.suffix}"
        with self._timed("files"):
            path.write_bytes(example.data)
        try:
            yield path
        finally:
            path.unlink(missing_ok=True)

    def _metamorphic(self, example: Example, after: CheckerVerdict, before: CheckerVerdict) -> tuple[Disagreement, ...]:
        """A changed verdict between ``example`` and its untransformed twin (``before``) is a
        metamorphic disagreement."""
        ignore = _framing_rules() if example.framing_only else frozenset()
        assert example.transform is not None, "only a transformed example has a twin"
        found = metamorphic_disagreement(example.transform, before, after, ignore=ignore)
        return () if found is None else (replace(found, format_version=example.format_version),)

    def _checked(
        self, examples: Sequence[Example], paths: Sequence[Path | None]
    ) -> list[tuple[CheckerVerdict, float, tuple[tuple[str, int], ...]]]:
        """The checker under test's verdict on each of ``examples``, with its seconds and the
        checker lines it ran first (checker coverage on): each timed alone, unless the checker
        is best asked about several at once (:attr:`batch_width`), when each is charged an
        equal share of the one question (and the last one reports the lines)."""
        if len(examples) > 1 and self.batch_width > 1:
            began = time.perf_counter()
            with self._timed("checker"), self._measuring():
                verdicts = self.checker.check_many([p for p in paths if p is not None])
            share = (time.perf_counter() - began) / len(examples)
            lines = self._fresh_lines(examples[-1])
            return [(v, share, lines if i == len(verdicts) - 1 else ()) for i, v in enumerate(verdicts)]
        checked = []
        for example, path in zip(examples, paths, strict=True):
            began = time.perf_counter()
            with self._timed("checker"), self._measuring():
                verdict = _ask(self.checker, example, path)
            checked.append((verdict, time.perf_counter() - began, self._fresh_lines(example)))
        return checked

    @contextmanager
    def _measuring(self) -> Iterator[None]:
        if self.checker_coverage is None:
            yield
        else:
            with self.checker_coverage.measuring():
                yield

    def _fresh_lines(self, example: Example) -> tuple[tuple[str, int], ...]:
        if self.checker_coverage is None:
            return ()
        lines = self.checker_coverage.fresh()
        if lines:
            self._unreported.append(FreshCoverage(example.mutator, checker_lines=lines))
        return lines

    def unreported_coverage(self) -> list[FreshCoverage]:
        """Coverage reached first since the last call (every judgement's): the campaign reports it."""
        out, self._unreported = self._unreported, []
        return out

    def judge_many(self, examples: Sequence[Example], scope: Scope = EVERY_JUDGE) -> list[JudgedExample]:
        """:meth:`judge` of each of ``examples``. The official layers are asked about all of
        them first and answered while the checker, the reference checker and the reference
        oracle run (the server's judging overlaps Python's); a batch checker is asked once for
        all of them (``check_many``: one process)."""
        return self.submit(examples, scope).result()

    def submit(self, examples: Sequence[Example], scope: Scope = EVERY_JUDGE) -> PendingJudgement:
        """Start judging ``examples``: the official layers are asked now and every other judge
        runs before this returns; :meth:`PendingJudgement.result` waits for the official
        verdicts and classifies. The caller may draw its next logs while the server judges.

        Judgements resolve in the order they were submitted (the server answers in order):
        asking for a later one's result, or judging anything else, resolves the earlier ones
        first."""
        twins = [_twin(e) if scope.twin else None for e in examples]
        present = [t for t in twins if t is not None]
        layers = [self._official_wanted(e, scope.layers) for e in examples]
        files = not isinstance(self.checker, BuiltinChecker)
        stack = ExitStack()
        with ExitStack() as unwind:  # a judge that raises here leaves no flight and no file behind
            unwind.push(stack)
            paths = [
                stack.enter_context(self._on_disk(e)) if files or wanted else None for e, wanted in zip(examples, layers)
            ]
            twin_paths = [stack.enter_context(self._on_disk(t)) if files else None for t in present]
            official = stack.enter_context(
                self._official_in_flight([(p, w) for p, w in zip(paths, layers) if p is not None and w])
            )
            checked = self._checked([*examples, *present], [*paths, *twin_paths])
            before = iter(checked[len(examples):])
            twin_verdicts = [None if t is None else next(before)[0] for t in twins]
            # the reference checker places findings (wrong-place): a verdict with no seq needs none
            references = [
                self._reference_checked(e, path, verdict) if scope.reference else None
                for e, path, (verdict, _, _) in zip(examples, paths, checked)
            ]
            models = [self._modelled(e) if scope.oracle else None for e in examples]
            unwind.pop_all()
        asked = [p is not None and bool(w) for p, w in zip(paths, layers)]
        heard = [_Heard((v, seconds), refs, twin, model, lines)
                 for (v, seconds, lines), refs, twin, model in zip(checked, references, twin_verdicts, models)]
        pending = PendingJudgement(self, tuple(examples), heard, stack, official, asked)
        self._open.append(pending)
        return pending

    def judge(self, example: Example, scope: Scope = EVERY_JUDGE) -> JudgedExample:
        """Every disagreement on ``example`` among the judges in ``scope`` (all by default)."""
        return self.judge_many([example], scope)[0]

    def _reference_checked(self, example: Example, path: Path | None, verdict: CheckerVerdict) -> CheckerVerdict | None:
        """The reference checker's verdict, where it is needed: to place the checker's findings
        (``wrong-place``: findings with seqs), or to read a refusal the checker is silent on
        when it claims only part of the registry (a miss, or a rule it never claimed)."""
        if self.reference is None:
            return None
        placing = any(f.seq is not None for f in verdict.findings)
        silent = verdict.failure is None and not verdict.error_rules and self._claims_part
        if not (placing or silent):
            return None
        with self._timed("reference checker"):
            return _ask(self.reference, example, path)

    def _modelled(self, example: Example) -> tuple[Shape, frozenset[str], bool] | Disagreement:
        """The reference oracle's reading of ``example``, or its crash as a disagreement."""
        try:
            with self._timed("reference oracle"):
                return _reference(example)
        except Exception:  # noqa: BLE001 - our own oracle's crash is a finding, not the end of the run
            detail = traceback.format_exc(limit=6)
            return Disagreement("oracle-crash", None, (), example.mutator, detail[-2000:], example.format_version)

    def _judged(
        self, example: Example, heard: _Heard, official: dict[str, Any], reached: ReachedFirst | None = None
    ) -> JudgedExample:
        """Classify what every judge said of ``example``: ``heard`` the judges but the
        official layers, ``official`` their verdicts (none: the judgement without them)."""
        (verdict, checker_seconds), reference, twin_verdict, modelled, checker_lines = heard
        metamorphic = () if twin_verdict is None else self._metamorphic(example, verdict, twin_verdict)
        shape, oracle_refusing, consulted = Shape(0, 0, 0, 0), frozenset[str](), False
        oracle_crash: tuple[Disagreement, ...] = ()
        if isinstance(modelled, Disagreement):
            oracle_crash = (modelled,)
        elif modelled is not None:
            shape, oracle_refusing, consulted = modelled
        truth = truth_from(
            {name: v.ok for name, v in official.items()},
            reasons={name: v.error.message for name, v in official.items() if not v.ok and v.error is not None},
            oracle_refusing=oracle_refusing,
            expected=example.expects,
            mutator=example.mutator,
            oracle_consulted=consulted,
            format_version=example.format_version,
            loaded_events=loaded_events(official),
        )
        if truth.refusing:  # the transform broke the log for an official layer: it is a log of its own, judged so
            metamorphic = ()
        classified = classify(verdict, truth, reference=reference, vocabulary=self.vocabulary, layers=self.layers)
        if any(d.kind == "wrong-place" for d in classified) and not _seqs_name_events(example):
            truth = replace(truth, locations_reliable=False)
            classified = [d for d in classified if d.kind != "wrong-place"]
        if any(d.kind == "wrong-layer" for d in classified) and not header_is_record(example.data, example.compression):
            truth = replace(truth, header_record=False)
            classified = classify(verdict, truth, reference=reference, vocabulary=self.vocabulary, layers=self.layers)
        disagreements = tuple(classified) + metamorphic + oracle_crash
        return JudgedExample(
            example, verdict, truth, official, disagreements, shape, reference, self.vocabulary, checker_seconds,
            self.layers, reached, checker_lines,
        )

    def reported_by_builtin(self, example: Example) -> frozenset[str]:
        """The rules the built-in checker with every rule on reports on ``example``."""
        judges = (self.checker, self.reference)
        builtin = next(
            (c for c in judges if isinstance(c, BuiltinChecker) and not c.without), BuiltinChecker()
        )
        return frozenset(f.rule for f in builtin.check_data(example.data, example.compression).findings)

    def still_fails(
        self,
        defect: Disagreement,
        found: Example,
        on_hold: Callable[[Example, JudgedExample], None] | None = None,
    ) -> StillFails | None:
        """The minimiser's predicate for ``defect``, found on ``found``: a candidate still fails
        when the judges in ``scope_of(defect)`` still show its signature on it.

        A miss of declared rules (``miss|expected``) shows on any log, even the bare header:
        the declaration travels with the example. There the mutant must also stay what it was:
        the built-in checker with every rule on still reports every missed rule it reports on
        ``found`` (the incident is still in it), and the official layers still give the
        verdict they gave ``found`` (the same layers refuse, with the same refusal fingerprints:
        a smaller log refused for another reason, or no longer refused, is another log). When
        the built-in checker reports none of the missed rules, nothing can tell a candidate that
        kept the defect from one that lost it, and the answer is ``None`` (do not minimise).
        A metamorphic finding is not minimised either: its witness is a pair, a log and its
        transform, which only Hypothesis shrinks together. ``on_hold`` sees every candidate
        that keeps the signature, with its (narrowed) judgement: the minimiser's best so far,
        should it be stopped.
        """
        if defect.kind == "metamorphic":
            # the delta-debugger shrinks the transformed log alone, not its original: the pair
            # would no longer be one log and its transform (Hypothesis shrinks them together)
            return None
        signature, scope = defect.signature, scope_of(defect)
        planted = frozenset(defect.rules) if defect.layer == "expected" else frozenset()
        verdict: frozenset[tuple[str, str]] | None = None
        if planted:
            planted &= self.reported_by_builtin(found)
            if not planted:
                return None
            if self._official_wanted(found, None):
                scope = replace(scope, layers=None)  # every official layer that reads the log
                verdict = official_verdict_key(self.judge(found, replace(_CHECKER_ALONE, layers=None)).truth)

        def predicate(candidate: Example) -> bool:
            return first([candidate]) == 0

        def first(candidates: Sequence[Example]) -> int | None:
            asked = [
                (i, c) for i, c in enumerate(candidates)
                if not planted or planted <= self.reported_by_builtin(c)
            ]
            if not asked:
                return None
            verdicts = self.judge_many([c for _, c in asked], scope)
            for (i, candidate), judged in zip(asked, verdicts, strict=True):
                if verdict is not None and official_verdict_key(judged.truth) != verdict:
                    continue
                if signature in {d.signature for d in judged.disagreements}:
                    if on_hold is not None:
                        on_hold(candidate, judged)
                    return i
            return None

        return StillFails(predicate, first if self.batch_width > 1 else None, self.batch_width)

    @property
    def batch_width(self) -> int:
        """How many logs the checker under test is best asked about at once: one, unless
        each question starts a process (a ``{logs}`` command), where it is ``BATCH_LOGS``."""
        if self._batch_width is not None:
            return self._batch_width
        return BATCH_LOGS if isinstance(self.checker, BatchCommandChecker) else 1


def _ask(checker: CheckerUnderTest, example: Example, path: Path | None) -> CheckerVerdict:
    """``checker``'s verdict on ``example``: the built-in checker reads the bytes, any other the file."""
    if isinstance(checker, BuiltinChecker):
        return checker.check_data(example.data, example.compression)
    assert path is not None, "a checker that reads files is given one"
    return checker.check(path)


def _ram_dir() -> str | None:
    """A RAM-backed directory for scratch files where the platform offers one (else the default)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _twin(example: Example) -> Example | None:
    """The untransformed original of a metamorphic example, as an example of its own."""
    if example.transform is None or example.original is None:
        return None
    return Example(example.original, example.original_compression, format_version=example.format_version)


def loaded_events(official: Mapping[str, Any]) -> int | None:
    """How many events the official loader recovered from a log it accepted (``load``'s stored
    events: packed chunk rows expanded, its crash closers left out), from the official verdicts of
    a judgement (``LayerVerdict``s) or as a campaign records them (``{"ok": true, "events": N}``);
    ``None`` where ``load`` was not asked, refused the log, or gave no count."""
    verdict = official.get(str(L.LOAD))
    if verdict is None:
        return None
    if isinstance(verdict, Mapping):
        ok, count = verdict.get("ok"), verdict.get("events")
    else:
        result = getattr(verdict, "result", None)
        ok, count = getattr(verdict, "ok", False), result.get("storedEvents") if isinstance(result, Mapping) else None
    if ok is not True or not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return None
    return count


def header_is_record(data: bytes, compression: Compression) -> bool:
    """Whether the log's header line is a JSON object (a log our reader refuses: not known to be
    otherwise, so ``True``)."""
    from dshfuzz.model import MISSING, parse_log

    try:
        header = parse_log(data, compression=compression).header
    except Exception:  # noqa: BLE001 - an unreadable log is judged as it is
        return True
    return header is None or header.raw is MISSING or isinstance(header.raw, dict)


def _seqs_name_events(example: Example) -> bool:
    """Whether every event of ``example`` has its own non-negative integer seq, so that a
    seq names one event: where seqs are invalid or repeated (a replayed write) a place
    cannot be wrong. An unreadable log names nothing."""
    from dshfuzz.model import parse_log

    try:
        log = parse_log(example.data, compression=example.compression)
    except Exception:  # noqa: BLE001 - a log our reader refuses has no reliable places
        return False
    seen: set[int] = set()
    for event in log.events:
        seq = event.raw.get("seq") if isinstance(event.raw, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or seq in seen:
            return False
        seen.add(seq)
    return True


def _framing_rules() -> frozenset[str]:
    from dshfuzz.checker import RULES

    return frozenset(str(rid) for rid, rule in RULES.items() if str(rule.layer) == "framing")


def _reference(example: Example) -> tuple[Shape, frozenset[str], bool]:
    """The log's shape, the layers the reference oracle says refuse it, and whether the
    oracle judges this log at all (one streamed parse: the oracle reads the events alone)."""
    from dshfuzz.model import parse_events

    from ._reference import judges, reference_refusals

    log, parsed = parse_events(example.data, compression=example.compression)
    events = [e.raw for e in parsed]
    header = log.header.raw if log.header is not None else None
    refusing = reference_refusals(events, header, log.format_version)
    return _shape(events, len(log.frames)), refusing, judges(header, log.format_version, events)


def shape_of(example: Example) -> Shape:
    """``example``'s :class:`Shape` alone (no judgement); an unreadable log has the empty shape."""
    from dshfuzz.model import parse_events

    try:
        log, events = parse_events(example.data, compression=example.compression)
        return _shape([e.raw for e in events], len(log.frames))
    except Exception:  # noqa: BLE001 - the judge will say what is wrong with it; it steers nowhere
        return Shape(0, 0, 0, 0)


def _shape(events: list[Any], frames: int) -> Shape:
    """The shape of a log whose events are ``events`` (their values) and which has ``frames`` frames."""
    calls: set[Any] = set()
    replaces = 0
    for ev in events:
        if not isinstance(ev, dict):
            continue
        data = ev.get("data")
        if isinstance(ev.get("surfaceOp"), dict):
            replaces += 1
        if ev.get("type") == "tool/call" and isinstance(data, dict):
            if isinstance(data.get("callId"), str):  # a confused id (a list, an object) opens no call
                calls.add(data["callId"])
        elif ev.get("type") == "tool/result" and isinstance(data, dict):
            source = (
                (data.get("message") or {}).get("source") if isinstance(data.get("message"), dict) else None
            )
            if isinstance(source, dict) and isinstance(source.get("callId"), str):
                calls.discard(source["callId"])
    return Shape(len(events), frames, replaces, len(calls))
