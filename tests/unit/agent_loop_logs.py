"""A session-log builder in the official agent loop's write order (engineer 5b's test helper).

It mirrors ``dsh-agent-loop@0.1.0-rc.8`` (followup splice, turn/start, claim,
step/start, user/message, request/header, chunks, assistant/message, tool/call,
tool/result, step/end, turn/end) so that the logs ``Builder`` writes through its
``*_turn`` helpers pass every official layer, and a test breaks exactly one thing
on top of that. The physical wrapping (:func:`checker_logs.session_log`) is
shared with the other checker tests.
"""

from __future__ import annotations

import copy
from typing import Any

from checker_logs import session_log

from dshfuzz.model import SessionLog, dumps

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}]
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)


def estimate(blocks: list[dict[str, Any]]) -> int:
    """dsh-token-meter's estimateContent (TM:23-38), for exact shadow prices."""
    tokens = 0
    for b in blocks:
        t = b.get("type")
        if t in ("text", "reasoning"):
            tokens += -(-len(b["text"]) // 4) + 4
        elif t == "tool-call":
            tokens += -(-len(b["name"]) // 4) + -(-len(b["arguments"]) // 4) + 4
        elif t == "tool-result":
            tokens += estimate(b["content"]) + 4
        else:
            tokens += 4 + -(-len(dumps(b)) // 4)
    return tokens


class Builder:
    """Appends events with contiguous seqs; event-writing methods return the new seq."""

    def __init__(self, **header: Any) -> None:
        self.header: dict[str, Any] = {
            "type": "session", "version": 0, "id": "checker-test", "createdAt": 1767000000000,
            "cwd": "/home/dev/project", "delegationDepth": 0, **header,
        }
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.step = 0
        self.surface: list[int] = []
        self._ids = 0
        self._header_logged = False

    @property
    def seq(self) -> int:
        return len(self.events)

    def push(self, type_: str, data: Any, **extra: Any) -> int:
        seq = len(self.events)
        self.events.append({"type": type_, "seq": seq, "time": 1767000000000 + 7 * (seq + 1), "data": data, **extra})
        op = extra.get("surfaceOp")
        if op == "append":
            self.surface.append(seq)
        elif isinstance(op, dict):
            s, e = self.surface.index(op["start"]), self.surface.index(op["end"])
            self.surface[s : e + 1] = [seq]
        return seq

    def new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    def user_message(self, text: str) -> dict[str, Any]:
        return {"id": self.new_id("msg-user"), "role": "user", "content": [{"type": "text", "text": text}],
                "source": {"kind": "user"}}

    def followup(self, message: dict[str, Any]) -> int:
        return self.push("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]})

    def claim(self) -> int:
        return self.push("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})

    def turn_start(self) -> int:
        self.turn += 1
        self.step = 0
        return self.push("turn/start", {"turn": self.turn})

    def turn_end(self, kind: str = "completed") -> int:
        return self.push("turn/end", {"turn": self.turn, "reason": {"kind": kind}})

    def step_start(self) -> int:
        self.step += 1
        return self.push("step/start", {"turn": self.turn, "step": self.step})

    def step_end(self) -> int:
        return self.push("step/end", {"turn": self.turn, "step": self.step})

    def user_append(self, message: dict[str, Any]) -> int:
        return self.push("user/message", message, surfaceOp="append")

    def request_header(self) -> int:
        reason = "change" if self._header_logged else "initial"
        self._header_logged = True
        return self.push("request/header", {"header": {"config": {"provider": PROVIDER, "model": MODEL},
                                                        "tools": copy.deepcopy(TOOLS)}, "reason": reason})

    def assistant(self, blocks: list[dict[str, Any]], *, usage: bool = True) -> list[dict[str, Any]]:
        """One model attempt: blocks streamed as chunks, then the assistant/message citing them.

        Returns the closed tool-call blocks (``id``, ``name``, ``arguments``)."""
        chunk_seqs = []
        closed = []
        for index, block in enumerate(blocks):
            chunk_seqs.append(self._chunk({"type": "block-start", "index": index, "blockType": block["type"]}))
            if block["type"] == "tool-call":
                call_id = block.get("id") or self.new_id("call")
                chunk_seqs.append(self._chunk({"type": "tool-call-delta", "index": index, "id": call_id,
                                               "name": block["name"], "argumentsDelta": block["arguments"]}))
                closed.append({"type": "tool-call", "id": call_id, "name": block["name"],
                               "arguments": block["arguments"]})
            else:
                kind = "text-delta" if block["type"] == "text" else "reasoning-delta"
                chunk_seqs.append(self._chunk({"type": kind, "index": index, "text": block["text"]}))
                closed.append({"type": block["type"], "text": block["text"]})
        for index, block in enumerate(closed):
            chunk_seqs.append(self._chunk({"type": "block-end", "index": index, "block": block}))
        has_calls = any(b["type"] == "tool-call" for b in closed)
        chunk_seqs.append(self._chunk({"type": "finish", "reason": {"kind": "tool-calls" if has_calls else "stop"}}))
        message = {"id": self.new_id("msg-assistant"), "role": "assistant", "content": closed,
                   "source": {"kind": "model", "provider": PROVIDER, "model": MODEL}}
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if usage:
            data["usage"] = {"inputTokens": 1000, "outputTokens": estimate(closed)}
        self.push("assistant/message", data, surfaceOp="append", sourceEventSeqs=chunk_seqs)
        return [b for b in closed if b["type"] == "tool-call"]

    def _chunk(self, chunk: dict[str, Any]) -> int:
        return self.push("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk})

    def tool_call(self, call: dict[str, Any]) -> int:
        return self.push("tool/call", {"turn": self.turn, "step": self.step, "callId": call["id"],
                                       "name": call["name"], "arguments": call["arguments"]})

    def tool_result(self, call_id: str, text: str = "ok", *, call_seq: int | None = None) -> int:
        message = {"id": self.new_id("msg-tool"), "role": "user",
                   "content": [{"type": "tool-result", "toolCallId": call_id,
                                "content": [{"type": "text", "text": text}], "isError": False}],
                   "source": {"kind": "tool", "callId": call_id}}
        extra: dict[str, Any] = {"surfaceOp": "append"}
        if call_seq is not None:
            extra["sourceEventSeqs"] = [call_seq]
        return self.push("tool/result", {"turn": self.turn, "step": self.step, "message": message}, **extra)

    def not_started_result(self, call_id: str) -> int:
        """The exact TOOL_NOT_STARTED repair the official closers write (S:667-703)."""
        message = {"id": f"interrupted-tool-result-{call_id}-{self.seq}", "role": "user",
                   "source": {"kind": "tool", "callId": call_id},
                   "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                                "content": [{"type": "text", "text": NOT_STARTED_TEXT}]}]}
        return self.push("tool/result", {"turn": self.turn, "step": self.step, "message": message,
                                         "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}},
                         surfaceOp="append")

    def tool_round(self, call: dict[str, Any], text: str = "ok") -> int:
        return self.tool_result(call["id"], text, call_seq=self.tool_call(call))

    def compaction(self, start: int, end: int, text: str = "<summary/>") -> int:
        """compaction/start, summary (exact shadow price), user/message replace, compaction/end."""
        s, e = self.surface.index(start), self.surface.index(end)
        shadowed = self.surface[s : e + 1]
        price = sum(estimate(self._message_of(self.events[q])["content"]) + 4 for q in shadowed)
        cid = self.new_id("cmp")
        turn = self.turn if self.turn_open() else None
        self.push("compaction/start", {"compactionId": cid, "turn": turn})
        self.push("compaction/summary", {"compactionId": cid, "summary": [{"type": "text", "text": text}],
                                         "shadowedRange": {"start": start, "end": end}, "shadowedSeqs": shadowed,
                                         "shadowedTokenCount": price, "provider": PROVIDER, "model": MODEL})
        message = {"id": self.new_id("msg-compact"), "role": "user", "content": [{"type": "text", "text": text}],
                   "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid}}
        seq = self.push("user/message", message, surfaceOp={"op": "replace", "start": start, "end": end},
                        sourceEventSeqs=shadowed)
        self.push("compaction/end", {"compactionId": cid, "turn": turn})
        return seq

    def turn_open(self) -> bool:
        for event in reversed(self.events):
            if event["type"] in ("turn/start", "turn/end"):
                return event["type"] == "turn/start"
        return False

    @staticmethod
    def _message_of(event: dict[str, Any]) -> dict[str, Any]:
        return event["data"] if event["type"] == "user/message" else event["data"]["message"]

    def open_step(self, prompt: str = "go") -> None:
        """Open a turn and its first step with the user's prompt and the request header."""
        message = self.user_message(prompt)
        self.followup(message)
        self.turn_start()
        self.claim()
        self.step_start()
        self.user_append(message)
        self.request_header()

    def text_turn(self, prompt: str = "hello", answer: str = "hi") -> None:
        """A complete one-step turn: prompt in, text out."""
        self.open_step(prompt)
        self.assistant([{"type": "text", "text": answer}])
        self.step_end()
        self.turn_end()

    def tool_turn(self, prompt: str = "read it", n_calls: int = 1) -> list[dict[str, Any]]:
        """A complete two-step turn: step 1 calls ``n_calls`` tools and answers them, step 2 answers in text."""
        self.open_step(prompt)
        calls = self.assistant([{"type": "tool-call", "name": "read", "arguments": f'{{"n":{i}}}'}
                                for i in range(n_calls)])
        for call in calls:
            self.tool_round(call)
        self.step_end()
        self.step_start()
        self.assistant([{"type": "text", "text": "done"}])
        self.step_end()
        self.turn_end()
        return calls

    def log(self) -> SessionLog:
        return session_log(self.header, self.events)


def jsonl(header: Any, events: list[Any]) -> str:
    return "".join(dumps(v) + "\n" for v in [header, *events])
