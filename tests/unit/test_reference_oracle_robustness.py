"""No input crashes a reference model: whatever JSON a log holds, each returns a Verdict.

Two sources of hostile input: event lists of arbitrary JSON shaped like events
(known types, envelope keys, payload keys the models read), and the valid base
log with one value anywhere inside it replaced by arbitrary JSON.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from reference_oracle_logs import HEADER, tool_turn

from dshfuzz.oracle import (
    Accepted,
    Violation,
    check_enclosure,
    check_lifecycle,
    check_meter,
    check_wire,
    fold_surface,
    replay_inbox,
    wire_stream,
)

MODELS = (
    lambda e, h: fold_surface(e),
    lambda e, h: fold_surface(e, version=3),
    check_enclosure,
    check_meter,
    replay_inbox,
    check_lifecycle,
    wire_stream,
    check_wire,
)
TYPES = [
    "user/message",
    "assistant/message",
    "tool/result",
    "tool/call",
    "assistant/chunk",
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "agent/inbox/spliced",
    "request/header",
    "compaction/summary",
    "compaction/start",
    "compaction/end",
    "session/title",
    "llm/retry",
    "command/done",
    "system/message",
]
KEYS = [
    "turn",
    "step",
    "message",
    "content",
    "source",
    "callId",
    "chunk",
    "usage",
    "type",
    "text",
    "id",
    "header",
    "start",
    "end",
    "removedCount",
    "inserted",
    "target",
    "shadowedRange",
    "messageSeqs",
    "error",
    "index",
    "block",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 30),
    st.floats(allow_nan=False),
    st.sampled_from(TYPES + KEYS + ["append", "replace", "text", "tool-call", "tool-result", "😀"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=20,
)
events_like = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES), "seq": st.integers(0, 12), "data": json_values},
    optional={"surfaceOp": json_values, "sourceEventSeqs": json_values},
)


def assert_total(events: list[Any], header: Any) -> None:
    for model in MODELS:
        verdict = model(events, header)
        assert isinstance(verdict, (Accepted, Violation)), verdict
        if isinstance(verdict, Violation):
            assert verdict.code and isinstance(verdict.message, str)


@given(st.lists(st.one_of(events_like, json_values), max_size=12), st.one_of(st.none(), json_values))
def test_arbitrary_event_lists_get_a_verdict(events: list[Any], header: Any) -> None:
    assert_total(events, header)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value``."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += paths(item, (*prefix, index))
    return out


BASE = tool_turn().events
BASE_PATHS = [p for p in paths(BASE) if p]


@given(st.sampled_from(BASE_PATHS), json_values)
def test_any_value_replaced_anywhere_gets_a_verdict(path: tuple[Any, ...], value: Any) -> None:
    events = copy.deepcopy(BASE)
    target: Any = events
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert_total(events, HEADER)
