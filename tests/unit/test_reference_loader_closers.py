"""The reference oracle's provider judges the request built after a load, which carries the
loader's crash closers (``interruptedTurnClosers``, S:626).

A log cut right after an assistant/message advertising tool calls (its turn and step left open)
is accepted by every official layer: the persistence loader appends an error tool/result for
each advertised call before the next request. The reference's wire model judged the log as
written, so it said the provider refuses an unanswered call, a ``miss-model-only`` against the
built-in checker (whose wire model adds the closers) in a campaign of ``aimed-meter``.
"""

from __future__ import annotations

from typing import Any

from dshfuzz.generators import generate
from dshfuzz.harness._reference import loader_closers, reference_refusals


def _cut_after_calls(events: list[Any]) -> list[Any] | None:
    for i, event in enumerate(events):
        if event.get("type") != "assistant/message":
            continue
        content = event["data"]["message"]["content"]
        if any(type(b) is dict and b.get("type") == "tool-call" for b in content):
            return events[: i + 1]
    return None


def test_a_log_cut_after_tool_calls_is_answered_by_the_loaders_closers() -> None:
    cut = 0
    for log in generate(20, seed=5, turns=(1, 3), max_events=100, format_version=0):
        events = _cut_after_calls(list(log.events))
        if events is None:
            continue
        cut += 1
        advertised = [b["id"] for b in events[-1]["data"]["message"]["content"] if b.get("type") == "tool-call"]
        closers = loader_closers(events)
        assert [c["data"]["message"]["source"]["callId"] for c in closers] == advertised
        assert [c["seq"] for c in closers] == list(range(len(events), len(events) + len(closers)))
        assert "provider" not in reference_refusals(events, log.header, 0)
    assert cut


def test_a_closed_turn_or_a_log_the_loop_cannot_walk_gets_no_closers() -> None:
    log = next(iter(generate(1, seed=5, turns=(1, 1), max_events=60, format_version=0)))
    assert loader_closers(list(log.events)) == []
    broken = [{"type": "turn/start", "data": {"turn": 1}}, {"type": "assistant/message", "data": {"message": None}}]
    assert loader_closers(broken) == []
