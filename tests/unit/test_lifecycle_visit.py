"""The released walk's ``visit`` positions (G4's shortcut): a walk told to visit only the
records that are not stand-ins reaches the verdict of the walk over every position, on
the reference cases, on generated logs and on stand-ins placed anywhere; and the labels
of ``released-not-object``, formatted only on refusal, still name the seq they did.

The walk is fed one record at a time (:class:`RelationWalk`): a check reading a later
position (a title's messageSeqs, a command/done's sourceEventSeq) or crossing a compaction
no seed boundary has left open yet waits for the verdict. Its verdicts are compared with
the walk that reads the whole log first (``_LookAhead``), where nothing waits."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from checker_logs import insert_drawn_records
from reference_oracle_logs import HEADER, edited, tool_turn

from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.model import MISSING
from dshfuzz.oracle import Violation, check_lifecycle
from dshfuzz.oracle._lifecycle import _READ_LATER, RelationWalk


def _add(events: list[Any], type_: str, data: Any, **envelope: Any) -> None:
    events.append({"type": type_, "seq": len(events), "time": 0, "data": data, **envelope})


def _chunk_outside_its_step(events: list[Any]) -> None:
    events[7]["data"]["step"] = 2


def _title_citing_a_chunk(events: list[Any]) -> None:
    _add(events, "session/title", {"title": "t", "messageSeqs": [6], "source": {"kind": "provider"}})


def _command_citing_a_chunk(events: list[Any]) -> None:
    _add(events, "command/run", {"commandId": "c"})
    _add(events, "command/done", {"commandId": "c", "kind": "failure", "sourceEventSeq": 7})


def _compaction_left_open_by_a_seed(events: list[Any]) -> None:
    """The seed boundary makes the open compaction stale, so the turn may cross it."""
    _add(events, "compaction/start", {"compactionId": "k", "turn": None})
    _add(events, "turn/start", {"turn": 2})
    _add(events, "turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    _add(events, "session/end-seed", {})


def _compaction_crossing_a_turn(events: list[Any]) -> None:
    _add(events, "compaction/start", {"compactionId": "k", "turn": None})
    _add(events, "turn/start", {"turn": 2})


def _retry_outside_its_step(events: list[Any]) -> None:
    _add(events, "llm/retry", {"turn": 1, "step": 1, "provider": "p", "retry": 1, "retryId": "r"})


_CASES = [
    ("as written", lambda events: None),
    ("chunk outside its step", _chunk_outside_its_step),
    ("title citing a chunk", _title_citing_a_chunk),
    ("command citing a chunk", _command_citing_a_chunk),
    ("compaction left open by a seed", _compaction_left_open_by_a_seed),
    ("compaction crossing a turn", _compaction_crossing_a_turn),
    ("retry outside its step", _retry_outside_its_step),
]


def _stand_ins(events: list[Any], inert: set[int]) -> tuple[list[Any], list[int]]:
    """``events`` with a ``{}`` at the positions ``inert``, and the positions left to visit."""
    replaced = [{} if i in inert else event for i, event in enumerate(events)]
    return replaced, [i for i in range(len(events)) if i not in inert]


def _assert_same_verdict(events: list[Any], inert: set[int], header: Any) -> None:
    replaced, visit = _stand_ins(events, inert)
    assert check_lifecycle(replaced, header, visit=visit) == check_lifecycle(replaced, header)


def test_a_compaction_is_stale_only_where_a_seed_boundary_left_it_open() -> None:
    events = edited(tool_turn())
    _compaction_left_open_by_a_seed(events)
    assert check_lifecycle(events, HEADER).ok
    del events[-1]
    assert check_lifecycle(events, HEADER) == Violation(18, "compaction-crossed", "turn/start crosses an open compaction")


@pytest.mark.parametrize("name,edit", _CASES, ids=[c[0] for c in _CASES])
def test_visiting_all_but_the_chunk_stand_ins_is_the_whole_walk(name: str, edit: Any) -> None:
    events = edited(tool_turn())
    edit(events)
    chunks = {i for i, e in enumerate(events) if type(e) is dict and e.get("type") == "assistant/chunk"}
    _assert_same_verdict(events, chunks, HEADER)
    _assert_same_verdict(events, set(), HEADER)


@given(st.sets(st.integers(0, 25)))
def test_stand_ins_anywhere_leave_the_verdict_alone(inert: set[int]) -> None:
    events = edited(tool_turn())
    _compaction_left_open_by_a_seed(events)
    _assert_same_verdict(events, inert, HEADER)


@given(session_logs(max_events=80, turns=(1, 3), weights=FeatureWeights(tool_calls=0.6)), st.data())
def test_generated_logs_get_the_same_verdict_visiting_their_records(generated: Any, data: st.DataObject) -> None:
    events = copy.deepcopy(generated.events)
    chunks = {i for i, e in enumerate(events) if e.get("type") == "assistant/chunk"}
    extra = data.draw(st.sets(st.integers(0, max(len(events) - 1, 0))), label="more stand-ins")
    _assert_same_verdict(events, chunks, generated.header)
    _assert_same_verdict(events, chunks | extra, generated.header)


def _not_object(position: int, at: tuple[Any, ...], value: Any = 7) -> list[dict[str, Any]]:
    events = edited(tool_turn())
    target = events[position]
    for key in at[:-1]:
        target = target[key]
    target[at[-1]] = value
    return events


@pytest.mark.parametrize("events,seq,message", [
    (_not_object(1, ("data",)), 1, "turn/start 1 data must be a JSON object"),
    (_not_object(9, ("data", "message")), 9, "assistant/message 9 message must be a JSON object"),
    (_not_object(11, ("data", "message")), 11, "tool/result 11 message must be a JSON object"),
    (_not_object(11, ("data", "message", "source")), 11, "tool/result 11 source must be a JSON object"),
    (_not_object(11, ("data", "error")), 11, "tool/result 11 error must be a JSON object"),
    (_not_object(4, ("data", "source")), 4, "user/message 4 source must be a JSON object"),
])
def test_not_object_refusals_name_their_record(events: list[Any], seq: int, message: str) -> None:
    verdict = check_lifecycle(events, HEADER)
    assert verdict == Violation(seq, "released-not-object", message)


def test_a_not_object_label_prints_the_seq_as_javascript_does() -> None:
    events = _not_object(9, ("data", "message"))
    events[9]["seq"] = 9.0
    assert check_lifecycle(events, HEADER).message == "assistant/message 9 message must be a JSON object"
    title = edited(tool_turn())
    title.append({"type": "session/title", "seq": 1e21, "time": 17, "data": {"title": "t", "messageSeqs": [], "source": 3}})
    assert check_lifecycle(title, HEADER) == Violation(17, "released-not-object", "session/title 1e+21 source must be a JSON object")
    cited = edited(tool_turn())
    cited.append({"type": "session/title", "seq": 17, "time": 17,
                  "data": {"title": "t", "messageSeqs": ["18"], "source": {"kind": "provider"}}})
    cited.append({"type": "user/message", "seq": 18, "time": 18, "data": {"source": [1]}, "surfaceOp": "append"})
    assert check_lifecycle(cited, HEADER) == Violation(17, "released-not-object", "user/message 18 source must be a JSON object")


@pytest.mark.parametrize("name,edit", _CASES, ids=[c[0] for c in _CASES])
def test_events_given_as_model_events_are_read_as_their_raw_values(name: str, edit: Any) -> None:
    """The walk reads an ``Event`` as its ``raw`` wherever it reads one: in the walk, and where
    a title or command cites a position (here a stand-in of a chunk, or the chunk itself)."""
    from dshfuzz.model import Event

    events = edited(tool_turn())
    edit(events)
    chunks = {i for i, e in enumerate(events) if e.get("type") == "assistant/chunk"}
    for inert in (set(), chunks):
        replaced, visit = _stand_ins(events, inert)
        wrapped = [Event(e) for e in replaced]
        want = check_lifecycle(replaced, HEADER)
        assert check_lifecycle(wrapped, HEADER) == want
        assert check_lifecycle(iter(wrapped), HEADER) == want
        assert check_lifecycle(wrapped, HEADER, visit=visit) == want


class _LookAhead(RelationWalk):
    """The walk as released runs it, over a log it holds whole: every position is known from
    the start and the orphan compaction starts are found first, so no check waits."""

    def __init__(self, events: list[Any], header: Any) -> None:
        super().__init__(header)
        for index, event in enumerate(events):
            if type(event) is dict and type(event.get("type")) is str and event["type"] in _READ_LATER:
                self._keep(index, event["type"], event)
        self.orphan_start = MISSING
        self.length = len(events)
        self._keep = lambda *_: None  # type: ignore[method-assign]  # kept already

    def _wait(self, check: Any, *arguments: Any) -> None:
        check(*arguments)


def _look_ahead(events: list[Any], header: Any) -> Any:
    walk = _LookAhead(events, header)
    for index, event in enumerate(events):
        walk.feed(index, event)
    return walk.verdict(len(events))


def _later_reads(events: list[Any], data: st.DataObject) -> None:
    """Records citing positions anywhere (earlier, their own, later, past the log), human
    messages to cite, compactions, seed boundaries and turns, inserted anywhere."""
    n = len(events) + 4
    cite = st.one_of(st.integers(0, n), st.integers(0, n).map(str), st.sampled_from([-1, 1.0, "01", None, "x", 10**6]))
    records = st.one_of(
        st.builds(lambda seqs, kind: ("session/title", {"title": "t", "messageSeqs": seqs, "source": {"kind": kind}}),
                  st.lists(cite, max_size=3), st.sampled_from(["user", "provider"])),
        st.builds(lambda seqs: ("session/title-llm-request", {"messageSeqs": seqs, "messages": []}), st.lists(cite, max_size=2)),
        st.builds(lambda seq, kind: ("command/done", {"commandId": "c", "kind": kind, "sourceEventSeq": seq}),
                  cite, st.sampled_from(["success", "failure"])),
        st.just(("command/run", {"commandId": "c"})),
        st.builds(lambda data: ("user/message", data), st.sampled_from([
            {"source": {"kind": "user"}, "content": [{"type": "text", "text": "hi"}]},
            {"source": {"kind": "user"}, "content": [None]}, {"source": {"kind": "user"}, "content": 3},
            {"source": 3}, {"source": {"kind": "plugin", "plugin": "compact"}}])),
        st.builds(lambda turn: ("compaction/start", {"compactionId": "k", "turn": turn}), st.sampled_from([None, 1, 2])),
        st.just(("compaction/end", {"compactionId": "k", "turn": None, "error": "x"})),
        st.just(("session/end-seed", {})),
        st.builds(lambda turn: ("turn/start", {"turn": turn}), st.sampled_from([1, 2, 3])),
        st.builds(lambda turn: ("turn/end", {"turn": turn, "reason": {"kind": "completed"}}), st.sampled_from([1, 2])),
    )
    insert_drawn_records(events, data, records, most=5)


@given(st.data())
def test_a_walk_fed_one_record_at_a_time_decides_as_the_walk_reading_ahead(data: st.DataObject) -> None:
    events = edited(tool_turn())
    _later_reads(events, data)
    assert check_lifecycle(events, HEADER) == _look_ahead(events, HEADER)


@given(session_logs(max_events=60, turns=(1, 3), weights=FeatureWeights(tool_calls=0.5)), st.data())
def test_generated_logs_with_later_reads_are_decided_as_reading_ahead(generated: Any, data: st.DataObject) -> None:
    events = copy.deepcopy(generated.events)
    _later_reads(events, data)
    assert check_lifecycle(events, generated.header) == _look_ahead(events, generated.header)


def _title(events: list[Any], seqs: Any) -> None:
    _add(events, "session/title", {"title": "t", "messageSeqs": seqs, "source": {"kind": "provider"}})


def test_a_title_citing_a_later_human_message_waits_for_it() -> None:
    events = edited(tool_turn())
    _title(events, [len(events) + 1])
    _add(events, "user/message", {"source": {"kind": "user"}, "content": []}, surfaceOp="append")
    assert check_lifecycle(events, HEADER).ok
    events[-1]["data"]["source"]["kind"] = "plugin"
    assert check_lifecycle(events, HEADER) == Violation(
        17, "title-source", "session/title 17 messageSeqs must cite earlier human user/message events")
    del events[-1]  # the cited position is past the log: ``undefined?.type`` is no user/message (released, format 1, says so)
    assert check_lifecycle(events, HEADER) == Violation(
        17, "title-source", "session/title 17 messageSeqs must cite earlier human user/message events")


def test_a_waiting_check_that_fails_is_the_verdict_ahead_of_a_later_refusal() -> None:
    events = edited(tool_turn())
    _compaction_crossing_a_turn(events)  # waits: a later seed boundary may leave the compaction open
    _add(events, "turn/start", {"turn": 9})  # refused at once
    assert check_lifecycle(events, HEADER) == Violation(18, "compaction-crossed", "turn/start crosses an open compaction")
    _add(events, "session/end-seed", {})  # after the refusal, and still it leaves the compaction open
    assert check_lifecycle(events, HEADER) == Violation(
        19, "turn-out-of-order", "turn/start 9 does not open expected turn 2")


def test_the_walk_keeps_what_it_was_fed_where_the_verdict_falls() -> None:
    events = edited(tool_turn())
    _compaction_crossing_a_turn(events)
    walk = RelationWalk(HEADER)
    for index, event in enumerate(events):
        walk.feed(index, event, origin=("record", index))
    verdict = walk.verdict(len(events))
    assert verdict.seq == 18 and walk.origin(18) == ("record", 18)


def test_an_object_id_the_walk_stored_is_never_taken_for_a_later_one() -> None:
    """An object where a commandId belongs is ``===`` only to itself: once its command/run is fed
    and dropped (a streaming caller keeps no record), a command/done naming another object has
    no prior command/run, even one the allocator placed where the first one was."""
    walk = RelationWalk(HEADER)
    record = {"type": "command/run", "seq": 0, "time": 0, "data": {"commandId": {"k": 1}}}
    first = id(record["data"]["commandId"])
    walk.feed(0, record)
    del record
    walk.feed(1, {"type": "plugin/note", "seq": 1, "time": 0, "data": {}})  # the walk lets go of the last record fed
    others = [{"k": 1} for _ in range(64)]
    other = next((o for o in others if id(o) == first), others[0])
    walk.feed(2, {"type": "command/done", "seq": 2, "time": 0, "data": {"commandId": other, "kind": "failure"}})
    verdict = walk.verdict(3)
    assert isinstance(verdict, Violation) and verdict.code == "command-done-unmatched"
