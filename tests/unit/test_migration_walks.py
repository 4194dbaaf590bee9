"""The migration walks (G1-G4) decide as the passes reading the whole log did.

G3 reads ``events[seq]`` by position, earlier or later: the walk keeps each human
user/message's text and lets a title citing a later position wait. Its findings are
compared with the check reading the whole log first, on generated logs with titles and
messages inserted anywhere (seqs renumbered or not), packed and one event per line, in
formats 0 and 1. G4 feeds every record to the released walk, which decides a crossing
at the end; the finding is located at the record the verdict names."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from checker_logs import insert_drawn_records
from reference_oracle_logs import HEADER, edited, tool_turn

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.checker import _migration
from dshfuzz.checker._migration import _title_problem
from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.model import MISSING, Event, encode_jsonl, parse_log

_TITLES = ("session/title", "session/title-llm-request")


def _get(value: Any, key: str) -> Any:
    return value.get(key, MISSING) if type(value) is dict else MISSING


def _reading_ahead(events: list[Event], version: int) -> list[tuple[Any, str]]:
    """G3's (seq, message) per title, the cited events read from the whole log."""

    def cited_text(seq: Any) -> str | None:
        position = _migration._cited_position(seq)
        if position is None or position >= len(events):
            return None
        cited = events[position]
        if cited.type != "user/message" or _get(_get(cited.data, "source"), "kind") != "user":
            return None
        content = _get(cited.data, "content")
        return "\n".join(b["text"] for b in content if type(b) is dict and b.get("type") == "text"
                         and type(b.get("text")) is str) if type(content) is list else ""

    out = []
    for event in events:
        if event.type in _TITLES and type(event.data) is dict:
            problem = _title_problem(cited_text, event, version == 0)
            if problem is not None:
                out.append((event.seq, f"{event.type} {_migration.show_value(event.seq)} {problem}"))
    return out


def _titles_anywhere(events: list[Any], data: st.DataObject) -> None:
    n = len(events) + 4
    cite = st.one_of(st.integers(0, n), st.integers(0, n).map(str), st.sampled_from([-1, 2.0, "01"]))
    records = st.one_of(
        st.builds(lambda seqs, kind: ("session/title", {"title": "t", "messageSeqs": seqs, "source": {"kind": kind}}),
                  st.one_of(st.lists(cite, max_size=3), st.just("12")), st.sampled_from(["user", "provider"])),
        st.builds(lambda seqs: ("session/title-llm-request", {"messageSeqs": seqs, "messages": []}), st.lists(cite, max_size=2)),
        st.builds(lambda text, kind: ("user/message", {"source": {"kind": kind}, "content": [{"type": "text", "text": text}]}),
                  st.sampled_from(["hi", "a\nb"]), st.sampled_from(["user", "plugin"])),
    )
    insert_drawn_records(events, data, records, most=6)


@settings(max_examples=150)
@given(session_logs(max_events=60, turns=(1, 3), weights=FeatureWeights(tool_calls=0.4)), st.data())
def test_g3_decides_every_title_as_reading_the_whole_log(generated: Any, data: st.DataObject) -> None:
    events = copy.deepcopy(generated.events)
    _titles_anywhere(events, data)
    version = data.draw(st.sampled_from([0, 1]), label="format")
    header = {**generated.header, "version": version}
    log = parse_log(encode_jsonl(header, [events], pack=data.draw(st.booleans(), label="packed")))
    report = check_log(log, CheckOptions(rules=frozenset({RuleId.G3}), strict=True))
    assert [(f.seq, f.message) for f in report.findings] == _reading_ahead(log.events, version)


def _log(events: list[Any], version: int = 1) -> Any:
    return parse_log(encode_jsonl({**HEADER, "version": version}, [events], pack=False))


def test_a_title_waiting_for_a_later_message_reports_ahead_of_the_titles_after_it() -> None:
    events = edited(tool_turn())
    first = len(events)
    events.append({"type": "session/title", "seq": first, "time": 0,
                   "data": {"title": "t", "messageSeqs": [first + 2], "source": {"kind": "provider"}}})
    events.append({"type": "session/title", "seq": first + 1, "time": 0,
                   "data": {"title": "t", "messageSeqs": [1], "source": {"kind": "provider"}}})
    events.append({"type": "user/message", "seq": first + 2, "time": 0, "surfaceOp": "append",
                   "data": {"source": {"kind": "plugin"}, "content": []}})
    report = check_log(_log(events), CheckOptions(rules=frozenset({RuleId.G3}), strict=True))
    assert [f.seq for f in report.findings] == [first, first + 1]
    events[-1]["data"]["source"]["kind"] = "user"
    report = check_log(_log(events), CheckOptions(rules=frozenset({RuleId.G3}), strict=True))
    assert [f.seq for f in report.findings] == [first + 1]


def test_g4_reports_a_crossing_decided_at_the_end_at_the_turn_that_crosses() -> None:
    events = edited(tool_turn())
    events.append({"type": "compaction/start", "seq": 17, "time": 0, "data": {"compactionId": "k", "turn": None}})
    events.append({"type": "turn/start", "seq": 18, "time": 0, "data": {"turn": 2}})
    log = _log(events, version=0)
    report = check_log(log, CheckOptions(rules=frozenset({RuleId.G4}), strict=True))
    assert [(f.seq, f.line, f.context["code"]) for f in report.findings] == [(18, log.events[18].line, "compaction-crossed")]
    events.append({"type": "session/end-seed", "seq": 19, "time": 0, "data": {}})
    assert not check_log(_log(events, version=0), CheckOptions(rules=frozenset({RuleId.G4}), strict=True)).findings
