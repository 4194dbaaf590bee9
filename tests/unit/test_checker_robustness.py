"""No input crashes the checker: random bytes, random JSON on every line and in
every field, and byte-mutated fixtures always yield a report (strict mode makes
any pass that raises fail the test), the same from the whole model and from a streamed read."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import CheckOptions, Report, check_log, check_stream
from dshfuzz.model import dumps, loads, parse_log

from conftest import FIXTURES

VALID_ZSTD = (FIXTURES / "valid-v0.jsonl.zstd").read_bytes()
VALID_JSONL = (FIXTURES / "valid-v0.jsonl").read_bytes()
VALID_LINES = [loads(x) for x in (FIXTURES / "valid-v0.unpacked.jsonl").read_text().splitlines()]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
KEYS = ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable", "message", "turn", "step",
        "callId", "content", "source", "header", "reason", "start", "end", "seq0", "time0", "texts", "dt"]


def _check(data: bytes) -> Report:
    """The whole model's report, which the streamed check (what ``dshfuzz check`` runs) must equal."""
    report = check_log(parse_log(data), CheckOptions(strict=True))
    assert report.to_json()["summary"]["events"] >= 0
    assert check_stream(data, options=CheckOptions(strict=True)).to_json() == report.to_json()
    return report


@given(st.binary(max_size=2048))
def test_random_bytes(data: bytes) -> None:
    _check(data)


@given(st.binary(max_size=512))
def test_random_bytes_after_a_valid_zstd_prefix(tail: bytes) -> None:
    _check(VALID_ZSTD[: len(VALID_ZSTD) // 2] + tail)


@given(st.integers(0, len(VALID_ZSTD) - 1), st.integers(0, 255))
def test_one_corrupted_byte_in_the_zstd_fixture(pos: int, byte: int) -> None:
    data = bytearray(VALID_ZSTD)
    data[pos] = byte
    _check(bytes(data))


@given(st.integers(0, len(VALID_JSONL)), st.binary(max_size=16))
def test_bytes_spliced_into_the_jsonl_fixture(pos: int, junk: bytes) -> None:
    _check(VALID_JSONL[:pos] + junk + VALID_JSONL[pos:])


@given(st.integers(0, len(VALID_LINES) - 1), json_values)
def test_any_json_value_on_any_line(index: int, value) -> None:
    lines = copy.deepcopy(VALID_LINES)
    lines[index] = value
    _check("\n".join(dumps(x) for x in lines).encode() + b"\n")


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


@given(st.data(), json_values)
def test_any_json_value_in_any_field(data, value) -> None:
    lines = copy.deepcopy(VALID_LINES)
    index = data.draw(st.integers(0, len(lines) - 1))
    paths = [p for p in _paths(lines[index]) if p]
    path = data.draw(st.sampled_from(paths)) if paths else ()
    target = lines[index]
    for step in path[:-1]:
        target = target[step]
    if path:
        target[path[-1]] = value
    _check("\n".join(dumps(x) for x in lines).encode() + b"\n")


small_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**53) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=4,
)


@given(st.lists(st.dictionaries(st.sampled_from(KEYS), small_values, max_size=7), max_size=8))
def test_random_envelopes(events) -> None:
    _check("\n".join(dumps(x) for x in [VALID_LINES[0], *events]).encode() + b"\n")


@given(st.lists(st.sampled_from(range(1, len(VALID_LINES))), max_size=12))
def test_shuffled_duplicated_and_dropped_events(order) -> None:
    lines = [VALID_LINES[0]] + [VALID_LINES[i] for i in order]
    _check("\n".join(dumps(x) for x in lines).encode() + b"\n")
