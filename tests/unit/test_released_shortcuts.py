"""G5's shortcuts are exact: a record the shortcut calls plain is one released's migration
leaves as it is and its payload validator accepts (any record one edit away from a generated
one, or a few random edits away), and a check with the shortcuts reports what
the general code reports.

The shortcuts (``_released._PLAIN``) decide the most frequent format-0 records (step and turn
boundaries, tool calls, the three message types, inbox splices, prunes) without the labelled
validator; the general code is the validator alone (the table emptied, and the message
validator's own shortcut, ``_plain_message``, off). Records here are drawn
near the plain shapes: a generated record with a member set to an odd value, dropped or added,
at any depth. G5's sequence-list and instant checks keep their general code here, as it was
before their shortcuts, and are compared on drawn values."""

from __future__ import annotations

import copy
import re
from datetime import datetime
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from checker_logs import explain

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.checker import _released
from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.model import MISSING, encode_jsonl, parse_log

_ONLY_G5 = CheckOptions(rules=frozenset({RuleId.G5}), strict=True)
_ODD = st.sampled_from([None, 0, 1, -1, 1.0, 2**53, True, False, "", "x", "user", "model", "tool", "text",
                        "tool-call", "tool-result", "next-turn", "canceled", [], {}, [1], {"kind": "user"}, MISSING])
_KEYS = st.sampled_from(["turn", "step", "message", "usage", "meta", "error", "interrupted", "id", "role", "content",
                         "source", "kind", "provider", "model", "callId", "type", "text", "name", "arguments",
                         "toolCallId", "isError", "inputTokens", "outputTokens", "cacheReadTokens", "target", "start",
                         "inserted", "removedCount", "outcome", "clientTimeZone", "shadowedRange", "shadowedSeqs",
                         "shadowedTokenCount", "end", "extra"])
_WEIGHTS = FeatureWeights(tool_calls=0.9, compaction=0.3, retry=0.3, prune=0.5)


def _perturb(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """``value`` with one edit somewhere inside: a member or element set to an odd value, dropped
    or added, at a depth drawn as the edit descends."""
    containers = value.__class__ is dict or value.__class__ is list
    if not containers or (depth and data.draw(st.integers(0, 3), label="stop here") == 0):
        replacement = data.draw(_ODD, label="value")
        return value if replacement is MISSING else copy.deepcopy(replacement)
    if value.__class__ is dict:
        key = data.draw(st.sampled_from(sorted(value)) if value and data.draw(st.booleans(), label="existing")
                        else _KEYS, label="key")
        if key in value and data.draw(st.integers(0, 4), label="drop") == 0:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: _perturb(value.get(key), data, depth + 1)}
    if not value or data.draw(st.integers(0, 5), label="append") == 0:
        return [*value, copy.deepcopy(data.draw(_ODD.filter(lambda v: v is not MISSING), label="element"))]
    at = data.draw(st.integers(0, len(value) - 1), label="at")
    return [*value[:at], _perturb(value[at], data, depth + 1), *value[at + 1:]]


_ODD_VALUES = [None, 0, -1, 1.0, 2**53, True, "", "x", "user", "tool-call", [], {}, [1]]


def _neighbours(value: Any) -> Iterator[Any]:
    """Every record one edit away from ``value``: each member or element set to each odd value
    or dropped, and each object given a member it does not have."""
    if value.__class__ is dict:
        for key, member in value.items():
            yield {k: v for k, v in value.items() if k != key}
            for other in (*_ODD_VALUES, *_neighbours(member)):
                yield {**value, key: other}
        yield {**value, "extra": None}
    elif value.__class__ is list:
        for at, member in enumerate(value):
            yield [*value[:at], *value[at + 1:]]
            for other in (*_ODD_VALUES, *_neighbours(member)):
                yield [*value[:at], other, *value[at + 1:]]
        yield [*value, None]


def _general() -> Any:
    """G5 without its shortcuts: the table emptied, and the message validator's own shortcut off."""
    stack = ExitStack()
    stack.enter_context(mock.patch.dict(_released._PLAIN, clear=True))
    stack.enter_context(mock.patch.object(_released, "_plain_message", lambda message, expected: False))
    return stack


def _records(generated: Any) -> list[tuple[int, str, dict[str, Any]]]:
    return [(k, e["type"], e["data"]) for k, e in enumerate(generated.events)
            if type(e) is dict and e.get("type") in _released._PLAIN and type(e.get("data")) is dict]


@settings(max_examples=400, deadline=None)
@given(session_logs(max_events=60, weights=_WEIGHTS), st.data())
def test_a_record_the_shortcut_calls_plain_is_one_the_released_validator_accepts(generated: Any, data: st.DataObject) -> None:
    records = _records(generated)
    if not records:
        return
    kind = data.draw(st.sampled_from(sorted({kind for _, kind, _ in records})), label="kind")
    seq, _, payload = data.draw(st.sampled_from([r for r in records if r[1] == kind]), label="record")
    for _ in range(data.draw(st.integers(0, 2), label="edits")):
        payload = _perturb(payload, data)
    plain = [near for near in (payload, *_neighbours(payload))
             if near.__class__ is dict and _released._PLAIN[kind](near, {"type": kind, "seq": seq, "data": near})]
    with _general():
        for near in plain:
            assert _released.released_payload_refusal(kind, near, seq) is None, (kind, near)


def _tool_result(call: Any) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": call, "content": [{"type": "text", "text": "ok"}], "isError": False}
    return {"turn": 1, "step": 1, "message": {"id": "m", "role": "user", "content": [block],
                                              "source": {"kind": "tool", "callId": call}}}


@pytest.mark.parametrize("call", ["", 1, None, True, ["c"]])
def test_a_tool_result_whose_two_call_ids_change_together_is_judged_as_the_validator_judges_it(call: Any) -> None:
    """Two linked edits (the source's callId and the block's toolCallId), which one-edit neighbours miss."""
    record = _tool_result(call)
    with _general():
        general = _released.released_payload_refusal("tool/result", record, 3)
    assert general is not None
    assert not _released._PLAIN["tool/result"](record, {"seq": 3}), record
    assert _released._PLAIN["tool/result"](_tool_result("call-1"), {"seq": 3})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=4, unique=True).map(sorted), st.integers(0, 45),
       st.sampled_from([int, float, bool, str]))
@example([1, 3], 30, int)
@example([26, 27], 27, int)
def test_a_prune_the_shortcut_calls_plain_is_one_the_released_validator_accepts(
        seqs: list[int], seq: int, seq_type: type) -> None:
    """The seq-dependent shortcut: a prune of earlier, distinct seqs whose range names the first and the
    last, and every record one edit away (or with a seq repeated), at the event's seq as any JSON type."""
    record = {"shadowedRange": {"start": seqs[0], "end": seqs[-1]}, "shadowedSeqs": seqs, "shadowedTokenCount": 16}
    at = seq_type(seq)
    for near in (record, *_neighbours(record), {**record, "shadowedSeqs": [*seqs, seqs[0]]}):
        if near.__class__ is dict and _released._PLAIN["compaction/prune"](near, {"seq": at}):
            with _general():
                assert _released.released_payload_refusal("compaction/prune", near, seq) is None, (near, at)


def test_the_prune_shortcut_decides_a_plain_prune() -> None:
    record = {"shadowedRange": {"start": 26, "end": 28}, "shadowedSeqs": [26, 28], "shadowedTokenCount": 16}
    assert _released._PLAIN["compaction/prune"](record, {"seq": 30})
    assert not _released._PLAIN["compaction/prune"](record, {"seq": 28})  # not all earlier than the prune


@settings(max_examples=200, deadline=None)
@given(session_logs(max_events=60, weights=_WEIGHTS), st.data())
def test_g5_with_its_shortcuts_reports_what_the_general_code_reports(generated: Any, data: st.DataObject) -> None:
    events = copy.deepcopy(generated.events)
    records = [k for k, _, _ in _records(generated)]
    for _ in range(data.draw(st.integers(0, 4), label="damages") if records else 0):
        at = data.draw(st.sampled_from(records), label="event")
        events[at] = {**events[at], "data": _perturb(events[at]["data"], data)}
    encoded = encode_jsonl(generated.header, [events], pack=data.draw(st.booleans(), label="packed"))
    shortcut = check_log(parse_log(encoded), _ONLY_G5)
    with _general():
        general = check_log(parse_log(encoded), _ONLY_G5)
    assert [f.to_json() for f in shortcut.findings] == [f.to_json() for f in general.findings], \
        explain(shortcut, generated.header, events)


def test_the_shortcut_decides_the_generated_records_of_each_kind_it_names() -> None:
    """Not vacuous: every kind in the table has generated records it calls plain."""
    seen: dict[str, int] = dict.fromkeys(_released._PLAIN, 0)

    # derandomized: a prune needs a later step after a tool result, which a leading working step gives
    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(session_logs(max_events=80, weights=FeatureWeights(tool_calls=0.9, queued=0.9, prune=1.0, working_step=1.0)))
    def count(generated: Any) -> None:
        for seq, kind, payload in _records(generated):
            seen[kind] += _released._PLAIN[kind](payload, generated.events[seq])

    count()
    assert all(seen.values()), f"kinds the shortcut never decided on generated logs: {[k for k, n in seen.items() if not n]}"


# --- the sequence lists and instants, against their general code -------------------------------


def _general_seqs(value: Any, seq: int, label: str, non_empty: bool) -> list[int]:
    """``_seqs`` as it was before its shortcut: a label per member, each member checked alone."""
    seen: set[int] = set()
    out: list[int] = []

    def each(member: Any, member_label: str) -> None:
        n = _released._earlier(member, seq, member_label)
        if n in seen:
            raise _released._Refused(f"{label} repeats seq {n}")
        seen.add(n)
        out.append(n)

    _released._array(value, label, each)
    if non_empty and not out:
        raise _released._Refused(f"{label} must be non-empty")
    return out


def _outcome(check: Any, *arguments: Any) -> tuple[str, Any]:
    try:
        return "accepted", check(*arguments)
    except _released._Refused as refusal:
        return "refused", str(refusal)


_MEMBER = st.one_of(st.integers(-2, 12), st.sampled_from([1.0, 2.5, -0.0, True, None, "3", [], 2**53]))


@given(st.one_of(st.lists(_MEMBER, max_size=6), _ODD), st.integers(0, 10), st.booleans())
@example([0, 1, 1], 5, True)
@example([], 5, True)
@example([3.0, 1], 5, False)
def test_a_sequence_list_is_read_as_the_general_code_reads_it(value: Any, seq: int, non_empty: bool) -> None:
    assert _outcome(_released._seqs, value, seq, "x shadowedSeqs", non_empty) == \
        _outcome(_general_seqs, value, seq, "x shadowedSeqs", non_empty)


def _general_instant(value: Any, label: str) -> None:
    ok = value.__class__ is str and _released._INSTANT.fullmatch(value) is not None
    if ok:
        try:
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
        except ValueError:
            ok = False
    if not ok:
        raise _released._Refused(f"{label} must be a canonical UTC instant")


_DAYS = st.builds(lambda y, m, d, rest: f"{y:04d}-{m:02d}-{d:02d}{rest}",
                  st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32),
                  st.sampled_from(["T00:00:00.000Z", "T23:59:59.999Z", "T24:00:00.000Z", "T12:00:00Z", ""]))


@given(st.one_of(_DAYS, st.from_regex(re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"), fullmatch=True), _ODD))
@example("2024-02-29T00:00:00.000Z")
@example("2023-02-29T00:00:00.000Z")
@example("1900-02-29T00:00:00.000Z")
def test_an_instant_is_read_as_the_general_code_reads_it(value: Any) -> None:
    assert _outcome(_released._instant, value, "x at") == _outcome(_general_instant, value, "x at")
