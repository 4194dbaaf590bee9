"""Small hand-built logs for the reference-oracle unit tests.

:func:`tool_turn` writes one complete turn in the agent loop's order (the shape
every official layer accepts): a claimed inbox splice, two steps, the first
advertising, starting and answering one tool call. Tests break one thing on top
of it and read the verdict with :func:`verdict_text` in the failure message.
"""

from __future__ import annotations

import copy
from typing import Any

from dshfuzz.model import dumps

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
HEADER = {"type": "session", "version": 0, "id": "oracle-unit", "createdAt": 0, "delegationDepth": 0}


class Log:
    """Appends events with ``seq == index``; every writer returns the new event's seq."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, data: Any, **envelope: Any) -> int:
        seq = len(self.events)
        self.events.append({"type": type_, "seq": seq, "time": seq, "data": data, **envelope})
        return seq

    def user(self, text: str, *, op: Any = "append", sources: list[int] | None = None, **source: Any) -> int:
        message = {
            "id": f"u{len(self.events)}",
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": source or {"kind": "user"},
        }
        envelope = {"surfaceOp": op} if sources is None else {"surfaceOp": op, "sourceEventSeqs": sources}
        return self.add("user/message", message, **envelope)

    def assistant(
        self,
        turn: Any,
        step: Any,
        *blocks: dict[str, Any],
        sources: list[int] | None = None,
        op: Any = "append",
        **extra: Any,
    ) -> int:
        message = {
            "id": f"a{len(self.events)}",
            "role": "assistant",
            "content": list(blocks),
            "source": {"kind": "model", "provider": PROVIDER, "model": MODEL},
        }
        return self.add(
            "assistant/message",
            {"turn": turn, "step": step, "message": message, **extra},
            surfaceOp=op,
            sourceEventSeqs=[] if sources is None else sources,
        )

    def tool_call(self, turn: Any, step: Any, call_id: str, name: str = "ls", arguments: str = "{}") -> int:
        return self.add(
            "tool/call", {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments}
        )

    def tool_result(
        self,
        turn: Any,
        step: Any,
        call_id: str,
        text: str = "ok",
        *,
        op: Any = "append",
        sources: list[int] | None = None,
        **extra: Any,
    ) -> int:
        message = {
            "id": f"r{len(self.events)}",
            "role": "user",
            "content": [
                {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}]}
            ],
            "source": {"kind": "tool", "callId": call_id},
        }
        return self.add(
            "tool/result",
            {"turn": turn, "step": step, "message": message, **extra},
            surfaceOp=op,
            sourceEventSeqs=sources if sources is not None else [len(self.events) - 1],
        )

    def chunk(self, turn: Any, step: Any, chunk: dict[str, Any]) -> int:
        return self.add("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})

    def request_header(self, system: str = "be brief") -> int:
        header = {"config": {"provider": PROVIDER, "model": MODEL}, "system": system}
        return self.add("request/header", {"header": header, "reason": "initial"})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call_block(call_id: str, name: str = "ls", arguments: str = "{}") -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


def tool_turn() -> Log:
    """One valid turn: seqs 0 splice, 1 turn/start, 2 claim, 3 step/start, 4 user,
    5 request/header, 6-8 chunks, 9 assistant (call c1), 10 tool/call, 11 tool/result,
    12 step/end, 13 step/start, 14 assistant text, 15 step/end, 16 turn/end."""
    log = Log()
    inserted = {
        "id": "u-pending",
        "role": "user",
        "content": [text("list files")],
        "source": {"kind": "user"},
    }
    log.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [inserted]})
    log.add("turn/start", {"turn": 1})
    log.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})
    log.add("step/start", {"turn": 1, "step": 1})
    log.user("list files")
    log.request_header()
    log.chunk(1, 1, {"type": "tool-call-delta", "index": 0, "id": "c1", "name": "ls", "argumentsDelta": "{}"})
    log.chunk(1, 1, {"type": "block-end", "index": 0, "block": call_block("c1")})
    log.chunk(1, 1, {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 2}})
    log.assistant(1, 1, call_block("c1"), sources=[6, 7, 8], usage={"inputTokens": 10, "outputTokens": 2})
    log.tool_call(1, 1, "c1")
    log.tool_result(1, 1, "c1", "a b c")
    log.add("step/end", {"turn": 1, "step": 1})
    log.add("step/start", {"turn": 1, "step": 2})
    log.assistant(1, 2, text("three files"))
    log.add("step/end", {"turn": 1, "step": 2})
    log.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return log


def edited(log: Log) -> list[dict[str, Any]]:
    """A deep copy of the events, to edit without touching the original."""
    return copy.deepcopy(log.events)


def without(events: list[dict[str, Any]], *seqs: int) -> list[dict[str, Any]]:
    """The events minus ``seqs``, renumbered so seqs stay contiguous."""
    kept = [copy.deepcopy(e) for e in events if e["seq"] not in seqs]
    for index, event in enumerate(kept):
        event["seq"] = index
    return kept


def verdict_text(verdict: Any, events: list[Any]) -> str:
    """The verdict and the log, one event per line, for an assertion message."""
    return f"{verdict!r}\n" + "\n".join(dumps(e) for e in events)
