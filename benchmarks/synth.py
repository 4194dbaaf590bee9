"""Deterministic synthetic VALID format-v0 log, streamed to ``.jsonl`` and ``.jsonl.zstd``.

A port of the reference sketch's ``gen-synth.mjs`` + ``lib/builder.mjs``: the same
event grammar in the official agent loop's write order, the same LCG and the
same draw order, so for equal arguments the output is byte-identical to the
sketch's (checked by ``tests/conformance/test_codecs_official.py``). Events are
written batch by batch (one zstd frame per step batch, official framing) and
then dropped, so memory stays bounded by the live surface, not the log size.

    python benchmarks/synth.py --events 200000 --out .dshfuzz-cache/synth-200k
    python benchmarks/synth.py --events 400000 --replace-every 50 --out /tmp/synth-400k-r50

writes ``<out>.jsonl`` and ``<out>.jsonl.zstd`` (atomically) and prints the event mix.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO, Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from dshfuzz.model import batch_text, compress_frame, dumps, header_text  # noqa: E402

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had by "
    "word but not what all were we when your can said there use an each which she do how their if will up "
    "other about out many then them these so some her would make like him into time has look two more write "
    "go see number no way could people my than first water been call who oil its now find long down day did "
    "get come made may part"
).split(" ")
TOOLS = [
    {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "grep", "description": "Search", "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}}},
    {"name": "bash", "description": "Run a command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
]


def lcg(seed: int) -> Callable[[], float]:
    """The sketch's ``rng``: ``s = s * 1664525 + 1013904223 (mod 2**32)``, returns ``s / 2**32``."""
    state = seed & 0xFFFFFFFF

    def draw() -> float:
        nonlocal state
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        return state / 2**32

    return draw


def estimate_content(blocks: list[dict[str, Any]]) -> int:
    """dsh-token-meter's estimate (4 chars per token, 4 tokens per block)."""
    tokens = 0
    for b in blocks:
        kind = b["type"]
        if kind in ("text", "reasoning"):
            tokens += math.ceil(len(b["text"]) / 4) + 4
        elif kind == "tool-call":
            tokens += math.ceil(len(b["name"]) / 4) + math.ceil(len(b["arguments"]) / 4) + 4
        elif kind == "tool-result":
            tokens += estimate_content(b["content"]) + 4
        else:
            tokens += 4 + math.ceil(len(dumps(b)) / 4)
    return tokens


def estimate_message(message: dict[str, Any]) -> int:
    return estimate_content(message["content"]) + 4


def split_text(text: str, n: int) -> list[str]:
    size = max(1, math.ceil(len(text) / n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class Builder:
    """The sketch's ``LogBuilder``, keeping only the live surface instead of every event."""

    def __init__(self, sink: Callable[[list[dict[str, Any]]], None], *, ident: str, dt: int) -> None:
        created = 1767000000000
        self.header = {"type": "session", "version": 0, "id": ident, "createdAt": created, "cwd": "/home/dev/project", "delegationDepth": 0}
        self.sink = sink
        self.batch: list[dict[str, Any]] = []
        self.seq = 0
        self.time = created
        self.dt = dt
        self.turn = self.step = 0
        self.surface: list[int] = []
        self.nodes: dict[int, dict[str, Any]] = {}
        self.msg_counter = self.call_counter = self.cmp_counter = 0
        self.header_logged = False
        self.last_boundary: str | None = None
        self.mix: Counter[str] = Counter()

    def push(self, kind: str, data: Any, **extra: Any) -> dict[str, Any]:
        self.time += self.dt
        event = {"type": kind, "seq": self.seq, "time": self.time, "data": data, **extra}
        self.seq += 1
        self.batch.append(event)
        self.mix[kind] += 1
        op = extra.get("surfaceOp")
        if op == "append":
            self.surface.append(event["seq"])
            self.nodes[event["seq"]] = event
        elif isinstance(op, dict):
            s, e = self.surface.index(op["start"]), self.surface.index(op["end"])
            for gone in self.surface[s : e + 1]:
                del self.nodes[gone]
            self.surface[s : e + 1] = [event["seq"]]
            self.nodes[event["seq"]] = event
        if kind in ("turn/start", "turn/end"):
            self.last_boundary = kind
        return event

    def cut(self) -> None:
        if self.batch:
            self.sink(self.batch)
            self.batch = []

    def msg_id(self, prefix: str) -> str:
        self.msg_counter += 1
        return f"{prefix}-{self.msg_counter}"

    def user_message(self, text: str) -> dict[str, Any]:
        return {"id": self.msg_id("msg-user"), "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}

    def followup(self, message: dict[str, Any]) -> None:
        self.push("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]})

    def turn_start(self) -> None:
        self.turn += 1
        self.step = 0
        self.push("turn/start", {"turn": self.turn})

    def claim(self) -> None:
        self.push("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})

    def step_start(self) -> None:
        self.step += 1
        self.push("step/start", {"turn": self.turn, "step": self.step})

    def step_end(self) -> None:
        self.push("step/end", {"turn": self.turn, "step": self.step})

    def turn_end(self, reason: dict[str, Any]) -> None:
        self.push("turn/end", {"turn": self.turn, "reason": reason})

    def user_append(self, message: dict[str, Any]) -> None:
        self.push("user/message", message, surfaceOp="append")

    def request_header(self) -> None:
        reason = "change" if self.header_logged else "initial"
        self.header_logged = True
        header = {"config": {"provider": PROVIDER, "model": MODEL}, "system": "You are the DeepSeek Harness test agent.", "tools": TOOLS}
        self.push("request/header", {"header": header, "reason": reason})
        self.push("request/context", {"provider": PROVIDER, "model": MODEL, "contextWindow": 1000000})

    def assistant(self, blocks: list[dict[str, Any]], pieces: int) -> list[dict[str, Any]]:
        turn, step = self.turn, self.step
        chunk_seqs: list[int] = []

        def chunk(c: dict[str, Any]) -> None:
            chunk_seqs.append(self.push("assistant/chunk", {"turn": turn, "step": step, "chunk": c})["seq"])

        closed: list[dict[str, Any]] = []
        for index, b in enumerate(blocks):
            chunk({"type": "block-start", "index": index, "blockType": b["type"]})
            if b["type"] == "tool-call":
                self.call_counter += 1
                call_id = f"call_{self.call_counter}"
                for part in split_text(b["arguments"], pieces):
                    chunk({"type": "tool-call-delta", "index": index, "id": call_id, "name": b["name"], "argumentsDelta": part})
                closed.append({"type": "tool-call", "id": call_id, "name": b["name"], "arguments": b["arguments"]})
            else:
                kind = "text-delta" if b["type"] == "text" else "reasoning-delta"
                for part in split_text(b["text"], pieces):
                    chunk({"type": kind, "index": index, "text": part})
                closed.append({"type": b["type"], "text": b["text"]})
        for index, block in enumerate(closed):
            chunk({"type": "block-end", "index": index, "block": block})
        out = sum(estimate_content([b]) for b in closed)
        usage = {"inputTokens": 1000 + self.seq, "outputTokens": out, "cacheReadTokens": 0}
        chunk({"type": "usage", "usage": usage})
        has_calls = any(b["type"] == "tool-call" for b in closed)
        chunk({"type": "finish", "reason": {"kind": "tool-calls" if has_calls else "stop"}})
        message = {"id": self.msg_id("msg-assistant"), "role": "assistant", "content": closed, "source": {"kind": "model", "provider": PROVIDER, "model": MODEL}}
        self.push("assistant/message", {"turn": turn, "step": step, "message": message, "usage": usage}, surfaceOp="append", sourceEventSeqs=chunk_seqs)
        return [b for b in closed if b["type"] == "tool-call"]

    def tool_round(self, call: dict[str, Any], result_text: str) -> None:
        turn, step = self.turn, self.step
        call_seq = self.push("tool/call", {"turn": turn, "step": step, "callId": call["id"], "name": call["name"], "arguments": call["arguments"]})["seq"]
        message = {
            "id": self.msg_id("msg-tool"),
            "role": "user",
            "content": [{"type": "tool-result", "toolCallId": call["id"], "content": [{"type": "text", "text": result_text}], "isError": False}],
            "source": {"kind": "tool", "callId": call["id"]},
        }
        self.push("tool/result", {"turn": turn, "step": step, "message": message}, surfaceOp="append", sourceEventSeqs=[call_seq])

    def message_of(self, event: dict[str, Any]) -> dict[str, Any]:
        return event["data"] if event["type"] == "user/message" else event["data"]["message"]

    def compaction(self, start_seq: int, end_seq: int, summary: str) -> None:
        self.cmp_counter += 1
        compaction_id = f"cmp-{self.cmp_counter}"
        turn = self.turn if self.turn > 0 and self.last_boundary == "turn/start" else None
        s, e = self.surface.index(start_seq), self.surface.index(end_seq)
        shadowed = self.surface[s : e + 1]
        tokens = sum(estimate_message(self.message_of(self.nodes[q])) for q in shadowed)
        self.push("compaction/start", {"compactionId": compaction_id, "turn": turn})
        self.push(
            "compaction/summary",
            {
                "compactionId": compaction_id,
                "summary": [{"type": "text", "text": summary}],
                "shadowedRange": {"start": start_seq, "end": end_seq},
                "shadowedSeqs": shadowed,
                "shadowedTokenCount": tokens,
                "provider": PROVIDER,
                "model": MODEL,
            },
        )
        msg = {
            "id": self.msg_id("msg-compact"),
            "role": "user",
            "content": [{"type": "text", "text": summary}],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id},
        }
        self.push("user/message", msg, surfaceOp={"op": "replace", "start": start_seq, "end": end_seq}, sourceEventSeqs=shadowed)
        self.push("compaction/end", {"compactionId": compaction_id, "turn": turn})

    def prune_tool_result(self, seq: int, new_text: str) -> None:
        orig = self.nodes[seq]
        self.push(
            "compaction/prune",
            {"shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq], "shadowedTokenCount": estimate_message(orig["data"]["message"])},
        )
        block = orig["data"]["message"]["content"][0]
        data = json.loads(json.dumps(orig["data"]))  # structuredClone
        data["message"]["content"] = [{**block, "content": [{"type": "text", "text": new_text}]}]
        self.push("tool/result", data, surfaceOp={"op": "replace", "start": seq, "end": seq}, sourceEventSeqs=[seq])

    def last_tool_result(self) -> dict[str, Any] | None:
        for seq in reversed(self.surface):
            if self.nodes[seq]["type"] == "tool/result":
                return self.nodes[seq]
        return None


def build_synth(
    sink: Callable[[list[dict[str, Any]]], None],
    *,
    events: int = 200_000,
    replace_every: int = 0,
    compact_every_turns: int = 40,
    seed: int = 42,
    ident: str = "oracle-synth",
    pieces: tuple[int, int] = (4, 30),
) -> Builder:
    """Generate the log, handing each step batch to ``sink``; returns the finished builder."""
    r = lcg(seed)

    def rint(a: int, b: int) -> int:
        return a + math.floor(r() * (b - a + 1))

    def text(n: int) -> str:
        return " ".join([WORDS[rint(0, len(WORDS) - 1)] for _ in range(n)])

    b = Builder(sink, ident=ident, dt=3)
    last_replace_at = 0
    turns = 0
    while b.seq < events:
        u = b.user_message(text(rint(5, 40)))
        b.followup(u)
        b.turn_start()
        b.claim()
        turns += 1
        steps = rint(1, 4)
        for s in range(1, steps + 1):
            b.step_start()
            if s == 1:
                b.user_append(u)
            if not b.header_logged or r() < 0.02:
                b.request_header()
            last = s == steps
            blocks: list[dict[str, Any]] = [{"type": "reasoning", "text": text(rint(10, 120))}]
            if not last:
                for _ in range(rint(1, 3)):
                    name = TOOLS[rint(0, 2)]["name"]
                    path = f"src/{text(1)}.js"
                    blocks.append({"type": "tool-call", "name": name, "arguments": dumps({"path": path, "n": rint(1, 99)})})
            else:
                blocks.append({"type": "text", "text": text(rint(20, 200))})
            calls = b.assistant(blocks, rint(pieces[0], pieces[1]))
            for call in calls:
                b.tool_round(call, text(rint(20, 400)))
            b.step_end()
            if replace_every and b.seq - last_replace_at >= replace_every:
                target = b.last_tool_result()
                if target is not None:
                    b.prune_tool_result(target["seq"], f"[pruned at {b.seq}]")
                    last_replace_at = b.seq
            b.cut()
        b.turn_end({"kind": "completed"} if r() < 0.95 else {"kind": "aborted", "reason": {"kind": "user"}})
        if compact_every_turns and turns % compact_every_turns == 0 and len(b.surface) > 8:
            end_idx = len(b.surface) - 5
            while end_idx > 0 and b.nodes[b.surface[end_idx + 1]]["type"] == "tool/result":
                end_idx -= 1
            if end_idx > 0:
                b.compaction(b.surface[0], b.surface[end_idx], f"<summary>{text(60)}</summary>")
        b.cut()
    return b


class _AtomicFile:
    """Write to a temp file beside ``path``; rename over it only on success."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        self.tmp = Path(tmp)
        self.file: BinaryIO = os.fdopen(fd, "wb")

    def commit(self) -> None:
        self.file.close()
        os.chmod(self.tmp, 0o644)
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.file.close()
        self.tmp.unlink(missing_ok=True)


def write_synth(out: str | Path, **options: Any) -> dict[str, Any]:
    """Write ``<out>.jsonl`` and ``<out>.jsonl.zstd``; returns the summary the CLI prints."""
    prefix = Path(out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    plain = _AtomicFile(prefix.with_name(prefix.name + ".jsonl"))
    packed = _AtomicFile(prefix.with_name(prefix.name + ".jsonl.zstd"))
    frames = 1

    def sink(batch: list[dict[str, Any]]) -> None:
        nonlocal frames
        text = batch_text(batch)
        plain.file.write(text)
        packed.file.write(compress_frame(text))
        frames += 1

    try:
        started = time.perf_counter()
        head = header_text(_header(options))
        plain.file.write(head)
        packed.file.write(compress_frame(head))
        b = build_synth(sink, **options)
        plain.commit()
        packed.commit()
    except BaseException:
        plain.abort()
        packed.abort()
        raise
    return {
        "out": str(prefix),
        "events": b.seq,
        "frames": frames,
        "surfaceNodes": len(b.surface),
        "ms": round((time.perf_counter() - started) * 1000),
        "mix": dict(b.mix),
    }


def _header(options: dict[str, Any]) -> dict[str, Any]:
    return Builder(lambda batch: None, ident=options.get("ident", "oracle-synth"), dt=3).header


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--replace-every", type=int, default=0)
    parser.add_argument("--compact-every-turns", type=int, default=40)
    parser.add_argument("--pieces", default="4,30", help="min,max deltas per block")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=None, help="output prefix (default synth-<events>)")
    args = parser.parse_args(argv)
    low, high = (int(x) for x in args.pieces.split(","))
    summary = write_synth(
        args.out or f"synth-{args.events}",
        events=args.events,
        replace_every=args.replace_every,
        compact_every_turns=args.compact_every_turns,
        seed=args.seed,
        pieces=(low, high),
    )
    print(json.dumps(summary, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
