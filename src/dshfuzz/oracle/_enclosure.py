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

from dataclasses import dataclass
from typing import Any, Iterable

from dshfuzz.model import MISSING

from . import _js
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
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def check_enclosure(events: Iterable[Any], header: Any = None) -> Verdict[EnclosureState]:
    """Replay the companion's ``validateEvent`` over ``events`` (``header`` is unused:
    the companion sees only events)."""
    del header
    log = raw_events(events)
    last_seq: Any = -1
    open_turn: Any = None
    open_step: Any = None
    next_turn = 1
    next_step = 1
    pending: dict[Any, Any] = {}
    s = _js.js_string
    for index, event in enumerate(log):
        try:
            seq = _js.get(event, "seq")
            if _js.less_or_equal(seq, last_seq):
                raise _Fail("seq-not-increasing", f"seq must strictly increase: saw {s(seq)} after {s(last_seq)}")
            etype = _js.get(event, "type")
            etype = etype if type(etype) is str else None

            def data(key: str) -> Any:
                return _js.get(_js.get(event, "data"), key)

            def require_open_step(kind: str) -> None:
                turn, step = data("turn"), data("step")
                if not (_js.strict_equal(open_turn, turn) and _js.strict_equal(open_step, step)):
                    raise _Fail(
                        "not-in-open-step",
                        f"{kind} names turn {s(turn)}/step {s(step)} but open is turn {s(open_turn)}/step "
                        f"{s(open_step)}",
                    )

            new_turn, new_step, new_next_turn, new_next_step = open_turn, open_step, next_turn, next_step
            if etype == "turn/start":
                if open_turn is not None:
                    raise _Fail("turn-already-open", f"turn/start {s(data('turn'))} while turn {s(open_turn)} is still open")
                if not _js.strict_equal(data("turn"), next_turn):
                    raise _Fail("turn-out-of-order", f"turn/start expected turn {next_turn}, got {s(data('turn'))}")
                new_turn, new_next_step = data("turn"), 1
            elif etype == "turn/end":
                if not _js.strict_equal(open_turn, data("turn")):
                    raise _Fail("turn-end-mismatch", f"turn/end {s(data('turn'))} does not match open turn {s(open_turn)}")
                if open_step is not None:
                    raise _Fail("turn-end-step-open", f"turn/end {s(data('turn'))} while step {s(open_step)} is still open")
                new_turn, new_next_turn = None, next_turn + 1
            elif etype == "step/start":
                if not _js.strict_equal(open_turn, data("turn")):
                    raise _Fail("step-turn-mismatch", f"step/start in turn {s(data('turn'))} but open turn is {s(open_turn)}")
                if open_step is not None:
                    raise _Fail("step-already-open", f"step/start {s(data('step'))} while step {s(open_step)} is still open")
                step = data("step")
                if not _js.strict_equal(step, next_step):
                    code = "step-reused" if _js.is_number(step) and step < next_step else "step-out-of-order"
                    raise _Fail(code, f"step/start expected step {next_step} in turn {s(data('turn'))}, got {s(step)}")
                new_step = step
            elif etype == "step/end":
                require_open_step("step/end")
                new_step, new_next_step = None, next_step + 1
            elif etype in ("assistant/chunk", "assistant/message", "tool/call"):
                require_open_step(etype)
            elif etype == "tool/result":
                if not _js.strict_equal(_js.get(event, "surfaceOp"), "append"):
                    if open_turn is None:
                        raise _Fail(
                            "tool-result-replace-outside-turn",
                            "tool/result surface replacement appended outside any open turn",
                        )
                else:
                    require_open_step("tool/result")
                    message = data("message")
                    call_id = _js.get(_js.get(message, "source"), "callId")
                    first = _js.get(_js.get(message, "content"), 0)
                    error = data("error")
                    code = MISSING if error is None or error is MISSING else _js.get(error, "code")
                    synthetic = _js.get(first, "isError") is True and _js.strict_equal(code, "TOOL_NOT_STARTED")
                    if _js.number_key(call_id) not in pending and not synthetic:
                        raise _Fail(
                            "tool-result-without-call",
                            f"tool/result for {s(call_id)} with no prior tool/call in this step",
                        )
            elif etype in _TURN_ENCLOSED and open_turn is None:
                raise _Fail(
                    "outside-turn",
                    f"{etype} appended outside any open turn (core execution events must be turn-enclosed)",
                )
        except _Fail as exc:
            return Violation(index, exc.code, _PREFIX + str(exc))
        except _js.JsTypeError as exc:
            return Violation(index, "malformed-event", str(exc))
        if etype == "step/end":
            pending.clear()
        elif etype == "tool/call":
            call_id = data("callId")
            pending[_js.number_key(call_id)] = call_id
        elif etype == "tool/result" and _js.strict_equal(_js.get(event, "surfaceOp"), "append"):
            pending.pop(_js.number_key(call_id), None)
        last_seq = seq
        open_turn, open_step, next_turn, next_step = new_turn, new_step, new_next_turn, new_next_step
    return Accepted(EnclosureState(open_turn, open_step, next_turn, next_step, tuple(pending.values())))
