"""The checker's visiting shortcuts are exact: a pass that visits only the positions the
shared scan names gets the findings of the same pass visiting every event.

The surface walk judges the surface types plus the events that are not objects, carry a
seq other than their position or carry surface metadata; every other head is one it
passes over. The logs here break exactly those envelope facts, in plain rows and in
packed chunk rows."""

from __future__ import annotations

import copy
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker_logs import explain

from dshfuzz.checker import CheckOptions, RuleId, _run, _scan, _surface, check_log
from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.model import encode_jsonl, parse_log

_SURFACE = frozenset(RuleId(f"S{i}") for i in range(1, 10))
_ODD_VALUES = st.sampled_from([None, 7, "x", [], {}, 1.5, -1, "append", {"op": "replace", "start": 0, "end": 0}])


def _facts(report: Any) -> list[tuple[Any, ...]]:
    return sorted((str(f.rule), -1 if f.seq is None else f.seq, f.line, f.message, tuple(map(str, f.refused_by)),
                   repr(sorted(f.context.items()))) for f in report.findings)


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
    with mock.patch.object(_surface.SurfaceWalk, "visit", _surface.SurfaceWalk.judge):
        everything = check_log(parse_log(encode_jsonl(generated.header, [events])), options)
    assert _facts(shortcut) == _facts(everything), explain(shortcut, generated.header, events)


def _scan_of(log: Any) -> Any:
    """What the type scan publishes when a check's loop hands it every head of ``log``."""
    from dshfuzz.checker._context import CheckContext
    from dshfuzz.checker._finding import Report

    ctx = CheckContext(log)
    sink = _run._Sink(Report(file=None, format_version=None, events=0, frames=0), set(), 1000, True)
    _run._run_walks(ctx, [w for w in _run.WALKS if w.cls is _scan.TypeScan], sink)
    return _scan.scanned(ctx)


def test_the_scan_keeps_whether_seqs_are_positions_and_the_last_turn_end() -> None:
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "cwd": "/", "delegationDepth": 0}
    events: list[Any] = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        None,
        {"seq": 2, "time": 0, "data": {}},
        {"type": "turn/end", "seq": 4, "time": 0, "data": {"turn": 1}},
        {"type": "step/end", "seq": 4, "time": 0, "data": {}, "surfaceOp": "append"},
        {"type": "step/end", "seq": "6", "time": 0, "data": {}},
    ]
    scanned = _scan_of(parse_log(encode_jsonl(header, [events])))
    assert (scanned.positional, scanned.last_turn_end, scanned.last_turn_end_line) == (False, 3, 5)
    del events[1:]
    scanned = _scan_of(parse_log(encode_jsonl(header, [events])))
    assert (scanned.positional, scanned.last_turn_end, scanned.last_turn_end_line) == (True, -1, 0)


_ENGINE = frozenset({RuleId.T1, RuleId.T2, RuleId.T3, RuleId.T4, RuleId.M1})
_CITATION_EDITS: dict[str, Any] = {
    "as written": lambda s, k, v: s,
    "reverse": lambda s, k, v: s[::-1],
    "repeat one up front": lambda s, k, v: [s[k], *s],
    "repeat one at the end": lambda s, k, v: [*s, s[k]],
    "drop one": lambda s, k, v: s[:k] + s[k + 1:],
    "swap two": lambda s, k, v: s[:k] + s[k + 1:k + 2] + s[k:k + 1] + s[k + 2:],
    "replace one": lambda s, k, v: s[:k] + [v] + s[k + 1:],
    "insert one": lambda s, k, v: s[:k] + [v] + s[k:],
}
_CITED_VALUES = st.one_of(st.integers(-2, 90), st.sampled_from([1.0, 2.5, True, None, "3", [4]]))


@given(session_logs(max_events=80), st.data())
def test_an_ascending_citation_is_read_as_the_general_reading_reads_it(generated: Any, data: st.DataObject) -> None:
    """The engine reads a citation of strictly ascending ints without its general loop,
    skipping a packed run cited whole; with sources reordered, repeated, thinned or made
    to name later seqs, other steps, non-chunks or runs cut short, and a chunk's turn or
    step made odd, the findings are those of the general reading alone."""
    from dshfuzz.checker._engine import TurnStepStructure

    events = copy.deepcopy(generated.events)
    chunks = [e for e in events if e["type"] == "assistant/chunk"]
    if chunks and data.draw(st.booleans(), label="odd chunk"):
        chunk = data.draw(st.sampled_from(chunks), label="chunk")
        chunk["data"][data.draw(st.sampled_from(["turn", "step"]), label="field")] = data.draw(
            st.sampled_from([2, 1.0, True, None, "1"]), label="value")
    citing = [e for e in events if type(e.get("sourceEventSeqs")) is list and e["sourceEventSeqs"]]
    for _ in range(data.draw(st.integers(0, 2), label="edits") if citing else 0):
        event = data.draw(st.sampled_from(citing), label="citing")
        sources = event["sourceEventSeqs"]
        if not sources:  # emptied by an earlier edit
            continue
        edit = _CITATION_EDITS[data.draw(st.sampled_from(sorted(_CITATION_EDITS)), label="sources edit")]
        event["sourceEventSeqs"] = edit(sources, data.draw(st.integers(0, len(sources) - 1), label="at"),
                                        data.draw(_CITED_VALUES, label="cited"))
    options = CheckOptions(strict=True, rules=_ENGINE)
    shortcut = check_log(parse_log(encode_jsonl(generated.header, [events])), options)
    with mock.patch.object(TurnStepStructure, "ascending_citation", lambda self, *args: None):
        general = check_log(parse_log(encode_jsonl(generated.header, [events])), options)
    assert _facts(shortcut) == _facts(general), explain(shortcut, generated.header, events)


def _two_runs() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One step whose message cites a block-start, a packed run of five text deltas (seqs 5-9),
    a block-end, a second block's run of three (seqs 12-14) and its block-end."""
    from checker_logs import assistant_message, ev, header, user_message

    step = {"turn": 1, "step": 1}
    events = [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", step),
        ev(2, "user/message", user_message("u1", "hi"), surfaceOp="append"),
        ev(3, "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}),
        ev(4, "assistant/chunk", {**step, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}),
        *(ev(s, "assistant/chunk", {**step, "chunk": {"type": "text-delta", "index": 0, "text": "ab"}}) for s in range(5, 10)),
        ev(10, "assistant/chunk", {**step, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "x"}}}),
        ev(11, "assistant/chunk", {**step, "chunk": {"type": "block-start", "index": 1, "blockType": "text"}}),
        *(ev(s, "assistant/chunk", {**step, "chunk": {"type": "text-delta", "index": 1, "text": "cd"}}) for s in range(12, 15)),
        ev(15, "assistant/chunk", {**step, "chunk": {"type": "block-end", "index": 1, "block": {"type": "text", "text": "y"}}}),
        ev(16, "assistant/message", {**step, "message": assistant_message("a1", {"type": "text", "text": "x"}),
                                     "usage": {"inputTokens": 1, "outputTokens": 1}},
           surfaceOp="append", sourceEventSeqs=list(range(4, 16))),
        ev(17, "step/end", step),
        ev(18, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]
    return header(), events


_RUN_CITATIONS = {
    "whole": list(range(4, 16)),
    "first run cut short": [4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15],
    "first run missing a middle member": [4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15],
    "first run's head only": [4, 5, 10, 11, 12, 13, 14, 15],
    "second run cut short at the end": [4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
    "a run's tail without its head": [4, 6, 7, 8, 9, 10],
    "a later seq": [*range(4, 16), 17],
    "itself": [*range(4, 16), 16],
    "past the log": [*range(4, 16), 40],
    "a negative seq": [-1, *range(4, 16)],
    "a non-chunk first": [3, *range(4, 16)],
    "a float": [4.0, *range(5, 16)],
    "a bool": [True, *range(4, 16)],
    "a repeat inside a run": [4, 5, 6, 6, 7, 8, 9, 10],
    "descending": list(range(15, 3, -1)),
    "empty": [],
    "first run cut short before a chunk of another step": [4, 5, 6, 7, 8, 10],
}
_OTHER_STEP = {"first run cut short before a chunk of another step": 10}


@pytest.mark.parametrize("name", sorted(_RUN_CITATIONS))
def test_a_citation_of_packed_runs_is_read_as_the_general_reading_reads_it(name: str) -> None:
    from dshfuzz.checker._engine import TurnStepStructure

    head, events = _two_runs()
    events[16]["sourceEventSeqs"] = _RUN_CITATIONS[name]
    if name in _OTHER_STEP:
        events[_OTHER_STEP[name]]["data"]["step"] = 2
    log = parse_log(encode_jsonl(head, [events]))
    assert sorted(r.events.start for r in log.rows if r.kind == "packed") == [5, 12]
    options = CheckOptions(strict=True, rules=_ENGINE)
    shortcut = check_log(log, options)
    with mock.patch.object(TurnStepStructure, "ascending_citation", lambda self, *args: None):
        general = check_log(parse_log(encode_jsonl(head, [events])), options)
    assert _facts(shortcut) == _facts(general), explain(shortcut, head, events)


_TURN_END_VALUES = st.sampled_from([None, 0, 1, 2, 2**53, 1.0, 1.5, True, "1", [], {}])
_REASONS = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["completed", "blocked", "max-tokens", "interrupted", "disposed", "aborted", "error", "", 1]),
    "reason": st.just("r"), "step": st.just(1), "message": st.just("m"),
})


@given(st.fixed_dictionaries({}, optional={"turn": _TURN_END_VALUES, "reason": _REASONS | _TURN_END_VALUES,
                                           "extra": st.just(1)}))
def test_a_plain_turn_end_is_one_both_v0_readers_accept(data: dict[str, Any]) -> None:
    from dshfuzz.checker._engine import _plain_turn_end, _reason_problems_v0

    if _plain_turn_end(data):
        assert _reason_problems_v0(data) == []


@given(session_logs(max_events=80, weights=FeatureWeights(compaction=0.9)), st.data())
def test_a_shadow_price_claim_is_read_off_the_event_before_the_replace(generated: Any, data: st.DataObject) -> None:
    """T2's claim check visits the events right after a compaction/summary or prune; the
    findings are those of a scan of every surface event asking what precedes it."""
    events = copy.deepcopy(generated.events)
    for _ in range(data.draw(st.integers(0, 2), label="moves") if events else 0):
        at = data.draw(st.integers(0, len(events) - 1), label="from")
        events.insert(data.draw(st.integers(0, len(events) - 1), label="to"), events.pop(at))
    priced = [e for e in events if e["type"] in ("compaction/summary", "compaction/prune")]
    replaces = [e for e in events if type(e.get("surfaceOp")) is dict]
    for _ in range(data.draw(st.integers(0, 2), label="range edits") if priced and replaces else 0):
        if data.draw(st.booleans(), label="edit the claim"):
            data.draw(st.sampled_from(priced), label="priced")["data"]["shadowedRange"] = data.draw(
                st.sampled_from([{"start": 1, "end": 2}, None, {"start": 1.0}]), label="claim")
        else:
            data.draw(st.sampled_from(replaces), label="replace")["surfaceOp"]["start"] = data.draw(
                st.sampled_from([0, 1, 2.0]), label="start")
    for index, event in enumerate(events):
        event["seq"] = index
    report = check_log(parse_log(encode_jsonl(generated.header, [events])), CheckOptions(strict=True, rules=frozenset({RuleId.T2})))
    found = {f.seq for f in report.findings if "shadow price" in f.message}
    expected = set()
    for index, event in enumerate(events[1:], start=1):
        before = events[index - 1]
        op = event.get("surfaceOp")
        if (before["type"] in ("compaction/summary", "compaction/prune") and type(before["data"].get("shadowedRange")) is dict
                and event["type"] in ("user/message", "assistant/message", "tool/result") and type(op) is dict):
            claim = before["data"]["shadowedRange"]
            if (claim.get("start"), claim.get("end")) != (op.get("start"), op.get("end")):
                expected.add(index)
    assert found == expected, explain(report, generated.header, events)


@given(session_logs(max_events=60), st.data())
def test_the_scan_says_seqs_are_positions_exactly_when_every_event_carries_its_position(
    generated: Any, data: st.DataObject
) -> None:
    """The seq-order rules (E2 S9 C1) sit out while the scan calls the log positional: the scan
    reads only a packed run's first member, and must agree with reading every event."""
    events = copy.deepcopy(generated.events)
    _damage(events, data)
    log = parse_log(encode_jsonl(generated.header, [events]))
    every = all(type(ev.raw) is dict and type(ev.raw.get("seq")) is int and ev.raw["seq"] == i
                for i, ev in enumerate(log.events))
    assert _scan_of(log).positional == every


_ODD_JSON = st.sampled_from([None, 0, 1, 1.0, True, "0", "x", [], {}, [0], float("nan")])
_CHUNKS = st.one_of(
    _ODD_JSON,
    st.fixed_dictionaries({"type": st.sampled_from(["block-start", "text-delta", "reasoning-delta", "tool-call-delta",
                                                    "block-end", "usage", "finish", "other", 1])},
                          optional={"index": st.one_of(st.integers(0, 2), _ODD_JSON),
                                    "blockType": st.one_of(st.sampled_from(["text", "reasoning", "tool-call", "image"]), _ODD_JSON),
                                    "block": st.one_of(_ODD_JSON, st.fixed_dictionaries(
                                        {"type": st.sampled_from(["text", "reasoning", "tool-call", "tool-result", "x"])},
                                        optional={"text": _ODD_JSON, "name": _ODD_JSON, "arguments": _ODD_JSON,
                                                  "content": st.one_of(_ODD_JSON, st.lists(_ODD_JSON, max_size=2))}))}),
)


@given(st.lists(_CHUNKS, max_size=8))
def test_a_chunk_is_kept_as_a_skeleton_the_assembler_reads_alike(chunks: list[Any]) -> None:
    """What the structure walk keeps of a chunk a later citation may name: chunks of one key
    share the skeleton of the first, and any citation assembles their skeletons as it
    assembles the chunks (a repeated skeleton changes nothing, so a citation takes each once)."""
    from dshfuzz.checker._turnstep import _VERDICT_BLOCKS, _assembly_problem, _block_problem, _cite_key, _skeleton

    assert all(_block_problem(block) == verdict for verdict, block in _VERDICT_BLOCKS.items())
    first: dict[Any, Any] = {}
    kept = []
    for chunk in chunks:
        key = _cite_key(chunk)
        kept.append(_skeleton(chunk) if key is None else first.setdefault(key, _skeleton(chunk)))
    assert _assembly_problem(kept) == _assembly_problem(chunks)
    once = list({id(s): s for s in kept}.values())
    assert _assembly_problem(once) == _assembly_problem(chunks)
