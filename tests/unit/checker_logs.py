"""Builders for the small logs the checker tests are written in (shared by the
checker engineers: 5a owns this file; 5b adds its own helpers in its own module).

``minimal_events()`` is a tiny v0 log that passes every official layer: one
turn with a tool-calling step and a text step. Tests copy it, break exactly one
contract, and assert that exactly the rule in question fires (and that the
unbroken copy stays clean). ``session_log(header, events)`` wraps JSON values
into a :class:`SessionLog` with the physical coordinates a plain JSONL file
would have (header on line 1, event ``i`` on line ``i + 2``).
"""

from __future__ import annotations

import copy
from typing import Any

from dshfuzz.checker import CheckOptions, Report, RuleId, check_log
from dshfuzz.model import Event, Line, Row, SessionHeader, SessionLog, dumps

T0 = 1767000000000
PROVIDER = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}


def header(**overrides: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session", "version": 0, "id": "s-test", "createdAt": T0, "cwd": "/home/dev", "delegationDepth": 0}
    h.update(overrides)
    return {k: v for k, v in h.items() if v is not _DROP}


_DROP = object()
DROP = _DROP
"""Pass as an override value to remove a key from :func:`header`."""


def user_message(mid: str, text: str, **source: Any) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}], "source": source or {"kind": "user"}}


def tool_call_block(call_id: str, name: str = "ls", arguments: str = '{"path":"."}') -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


def assistant_message(mid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "content": list(blocks), "source": dict(PROVIDER)}


def tool_result_message(mid: str, call_id: str, text: str = "ok") -> dict[str, Any]:
    return {
        "id": mid,
        "role": "user",
        "content": [{"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}], "isError": False}],
        "source": {"kind": "tool", "callId": call_id},
    }


def ev(seq: int, type_: str, data: Any, **envelope: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "seq": seq, "time": T0 + 7 * (seq + 1), "data": data}
    out.update(envelope)
    return out


def minimal_events() -> list[dict[str, Any]]:
    """A 17-event v0 log valid in every official layer (surface: 4, 8, 10, 14)."""
    return [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", {"turn": 1, "step": 1}),
        ev(2, "user/message", user_message("msg-user-1", "list the files"), surfaceOp="append"),
        ev(3, "request/header", {"header": {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}, "reason": "initial"}),
        ev(4, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "tool-call"}}),
        ev(5, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-end", "index": 0, "block": tool_call_block("call_1")}}),
        ev(6, "assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}}),
        ev(7, "assistant/message", {"turn": 1, "step": 1, "message": assistant_message("msg-assistant-2", tool_call_block("call_1"))}, surfaceOp="append", sourceEventSeqs=[4, 5, 6]),
        ev(8, "tool/call", {"turn": 1, "step": 1, "callId": "call_1", "name": "ls", "arguments": '{"path":"."}'}),
        ev(9, "tool/result", {"turn": 1, "step": 1, "message": tool_result_message("msg-tool-3", "call_1", "README.md")}, surfaceOp="append", sourceEventSeqs=[8]),
        ev(10, "step/end", {"turn": 1, "step": 1}),
        ev(11, "step/start", {"turn": 1, "step": 2}),
        ev(12, "assistant/chunk", {"turn": 1, "step": 2, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "done"}}}),
        ev(13, "assistant/chunk", {"turn": 1, "step": 2, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}),
        ev(14, "assistant/message", {"turn": 1, "step": 2, "message": assistant_message("msg-assistant-4", {"type": "text", "text": "done"})}, surfaceOp="append", sourceEventSeqs=[12, 13]),
        ev(15, "step/end", {"turn": 1, "step": 2}),
        ev(16, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]


def session_log(head: Any, events: list[Any], *, path: str | None = None) -> SessionLog:
    """A plain-JSONL :class:`SessionLog` over already-parsed values (no packing)."""
    hdr = SessionHeader(copy.deepcopy(head), line=1)
    evs = [Event(copy.deepcopy(v), line=i + 2, row=i) for i, v in enumerate(events)]
    lines = [Line(1, dumps(head), head)] + [Line(i + 2, dumps(v), v) for i, v in enumerate(events)]
    rows = [Row(line=i + 2, kind="event", value=v, events=range(i, i + 1)) for i, v in enumerate(events)]
    return SessionLog(header=hdr, events=evs, lines=lines, rows=rows, path=path, size=sum(len(x.text) + 1 for x in lines))


def check(head: Any, events: list[Any], **options: Any) -> Report:
    """Check in strict mode, so that a crashing pass fails the test."""
    return check_log(session_log(head, events), CheckOptions(strict=True, **options))


def fired(report: Report) -> set[RuleId]:
    return {f.rule for f in report.findings}


def explain(report: Report, head: Any, events: list[Any]) -> str:
    """The failure message: the findings and the minimal log itself."""
    body = "\n".join(dumps(x) for x in [head, *events])
    found = "\n".join(f"  {f.rule} seq={f.seq} line={f.line}: {f.message}" for f in report.findings) or "  (none)"
    return f"findings:\n{found}\nlog:\n{body}"


def build_twins(cases: list[tuple[Any, ...]], base: Any) -> list[tuple[RuleId, str, Any, Any]]:
    """``(rule, why, broken, twin)`` for each ``(rule, why, brake, keep)`` case: both sides
    start from ``base()``; ``brake`` breaks one, ``keep`` makes the near-identical twin."""
    out = []
    for rule, why, brake, keep in cases:
        broken, twin = base(), base()
        brake(broken)
        keep(twin)
        out.append((rule, why, broken, twin))
    return out


def assert_fires_only_on_broken(rule: RuleId, why: str, broken: Any, twin: Any, *, twin_lacks: set[RuleId] | None = None) -> None:
    """``rule`` fires on ``broken``; none of ``twin_lacks`` (default: ``rule``) fires on ``twin``."""
    report = check(broken.header, broken.events)
    assert rule in fired(report), f"{why}: {rule} did not fire\n" + explain(report, broken.header, broken.events)
    twin_report = check(twin.header, twin.events)
    assert not fired(twin_report) & (twin_lacks or {rule}), explain(twin_report, twin.header, twin.events)


def insert_drawn_records(events: list[Any], data: Any, records: Any, *, most: int) -> None:
    """Insert 1..``most`` records drawn from ``records`` (a strategy of ``(type, data)``) at drawn
    positions of ``events``, each an append stamped with its position; then maybe renumber every
    seq to its position. ``data`` is Hypothesis' ``st.data()`` object."""
    from hypothesis import strategies as st

    for _ in range(data.draw(st.integers(1, most), label="inserted")):
        at = data.draw(st.integers(0, len(events)), label="at")
        kind, payload = data.draw(records, label="record")
        events.insert(at, {"type": kind, "seq": at, "time": 0, "data": payload, "surfaceOp": "append"})
    if data.draw(st.booleans(), label="renumber"):
        for i, event in enumerate(events):
            event["seq"] = i
