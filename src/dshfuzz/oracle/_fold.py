"""The reference surface fold: official ``foldSurface`` (S:444) in plain Python.

The surface is the ordered list of event seqs whose messages the model sees. An
``append`` pushes the event's seq; a replace splices the current nodes from
``start`` through ``end`` (both *current node seqs*) into the replacing event's
seq. Every rule below is a line of ``planSurfaceEvent`` and its helpers
(S:295-455), checked in the same order so the first failure and its message are
the official ones:

1. ``seq`` equals the event's position (S:398).
2. Surface metadata only on the surface types, ``surfaceOp`` required on them,
   and a replace op of the exact shape (``surfaceOpOf``, S:305).
3. A replace range whose ends are current nodes, in order (``replacementRange``).
4. ``sourceEventSeqs``: an array, non-empty except on ``assistant/message``, of
   unique earlier event seqs that cites every shadowed node (``assertProvenance``).
5. A ``tool/result`` replace rewrites exactly one current ``tool/result`` and
   changes nothing but ``message.content[0].content`` (``assertToolResultRewrite``).

``version=3`` is the catalog's format-v3 variant (rule S8): the replace op names
its range as ``{"op":"replace","startSeq","endSeq"}``, ``assistant/message``
may not carry ``sourceEventSeqs`` at all, and ``system/message`` joins the
surface types. Format versions 1 and 2 fold exactly like version 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal

from dshfuzz.contracts import is_event_seq
from dshfuzz.contracts import js as _js
from dshfuzz.model import MISSING

from ._verdict import Accepted, Verdict, Violation, raw_events

__all__ = ["FoldError", "Replacement", "SurfaceFold", "SurfaceFolder", "fold_surface"]

_V0_SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_V3_SURFACE_TYPES = _V0_SURFACE_TYPES | {"system/message"}


@dataclass(frozen=True, slots=True)
class Replacement:
    """One replace the fold applied (the official ``replacements`` entry)."""

    seq: int
    start: int
    end: int
    shadowed_seqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SurfaceFold:
    """The folded surface: current node seqs in model-visible order, and every replace."""

    nodes: tuple[int, ...]
    replacements: tuple[Replacement, ...]


class FoldError(Exception):
    """One event the fold refuses; ``code`` is the reason code, ``str(self)`` the official text."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class SurfaceFolder:
    """Incremental fold over one event list: feed positions in order with :meth:`apply`.

    Other models (wire, lifecycle) reuse it to see the surface as of each event.
    ``nodes`` is live; callers must not mutate it.
    """

    def __init__(self, events: list[Any], *, version: int = 0) -> None:
        self.events = events
        self.v3 = version == 3
        self.surface_types = _V3_SURFACE_TYPES if self.v3 else _V0_SURFACE_TYPES
        self.nodes: list[int] = []

    def apply(self, index: int) -> Replacement | None:
        """Fold the event at ``index``; return its replacement, if it is one.

        Raises :class:`FoldError` (leaving the surface untouched) when the event
        breaks a rule.
        """
        event = self.events[index]
        try:
            seq = _js.get(event, "seq")
        except _js.JsTypeError as exc:
            raise FoldError("malformed-event", str(exc)) from None
        if not _js.strict_equal(seq, index):
            raise FoldError(
                "seq-not-contiguous",
                f"session event seq {_js.js_string(seq)} is not contiguous; expected {index}",
            )
        op = self._surface_op(event)  # a non-object event never gets here: its seq is undefined
        if op is None:
            return None
        if op == "append":
            self._assert_provenance(event, index, ())
            self.nodes.append(index)
            return None
        start, end = op
        start_idx, end_idx = self._replacement_range(start, end)
        shadowed = tuple(self.nodes[start_idx : end_idx + 1])
        self._assert_provenance(event, index, shadowed)
        self._assert_tool_result_rewrite(event, shadowed)
        self.nodes[start_idx : end_idx + 1] = [index]
        return Replacement(index, start, end, shadowed)

    def _surface_op(self, event: dict[str, Any]) -> Literal["append"] | tuple[int, int] | None:
        """``surfaceOpOf``: ``None`` off the surface, ``"append"``, or the replace range."""
        etype = event["type"] if "type" in event else MISSING
        name = _js.js_string(etype)
        op = event.get("surfaceOp", MISSING)
        if not (type(etype) is str and etype in self.surface_types):
            if op is not MISSING:
                raise FoldError(
                    "surface-op-forbidden",
                    f'session event "{name}" is not surface-eligible and cannot carry surfaceOp',
                )
            if event.get("sourceEventSeqs", MISSING) is not MISSING:
                raise FoldError(
                    "source-seqs-forbidden",
                    f'session event "{name}" is not surface-eligible and cannot carry sourceEventSeqs',
                )
            return None
        if op is MISSING:
            raise FoldError(
                "surface-op-missing",
                f'session event "{name}" is surface-eligible and requires a surfaceOp marker',
            )
        if type(op) is str and op == "append":
            return "append"
        if type(op) is not dict:
            raise FoldError("surface-op-invalid", f'session event "{name}" carries an invalid surfaceOp')
        start_key, end_key = ("startSeq", "endSeq") if self.v3 else ("start", "end")
        if not (
            len(op) == 3
            and op.get("op") == "replace"
            and type(op.get("op")) is str
            and is_event_seq(op.get(start_key, MISSING))
            and is_event_seq(op.get(end_key, MISSING))
        ):
            raise FoldError(
                "replace-op-invalid", f'session event "{name}" carries an invalid replace surfaceOp'
            )
        return int(op[start_key]), int(op[end_key])

    def _replacement_range(self, start: int, end: int) -> tuple[int, int]:
        """``replacementRange``: the node indices of ``start`` and ``end``."""
        try:
            start_idx = self.nodes.index(start)
        except ValueError:
            raise FoldError(
                "replace-start-not-found", f"surface replace: start seq {start} not found in surface"
            ) from None
        try:
            end_idx = self.nodes.index(end)
        except ValueError:
            raise FoldError(
                "replace-end-not-found", f"surface replace: end seq {end} not found in surface"
            ) from None
        if start_idx > end_idx:
            raise FoldError(
                "replace-range-reversed",
                f"surface replace: start seq {start} (index {start_idx}) is after end seq {end} "
                f"(index {end_idx})",
            )
        return start_idx, end_idx

    def _assert_provenance(self, event: dict[str, Any], seq: int, shadowed: tuple[int, ...]) -> None:
        """``assertProvenance``: the cited sources, against the shadowed nodes."""
        raw = event.get("sourceEventSeqs", MISSING)
        etype = event.get("type", MISSING)
        sources: set[float] = set()
        if raw is not MISSING:
            if self.v3 and etype == "assistant/message":
                raise FoldError(
                    "source-seqs-forbidden",
                    'session event "assistant/message" cannot carry sourceEventSeqs in format v3',
                )
            if type(raw) is not list:
                raise FoldError(
                    "source-seqs-not-array",
                    f"sourceEventSeqs on event at seq {seq} must be an array when present",
                )
            if not raw and etype != "assistant/message":
                raise FoldError(
                    "source-seqs-empty", "sourceEventSeqs must not be empty except on assistant/message"
                )
            non_earlier = None
            for source in raw:
                if not is_event_seq(source):
                    raise FoldError(
                        "source-seq-invalid",
                        f'session event "{_js.js_string(etype)}" sourceEventSeqs must densely contain '
                        "non-negative safe integers",
                    )
                sources.add(source)
                if non_earlier is None and source >= seq:
                    non_earlier = source
            if len(sources) != len(raw):
                raise FoldError("source-seqs-duplicate", "sourceEventSeqs must not contain duplicates")
            if non_earlier is not None:
                raise FoldError(
                    "source-seq-not-earlier",
                    f"sourceEventSeqs must reference earlier events: {_js.js_string(non_earlier)} "
                    f">= current seq {seq}",
                )
        missing = [node for node in shadowed if node not in sources]
        if missing:
            raise FoldError(
                "replace-missing-shadowed",
                "surface replace: sourceEventSeqs must include every shadowed surface node; missing "
                + ", ".join(map(str, missing)),
            )

    def _assert_tool_result_rewrite(self, event: dict[str, Any], shadowed: tuple[int, ...]) -> None:
        """``assertToolResultRewrite``: a result replace may change only one result's content."""
        if event.get("type") != "tool/result":
            return
        if len(shadowed) != 1:
            raise FoldError(
                "tool-result-replace-count",
                "tool/result surface replacement must rewrite exactly one current node",
            )
        original = self.events[shadowed[0]]
        if original.get("type") != "tool/result":
            raise FoldError(
                "tool-result-replace-target",
                "tool/result surface replacement must target a current tool/result",
            )
        try:
            before = _content_masked(original.get("data", MISSING))
            after = _content_masked(event.get("data", MISSING))
        except _js.JsTypeError as exc:
            raise FoldError("malformed-event", str(exc)) from None
        if not _js.deep_equal_json(before, after):
            raise FoldError(
                "tool-result-replace-changes", "tool/result surface replacement may change only content"
            )


def _content_masked(data: Any) -> dict[str, Any]:
    """``{...data, message: {...message, content: [{...content[0], content: null}]}}``
    built with JavaScript's property reads, so malformed data throws where V8 does."""
    rest = _js.spread(data)
    message = _js.get(data, "message")
    first = _js.get(_js.get(message, "content"), 0)
    rest["message"] = {**_js.spread(message), "content": [{**_js.spread(first), "content": None}]}
    return rest


def fold_surface(events: Iterable[Any], *, version: int = 0) -> Verdict[SurfaceFold]:
    """Fold a whole log as official ``foldSurface`` does (``version=3``: the catalog's v3 fold).

    Events are raw JSON values or :class:`dshfuzz.model.Event` objects. A non-object
    event fails exactly where JavaScript would: ``null`` throws on ``.seq``
    (``malformed-event``); any other non-object has no ``seq`` (``seq-not-contiguous``).
    """
    log = raw_events(events)
    folder = SurfaceFolder(log, version=version)
    replacements: list[Replacement] = []
    for index in range(len(log)):
        try:
            replacement = folder.apply(index)
        except FoldError as exc:
            return Violation(index, exc.code, str(exc))
        if replacement is not None:
            replacements.append(replacement)
    return Accepted(SurfaceFold(tuple(folder.nodes), tuple(replacements)))
