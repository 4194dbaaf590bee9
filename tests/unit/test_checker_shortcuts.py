"""The checker's visiting shortcuts are exact: a pass that visits only the positions the
shared scan names gets the findings of the same pass visiting every event.

The surface pass visits the surface types plus :func:`dshfuzz.checker._scan.irregular`
(events that are not objects, have no string type, carry a seq other than their position
or surface metadata); every other event is one it passes over. The logs here break
exactly those envelope facts, in plain rows and in packed chunk rows."""

from __future__ import annotations

import copy
from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from checker_logs import explain

from dshfuzz.checker import CheckOptions, RuleId, _scan, check_log
from dshfuzz.generators import session_logs
from dshfuzz.model import encode_jsonl, parse_log

_SURFACE = frozenset(RuleId(f"S{i}") for i in range(1, 10))
_ODD_VALUES = st.sampled_from([None, 7, "x", [], {}, 1.5, -1, "append", {"op": "replace", "start": 0, "end": 0}])


def _facts(report: Any) -> list[tuple[Any, ...]]:
    return sorted((str(f.rule), -1 if f.seq is None else f.seq, f.line, f.message, tuple(map(str, f.refused_by)),
                   repr(sorted(f.context.items()))) for f in report.findings)


def _every_head(ctx: Any, *types: Any) -> list[int]:
    """What the pass visited before the scan named positions: every head of the log."""
    return list(ctx.packed_runs[0])


def _damage(events: list[Any], data: st.DataObject) -> None:
    """Break envelope facts the scan reads: drop or repeat an event (every later seq is then
    off its position), or give one event an odd type, seq, surfaceOp or sourceEventSeqs,
    or make it no object at all."""
    for _ in range(data.draw(st.integers(0, 3), label="edits")):
        if not events:
            return
        at = data.draw(st.integers(0, len(events) - 1), label="at")
        edit = data.draw(st.sampled_from(["drop", "repeat", "type", "seq", "surfaceOp", "sourceEventSeqs", "not an object"]),
                         label="edit")
        if edit == "drop":
            del events[at]
        elif edit == "repeat":
            events.insert(at, copy.deepcopy(events[at]))
        elif edit == "not an object":
            events[at] = data.draw(st.sampled_from([None, 3, "event", [1]]), label="value")
        elif type(events[at]) is dict:
            events[at][edit] = copy.deepcopy(data.draw(_ODD_VALUES, label="value"))


@given(session_logs(max_events=60), st.data())
def test_the_surface_pass_visits_every_event_it_judges(generated: Any, data: st.DataObject) -> None:
    events = copy.deepcopy(generated.events)
    _damage(events, data)
    version = data.draw(st.sampled_from([None, 3]), label="format override")
    options = CheckOptions(strict=True, rules=_SURFACE, format_version=version)
    log = parse_log(encode_jsonl(generated.header, [events]))
    shortcut = check_log(log, options)
    with mock.patch("dshfuzz.checker._surface.irregular", _every_head), \
            mock.patch("dshfuzz.checker._surface.positions", _every_head):
        everything = check_log(parse_log(encode_jsonl(generated.header, [events])), options)
    assert _facts(shortcut) == _facts(everything), explain(shortcut, generated.header, events)


def test_the_scan_names_what_is_irregular() -> None:
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "cwd": "/", "delegationDepth": 0}
    events: list[Any] = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        None,
        {"seq": 2, "time": 0, "data": {}},
        {"type": "turn/end", "seq": 4, "time": 0, "data": {"turn": 1}},
        {"type": "step/end", "seq": 4, "time": 0, "data": {}, "surfaceOp": "append"},
        {"type": "step/end", "seq": 5, "time": 0, "data": {}, "sourceEventSeqs": []},
        {"type": "step/end", "seq": "6", "time": 0, "data": {}},
        {"type": "step/end", "seq": 7, "time": 0, "data": {}},
    ]
    from dshfuzz.checker._context import CheckContext

    ctx = CheckContext(parse_log(encode_jsonl(header, [events])))
    assert _scan.irregular(ctx) == [1, 2, 3, 4, 5, 6]
