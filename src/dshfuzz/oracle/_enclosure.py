"""Turn/step enclosure: the ``@deepseek-ai/dsh-session/invariant`` companion (SI:20-102).

Turns are numbered 1, 2, ... and never nest; steps are numbered 1, 2, ... afresh
in each turn and live inside it. Chunks, assistant messages and tool calls name
the open turn and step; an appended ``tool/result`` answers a ``tool/call`` made
earlier *in the same step* (unless it is a synthetic ``TOOL_NOT_STARTED``
result); a result replace, ``request/header``, ``request/context`` and
``todo/write`` need an open turn. Nothing checks that a call is ever answered:
``step/end`` just forgets the step's pending calls.

Comparisons are JavaScript's ``!==``, so the companion's quirks are kept: a
``turn/end`` (or ``step/end``) naming ``null`` while nothing is open passes.

The official ``invariants`` layer runs the ``Session.create`` seed checks first
(the surface fold among them) and this companion only on a seed that passed; this
model is the companion alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from dshfuzz.contracts import js as _js
from dshfuzz.model import MISSING

from ._verdict import Accepted, Verdict, Violation, raw_events

__all__ = ["EnclosureState", "check_enclosure"]

_PREFIX = 'invariant violated by "@deepseek-ai/dsh-session": '
_TURN_ENCLOSED = frozenset({"todo/write", "request/header", "request/context"})


@dataclass(frozen=True, slots=True)
class EnclosureState:
    """The companion's trace after the last event (``None`` = nothing open)."""

    open_turn: Any
    open_step: Any
    next_turn: int
    next_step: int
    pending_calls: tuple[Any, ...]


class _Fail(Exception):
    """The companion's ``fail(message)``; ``code`` is the reason code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(slots=True)
class _Trace:
    """The companion's per-session trace (``freshTrace``, SI:122)."""

    last_seq: Any = -1
    open_turn: Any = None
    open_step: Any = None
    next_turn: int = 1
    next_step: int = 1
    pending: dict[Any, Any] = field(default_factory=dict)  # SameValueZero key -> call id


@dataclass(frozen=True, slots=True)
class _Transition:
    """What ``validateEvent`` returns: the next scalars and one pending-call change."""

    last_seq: Any
    open_turn: Any
    open_step: Any
    next_turn: int
    next_step: int
    pending: tuple[str, Any]  # ("none" | "add" | "delete" | "clear", call id)


def _data(event: Any, key: str) -> Any:
    return _js.get(_js.get(event, "data"), key)


def _require_open_step(trace: _Trace, kind: str, event: Any) -> None:
    turn, step = _data(event, "turn"), _data(event, "step")
    if not (_js.strict_equal(trace.open_turn, turn) and _js.strict_equal(trace.open_step, step)):
        s = _js.js_string
        raise _Fail(
            "not-in-open-step",
            f"{kind} names turn {s(turn)}/step {s(step)} "
            f"but open is turn {s(trace.open_turn)}/step {s(trace.open_step)}",
        )


def _validate(trace: _Trace, event: Any) -> _Transition:
    """``validateEvent`` (SI:20-99): the transition ``event`` makes, or :class:`_Fail`."""
    s = _js.js_string
    seq = _js.get(event, "seq")
    if _js.less_or_equal(seq, trace.last_seq):
        raise _Fail(
            "seq-not-increasing", f"seq must strictly increase: saw {s(seq)} after {s(trace.last_seq)}"
        )
    open_turn, open_step, next_turn, next_step = (
        trace.open_turn,
        trace.open_step,
        trace.next_turn,
        trace.next_step,
    )
    pending: tuple[str, Any] = ("none", None)
    etype = _js.get(event, "type")
    etype = etype if type(etype) is str else None
    if etype == "turn/start":
        turn = _data(event, "turn")
        if trace.open_turn is not None:
            raise _Fail(
                "turn-already-open", f"turn/start {s(turn)} while turn {s(trace.open_turn)} is still open"
            )
        if not _js.strict_equal(turn, trace.next_turn):
            raise _Fail("turn-out-of-order", f"turn/start expected turn {trace.next_turn}, got {s(turn)}")
        open_turn, next_step = turn, 1
    elif etype == "turn/end":
        turn = _data(event, "turn")
        if not _js.strict_equal(trace.open_turn, turn):
            raise _Fail(
                "turn-end-mismatch", f"turn/end {s(turn)} does not match open turn {s(trace.open_turn)}"
            )
        if trace.open_step is not None:
            raise _Fail(
                "turn-end-step-open", f"turn/end {s(turn)} while step {s(trace.open_step)} is still open"
            )
        open_turn, next_turn = None, next_turn + 1
    elif etype == "step/start":
        turn, step = _data(event, "turn"), _data(event, "step")
        if not _js.strict_equal(trace.open_turn, turn):
            raise _Fail(
                "step-turn-mismatch", f"step/start in turn {s(turn)} but open turn is {s(trace.open_turn)}"
            )
        if trace.open_step is not None:
            raise _Fail(
                "step-already-open", f"step/start {s(step)} while step {s(trace.open_step)} is still open"
            )
        if not _js.strict_equal(step, trace.next_step):
            code = "step-reused" if _js.is_number(step) and step < trace.next_step else "step-out-of-order"
            raise _Fail(code, f"step/start expected step {trace.next_step} in turn {s(turn)}, got {s(step)}")
        open_step = step
    elif etype == "step/end":
        _require_open_step(trace, "step/end", event)
        pending, open_step, next_step = ("clear", None), None, next_step + 1
    elif etype in ("assistant/chunk", "assistant/message"):
        _require_open_step(trace, etype, event)
    elif etype == "tool/call":
        _require_open_step(trace, etype, event)
        pending = ("add", _data(event, "callId"))
    elif etype == "tool/result":
        if not _js.strict_equal(_js.get(event, "surfaceOp"), "append"):
            if trace.open_turn is None:
                raise _Fail(
                    "tool-result-replace-outside-turn",
                    "tool/result surface replacement appended outside any open turn",
                )
        else:
            _require_open_step(trace, "tool/result", event)
            message = _data(event, "message")
            call_id = _js.get(_js.get(message, "source"), "callId")
            first = _js.get(_js.get(message, "content"), 0)
            error = _data(event, "error")
            error_code = MISSING if error is None or error is MISSING else _js.get(error, "code")
            synthetic = _js.get(first, "isError") is True and _js.strict_equal(error_code, "TOOL_NOT_STARTED")
            if _js.number_key(call_id) not in trace.pending and not synthetic:
                raise _Fail(
                    "tool-result-without-call",
                    f"tool/result for {s(call_id)} with no prior tool/call in this step",
                )
            pending = ("delete", call_id)
    elif etype in _TURN_ENCLOSED and trace.open_turn is None:
        raise _Fail(
            "outside-turn",
            f"{etype} appended outside any open turn (core execution events must be turn-enclosed)",
        )
    return _Transition(seq, open_turn, open_step, next_turn, next_step, pending)


def _apply(trace: _Trace, transition: _Transition) -> None:
    """``applyTransition`` (SI:101-117)."""
    trace.last_seq, trace.open_turn, trace.open_step = (
        transition.last_seq,
        transition.open_turn,
        transition.open_step,
    )
    trace.next_turn, trace.next_step = transition.next_turn, transition.next_step
    kind, call_id = transition.pending
    if kind == "add":
        trace.pending[_js.number_key(call_id)] = call_id
    elif kind == "delete":
        trace.pending.pop(_js.number_key(call_id), None)
    elif kind == "clear":
        trace.pending.clear()


def check_enclosure(events: Iterable[Any], header: Any = None) -> Verdict[EnclosureState]:
    """Replay the companion over ``events`` (``header`` is unused: the companion sees only events)."""
    del header
    trace = _Trace()
    for index, event in enumerate(raw_events(events)):
        try:
            _apply(trace, _validate(trace, event))
        except _Fail as exc:
            return Violation(index, exc.code, _PREFIX + str(exc))
        except _js.JsTypeError as exc:
            return Violation(index, "malformed-event", str(exc))
    return Accepted(
        EnclosureState(
            trace.open_turn, trace.open_step, trace.next_turn, trace.next_step, tuple(trace.pending.values())
        )
    )
