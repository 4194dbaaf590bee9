"""The judge reads a log's shape (what steers generation) from any log, however confused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.harness import Example, Judge, load_checker
from dshfuzz.harness._judge import shape_of
from dshfuzz.model import Compression

HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _log(*events: dict) -> bytes:
    return b"".join(json.dumps(x).encode() + b"\n" for x in (HEADER, *events))


@pytest.mark.parametrize("call_id", [["a"], {"id": "a"}, None, 7])
def test_a_call_id_of_another_type_opens_no_call_and_crashes_no_judge(call_id):
    call = {"type": "tool/call", "seq": 0, "time": 0, "data": {"turn": 1, "step": 1, "callId": call_id, "name": "x"}}
    result = {
        "type": "tool/result", "seq": 1, "time": 0,
        "data": {"turn": 1, "step": 1, "message": {"role": "user", "source": {"kind": "tool", "callId": call_id}}},
    }
    example = Example(_log(call, result), "none")

    assert shape_of(example).open_tool_calls == 0
    with Judge(load_checker("builtin"), official=None) as judge:
        judged = judge.judge(example)
    crashes = [d for d in judged.disagreements if d.kind == "oracle-crash"]
    assert not crashes, crashes[0].detail


def test_an_unreadable_log_has_the_empty_shape():
    assert shape_of(Example(b"\x28\xb5\x2f\xfd garbage", "zstd")).events == 0


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_an_example_reads_as_what_it_is_not_as_its_bytes_also_in_hypothesis_reports(compression: Compression) -> None:
    """Hypothesis writes the repr of every failing example a campaign round replays; a log's
    bytes (tens of kilobytes) made it warn of an overly large repr."""
    from hypothesis.vendor.pretty import pretty

    example = Example(b"{}\n" * 20_000, compression, mutator="seq-gap", transform="rotation")
    for shown in (repr(example), pretty(example), pretty((example, example))):
        assert "seq-gap via rotation: 60000 bytes" in shown and len(shown) < 200, shown
