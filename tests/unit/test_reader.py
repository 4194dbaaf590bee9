"""``parse_log`` builds the lossless model and replays the official byte-layer verdict."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from codec_strategies import HEADER, batched, event_lists
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.model import (
    MISSING,
    Event,
    SessionLog,
    compress_frame,
    decode_storage_record,
    dumps,
    encode_jsonl,
    encode_log,
    encode_zstd,
    pack_chunk_runs,
    parse_log,
    read_log,
    scan_frames,
    skippable_frame,
)


def jsonl(*records: Any, tail: str = "") -> bytes:
    return ("".join(r if isinstance(r, str) else dumps(r) + "\n" for r in records) + tail).encode()


def ev(seq: int, kind: str = "step/start", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": seq, "data": {"turn": 1, "step": 1}, **extra}


def official_verdict(log: SessionLog) -> tuple[Any, ...]:
    """What the official readPrefix reports: refusal message, or kept events and torn marker."""
    if log.refusal is not None:
        return ("refused", log.refusal.message)
    torn = None if log.torn is None else (log.torn.truncate_to, log.torn.recovered_events)
    return ("read", log.committed_events, torn)


@pytest.mark.parametrize("name", ["valid-v0.jsonl", "valid-v0.jsonl.zstd", "valid-v0.unpacked.jsonl"])
def test_the_fixture_reads_cleanly_into_76_events_in_physical_order(fixtures_dir: Path, name: str) -> None:
    log = read_log(fixtures_dir / name)
    assert log.header is not None and log.header.id == "oracle-valid-v0"
    assert [e.seq for e in log.events] == list(range(76))
    assert official_verdict(log) == ("read", 76, None)
    assert log.diagnostics == []
    assert [r.line for r in log.rows] == list(range(2, len(log.rows) + 2))
    for event in log.events:
        row = log.rows[event.row]
        assert row.line == event.line and log.events.index(event) in row.events
    assert encode_log(log) == (fixtures_dir / name).read_bytes()


def test_packed_rows_expand_into_members_with_coordinates(fixtures_dir: Path) -> None:
    log = read_log(fixtures_dir / "valid-v0.jsonl.zstd")
    packed = [r for r in log.rows if r.kind == "packed"]
    assert packed and log.compression == "zstd"
    assert [n for f in log.frames for n in f.lines] == [line.number for line in log.lines]
    assert log.frames[0].lines == range(1, 2)
    for r in packed:
        members = [log.events[i] for i in r.events]
        assert [m.member for m in members] == list(range(len(members))) and len(members) >= 3
        assert {m.line for m in members} == {r.line} and all(m.type == "assistant/chunk" for m in members)
        assert all(m.frame == r.frame for m in members)


def test_packed_members_are_built_from_their_row_when_first_read_and_then_kept(fixtures_dir: Path) -> None:
    log = read_log(fixtures_dir / "valid-v0.jsonl")
    row = next(r for r in log.rows if r.kind == "packed")
    members = [log.events[i] for i in row.events]
    # the head is built at once (every reader reads it), its raw a plain attribute; the rest wait for a read
    assert type(members[0]).raw is Event.raw and all(m._built is None for m in members[1:])
    assert [m.raw for m in members] == decode_storage_record(row.value)
    members[1].raw["data"]["chunk"]["text"] = "edited"
    assert members[1].raw["data"]["chunk"]["text"] == "edited" and members[1].raw is members[1].raw


@given(event_lists().flatmap(lambda events: st.tuples(st.just(events), batched(events))), st.booleans())
def test_written_logs_read_back_to_the_same_events_and_bytes(case: tuple[list[Any], list[list[Any]]], pack: bool) -> None:
    events, batches = case
    for data in (encode_jsonl(HEADER, batches, pack=pack), encode_zstd(HEADER, batches, pack=pack)):
        log = parse_log(data)
        assert dumps([e.raw for e in log.events]) == dumps(events)
        assert log.header is not None and log.header.raw == HEADER
        assert encode_log(log) == data
        assert not [d for d in log.diagnostics if d.code != "scan.seq-gap"]
    frames = parse_log(encode_zstd(HEADER, batches, pack=pack)).frames
    assert len(frames) == len(batches) + 1
    assert [f.content for f in frames[1:]] == [b"".join(dumps(r).encode() + b"\n" for r in (pack_chunk_runs(b) if pack else b)) for b in batches]


@given(st.lists(st.text(st.characters(codec="utf-8"), max_size=20) | st.sampled_from(["\n", "\r", '{"seq":0}']), max_size=30))
def test_plain_bytes_that_are_valid_utf8_are_reproduced_exactly(pieces: list[str]) -> None:
    data = "".join(pieces).encode("utf-8")
    assert encode_log(parse_log(data, compression="none")) == data


@given(st.binary(max_size=400), st.sampled_from([None, "none", "zstd"]))
def test_reading_never_raises_and_zstd_bytes_are_always_reproduced(data: bytes, compression: Any) -> None:
    log = parse_log(data, compression=compression)
    assert log.size == len(data)
    assert_rows_follow_the_header_line_by_line(log)
    if log.compression == "zstd":
        assert encode_log(log) == data


@given(st.randoms(use_true_random=False), st.sampled_from(["valid-v0.jsonl", "valid-v0.jsonl.zstd"]))
def test_reading_never_raises_on_mutated_fixture_bytes(fixtures_dir: Path, rng: random.Random, name: str) -> None:
    data = bytearray((fixtures_dir / name).read_bytes())
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data))
        action = rng.choice(["flip", "cut", "insert", "delete"])
        if action == "flip":
            data[at] ^= 1 << rng.randrange(8)
        elif action == "cut":
            del data[at:]
        elif action == "insert":
            data[at:at] = rng.choice([b"\n", b"\x00", b"{", b'"', b"\xff", b"\r\n"])
        elif len(data) > 1:
            del data[at]
        if not data:
            break
    log = parse_log(bytes(data))
    assert log.compression != "zstd" or encode_log(log) == bytes(data)
    assert_rows_follow_the_header_line_by_line(log)


def assert_rows_follow_the_header_line_by_line(log: Any) -> None:
    """Every line after the header is one row, until a limit stops the read: the reader numbers
    a row by its line (row ``i`` is line ``i + 2``) instead of counting the rows."""
    lines = [row.line for row in log.rows]
    assert lines == list(range(2, len(lines) + 2)), lines
    assert all(event.row == event.line - 2 for event in log.events)


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_plaintext_larger_than_a_read_block_reads_like_its_lines(compression: str) -> None:
    # the reader takes large plaintext in 1 MiB blocks: lines that straddle blocks must come out whole
    events = [ev(i, "request/context", data={"pad": "x" * (700 + i % 997)}) for i in range(3000)]
    text = jsonl(HEADER, *events)
    assert len(text) > 2 * 1024 * 1024
    head = text.index(b"\n") + 1
    data = text if compression == "none" else compress_frame(text[:head]) + compress_frame(text[head:])
    log = parse_log(data)
    assert [e.raw for e in log.events] == events and log.refusal is None and log.limit is None
    assert [line.data for line in log.lines] == text.split(b"\n")[:-1]
    assert [line.offset for line in log.lines][1:3] == [head, text.index(b"\n", head) + 1]
    assert encode_log(log) == data


def test_lines_split_on_newline_only_and_keep_carriage_returns() -> None:
    log = parse_log(jsonl(HEADER, tail=dumps(ev(0)) + "\r\n"))
    assert log.lines[1].text.endswith("\r") and log.rows[0].kind == "event" and log.events[0].seq == 0


def test_a_final_line_without_newline_is_a_torn_tail_not_a_row() -> None:
    data = jsonl(HEADER, ev(0), tail=dumps(ev(1)))
    log = parse_log(data)
    assert [e.seq for e in log.events] == [0] and not log.lines[-1].terminated
    assert log.lines[-1].value == ev(1)
    assert official_verdict(log) == ("read", 1, (len(data) - len(dumps(ev(1))), 0))
    assert log.torn is not None and log.torn.line == 3
    assert [d.code for d in log.diagnostics] == ["line.torn"]


def test_anomalous_rows_keep_their_line_and_the_official_reason() -> None:
    bad_row = {"type": "text-chunks", "seq0": 2, "time0": 0, "data": {}}
    log = parse_log(jsonl(HEADER, ev(0), "{oops\n", "\n", bad_row, "null\n", [1]))
    assert [r.kind for r in log.rows] == ["event", "not-json", "empty", "malformed-packed", "event", "event"]
    assert log.rows[3].error == "malformed text-chunks storage row: data must be exactly {turn, step, index, dt, texts}"
    assert log.rows[3].events == range(0) and log.rows[1].value is MISSING
    assert [e.raw for e in log.events] == [ev(0), None, [1]]
    codes = {d.code: d for d in log.diagnostics}
    assert codes["line.not-json"].line == 3 and codes["row.malformed"].line == 5
    assert codes["scan.unparsable"].message == "corrupt session log: unparsable committed event at line 2"


def test_the_scanner_treats_everything_after_a_seq_gap_as_torn_unless_a_turn_end_follows() -> None:
    data = jsonl(HEADER, ev(0), ev(2), ev(3))
    log = parse_log(data)
    assert official_verdict(log) == ("read", 1, (len(jsonl(HEADER, ev(0))), 0))
    assert len(log.events) == 3  # the model keeps what the official reader drops
    closed = parse_log(jsonl(HEADER, ev(0), ev(2), ev(3, "turn/end")))
    assert official_verdict(closed) == ("refused", "corrupt session log: seq gap in committed region at line 2 (expected 1, got 2)")
    missing = parse_log(jsonl(HEADER, {"type": "turn/end"}))
    assert missing.refusal is not None and missing.refusal.message.endswith("(expected 0, got undefined)")


def test_a_null_row_crashes_the_official_scanner() -> None:
    assert official_verdict(parse_log(jsonl(HEADER, "null\n"))) == ("refused", "Cannot read properties of null (reading 'seq')")
    after_gap = parse_log(jsonl(HEADER, ev(1), "null\n"))
    assert after_gap.refusal is not None and after_gap.refusal.message == "Cannot read properties of null (reading 'type')"
    assert after_gap.refusal.line == 3


@pytest.mark.parametrize(
    ("first_line", "message"),
    [
        ("", "empty or header-less session log"),
        ("{}\n", "corrupt session log: first line is not a session header"),
        ("\ufeff" + dumps(HEADER) + "\n", "corrupt session log: header line is not valid JSON"),
        (dumps({**HEADER, "createdAt": -1}) + "\n", "corrupt session log: first line is not a session header"),
        (dumps({**HEADER, "sandboxMode": "x"}) + "\n", "session header uses retired policy baseline fields"),
        (
            dumps({**HEADER, "version": 1}) + "\n",
            'session "codec-test" uses log format v1, but this harness reads only v0: the log was written by a newer harness — upgrade the harness to open it',
        ),
        (dumps(HEADER), "empty or header-less session log"),
    ],
)
def test_header_refusals_carry_the_official_messages(first_line: str, message: str) -> None:
    log = parse_log(first_line.encode())
    assert log.refusal is not None and log.refusal.message == message
    assert log.committed_events == 0


def test_a_header_with_negative_zero_is_not_a_header() -> None:
    text = dumps(HEADER).replace('"delegationDepth":0', '"delegationDepth":-0')
    assert parse_log((text + "\n").encode()).refusal is not None


def zstd_log(*texts: bytes, **options: Any) -> bytes:
    return b"".join(compress_frame(t, **options) for t in texts)


HEAD = dumps(HEADER).encode() + b"\n"


def test_zstd_framing_refusals_name_the_frame() -> None:
    merged = parse_log(zstd_log(HEAD + jsonl(ev(0))))
    assert merged.refusal is not None and merged.refusal.message == "corrupt Zstandard session log: first frame is not exactly one header line"
    assert [e.seq for e in merged.events] == [0]
    split = parse_log(zstd_log(HEAD, jsonl(ev(0))[:-3], jsonl(ev(0))[-3:]))
    assert official_verdict(split) == ("read", 1, None)  # the scanner joins a record across frames
    assert split.frames[1].status == "not-record-aligned" and split.events[0].frame == 1
    assert [f.lines for f in split.frames] == [range(1, 2), range(2, 3), range(0)]  # a line belongs where it starts
    unaligned = parse_log(zstd_log(HEAD, jsonl(ev(0)), jsonl(ev(1))[:-1]))
    assert official_verdict(unaligned) == ("refused", "corrupt Zstandard session log: complete frame contains a torn JSONL record")
    assert [e.seq for e in unaligned.events] == [0] and not unaligned.lines[-1].terminated
    good = zstd_log(HEAD, jsonl(ev(0)))
    damaged = bytearray(good)
    damaged[-6] ^= 0xFF
    corrupt = parse_log(bytes(damaged))
    second = scan_frames(good)[1].offset
    assert official_verdict(corrupt) == ("refused", f"corrupt Zstandard session log: frame at byte {second} failed validation")
    assert corrupt.frames[1].status == "corrupt"
    skipped = parse_log(compress_frame(HEAD) + skippable_frame(b"x") + compress_frame(jsonl(ev(0))))
    assert skipped.refusal is not None and skipped.refusal.message.endswith(f"invalid frame magic at byte {len(compress_frame(HEAD))}")
    assert [e.seq for e in skipped.events] == [0] and skipped.frames[1].status == "skippable"
    assert official_verdict(parse_log(b"", compression="zstd")) == ("refused", "empty or header-less Zstandard session log")


def test_a_torn_final_frame_recovers_its_complete_records() -> None:
    data = zstd_log(HEAD, jsonl(ev(0)), jsonl(ev(1), ev(2)), block="raw")
    last = scan_frames(data)[-1]
    cut = data[: last.end - 4 - 3]  # checksum and the last two bytes of content missing
    log = parse_log(cut)
    assert official_verdict(log) == ("read", 2, (last.offset, 1))
    assert log.torn is not None and log.torn.recovered_lines == 1 and log.torn.frame == 2
    assert log.frames[-1].status == "torn" and not log.lines[-1].terminated
    assert encode_log(log) == cut


def test_read_log_goes_by_the_official_suffix(tmp_path: Path) -> None:
    plain = tmp_path / "x.jsonl.zstd"
    plain.write_bytes(jsonl(HEADER, ev(0)))
    log = read_log(plain)
    assert log.compression == "zstd" and log.refusal is not None and log.refusal.message.endswith("invalid frame magic at byte 0")
    sniffed = tmp_path / "x.log"
    sniffed.write_bytes(zstd_log(HEAD, jsonl(ev(0))))
    assert read_log(sniffed).compression == "zstd"
    with pytest.raises(OSError):
        read_log(tmp_path / "missing.jsonl")


def test_encode_zstd_framing_options_keep_the_text_and_change_only_the_verdicts_they_should() -> None:
    batches = [[ev(0), ev(1)], [ev(2)]]
    plain = parse_log(encode_zstd(HEADER, batches))
    for options in ({"block": "raw"}, {"block": "rle", "checksum": False}, {"content_size": True}):
        log = parse_log(encode_zstd(HEADER, batches, **options))
        assert [line.text for line in log.lines] == [line.text for line in plain.lines]
        assert official_verdict(log) == official_verdict(plain) == ("read", 3, None)
    skipped = parse_log(encode_zstd(HEADER, batches, skippable_before={2, 3}))
    assert [f.status for f in skipped.frames] == ["complete", "complete", "skippable", "complete", "skippable"]
    assert [e.seq for e in skipped.events] == [0, 1, 2]
    assert skipped.refusal is not None and skipped.refusal.code == "frame.invalid-magic"
