"""G4 against released itself. The logs on which the checker's G4 and the reference oracle's
relation walk once disagreed: released (format 1, the restore's relation walk) refuses each with
the message G4 reports. And on damaged generated format-1 logs, G4 reports released's first
refusal exactly when it is one of the relations G4 names."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and witnesses
from reference_oracle_logs import HEADER, edited, tool_turn
from test_g4_differential import _WEIGHTS, WITNESSES, _damage

from dshfuzz.checker import CheckOptions, RuleId, check_log, check_stream
from dshfuzz.generators import session_logs
from dshfuzz.model import encode_jsonl, parse_log


@pytest.mark.parametrize("why", sorted(WITNESSES))
def test_released_refuses_each_witness_as_g4_says(official, why: str) -> None:
    events, refusal = WITNESSES[why]
    header = {**HEADER, "version": 1}
    (released,) = official.check(events=events, header=header, layers=("released",)).values()
    g4 = [f.message for f in check_log(parse_log(encode_jsonl(header, [events], pack=False)),
                                       CheckOptions(rules=frozenset({RuleId.G4}), strict=True)).findings]
    assert released.error is not None and released.error.message == refusal, (why, released)
    assert g4 == [refusal], (why, g4)


@pytest.mark.parametrize("version", [0, 1])
def test_a_chunk_outside_its_step_is_released_first_refusal_so_g4_stays_silent(official, version: int) -> None:
    """Released walks chunks too (requireOpenStep): a stray chunk ahead of an unmatched
    command/done is the refusal, which is not G4's (T-rules name it)."""
    events = edited(tool_turn())
    chunk = copy.deepcopy(next(e for e in events if e["type"] == "assistant/chunk"))
    chunk["data"]["step"] = 9
    events += [chunk, {"type": "command/done", "seq": 0, "time": 0, "data": {"commandId": "c", "kind": "success"}}]
    for seq, event in enumerate(events):
        event["seq"] = seq
    header = {**HEADER, "version": version}
    (released,) = official.check(events=events, header=header, layers=("released",)).values()
    assert released.error is not None and "assistant/chunk does not match an open turn and step" in released.error.message
    report = check_log(parse_log(encode_jsonl(header, [events], pack=False)), CheckOptions(rules=frozenset({RuleId.G4}), strict=True))
    assert report.findings == [], report.findings


_RELATION_REFUSALS = re.compile("|".join((
    r"(compaction/(start|summary|end|prune)|compaction checkpoint at seq .*) (has no matching compaction/start"
    r"|does not match the open turn|shadowedSeqs do not name an exact current surface span)",
    r"compaction/start overlaps an open compaction", r"compaction/summary repeats",
    r"compaction/end changes its owner turn", r"successful compaction/end requires one summary",
    r"turn/(start|end) crosses an open compaction",
    r"llm/retry does not match the current turn and step", r"llm/retry provider does not match the open request/header",
    r"llm/retry must use retry .*", r"llm/retry must preserve retryId across one policy chain",
    r"llm/retry reuses retryId .* across policy chains", r"llm/retry-started pairs no prior scheduled attempt",
    r"llm/retry-started does not match its scheduled turn and step", r"llm/retry-started repeats one scheduled attempt",
    r"command/run repeats commandId .*", r"command/done .* has no prior command/run", r"command/done .* has invalid sourceEventSeq",
    r"tool/code-dispatch(-start)? (changes its rootCallId|parentCallId does not belong to rootCallId)",
    r"tool/code-dispatch-start repeats subCallId", r"tool/code-dispatch has no unique start",
    r"tool/code-dispatch does not match its start", r"tool/code-dispatch(-start)? is outside an open turn",
    r"current-generation delivery marker names the wrong Session",
)), re.DOTALL)
"""What released throws in its compaction, retry, command, code-dispatch and delivery-marker relations
(V01:2378-2584)."""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session_logs(max_events=80, weights=_WEIGHTS), st.data())
def test_g4_fires_exactly_when_released_first_refusal_is_a_relation_it_names(official, generated: Any, data: st.DataObject) -> None:
    """Format 1, where released restores a log through the relation walk alone: on generated logs
    damaged where the walk reads (seqs renumbered, so that the envelope passes), G4 reports
    released's refusal, with its message, exactly when that refusal is a compaction, retry,
    command or code-dispatch relation."""
    events = copy.deepcopy(generated.events)
    _damage(events, data)
    for seq, event in enumerate(events):
        event["seq"] = seq
    header = {**generated.header, "version": 1}
    (released,) = official.check(events=events, header=header, layers=("released",)).values()
    refusal = released.error.message if released.error is not None else None
    expected = [refusal] if refusal is not None and _RELATION_REFUSALS.fullmatch(refusal) else []
    data_ = encode_jsonl(header, [events], pack=data.draw(st.booleans(), label="packed"))
    g4 = [f.message for f in check_stream(data_, options=CheckOptions(rules=frozenset({RuleId.G4}), strict=True)).findings]
    assert g4 == expected, f"released: {refusal!r}\nG4: {g4}\nlog:\n{encode_jsonl(header, [events], pack=False).decode()}"
