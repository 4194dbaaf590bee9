"""The reference surface fold, rule by rule: every reason code has a log it refuses
(at the right seq, with the official message) beside a near miss it accepts.

Base log: :func:`reference_oracle_logs.tool_turn`, whose surface is [4, 9, 11, 14]
(user, assistant with call c1, its tool/result, the closing assistant).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from reference_oracle_logs import Log, edited, text, tool_turn, verdict_text

from dshfuzz.model import Event
from dshfuzz.contracts import js as _js
from dshfuzz.oracle import Accepted, Replacement, Violation, fold_surface

Edit = Callable[[list[dict[str, Any]]], None]


def replace(start: int, end: int) -> dict[str, Any]:
    return {"op": "replace", "start": start, "end": end}


def append_summary(events: list[dict[str, Any]], op: Any, sources: Any = None) -> None:
    """Append a user/message (seq 17) carrying ``op`` and, unless None, ``sources``."""
    event = {
        "type": "user/message",
        "seq": len(events),
        "time": 0,
        "surfaceOp": op,
        "data": {"id": "s", "role": "user", "content": [text("summary")], "source": {"kind": "user"}},
    }
    if sources is not None:
        event["sourceEventSeqs"] = sources
    events.append(event)


def rewrite_result(
    events: list[dict[str, Any]],
    change: Callable[[dict[str, Any]], None],
    start: int = 11,
    end: int = 11,
    sources: list[int] | None = None,
) -> None:
    """Append a copy of tool/result 11 replacing [start..end], after ``change`` edits its data."""
    import copy

    event = copy.deepcopy(events[11])
    event["seq"] = len(events)
    event["surfaceOp"] = replace(start, end)
    event["sourceEventSeqs"] = sources if sources is not None else [11]
    change(event["data"])
    events.append(event)


def set_content(data: dict[str, Any]) -> None:
    data["message"]["content"][0]["content"] = [text("pruned")]


REFUSED: list[tuple[str, Edit, str, int, str]] = [
    (
        "seq gap",
        lambda e: e.__setitem__(5, {**e[5], "seq": 6}),
        "seq-not-contiguous",
        5,
        "session event seq 6 is not contiguous; expected 5",
    ),
    (
        "seq as string",
        lambda e: e[5].__setitem__("seq", "5"),
        "seq-not-contiguous",
        5,
        "session event seq 5 is not contiguous; expected 5",
    ),
    (
        "seq as boolean",
        lambda e: e[1].__setitem__("seq", True),
        "seq-not-contiguous",
        1,
        "session event seq true is not contiguous; expected 1",
    ),
    (
        "null event",
        lambda e: e.__setitem__(3, None),
        "malformed-event",
        3,
        "Cannot read properties of null (reading 'seq')",
    ),
    (
        "array event",
        lambda e: e.__setitem__(3, [1]),
        "seq-not-contiguous",
        3,
        "session event seq undefined is not contiguous; expected 3",
    ),
    (
        "surfaceOp on turn/start",
        lambda e: e[1].__setitem__("surfaceOp", "append"),
        "surface-op-forbidden",
        1,
        'session event "turn/start" is not surface-eligible and cannot carry surfaceOp',
    ),
    (
        "null surfaceOp on step/end",
        lambda e: e[12].__setitem__("surfaceOp", None),
        "surface-op-forbidden",
        12,
        'session event "step/end" is not surface-eligible and cannot carry surfaceOp',
    ),
    (
        "sources on tool/call",
        lambda e: e[10].__setitem__("sourceEventSeqs", [9]),
        "source-seqs-forbidden",
        10,
        'session event "tool/call" is not surface-eligible and cannot carry sourceEventSeqs',
    ),
    (
        "user/message without surfaceOp",
        lambda e: e[4].pop("surfaceOp"),
        "surface-op-missing",
        4,
        'session event "user/message" is surface-eligible and requires a surfaceOp marker',
    ),
    (
        "string surfaceOp",
        lambda e: e[4].__setitem__("surfaceOp", "prepend"),
        "surface-op-invalid",
        4,
        'session event "user/message" carries an invalid surfaceOp',
    ),
    (
        "array surfaceOp",
        lambda e: e[4].__setitem__("surfaceOp", []),
        "surface-op-invalid",
        4,
        'session event "user/message" carries an invalid surfaceOp',
    ),
    (
        "replace with an extra key",
        lambda e: append_summary(e, {**replace(4, 9), "x": 1}, [4, 9]),
        "replace-op-invalid",
        17,
        'session event "user/message" carries an invalid replace surfaceOp',
    ),
    (
        "replace with a fractional end",
        lambda e: append_summary(e, replace(4, 9.5), [4, 9]),
        "replace-op-invalid",
        17,
        'session event "user/message" carries an invalid replace surfaceOp',
    ),
    (
        "replace start not on surface",
        lambda e: append_summary(e, replace(5, 9), [4, 9]),
        "replace-start-not-found",
        17,
        "surface replace: start seq 5 not found in surface",
    ),
    (
        "replace end not on surface",
        lambda e: append_summary(e, replace(4, 10), [4, 9]),
        "replace-end-not-found",
        17,
        "surface replace: end seq 10 not found in surface",
    ),
    (
        "replace range reversed",
        lambda e: append_summary(e, replace(9, 4), [4, 9]),
        "replace-range-reversed",
        17,
        "surface replace: start seq 9 (index 1) is after end seq 4 (index 0)",
    ),
    (
        "sources not an array",
        lambda e: e[11].__setitem__("sourceEventSeqs", 10),
        "source-seqs-not-array",
        11,
        "sourceEventSeqs on event at seq 11 must be an array when present",
    ),
    (
        "empty sources on a result",
        lambda e: e[11].__setitem__("sourceEventSeqs", []),
        "source-seqs-empty",
        11,
        "sourceEventSeqs must not be empty except on assistant/message",
    ),
    (
        "negative source",
        lambda e: e[11].__setitem__("sourceEventSeqs", [-1]),
        "source-seq-invalid",
        11,
        'session event "tool/result" sourceEventSeqs must densely contain non-negative safe integers',
    ),
    (
        "duplicate source",
        lambda e: e[11].__setitem__("sourceEventSeqs", [10, 10]),
        "source-seqs-duplicate",
        11,
        "sourceEventSeqs must not contain duplicates",
    ),
    (
        "duplicate source, int and float",
        lambda e: e[11].__setitem__("sourceEventSeqs", [10, 10.0]),
        "source-seqs-duplicate",
        11,
        "sourceEventSeqs must not contain duplicates",
    ),
    (
        "source is the event itself",
        lambda e: e[11].__setitem__("sourceEventSeqs", [10, 11]),
        "source-seq-not-earlier",
        11,
        "sourceEventSeqs must reference earlier events: 11 >= current seq 11",
    ),
    (
        "replace omits a shadowed node",
        lambda e: append_summary(e, replace(4, 11), [4, 11]),
        "replace-missing-shadowed",
        17,
        "surface replace: sourceEventSeqs must include every shadowed surface node; missing 9",
    ),
    (
        "replace without sources",
        lambda e: append_summary(e, replace(4, 9)),
        "replace-missing-shadowed",
        17,
        "surface replace: sourceEventSeqs must include every shadowed surface node; missing 4, 9",
    ),
    (
        "result replace over two nodes",
        lambda e: rewrite_result(e, set_content, 9, 11, [9, 11]),
        "tool-result-replace-count",
        17,
        "tool/result surface replacement must rewrite exactly one current node",
    ),
    (
        "result replace over an assistant",
        lambda e: rewrite_result(e, set_content, 9, 9, [9]),
        "tool-result-replace-target",
        17,
        "tool/result surface replacement must target a current tool/result",
    ),
    (
        "result replace changes isError",
        lambda e: rewrite_result(e, lambda d: d["message"]["content"][0].__setitem__("isError", True)),
        "tool-result-replace-changes",
        17,
        "tool/result surface replacement may change only content",
    ),
    (
        "result replace changes the message id",
        lambda e: rewrite_result(e, lambda d: d["message"].__setitem__("id", "x")),
        "tool-result-replace-changes",
        17,
        "tool/result surface replacement may change only content",
    ),
    (
        "result replace without a message",
        lambda e: rewrite_result(e, lambda d: d.pop("message")),
        "malformed-event",
        17,
        "Cannot read properties of undefined (reading 'content')",
    ),
]

ACCEPTED: list[tuple[str, Edit, tuple[int, ...]]] = [
    ("as written", lambda e: None, (4, 9, 11, 14)),
    ("float seq equal to its index", lambda e: e[5].__setitem__("seq", 5.0), (4, 9, 11, 14)),
    ("replace citing exactly the span", lambda e: append_summary(e, replace(4, 11), [4, 9, 11]), (17, 14)),
    (
        "replace citing more than the span",
        lambda e: append_summary(e, replace(9, 9), [0, 6, 9]),
        (4, 17, 11, 14),
    ),
    ("append with sources", lambda e: append_summary(e, "append", [3, 4]), (4, 9, 11, 14, 17)),
    ("assistant with empty sources", lambda e: e[14].__setitem__("sourceEventSeqs", []), (4, 9, 11, 14)),
    ("result replace changing only content", lambda e: rewrite_result(e, set_content), (4, 9, 17, 14)),
    (
        "unknown type without surface metadata",
        lambda e: e.append({"type": "x/y", "seq": 17, "time": 0, "data": {}}),
        (4, 9, 11, 14),
    ),
]


@pytest.mark.parametrize("name,edit,code,seq,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_fold_refuses(name: str, edit: Edit, code: str, seq: int, message: str) -> None:
    events = edited(tool_turn())
    edit(events)
    verdict = fold_surface(events)
    assert verdict == Violation(seq, code, message), verdict_text(verdict, events)


@pytest.mark.parametrize("name,edit,nodes", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_fold_accepts(name: str, edit: Edit, nodes: tuple[int, ...]) -> None:
    events = edited(tool_turn())
    edit(events)
    verdict = fold_surface(events)
    assert isinstance(verdict, Accepted) and verdict.state.nodes == nodes, verdict_text(verdict, events)


def test_fold_records_every_replacement_with_its_shadowed_nodes() -> None:
    events = edited(tool_turn())
    append_summary(events, replace(4, 11), [4, 9, 11])
    rewrite_result(events, set_content, 17, 17, [17])
    verdict = fold_surface(events)
    assert isinstance(verdict, Violation) and verdict.code == "tool-result-replace-target"
    events.pop()
    append_summary(events, replace(17, 14), [17, 14])
    verdict = fold_surface(events)
    assert isinstance(verdict, Accepted), verdict_text(verdict, events)
    assert verdict.state.replacements == (
        Replacement(17, 4, 11, (4, 9, 11)),
        Replacement(18, 17, 14, (17, 14)),
    )
    assert verdict.state.nodes == (18,)


def test_fold_takes_model_events_and_empty_logs() -> None:
    log = tool_turn()
    assert fold_surface([Event(e) for e in log.events]) == fold_surface(log.events)
    assert fold_surface([]) == Accepted(fold_surface([]).state) and fold_surface([]).state.nodes == ()


def v3_log() -> list[dict[str, Any]]:
    log = Log()
    log.add(
        "system/message",
        {
            "id": "s0",
            "role": "system",
            "content": [text("rules")],
            "source": {"kind": "plugin", "plugin": "p"},
        },
        surfaceOp="append",
    )
    log.user("hello")
    log.assistant(1, 1, text("hi"))
    del log.events[2]["sourceEventSeqs"]
    return log.events


def test_v3_fold_puts_system_messages_on_the_surface_and_replaces_by_start_and_end_seq() -> None:
    events = v3_log()
    append_summary(events, {"op": "replace", "startSeq": 0, "endSeq": 1}, [0, 1])
    verdict = fold_surface(events, version=3)
    assert isinstance(verdict, Accepted), verdict_text(verdict, events)
    assert verdict.state.nodes == (3, 2)
    assert fold_surface(events, version=0) == Violation(
        0,
        "surface-op-forbidden",
        'session event "system/message" is not surface-eligible and cannot carry surfaceOp',
    )


def test_v3_fold_refuses_v0_replace_ops_and_assistant_sources() -> None:
    events = v3_log()
    append_summary(events, replace(0, 1), [0, 1])
    assert fold_surface(events, version=3).code == "replace-op-invalid"
    events = v3_log()
    events[2]["sourceEventSeqs"] = []
    verdict = fold_surface(events, version=3)
    assert verdict == Violation(
        2,
        "source-seqs-forbidden",
        'session event "assistant/message" cannot carry sourceEventSeqs in format v3',
    )


@pytest.mark.parametrize(
    "value,printed",
    [
        (0, "0"),
        (-0.0, "0"),
        (3.0, "3"),
        (1.5, "1.5"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (123456789012.0, "123456789012"),
        (0.000001, "0.000001"),
        (float("inf"), "Infinity"),
        (-float("inf"), "-Infinity"),
        (2**60, "1152921504606847000"),
        (None, "null"),
        (True, "true"),
        ([1, [2, None]], "1,2,"),
        ({}, "[object Object]"),
    ],
)
def test_template_literals_print_values_as_javascript_does(value: Any, printed: str) -> None:
    assert _js.js_string(value) == printed
