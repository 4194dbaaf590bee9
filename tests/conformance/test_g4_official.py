"""The logs on which the checker's G4 and the reference oracle's relation walk once disagreed:
released (format 1, the restore's relation walk) refuses each with the message G4 reports."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and witnesses
from reference_oracle_logs import HEADER, edited, tool_turn
from test_g4_differential import WITNESSES

from dshfuzz.checker import CheckOptions, RuleId, check_log
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
