"""The surface walk (S1-S8) passes over only what the fold ignores, and keeps only the
current surface: a tool/result leaves its state when a replace shadows it."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.checker import _surface
from dshfuzz.checker._context import CheckContext
from dshfuzz.model import encode_jsonl, parse_log

_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "cwd": "/", "delegationDepth": 0}
_SURFACE = frozenset(RuleId(f"S{i}") for i in range(1, 9))


def _event(seq: Any, kind: Any = "step/end", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": 0, "data": {}, **extra}


def _result(seq: int, content: str, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": "c", "content": content}
    return {"type": "tool/result", "seq": seq, "time": 0, "data": {"message": {"role": "tool", "content": [block]}}, **extra}


def _facts(events: list[Any]) -> list[tuple[Any, ...]]:
    report = check_log(parse_log(encode_jsonl(_HEADER, [events])), CheckOptions(strict=True, rules=_SURFACE))
    return [(str(f.rule), f.seq, f.message) for f in report.findings]


# what the walk passes over at a glance: an int seq at its position, no surface metadata, no surface type
_EDGES = {
    "seq True at 1": [_event(0), _event(True)],
    "seq False at 0": [_event(False)],
    "seq 1.0 at 1": [_event(0), _event(1.0)],
    "surface type without surfaceOp": [_event(0, "user/message")],
    "surfaceOp null off the surface": [_event(0, surfaceOp=None)],
    "sourceEventSeqs alone off the surface": [_event(0), _event(1, sourceEventSeqs=[0])],
    "type not a string, metadata": [_event(0, 7, surfaceOp="append")],
    "type not a string, plain": [_event(0, ["x"])],
    "no type": [{"seq": 0, "time": 0, "data": {}}],
    "not an object": [_event(0), 3],
}


@pytest.mark.parametrize("name", list(_EDGES))
def test_what_the_walk_passes_over_is_what_judging_every_head_ignores(name: str) -> None:
    events = _EDGES[name]
    with mock.patch.object(_surface.SurfaceWalk, "visit", _surface.SurfaceWalk.judge):
        everything = _facts(events)
    assert _facts(events) == everything


def test_a_bool_seq_at_the_position_it_equals_is_off() -> None:
    assert [f[:2] for f in _facts(_EDGES["seq True at 1"])] == [("S8", None)]
    assert "seq True is not contiguous" in _facts(_EDGES["seq True at 1"])[0][2]


def _walked(events: list[Any]) -> _surface.SurfaceWalk:
    ctx = CheckContext(parse_log(encode_jsonl(_HEADER, [events])))
    walk = _surface.SurfaceWalk(ctx)
    for i in ctx.packed_runs[0]:
        walk.visit(i, ctx.events[i])
    return walk


def test_the_walk_keeps_only_the_tool_results_on_the_surface() -> None:
    events: list[Any] = [_event(0, "user/message", surfaceOp="append"), _result(1, "a", surfaceOp="append")]
    for seq in range(2, 40):  # each rewrite shadows the previous one
        events.append(_result(seq, "pruned", surfaceOp={"op": "replace", "start": seq - 1, "end": seq - 1},
                              sourceEventSeqs=[seq - 1]))
    events.append(_result(40, "b", surfaceOp="append"))
    events.append(_result(41, "c"))  # no surfaceOp: S1, never on the surface
    walk = _walked(events)
    assert list(walk.replay.surface) == [0, 39, 40]
    assert sorted(walk.replay.by_seq) == [39, 40]
    assert [f[0] for f in _facts(events)] == ["S1", "S8"]


def test_a_rewrite_is_compared_with_the_result_it_shadows() -> None:
    events: list[Any] = [_result(0, "a", surfaceOp="append"),
                         _result(1, "b", surfaceOp={"op": "replace", "start": 0, "end": 0}, sourceEventSeqs=[0])]
    changed = _result(2, "c", surfaceOp={"op": "replace", "start": 1, "end": 1}, sourceEventSeqs=[1])
    changed["data"]["message"]["role"] = "user"
    events.append(changed)
    assert [f[:2] for f in _facts(events)] == [("S7", 2), ("S8", 2)]
    # the fold throws there; the meter, which reads no rewrite, replaces node 1 by 2 all the same
    assert list(_walked(events).replay.surface) == [2] and sorted(_walked(events).replay.by_seq) == [2]


def test_a_node_brought_back_by_a_repeated_seq_is_judged_as_it_is_now() -> None:
    """Node 1, a tool/result rewritten away, comes back as a user/message carrying seq 1
    again (S8 fails there): a tool/result rewrite of it targets no current tool/result. The
    pass before the walk compared it with the first tool/result of seq 1, which the walk no
    longer holds once shadowed."""
    events: list[Any] = [
        _event(0, "user/message", surfaceOp="append"),
        _result(1, "a", surfaceOp="append"),
        _result(2, "b", surfaceOp={"op": "replace", "start": 1, "end": 1}, sourceEventSeqs=[1]),
        _event(1, "user/message", surfaceOp="append"),
        _result(4, "c", surfaceOp={"op": "replace", "start": 1, "end": 1}, sourceEventSeqs=[1]),
    ]
    assert [f[:2] for f in _facts(events)] == [("S8", 1), ("S7", 4)]
    assert "must target a current tool/result" in _facts(events)[1][2]
