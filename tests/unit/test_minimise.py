"""The minimiser: ddmin is 1-minimal, and removing events keeps the log's own defects."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.harness import Example, ddmin, minimise


@given(st.lists(st.integers(0, 50), min_size=1, max_size=60), st.sets(st.integers(0, 50), min_size=1, max_size=4))
def test_ddmin_keeps_exactly_what_the_predicate_needs(items, needed):
    needed &= set(items)
    if not needed:
        return

    def test(subset):
        return needed <= set(subset)

    result = ddmin(items, test)
    assert test(result)
    for i in range(len(result)):
        assert not test(result[:i] + result[i + 1 :]), f"{result} is not 1-minimal"


HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _log(events: list[dict]) -> bytes:
    return ("\n".join(json.dumps(x, separators=(",", ":")) for x in [HEADER, *events]) + "\n").encode()


def _events(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines()[1:]]


def _message(seq: int, text: str, **extra) -> dict:
    data = {"id": f"m{seq}", "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    return {"type": "user/message", "seq": seq, "time": 0, "data": data, "surfaceOp": "append", **extra}


def test_minimising_a_seq_gap_keeps_the_gap_and_drops_everything_else():
    events = [_message(i, f"text {i}") for i in range(8)] + [_message(9, "after the gap")]

    def has_gap(example: Example) -> bool:
        seqs = [e["seq"] for e in _events(example.data)]
        return any(b - a > 1 for a, b in zip(seqs, seqs[1:]))

    minimal = _events(minimise(Example(_log(events), "none"), has_gap))
    assert [e["seq"] for e in minimal] == [0, 2], minimal


def test_references_follow_the_events_they_cite():
    events = [_message(0, "a"), _message(1, "b"), _message(2, "c")]
    replace = _message(3, "summary", surfaceOp={"op": "replace", "start": 1, "end": 2}, sourceEventSeqs=[1, 2])
    events.append(replace)

    def replace_cites_two(example: Example) -> bool:
        evs = _events(example.data)
        return any(e.get("sourceEventSeqs") and len(e["sourceEventSeqs"]) == 2 for e in evs)

    minimal = _events(minimise(Example(_log(events), "none"), replace_cites_two))
    assert [e["seq"] for e in minimal] == [0, 1, 2]
    assert minimal[-1]["surfaceOp"] == {"op": "replace", "start": 0, "end": 1}
    assert minimal[-1]["sourceEventSeqs"] == [0, 1]


def test_a_header_only_defect_minimises_to_the_header():
    events = [_message(i, "x") for i in range(5)]
    data = minimise(Example(_log(events), "none"), lambda ex: ex.data.startswith(b'{"type":"session"'))
    assert data.decode().splitlines() == [json.dumps(HEADER, separators=(",", ":"))]
