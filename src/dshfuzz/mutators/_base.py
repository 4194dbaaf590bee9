"""What a mutator is, and what it produces.

A :class:`Mutator` reproduces one real incident. It works at one :class:`Level`
of the log (logical events, packed storage rows, physical lines, zstd frames or
raw bytes) and is driven by a Hypothesis ``data`` object, so a single mutator
yields many distinct, shrinkable mutants. Its ``expects`` are the rule ids that
must fire on every mutant it makes; its ``official`` are the official layers
that must refuse every one of them -- a claim the conformance suite verifies,
never one copied from the reference.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from hypothesis import reject
from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer
from dshfuzz.contracts.rules import ALL_FORMATS, RULES, RuleId
from dshfuzz.model import Compression

from ._draft import DraftSource, EventDraft, Inapplicable, as_draft

__all__ = [
    "CompressionPolicy",
    "DrawAdapter",
    "Edit",
    "Edited",
    "Level",
    "LogShape",
    "MutateFn",
    "Mutant",
    "Mutator",
    "TwinFn",
    "applicable_rules",
    "mutator",
    "run_edit",
]


class Level(enum.StrEnum):
    """The representation a mutator edits (see :mod:`dshfuzz.mutators._draft`)."""

    EVENT = "event"
    ROW = "row"
    LINE = "line"
    FRAME = "frame"
    BYTE = "byte"


CompressionPolicy = Literal["any", "none", "zstd"]
"""Which container a mutator's mutants use: drawn (``any``) or pinned."""

MutateFn = Callable[[Any, Any], str]
"""``fn(draft, data) -> description``: edits the level's draft in place, drawing
every choice from ``data``; raises :class:`Inapplicable` when its precondition does
not hold; returns what it injected where. A mutator's edit may also take a keyword-only
``defect: bool = True`` (:class:`TwinFn`): then it can build its twin."""


class TwinFn(Protocol):
    """A mutator's edit that can build its twin: called with ``defect=False`` it makes exactly
    the draws it makes with the defect (same candidate, same positions, same values), inserts
    the same structure (a marker, a step, an event) but leaves the defect itself out, and
    returns the same description. The twin of a pure corruption or removal is the drawn log,
    unedited."""

    def __call__(self, stage: Any, data: Any, /, *, defect: bool = True) -> str: ...


@dataclass(frozen=True, slots=True)
class LogShape:
    """The valid logs a mutator's incident needs, as generator knobs: the logs drawn for it
    (``logs_for``) have ``turns`` own turns (lo..hi) and the incident feature weights with
    ``weights`` (:class:`~dshfuzz.generators.FeatureWeights` field, probability) overriding
    them. The default is the incident logs every mutator shares. A mutator whose precondition
    those logs rarely meet declares the shape that meets it, so that its draws are not
    rejected; every shape is still a Hypothesis draw of the one generator, so logs stay valid
    and shrink. (This module does not import the generators: ``logs_for`` applies the weights,
    and an unknown weight name fails there.)"""

    turns: tuple[int, int] = (1, 3)
    weights: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.turns[0] <= self.turns[1]:
            raise ValueError(f"turns must satisfy 1 <= lo <= hi, got {self.turns}")


_BEFORE_TURN = ("compaction", "prune", "queued", "prompt_hook")
"""The features the generator draws before a turn behind one gate (its ``_rare``): a weight of 1
makes one of them certain only while the others sharing the gate are 0."""


def before_every_turn(feature: str) -> tuple[tuple[str, float], ...]:
    """:attr:`LogShape.weights` that put ``feature`` (compaction or prune) before every turn: it
    at 1, the other features of its gate at 0."""
    if feature not in _BEFORE_TURN:
        raise ValueError(f"{feature!r} is not drawn before a turn: one of {', '.join(_BEFORE_TURN)}")
    return tuple((name, 1.0 if name == feature else 0.0) for name in _BEFORE_TURN)


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutated log, ready to write to disk or feed to a checker.

    ``expects`` are the rules that must fire on it (the mutator's, restricted to
    those that apply to the log's format version); ``official`` the official
    layers that must refuse it.
    """

    data: bytes
    compression: Compression
    mutator: str
    description: str
    expects: frozenset[RuleId]
    official: frozenset[str]
    format_version: int | None = None

    @property
    def suffix(self) -> str:
        """The file suffix the official reader expects for this container."""
        return ".jsonl.zstd" if self.compression == "zstd" else ".jsonl"


class Edit:
    """What every log edit shares: a ``name``, the :class:`Level` it works at, the
    level-specific ``fn`` and the container ``compression`` policy. Subclasses say
    what the edited log must trigger (:meth:`_expectations`) and what the log needs
    beyond ``fn``'s own precondition (:meth:`_precheck`)."""

    __slots__ = ()
    name: str
    level: Level
    fn: MutateFn
    compression: CompressionPolicy

    def apply(self, log: DraftSource, data: Any, *, compression: Compression | None = None) -> Mutant:
        """Edit ``log`` (a generated log, a draft or a read :class:`~dshfuzz.model.SessionLog`),
        drawing every choice from the Hypothesis ``data`` object; deterministic given its
        draws. ``compression`` pins the container (otherwise drawn, unless the edit pins
        it). Rejects the example when the log does not meet the edit's precondition."""
        try:
            return self.apply_or_raise(log, data, compression=compression)
        except Inapplicable as why:
            reject()
            raise AssertionError("unreachable") from why

    def apply_or_raise(self, log: DraftSource, data: Any, *, compression: Compression | None = None) -> Mutant:
        """:meth:`apply`, raising :class:`Inapplicable` (with the reason) instead of rejecting."""
        draft = self._prepared(log, compression)
        version = draft.format_version
        edited = run_edit(draft, self.level, compression or self.compression, self.fn, data)
        expects, official = self._expectations(version)
        return Mutant(edited.data, edited.compression, self.name, edited.description, expects, official, version)

    def _prepared(self, log: DraftSource, compression: Compression | None) -> EventDraft:
        """A detached draft of ``log``, once the container and the edit's precheck allow it."""
        if compression is not None and self.compression not in ("any", compression):
            raise Inapplicable(f"{self.name} writes {self.compression} logs only")
        draft = as_draft(log)
        self._precheck(draft)
        return draft

    def _precheck(self, draft: EventDraft) -> None:
        """Raise :class:`Inapplicable` when ``draft`` cannot take this edit at all."""

    def _expectations(self, version: int | None) -> tuple[frozenset[RuleId], frozenset[str]]:
        """The rules that must fire and the official layers that must refuse."""
        return frozenset(), frozenset()


@dataclass(frozen=True, slots=True)
class Mutator(Edit):
    """One incident mutator (see the module docstring).

    ``incident`` is one paragraph: what happened in the field and what broke.
    ``fn`` is the level-specific edit; ``compression`` pins the container when
    the incident only exists in one (a torn zstd frame, a torn JSONL line).
    ``min_batches`` is the number of append batches (zstd frames after the
    header) the edit needs; ``formats`` the format versions the incident exists in;
    ``logs`` the shape of the valid logs a campaign draws for it (:class:`LogShape`).
    """

    name: str
    incident: str
    level: Level
    expects: frozenset[RuleId]
    official: frozenset[str]
    fn: MutateFn = field(repr=False, compare=False)
    compression: CompressionPolicy = "any"
    min_batches: int = 1
    formats: frozenset[int] = ALL_FORMATS
    logs: LogShape = LogShape()

    @property
    def doc(self) -> str:
        """The edit's docstring: precondition, injection, determinism."""
        return inspect.cleandoc(self.fn.__doc__ or "")

    @property
    def has_twin(self) -> bool:
        """Whether the edit can build its twin (it takes a keyword-only ``defect``, see :class:`TwinFn`)."""
        try:
            parameter = inspect.signature(self.fn).parameters.get("defect")
        except (TypeError, ValueError):
            return False
        return parameter is not None and parameter.kind is inspect.Parameter.KEYWORD_ONLY

    def twin(self, log: DraftSource, data: Any, *, compression: Compression | None = None) -> Mutant:
        """This mutator's twin on ``log``: the same draws from ``data``, the same container and any
        structure the incident inserts, without the defect itself -- a log every official layer
        that reads its format accepts. It expects no rule and claims no refusal. Rejects the
        example when the log misses the precondition, as :meth:`apply` does."""
        try:
            return self.twin_or_raise(log, data, compression=compression)
        except Inapplicable as why:
            reject()
            raise AssertionError("unreachable") from why

    def twin_or_raise(self, log: DraftSource, data: Any, *, compression: Compression | None = None) -> Mutant:
        """:meth:`twin`, raising :class:`Inapplicable` (with the reason) instead of rejecting; a
        ``TypeError`` when the mutator has no twin (:attr:`has_twin`)."""
        if not self.has_twin:
            raise TypeError(f"mutator {self.name!r} cannot build its twin")
        fn = cast(TwinFn, self.fn)

        def without_defect(stage: Any, drawn: Any) -> str:
            return fn(stage, drawn, defect=False)

        draft = self._prepared(log, compression)
        version = draft.format_version
        edited = run_edit(draft, self.level, compression or self.compression, without_defect, data)
        return Mutant(edited.data, edited.compression, self.name, f"twin of: {edited.description}", frozenset(),
                      frozenset(), version)

    def _precheck(self, draft: EventDraft) -> None:
        if self.formats != ALL_FORMATS and draft.format_version not in self.formats:
            raise Inapplicable(f"{self.name} applies to format v{'/v'.join(map(str, sorted(self.formats)))} only")
        if len(draft.batches()) < self.min_batches:
            raise Inapplicable(f"needs {self.min_batches} append batch{'' if self.min_batches == 1 else 'es'}")

    def _expectations(self, version: int | None) -> tuple[frozenset[RuleId], frozenset[str]]:
        # The official layers (rc.8) judge format v0 only.
        return applicable_rules(self.expects, version), self.official if version == 0 else frozenset()

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "level": str(self.level),
            "compression": self.compression,
            "formats": sorted(self.formats),
            "expects": sorted(map(str, self.expects)),
            "official": sorted(self.official),
            "incident": self.incident,
        }


class DrawAdapter:
    """Gives a ``@st.composite`` draw function the ``data.draw(strategy, label=...)`` shape."""

    __slots__ = ("_draw",)

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self._draw = draw

    def draw(self, strategy: st.SearchStrategy[Any], label: object = None) -> Any:
        return self._draw(strategy)


@dataclass(frozen=True, slots=True)
class Edited:
    """The bytes an edit produced, in which container, and what it changed."""

    data: bytes
    compression: Compression
    description: str


def run_edit(draft: EventDraft, level: Level, policy: CompressionPolicy, fn: MutateFn, data: Any) -> Edited:
    """Lower ``draft`` level by level, applying ``fn`` at ``level``, down to the file's bytes.

    The container is pinned by ``policy`` or drawn from ``data``.
    """
    compression: Compression
    if policy == "any":
        compression = data.draw(st.sampled_from(("none", "zstd")), label="compression")
    else:
        compression = policy
    stage: Any = draft
    description = ""
    for current in Level:
        if current is level:
            description = fn(stage, data)
        if current is Level.BYTE:
            break
        stage = stage.lower(compression) if current is Level.LINE else stage.lower()
    return Edited(bytes(stage.data), compression, description)


def applicable_rules(rules: frozenset[RuleId], version: int | None) -> frozenset[RuleId]:
    """The subset of ``rules`` that the checker runs on a file of format ``version``."""
    return frozenset(r for r in rules if RULES[r].applies_to(version))


def mutator(
    name: str,
    *,
    level: Level,
    expects: tuple[str, ...],
    official: tuple[OfficialLayer, ...] = (),
    incident: str,
    compression: CompressionPolicy = "any",
    min_batches: int = 1,
    formats: frozenset[int] = ALL_FORMATS,
    logs: LogShape = LogShape(),
) -> Callable[[MutateFn], Mutator]:
    """Declare the decorated edit as the incident mutator ``name`` (``expects`` must be
    registry rule ids and ``official`` official layers: a typo fails at import)."""

    def wrap(fn: MutateFn) -> Mutator:
        return Mutator(
            name=name,
            incident=" ".join(incident.split()),
            level=level,
            expects=frozenset(RuleId(r) for r in expects),
            official=frozenset(str(OfficialLayer(layer)) for layer in official),  # type: ignore[call-arg]  # mypy reads a lookup by value as a call to the enum's two-argument __new__
            fn=fn,
            compression=compression,
            min_batches=min_batches,
            formats=formats,
            logs=logs,
        )

    return wrap
