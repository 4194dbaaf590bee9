"""The chunk-row codec is the official ``packChunkRuns`` / ``decodeStorageRecord`` (S:727-1035)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from codec_strategies import event_lists
from hypothesis import given

from dshfuzz.model import MIN_RUN, RowDecodeError, decode_storage_record, dumps, loads, pack_chunk_runs, unpack_rows


def text_chunk(seq: int, time: int, text: str, *, index: int = 0) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": index, "text": text}}}


def call_chunk(seq: int, time: int, args: str, *, name: str | None = "ls") -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "tool-call-delta", "index": 1, "id": "call_1"}
    if name is not None:
        chunk["name"] = name
    chunk["argumentsDelta"] = args
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": 1, "step": 1, "chunk": chunk}}


def test_a_run_of_min_run_deltas_becomes_one_row_in_the_official_shape() -> None:
    run = [text_chunk(8 + i, 100 + 7 * i, t) for i, t in enumerate(["I ", "am ", "here"])]
    (row,) = pack_chunk_runs(run)
    assert dumps(row) == '{"type":"text-chunks","seq0":8,"time0":100,"data":{"turn":1,"step":1,"index":0,"dt":[7,7],"texts":["I ","am ","here"]}}'
    assert unpack_rows([row]) == run


def test_tool_call_rows_keep_name_presence() -> None:
    named = pack_chunk_runs([call_chunk(i, i, a) for i, a in enumerate(["{", "}", ""])])
    unnamed = pack_chunk_runs([call_chunk(i, i, a, name=None) for i, a in enumerate(["{", "}", ""])])
    assert dumps(named) == '[{"type":"tool-call-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":1,"dt":[1,1],"id":"call_1","name":"ls","args":["{","}",""]}}]'
    assert "name" not in unnamed[0]["data"]
    assert list(unpack_rows(unnamed)[0]["data"]["chunk"]) == ["type", "index", "id", "argumentsDelta"]


def test_shorter_runs_and_non_whitelisted_events_pass_through_as_the_same_objects() -> None:
    short = [text_chunk(i, i, "x") for i in range(MIN_RUN - 1)]
    assert all(a is b for a, b in zip(pack_chunk_runs(short), short))
    fractional = [text_chunk(i, i, "x") for i in range(5)]
    fractional[2]["time"] = 2.5
    packed = pack_chunk_runs(fractional)
    assert [r.get("type") for r in packed] == ["assistant/chunk"] * 5


def test_the_fixture_packs_to_its_official_rows(fixtures_dir: Path) -> None:
    rows = [loads(line) for line in (fixtures_dir / "valid-v0.jsonl").read_bytes().splitlines()[1:]]
    events = [loads(line) for line in (fixtures_dir / "valid-v0.unpacked.jsonl").read_bytes().splitlines()[1:]]
    assert [dumps(r) for r in pack_chunk_runs(events)] == [dumps(r) for r in rows]
    assert unpack_rows(rows) == events


@given(event_lists())
def test_unpack_inverts_pack_and_packing_is_idempotent(events: list[dict[str, Any]]) -> None:
    rows = pack_chunk_runs(events)
    assert dumps(unpack_rows(rows)) == dumps(events)
    assert pack_chunk_runs(rows) == rows
    assert len(rows) <= len(events)


@pytest.mark.parametrize(
    "value",
    [None, 3, "text-chunks", [1, 2], {"type": "turn/start"}, {"type": ["text-chunks"]}, {"seq0": 1}],
)
def test_values_that_are_not_chunk_rows_decode_to_themselves_unvalidated(value: Any) -> None:
    assert decode_storage_record(value) == [value]


def row(tag: str = "text-chunks", **over: Any) -> dict[str, Any]:
    data = {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}
    if tag == "tool-call-chunks":
        data = {"turn": 1, "step": 1, "index": 0, "id": "c", "name": "n", "dt": [1], "args": ["a", "b"]}
    value: dict[str, Any] = {"type": tag, "seq0": 0, "time0": 0, "data": data}
    for key, new in over.items():
        target = value["data"] if key.startswith("d_") else value
        key = key.removeprefix("d_")
        if new is _DROP:
            del target[key]
        else:
            target[key] = new
    return value


_DROP = object()
TEXT = "malformed text-chunks storage row: "
CALL = "malformed tool-call-chunks storage row: "


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (row(extra=1), TEXT + "envelope must be exactly {type, seq0, time0, data}"),
        (row(seq0=-1), TEXT + "seq0 must be a non-negative safe integer"),
        (row(seq0=1.5), TEXT + "seq0 must be a non-negative safe integer"),
        (row(seq0=2**53), TEXT + "seq0 must be a non-negative safe integer"),
        (row(time0="0"), TEXT + "time0 must be a safe integer"),
        (row(data="x"), TEXT + "data must be an object"),
        (row(data=None), TEXT + "data must be an object"),
        (row(data=[1]), TEXT + "data must be exactly {turn, step, index, dt, texts}"),
        (row(d_extra=1), TEXT + "data must be exactly {turn, step, index, dt, texts}"),
        (row(d_turn=True), TEXT + "turn/step/index must be numbers"),
        (row(d_index="0"), TEXT + "turn/step/index must be numbers"),
        (row(d_texts=[]), TEXT + "texts must be a non-empty string array"),
        (row(d_texts=["a", 1]), TEXT + "texts must be a non-empty string array"),
        (row(d_dt=[1.5]), TEXT + "dt must be an array of safe integers"),
        (row(d_dt="1"), TEXT + "dt must be an array of safe integers"),
        (row(d_dt=[1, 1]), TEXT + "dt length 2 does not match 2 members"),
        (row(seq0=2**53 - 1), TEXT + "member seqs must stay safe integers"),
        (row(time0=2**53 - 1), TEXT + "member times must stay safe integers"),
        (row("tool-call-chunks", d_name=_DROP, d_extra=1), CALL + "data must be exactly {turn, step, index, id, name?, dt, args}"),
        (row("tool-call-chunks", d_id=7), CALL + "id (and name when present) must be strings"),
        (row("tool-call-chunks", d_name=None), CALL + "id (and name when present) must be strings"),
        (row("tool-call-chunks", d_args=[]), CALL + "args must be a non-empty string array"),
        (row("reasoning-chunks", d_turn=None), "malformed reasoning-chunks storage row: turn/step/index must be numbers"),
    ],
)
def test_every_malformed_row_is_refused_with_the_official_message(value: dict[str, Any], message: str) -> None:
    with pytest.raises(RowDecodeError) as caught:
        decode_storage_record(value)
    assert caught.value.message == message


def test_integral_floats_are_safe_integers_and_members_get_python_ints() -> None:
    (first, second) = decode_storage_record(row(seq0=4.0, time0=10.0, d_dt=[2.0]))
    assert (first["seq"], first["time"], second["seq"], second["time"]) == (4, 10, 5, 12)
    assert all(type(e[k]) is int for e in (first, second) for k in ("seq", "time"))
