"""Token-meter structure: the checks ``TokenMeter.measure`` and its projections make.

What is modelled (catalog T1/T2, TM:510-650 and TM:112-144), in the official order:

1. The measure fold (``_foldEvent``) over every event, then ``measure`` itself: ``step/start`` may not
   arrive while a step is open; ``step/end`` and ``assistant/message`` must name
   the open step's turn and step (T1); a surface replace must name a range of the
   meter's own positional surface; an ``assistant/message`` with ``usage``, once a
   ``request/header`` was seen, has its cited ``sourceEventSeqs`` re-assembled:
   each must be earlier, unique, an ``assistant/chunk`` of the same turn and
   step (T2), and a chunk the ``BlockAssembler`` knows. ``measure`` then compares
   the request header in force at the last assistant message with the current one.
2. The ``tokenUsage`` projection over every event (it reads usage chunks).
3. The ``contextPressure`` projection over every event: a surface replace right
   after a ``compaction/summary``/``compaction/prune`` must cover exactly the
   range that event priced (the shadow-price claim). ``contextBreakdown`` repeats
   the same fold and adds no check of its own.

Every property read the official code makes on the way is made here with
JavaScript semantics, so a malformed payload fails (``malformed-event``) at the
event where V8 throws a ``TypeError``. The token *arithmetic* is not modelled:
the numbers, and the projection schemas that validate them, are out of scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from dshfuzz.contracts import js as _js
from dshfuzz.model import MISSING, dumps

from ._verdict import Accepted, Verdict, Violation, raw_events

__all__ = ["MeterState", "check_meter"]

_SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_CHUNK_TYPES = frozenset(
    {"block-start", "text-delta", "reasoning-delta", "tool-call-delta", "block-end", "usage", "finish"}
)


@dataclass(frozen=True, slots=True)
class MeterState:
    """Where the measure fold ends: the open step (``(turn, step)`` or ``None``),
    whether a request header was seen, and the meter's surface seqs."""

    open_step: tuple[Any, Any] | None
    header_seen: bool
    surface: tuple[Any, ...]


class _Fail(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def check_meter(events: Iterable[Any], header: Any = None) -> Verdict[MeterState]:
    """Run the meter's structural checks over ``events`` (``header`` is unused)."""
    del header
    log = raw_events(events)
    try:
        state = _measure(log)
        _token_usage(log)
        _context_pressure(log)
    except _Located as exc:
        return Violation(exc.index, exc.code, exc.message)
    return Accepted(state)


class _Located(Exception):
    """A failure pinned to the log position of the event that caused it."""

    def __init__(self, index: int, code: str, message: str) -> None:
        super().__init__(message)
        self.index, self.code, self.message = index, code, message


def _fold_events(log: list[Any], visit: Any) -> None:
    """Feed every event to ``visit`` in order, pinning a failure to its position."""
    for index, event in enumerate(log):
        try:
            visit(event)
        except _Fail as exc:
            raise _Located(index, exc.code, str(exc)) from None
        except _js.JsTypeError as exc:
            raise _Located(index, "malformed-event", str(exc)) from None


def _data(event: Any, key: str) -> Any:
    return _js.get(_js.get(event, "data"), key)


def _measure(log: list[Any]) -> MeterState:
    s = _js.js_string
    step_start: dict[str, Any] | None = None
    header: int | None = None  # position of the request/header in force
    anchor_header: int | None = None  # the one in force at the last assistant/message
    surface: list[Any] = []
    position = -1

    def visit(event: Any) -> None:
        nonlocal step_start, header, anchor_header, surface, position
        position += 1
        etype = _js.get(event, "type")
        seq = _js.get(event, "seq")
        next_step_start, next_header = step_start, header
        if etype == "request/header":
            _canonical_header(_data(event, "header"))
            next_header = position
        elif etype == "step/start":
            if step_start is not None:
                raise _Fail(
                    "meter-step-not-ended",
                    f"token meter: step/start at seq {s(seq)} arrived before turn "
                    f"{s(step_start.get('turn', MISSING))}/step {s(step_start.get('step', MISSING))} ended",
                )
            next_step_start = _js.spread(_js.get(event, "data"))
        elif etype == "step/end":
            if step_start is None or not _names_step(step_start, event):
                raise _Fail(
                    "meter-step-end-unmatched",
                    f"token meter: step/end at seq {s(seq)} has no matching step/start event",
                )
            next_step_start = None
        next_surface = surface
        tokens_known = False
        if _is_surface_event(event):
            next_surface = _fold_surface_tokens(surface, event)
            tokens_known = True
        if etype == "assistant/message":
            if step_start is None or not _names_step(step_start, event):
                raise _Fail(
                    "meter-message-unmatched",
                    f"token meter: assistant/message at seq {s(seq)} has no matching step/start event",
                )
            if not tokens_known:
                raise _js.JsTypeError("Cannot read properties of undefined (reading 'tokens')")
            usage = _data(event, "usage")
            if usage is not MISSING and next_header is not None:
                _provider_assistant(log, event)
                for key in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens"):
                    _js.get(usage, key)
            anchor_header = next_header
        step_start, header, surface = next_step_start, next_header, next_surface

    _fold_events(log, visit)
    if anchor_header is not None and header is not None:
        # measure() compares the anchor's request envelope with the current one.
        try:
            _headers_equal(_data(log[anchor_header], "header"), _data(log[header], "header"))
        except _js.JsTypeError as exc:
            raise _Located(header, "malformed-event", str(exc)) from None
    open_step = (
        None if step_start is None else (step_start.get("turn", MISSING), step_start.get("step", MISSING))
    )
    return MeterState(open_step, header is not None, tuple(surface))


def _headers_equal(a: Any, b: Any) -> bool:
    """``headerEquals`` over two logged request headers, with its property reads."""
    config_a, config_b = _js.get(a, "config"), _js.get(b, "config")
    for key in ("provider", "model", "reasoningEffort", "temperature", "maxTokens"):
        if not _js.strict_equal(_js.get(config_a, key), _js.get(config_b, key)):
            return False
    stop_a, stop_b = _js.get(config_a, "stop"), _js.get(config_b, "stop")
    if stop_a is MISSING or stop_b is MISSING:
        return _js.strict_equal(stop_a, stop_b)
    if not _js.strict_equal(_js.get(stop_a, "length"), _js.get(stop_b, "length")):
        return False
    if type(stop_a) is not list:
        raise _js.JsTypeError("a.stop.every is not a function")
    if not all(_js.strict_equal(item, _js.get(stop_b, i)) for i, item in enumerate(stop_a)):
        return False
    tools_a, tools_b = (_canonical_tools(h) for h in (a, b))
    if not _js.strict_equal(_js.get(tools_a, "length"), _js.get(tools_b, "length")):
        return False
    if type(tools_a) is not list:
        raise _js.JsTypeError("at.every is not a function")
    return True


def _canonical_tools(header: Any) -> Any:
    """``canonicalHeader(header).tools ?? []``."""
    tools = _js.get(header, "tools")
    length = _js.get(tools, "length") if tools is not MISSING else MISSING
    return tools if _js.is_number(length) and length > 0 else []


def _names_step(step_start: dict[str, Any], event: Any) -> bool:
    return _js.strict_equal(step_start.get("turn", MISSING), _data(event, "turn")) and _js.strict_equal(
        step_start.get("step", MISSING), _data(event, "step")
    )


def _is_surface_event(event: Any) -> bool:
    etype = _js.get(event, "type")
    return type(etype) is str and etype in _SURFACE_TYPES and _js.get(event, "surfaceOp") is not MISSING


def _canonical_header(header: Any) -> None:
    """The reads of ``canonicalHeader``: a header object whose ``system``/``tools`` have a length."""
    _js.get(header, "adapterDefaults")
    _js.get(header, "config")
    for key in ("system", "tools"):
        value = _js.get(header, key)
        if value is not MISSING:
            _js.get(value, "length")


def _derived_message(event: Any) -> Any:
    """``deriveEventMessage``: the message a surface event contributes, ``None`` for none."""
    etype = _js.get(event, "type")
    if etype == "user/message":
        return _js.get(event, "data")
    message = _data(event, "message")
    if etype == "assistant/message" and _js.strict_equal(_js.get(_js.get(message, "content"), "length"), 0):
        return None
    return message


def _iterate(value: Any, name: str) -> list[Any]:
    """``for (const x of value)`` over a JSON value."""
    if type(value) is list:
        return value
    if type(value) is str:
        return list(value)
    raise _js.JsTypeError(f"{name} is not iterable")


def _price(blocks: Any) -> None:
    """The reads of ``estimateContent``: fails exactly where pricing would throw."""
    for block in _iterate(blocks, "blocks"):
        btype = _js.get(block, "type")
        if btype == "text" or btype == "reasoning":
            _js.get(_js.get(block, "text"), "length")
        elif btype == "tool-call":
            _js.get(_js.get(block, "name"), "length")
            _js.get(_js.get(block, "arguments"), "length")
        elif btype == "tool-result":
            _price(_js.get(block, "content"))


def _fold_surface_tokens(nodes: list[Any], event: Any) -> list[Any]:
    """``foldSurfaceTokens``: the meter's unvalidated positional fold."""
    message = _derived_message(event)
    if message is not None:
        _price(_js.get(message, "content"))
    op = _js.get(event, "surfaceOp")
    seq = _js.get(event, "seq")
    if _js.strict_equal(op, "append"):
        return [*nodes, seq]
    start, end = _js.get(op, "start"), _js.get(op, "end")
    start_idx = next((i for i, node in enumerate(nodes) if _js.strict_equal(node, start)), -1)
    end_idx = next((i for i, node in enumerate(nodes) if _js.strict_equal(node, end)), -1)
    if start_idx == -1 or end_idx == -1 or start_idx > end_idx:
        s = _js.js_string
        raise _Fail(
            "meter-replace-range",
            f"token surface: replace at seq {s(seq)} has invalid current range {s(start)}-{s(end)}",
        )
    return [*nodes[:start_idx], seq, *nodes[end_idx + 1 :]]


def _element(log: list[Any], key: Any) -> Any:
    """``session.events[key]``."""
    if _js.is_number(key) and float(key).is_integer() and 0 <= key < len(log):
        return log[int(key)]
    if type(key) is str and _js.is_array_index(key) and int(key) < len(log):
        return log[int(key)]
    return MISSING


def _provider_assistant(log: list[Any], event: Any) -> None:
    """``_estimateProviderAssistant``: the cited chunks must re-assemble this step's output (T2)."""
    sources = _js.get(event, "sourceEventSeqs")
    if sources is MISSING:
        return
    s = _js.js_string
    seq = _js.get(event, "seq")
    seen: set[Any] = set()
    partials: dict[Any, dict[str, Any]] = {}
    for source in _iterate(sources, "sourceSeqs"):
        prefix = f"token meter: assistant/message at seq {s(seq)} source seq {s(source)}"
        if _js.greater_or_equal(source, seq):
            raise _Fail("meter-source-not-earlier", f"{prefix} is not earlier")
        key = _js.number_key(source)
        if key in seen:
            raise _Fail(
                "meter-source-repeated",
                f"token meter: assistant/message at seq {s(seq)} repeats source seq {s(source)}",
            )
        seen.add(key)
        chunk_event = _element(log, source)
        if not _js.strict_equal(_js.get(chunk_event, "type"), "assistant/chunk"):
            raise _Fail("meter-source-not-chunk", f"{prefix} is not assistant/chunk")
        if not (
            _js.strict_equal(_data(chunk_event, "turn"), _data(event, "turn"))
            and _js.strict_equal(_data(chunk_event, "step"), _data(event, "step"))
        ):
            raise _Fail("meter-source-other-step", f"{prefix} belongs to another step")
        _assemble(partials, _data(chunk_event, "chunk"))
    blocks = []
    for partial in partials.values():
        if "block" in partial:
            blocks.append(partial["block"])
        elif partial["blockType"] in ("text", "reasoning", "tool-call"):
            continue
        else:
            raise _Fail(
                "meter-incomplete-block",
                f'cannot assemble incomplete block of type "{s(partial["blockType"])}"',
            )
    if partials:
        _price(blocks)


def _truthy(value: Any) -> bool:
    return value not in (None, MISSING, False, 0, "") or type(value) in (list, dict)


def _assemble(partials: dict[Any, dict[str, Any]], chunk: Any) -> None:
    """``BlockAssembler.push``, keeping only what decides whether ``blocks()`` throws."""
    ctype = _js.get(chunk, "type")
    if not (type(ctype) is str and ctype in _CHUNK_TYPES):
        raise _Fail("meter-chunk-unknown", f"unreachable variant in BlockAssembler.push: {dumps(chunk)}")
    if ctype in ("usage", "finish"):
        return
    index = _js.get(chunk, "index")
    key = _js.number_key(index)
    if ctype == "block-start":
        partials.setdefault(key, {"blockType": _js.get(chunk, "blockType")})
        return
    if ctype == "block-end":
        block_type = _js.get(_js.get(chunk, "block"), "type")
        partial = partials.setdefault(key, {"blockType": block_type})
        if "block" not in partial:
            block = _js.get(chunk, "block")
            if _truthy(block):
                partial["block"] = block
        return
    kind = {"text-delta": "text", "reasoning-delta": "reasoning", "tool-call-delta": "tool-call"}[ctype]
    partials.setdefault(key, {"blockType": kind})


def _token_usage(log: list[Any]) -> None:
    """The ``tokenUsage`` projection's reads."""

    def visit(event: Any) -> None:
        etype = _js.get(event, "type")
        if etype == "assistant/chunk":
            chunk = _data(event, "chunk")
            if _js.strict_equal(_js.get(chunk, "type"), "usage"):
                _buckets(_js.get(chunk, "usage"))
        elif etype == "assistant/message":
            usage = _data(event, "usage")
            if usage is not MISSING:
                _buckets(usage)

    _fold_events(log, visit)


def _buckets(usage: Any) -> None:
    for key in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"):
        _js.get(usage, key)


def _context_pressure(log: list[Any]) -> None:
    """The ``contextPressure`` projection: shadow-price claims and its reads."""
    claim: tuple[Any, Any] | None = None
    s = _js.js_string

    def visit(event: Any) -> None:
        nonlocal claim
        etype = _js.get(event, "type")
        next_claim = None
        if etype == "compaction/summary" or etype == "compaction/prune":
            shadowed = _data(event, "shadowedRange")
            _data(event, "shadowedTokenCount")
            next_claim = (_js.get(shadowed, "start"), _js.get(shadowed, "end"))
        elif _is_surface_event(event):
            op = _js.get(event, "surfaceOp")
            if not _js.strict_equal(op, "append") and claim is not None:
                start, end = _js.get(op, "start"), _js.get(op, "end")
                if not (_js.strict_equal(claim[0], start) and _js.strict_equal(claim[1], end)):
                    raise _Fail(
                        "meter-shadow-price-mismatch",
                        f"token surface: replace at seq {s(_js.get(event, 'seq'))} over range {s(start)}-{s(end)} "
                        f"has no adjacent shadow price (armed claim covers {s(claim[0])}-{s(claim[1])})",
                    )
        if etype == "request/context":
            _data(event, "contextWindow")
        if etype == "assistant/chunk":
            chunk = _data(event, "chunk")
            if _js.strict_equal(_js.get(chunk, "type"), "usage"):
                _pressure(_js.get(chunk, "usage"))
        elif etype == "assistant/message":
            usage = _data(event, "usage")
            if usage is not MISSING:
                _pressure(usage)
        claim = next_claim

    _fold_events(log, visit)


def _pressure(usage: Any) -> None:
    for key in ("inputTokens", "cacheReadTokens", "cacheWriteTokens"):
        _js.get(usage, key)
