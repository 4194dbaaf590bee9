"""The zstd frame container: scanned like SPJ:503-566, decoded frame by frame, written like SPJ:1171-1183."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.model import (
    FrameDecodeError,
    compress_frame,
    decode_frame,
    recover_torn_frame,
    scan_frames,
    skippable_frame,
)


@pytest.fixture(scope="module")
def fixture_zstd(fixtures_dir: Path) -> bytes:
    return (fixtures_dir / "valid-v0.jsonl.zstd").read_bytes()


def test_the_official_container_is_a_header_frame_then_one_checksummed_frame_per_batch(fixture_zstd: bytes, fixtures_dir: Path) -> None:
    frames = scan_frames(fixture_zstd)
    assert [f.kind for f in frames] == ["zstd"] * len(frames) and len(frames) >= 2
    assert all(f.complete and f.has_checksum and f.content_size is None and f.error is None for f in frames)
    assert [f.offset for f in frames[1:]] == [f.end for f in frames[:-1]] and frames[-1].end == len(fixture_zstd)
    contents = [decode_frame(fixture_zstd[f.offset : f.end]) for f in frames]
    assert contents[0].count(b"\n") == 1 and contents[0].endswith(b"\n")
    assert b"".join(contents) == (fixtures_dir / "valid-v0.jsonl").read_bytes()


def test_default_frames_are_byte_identical_to_the_official_writer(fixture_zstd: bytes) -> None:
    for f in scan_frames(fixture_zstd):
        original = fixture_zstd[f.offset : f.end]
        assert compress_frame(decode_frame(original)) == original


contents = st.binary(max_size=600) | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=3), st.integers(1, 300))


@given(
    contents,
    st.sampled_from(["compressed", "raw", "rle"]),
    st.booleans(),
    st.booleans(),
)
def test_every_framing_option_decodes_to_its_content_and_scans_as_one_frame(content: bytes, block: str, checksum: bool, size: bool) -> None:
    frame = compress_frame(content, checksum=checksum, content_size=size, block=block)  # type: ignore[arg-type]
    (layout,) = scan_frames(frame)
    assert (layout.complete, layout.end, layout.has_checksum, layout.error) == (True, len(frame), checksum, None)
    assert layout.content_size == (len(content) if size else None)
    if block != "compressed":
        assert set(layout.block_types) <= {"raw", "rle"}
    assert decode_frame(frame) == content


def test_rle_blocks_are_used_for_runs() -> None:
    (layout,) = scan_frames(compress_frame(b"ab" + b"x" * 50 + b"\n", block="rle"))
    assert layout.block_types == ("raw", "rle", "raw")


def test_a_corrupted_payload_byte_is_caught_in_every_position(fixture_zstd: bytes) -> None:
    frame = scan_frames(fixture_zstd)[1]
    original = fixture_zstd[frame.offset : frame.end]
    payload_start = 4 + 2 + 3  # magic, descriptor + window, first block header
    for i in range(payload_start, len(original)):
        damaged = bytearray(original)
        damaged[i] ^= 0x5A
        with pytest.raises(FrameDecodeError):
            decode_frame(bytes(damaged))


def test_a_corrupted_raw_block_is_caught_by_the_checksum() -> None:
    frame = bytearray(compress_frame(b'{"a":1}\n', block="raw"))
    frame[10] ^= 1
    with pytest.raises(FrameDecodeError, match="checksum"):
        decode_frame(bytes(frame))


def test_truncation_anywhere_in_the_last_frame_leaves_a_torn_frame_at_its_start(fixture_zstd: bytes) -> None:
    last = scan_frames(fixture_zstd)[-1]
    content = decode_frame(fixture_zstd[last.offset :])
    for cut in range(last.offset + 1, last.end):
        frames = scan_frames(fixture_zstd[:cut])
        assert (frames[-1].offset, frames[-1].complete, frames[-1].end) == (last.offset, False, cut)
        assert all(f.complete for f in frames[:-1])
        assert content.startswith(recover_torn_frame(fixture_zstd[last.offset : cut]))
    assert recover_torn_frame(fixture_zstd[last.offset : last.end - 4]) == content  # only the checksum missing


@given(st.binary(max_size=400), st.integers(0, 500))
def test_a_torn_raw_frame_yields_a_prefix_of_its_content(content: bytes, cut: int) -> None:
    frame = compress_frame(content, block="raw")
    assert content.startswith(recover_torn_frame(frame[: min(cut, len(frame))]))


def test_structural_defects_carry_the_official_message_and_byte(fixture_zstd: bytes) -> None:
    first = scan_frames(fixture_zstd)[0]
    garbage = fixture_zstd[: first.end] + b"\x00\x01\x02\x03junk"
    assert scan_frames(garbage)[-1].error == f"invalid frame magic at byte {first.end}"
    reserved = bytearray(fixture_zstd)
    reserved[first.end + 4] |= 0x08
    assert scan_frames(bytes(reserved))[1].error == f"reserved frame-header bit at byte {first.end + 4}"
    block = bytearray(compress_frame(b"x\n", block="raw"))
    block[6] |= 0x06  # block type 3
    assert scan_frames(bytes(block))[0].error == "reserved block type at byte 6"


def test_skippable_frames_are_scanned_over_but_flagged_as_the_official_reader_refuses_them(fixture_zstd: bytes) -> None:
    frames = scan_frames(skippable_frame(b"meta", nibble=3) + fixture_zstd)
    assert frames[0].kind == "skippable" and frames[0].size == 12 and frames[0].error == "invalid frame magic at byte 0"
    assert all(f.kind == "zstd" and f.complete for f in frames[1:])


@given(st.binary(max_size=300))
def test_scanning_never_raises_and_covers_the_input(data: bytes) -> None:
    frames = scan_frames(data)
    assert sum(f.size for f in frames) == len(data)
