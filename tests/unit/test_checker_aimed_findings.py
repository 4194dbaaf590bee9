"""Checker fixes for what the aimed perturbation strata found (issue 32, the reach work list).

Each case is a witness of a campaign finding, with the official layers' verdict it was judged
against: the checker must refuse it and name exactly the layers that refuse."""

from __future__ import annotations

from typing import Any

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.model import dumpb, parse_log

_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/p", "delegationDepth": 0}


def _errors(header: dict[str, Any], events: list[dict[str, Any]]) -> list[Any]:
    data = b"".join(dumpb(x) + b"\n" for x in (header, *events))
    return [f for f in check_log(parse_log(data, compression="none"), CheckOptions(strict=True)).findings
            if f.severity == "error"]


def test_a_code_dispatch_outside_an_open_turn_is_released_refusal_alone() -> None:
    """released: "tool/code-dispatch-start is outside an open turn" (V01:2378); no other layer refuses."""
    dispatch = {"type": "tool/code-dispatch-start", "seq": 2, "time": 4,
                "data": {"rootCallId": "c", "parentCallId": "c", "subCallId": "c.1", "name": "read",
                         "arguments": {"path": "x"}}}
    events = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 3, "data": {"turn": 1, "reason": {"kind": "completed"}}},
        dispatch,
    ]
    (g4,) = _errors(_HEADER, events)
    assert g4.rule is RuleId.G4 and [str(x) for x in g4.refused_by] == ["released"]
    assert not _errors(_HEADER, events[:2])


def test_a_usage_count_past_the_safe_integers_is_the_meters_refusal() -> None:
    """meter (zod 4's int() is bounded): "Integers must be within the safe integer range"."""
    usage = {"inputTokens": 203, "outputTokens": 5, "cacheReadTokens": 128, "cacheWriteTokens": 2**53}
    message = {"role": "assistant", "content": [{"type": "text", "text": "line"}],
               "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
               "id": "ba4a5267-38a3-4dff-b47c-cc5b1814cd2b"}
    events = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 3, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 2, "time": 4, "sourceEventSeqs": [], "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": message, "usage": usage}},
    ]
    header = {**_HEADER, "version": 1}
    (t2,) = _errors(header, events)
    assert t2.rule is RuleId.T2 and [str(x) for x in t2.refused_by] == ["meter"]
    usage["cacheWriteTokens"] = 2**40  # a large safe count (2**53-1 would push the pressure sum past the range)
    assert not _errors(header, events)
