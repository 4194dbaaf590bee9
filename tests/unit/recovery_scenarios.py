"""Sessions made of healthy and defective turns, for the recovery-planner tests.

Each turn kind is one way a turn ends up in the log; the defective kinds are the
incidents the planner must fork around (seed 001's unanswered call under a
written turn/end, a malformed turn/end, a dangling tool result, a reused step
number, user text between a call and its result).
"""

from __future__ import annotations

from typing import Any

from agent_loop_logs import Builder

HEALTHY = ("text", "tool", "parallel", "compact")
DEFECTIVE = ("gap", "no-reason", "orphan", "step-reuse", "interject")


def _call_turn(b: Builder, finish: Any) -> None:
    b.open_step("call")
    [call] = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"}])
    finish(b, call)
    b.step_end()
    b.turn_end()


def add_turn(b: Builder, kind: str) -> None:
    """Append one complete turn of ``kind`` to ``b``."""
    if kind == "text":
        b.text_turn()
    elif kind == "tool":
        b.tool_turn()
    elif kind == "parallel":
        b.tool_turn(n_calls=2)
    elif kind == "compact":
        if len(b.surface) >= 2 and not b.turn_open():
            b.compaction(b.surface[0], b.surface[-1])
        b.text_turn()
    elif kind == "gap":
        _call_turn(b, lambda b, call: b.tool_call(call))
    elif kind == "no-reason":
        b.text_turn()
        del b.events[-1]["data"]["reason"]
    elif kind == "orphan":
        _call_turn(b, lambda b, call: (b.tool_round(call), b.tool_result("call-ghost")))
    elif kind == "step-reuse":
        b.open_step()
        b.assistant([{"type": "text", "text": "one"}])
        b.step_end()
        b.step -= 1
        b.step_start()
        b.assistant([{"type": "text", "text": "again"}])
        b.step_end()
        b.turn_end()
    elif kind == "interject":
        def finish(b: Builder, call: dict[str, Any]) -> None:
            seq = b.tool_call(call)
            b.user_append(b.user_message("also"))
            b.tool_result(call["id"], call_seq=seq)
        _call_turn(b, finish)
    else:
        raise ValueError(kind)


def session(kinds: list[str]) -> Builder:
    b = Builder()
    for kind in kinds:
        add_turn(b, kind)
    return b
