"""Judge one log with every judge: the checker under test, the reference oracle and
the official layers, then classify the disagreements.

The judged log is always a file on disk (the official loader and external
checkers read files); it lives in a private scratch directory and is removed
after judging.

Minimising a finding judges hundreds of candidates, so the minimiser's predicate
(:meth:`Judge.still_fails`) runs only the judges the finding's signature depends on
(:func:`scope_of`): the checker always, a ``miss`` of one layer that layer's official
judge and the reference oracle only when a model stands for it, ``wrong-place`` the
reference checker, ``false-alarm`` everyone. The signature is a function of exactly
those verdicts, so the narrowed predicate agrees with a full judgement; the campaign
still judges the minimal log in full once.
"""

from __future__ import annotations

import collections
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Self

from dshfuzz.contracts.layers import CAMPAIGN_LAYERS
from dshfuzz.contracts.layers import OfficialLayer as L

from ._classify import Disagreement, Truth, classify, metamorphic_disagreement, truth_from
from ._judges import BATCH_LOGS, BatchCommandChecker, BuiltinChecker, CheckerUnderTest, CheckerVerdict
from ._reference import MODEL_LAYERS

__all__ = [
    "CAMPAIGN_LAYERS",
    "EVERY_JUDGE",
    "LATER_FORMAT_LAYERS",
    "Example",
    "Judge",
    "JudgedExample",
    "Scope",
    "Shape",
    "official_layers_for",
    "scope_of",
]

LATER_FORMAT_LAYERS = tuple(layer for layer in CAMPAIGN_LAYERS if layer not in (L.SEED, L.LOAD))
"""The layers whose verdict on a format-1 log means something: the rc.8 ``seed`` and
``load`` refuse any version but 0 by the version alone; the released layer restores v1.
See :func:`official_layers_for` for formats 2 and 3."""


def official_layers_for(format_version: int | None) -> tuple[str, ...]:
    """The official layers whose verdict on a log of ``format_version`` means something.

    Released refuses formats 2 and 3 by the version alone (measured: "stored Session uses
    newer format v3; this build writes v1"). Format 3 changed what the rc.8 fold reads
    (catalog S-rules: ``system/message`` joins the surface, replaces name
    ``startSeq``/``endSeq``), so the fold, the invariant companion that folds, and the
    meter (it reads ``op.start``/``op.end``) refuse valid v3 logs; only the inbox still
    reads a v3 log as it is meant. The reference oracle judges every format.
    """
    if format_version in (0, None):
        return CAMPAIGN_LAYERS
    if format_version == 1:
        return LATER_FORMAT_LAYERS
    if format_version == 2:
        return tuple(layer for layer in LATER_FORMAT_LAYERS if layer != L.RELEASED)
    return (str(L.INBOX),)


_ORACLE_LAYERS = frozenset(MODEL_LAYERS.values()) | {str(L.WIRE), str(L.PROVIDER)}
"""The layers a reference model speaks for (the wire model for ``wire`` and ``provider``)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The judges one judgement runs besides the checker under test.

    ``layers`` are the official layers consulted (``None``: every campaign layer);
    ``oracle`` the reference models (without them the judgement's shape is empty);
    ``reference`` the reference checker (``wrong-place``); ``twin`` the untransformed
    twin of a metamorphic example.
    """

    layers: tuple[str, ...] | None = None
    oracle: bool = True
    reference: bool = True
    twin: bool = True


EVERY_JUDGE = Scope()
_CHECKER_ALONE = Scope(layers=(), oracle=False, reference=False, twin=False)


def scope_of(defect: Disagreement) -> Scope:
    """The judges ``defect``'s signature depends on (see the module docstring)."""
    if defect.kind in ("miss", "miss-model-only", "attribution", "not-implemented"):
        if defect.layer == "expected":  # the declaration travels with the example
            return _CHECKER_ALONE
        layer = str(defect.layer)
        return replace(
            _CHECKER_ALONE, layers=(layer,) if layer in CAMPAIGN_LAYERS else (), oracle=layer in _ORACLE_LAYERS
        )
    if defect.kind in ("crash", "timeout", "unparsable-output"):
        return _CHECKER_ALONE
    if defect.kind == "wrong-place":
        return replace(_CHECKER_ALONE, reference=True)
    if defect.kind == "metamorphic":
        return replace(_CHECKER_ALONE, twin=True)
    if defect.kind == "oracle-crash":
        return replace(_CHECKER_ALONE, oracle=True)
    return EVERY_JUDGE


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
        out = classify(
            replace(self.verdict, findings=findings), self.truth, reference=self.reference, vocabulary=self.vocabulary
        )
        for d in self.disagreements:
            if d.kind == "oracle-crash":
                out.append(d)
            elif d.kind == "metamorphic" and (kept := tuple(r for r in d.rules if r not in rules)):
                out.append(replace(d, rules=kept))
        return tuple(d for d in out if d.is_reportable)


JUDGE_PARTS = ("checker", "reference checker", "official layers", "reference oracle", "files")
"""What :attr:`Judge.seconds` counts: the checker under test (its metamorphic twins
included), the built-in checker placing findings, the official layers, the reference
oracle (and the shape it reads), and writing each log to a scratch file."""


class Judge:
    """Runs the judges; owns the scratch directory and (optionally) an official oracle.

    ``official`` is an ``OfficialOracle`` or ``None`` (then only the reference oracle
    and the mutator's declaration speak for the truth). ``reference`` is a trusted
    checker whose seqs ``wrong-place`` compares against. ``batch_width`` overrides how
    many logs the checker is best asked about at once (:attr:`batch_width`).
    """

    def __init__(
        self,
        checker: CheckerUnderTest,
        *,
        official: Any | None = None,
        reference: CheckerUnderTest | None = None,
        scratch: Path | None = None,
        batch_width: int | None = None,
    ) -> None:
        self.checker = checker
        self._batch_width = batch_width
        self.official = official
        self.reference = reference
        self.vocabulary: frozenset[str] | None = getattr(checker, "rules", None)
        self._own_scratch = scratch is None
        self.scratch = Path(tempfile.mkdtemp(prefix="dshfuzz-judge-")) if scratch is None else scratch
        self._counter = 0
        self.seconds: collections.Counter[str] = collections.Counter()
        """Seconds spent so far per judge (:data:`JUDGE_PARTS`): what a campaign's time
        breakdown charges to judging."""

    @contextmanager
    def _timed(self, part: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[part] += time.perf_counter() - began

    def close(self) -> None:
        if self._own_scratch:
            for child in self.scratch.iterdir():
                child.unlink(missing_ok=True)
            self.scratch.rmdir()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _official_verdicts(
        self, path: Path, format_version: int | None, wanted: tuple[str, ...] | None
    ) -> dict[str, Any]:
        """The consulted layers' verdicts (of ``wanted`` only, when given); for a log written in a
        later format, only the layers that judge that format (seed and load refuse any version
        but 0 by the version alone)."""
        if self.official is None:
            return {}
        with self._timed("official layers"):
            return self._ask_official(path, format_version, wanted)

    def _ask_official(
        self, path: Path, format_version: int | None, wanted: tuple[str, ...] | None
    ) -> dict[str, Any]:
        from dshfuzz.oracle.official import OracleError

        layers = official_layers_for(format_version)
        if wanted is not None:
            layers = tuple(layer for layer in layers if layer in wanted)
            if not layers:
                return {}
        try:
            return dict(self.official.check(path=str(path), layers=layers))
        except OracleError:  # the oracle's timeout or crash is not the checker's defect: no verdict
            return {}

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

    def _metamorphic(
        self, example: Example, after: CheckerVerdict, before: CheckerVerdict | None = None
    ) -> tuple[Disagreement, ...]:
        """Judge the untransformed twin (``before``: its verdict, when already asked); a
        changed verdict is a metamorphic disagreement."""
        twin = _twin(example)
        if twin is None:
            return ()
        if before is None:
            with self._on_disk(twin) as path, self._timed("checker"):
                before = self.checker.check(path)
        ignore = _framing_rules() if example.framing_only else frozenset()
        found = metamorphic_disagreement(example.transform, before, after, ignore=ignore)
        return () if found is None else (replace(found, format_version=example.format_version),)

    def judge_many(self, examples: Sequence[Example], scope: Scope = EVERY_JUDGE) -> list[JudgedExample]:
        """:meth:`judge` of each of ``examples``, the checker under test asked once for all of
        them (``check_many``: one process for a batch checker); each is charged an equal share
        of the checker's time."""
        if len(examples) == 1:
            return [self.judge(examples[0], scope)]
        twins = [_twin(e) if scope.twin else None for e in examples]
        asked = [*examples, *(t for t in twins if t is not None)]
        with ExitStack() as stack:
            paths = [stack.enter_context(self._on_disk(example)) for example in asked]
            began = time.perf_counter()
            with self._timed("checker"):
                verdicts = self.checker.check_many(paths)
            share = (time.perf_counter() - began) / len(examples)
        before = iter(verdicts[len(examples):])
        return [
            self.judge(e, scope, verdict=(v, share), twin_verdict=None if t is None else next(before))
            for e, v, t in zip(examples, verdicts, twins, strict=False)
        ]

    def judge(
        self,
        example: Example,
        scope: Scope = EVERY_JUDGE,
        *,
        verdict: tuple[CheckerVerdict, float] | None = None,
        twin_verdict: CheckerVerdict | None = None,
    ) -> JudgedExample:
        """Every disagreement on ``example`` among the judges in ``scope`` (all by default);
        ``verdict`` is the checker's, with its seconds, when already asked (:meth:`judge_many`)."""
        with self._on_disk(example) as path:
            if verdict is None:
                began = time.perf_counter()
                with self._timed("checker"):
                    checked = self.checker.check(path)
                checker_seconds = time.perf_counter() - began
            else:
                checked, checker_seconds = verdict
            # the reference checker places findings (wrong-place): a verdict with no seq needs none
            placed = any(f.seq is not None for f in checked.findings)
            reference = None
            if self.reference is not None and scope.reference and placed:
                with self._timed("reference checker"):
                    reference = self.reference.check(path)
            official = self._official_verdicts(path, example.format_version, scope.layers)
        metamorphic = self._metamorphic(example, checked, twin_verdict) if scope.twin else ()
        shape, oracle_refusing, consulted = Shape(0, 0, 0, 0), frozenset[str](), False
        oracle_crash: tuple[Disagreement, ...] = ()
        if scope.oracle:
            try:
                with self._timed("reference oracle"):
                    shape, oracle_refusing, consulted = _reference(example)
            except Exception:  # noqa: BLE001 - our own oracle's crash is a finding, not the end of the run
                detail = traceback.format_exc(limit=6)
                oracle_crash = (
                    Disagreement("oracle-crash", None, (), example.mutator, detail[-2000:], example.format_version),
                )
        truth = truth_from(
            {name: v.ok for name, v in official.items()},
            reasons={name: v.error.message for name, v in official.items() if not v.ok and v.error is not None},
            oracle_refusing=oracle_refusing,
            expected=example.expects,
            mutator=example.mutator,
            oracle_consulted=consulted,
            format_version=example.format_version,
        )
        classified = classify(checked, truth, reference=reference, vocabulary=self.vocabulary)
        if any(d.kind == "wrong-place" for d in classified) and not _seqs_name_events(example):
            truth = replace(truth, locations_reliable=False)
            classified = [d for d in classified if d.kind != "wrong-place"]
        disagreements = tuple(classified) + metamorphic + oracle_crash
        return JudgedExample(
            example, checked, truth, official, disagreements, shape, reference, self.vocabulary, checker_seconds
        )

    def reported_by_builtin(self, example: Example) -> frozenset[str]:
        """The rules the built-in checker with every rule on reports on ``example``."""
        judges = (self.checker, self.reference)
        builtin = next(
            (c for c in judges if isinstance(c, BuiltinChecker) and not c.without), BuiltinChecker()
        )
        with self._on_disk(example) as path:
            return frozenset(f.rule for f in builtin.check(path).findings)

    def still_fails(
        self,
        defect: Disagreement,
        found: Example,
        on_hold: Callable[[Example, JudgedExample], None] | None = None,
    ) -> StillFails | None:
        """The minimiser's predicate for ``defect``, found on ``found``: a candidate still fails
        when the judges in ``scope_of(defect)`` still show its signature on it.

        A miss of declared rules (``miss|expected``) shows on any log, even the bare header:
        the declaration travels with the example. There the defect must also still be in the
        candidate: the built-in checker with every rule on still reports every missed rule it
        reports on ``found``. When it reports none of them, nothing can tell a candidate that
        kept the defect from one that lost it, and the answer is ``None`` (do not minimise).
        ``on_hold`` sees every candidate that keeps the signature, with its (narrowed)
        judgement: the minimiser's best so far, should it be stopped.
        """
        signature, scope = defect.signature, scope_of(defect)
        planted = frozenset(defect.rules) if defect.layer == "expected" else frozenset()
        if planted:
            planted &= self.reported_by_builtin(found)
            if not planted:
                return None

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


def _twin(example: Example) -> Example | None:
    """The untransformed original of a metamorphic example, as an example of its own."""
    if example.transform is None or example.original is None:
        return None
    return Example(example.original, example.original_compression, format_version=example.format_version)


def _seqs_name_events(example: Example) -> bool:
    """Whether every event of ``example`` has its own non-negative integer seq, so that a
    seq names one event: where seqs are invalid or repeated (a replayed write) a place
    cannot be wrong. An unreadable log names nothing."""
    from dshfuzz.model import parse_log

    try:
        log = parse_log(example.data, compression=example.compression)  # type: ignore[arg-type]
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
    oracle judges this log at all (one parse)."""
    from dshfuzz.model import parse_log

    from ._reference import judges, reference_refusals

    log = parse_log(example.data, compression=example.compression)  # type: ignore[arg-type]
    events = [e.raw for e in log.events]
    header = log.header.raw if log.header is not None else None
    refusing = reference_refusals(events, header, log.format_version)
    return _shape(log), refusing, judges(header, log.format_version)


def shape_of(example: Example) -> Shape:
    """``example``'s :class:`Shape` alone (no judgement); an unreadable log has the empty shape."""
    from dshfuzz.model import parse_log

    try:
        return _shape(parse_log(example.data, compression=example.compression))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - the judge will say what is wrong with it; it steers nowhere
        return Shape(0, 0, 0, 0)


def _shape(log: Any) -> Shape:
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
            if isinstance(data.get("callId"), str):  # a confused id (a list, an object) opens no call
                calls.add(data["callId"])
        elif ev.get("type") == "tool/result" and isinstance(data, dict):
            source = (
                (data.get("message") or {}).get("source") if isinstance(data.get("message"), dict) else None
            )
            if isinstance(source, dict) and isinstance(source.get("callId"), str):
                calls.discard(source["callId"])
    return Shape(len(events), len(log.frames), replaces, len(calls))
