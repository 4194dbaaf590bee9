"""Hostile input meets the reader's limits: each limit stops the read with one precise
finding (L1 zstd plaintext, L2 line length, L3 JSON nesting, L4 line counts), never an
exception, and never by materialising what it refuses.

The limits are injected small (``Limits(...)``) so that every case is a few KiB;
one case runs a real frame declaring 1 GiB, and one a real bomb, under the
production limits.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from codec_strategies import HEADER
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.model import (
    DEFAULT_LIMITS,
    FrameLimitError,
    Limits,
    SessionLog,
    compress_frame,
    decode_frame,
    dumps,
    json_depth,
    parse_log,
    read_log,
    repeat_frame,
)

KIB = 1024
SMALL = Limits(
    frame_bytes=64 * KIB, file_bytes=256 * KIB, ratio=8, ratio_floor=16 * KIB, line_bytes=8 * KIB, depth=16
)


def line(seq: int, data: Any = None) -> bytes:
    """Event ``seq``: a turn/start (alone, a clean log), or an event carrying ``data``."""
    kind, body = ("turn/start", {"turn": 1}) if data is None else ("request/context", data)
    return (dumps({"type": kind, "seq": seq, "time": seq, "data": body}) + "\n").encode()


def header() -> bytes:
    return (dumps(HEADER) + "\n").encode()


def zstd(*plaintexts: bytes) -> bytes:
    return b"".join(compress_frame(p) for p in (header(), *plaintexts))


def only_finding(log: SessionLog, rule: RuleId, *, besides: tuple[RuleId, ...] = ()) -> Any:
    """The checker's one error of ``rule`` on ``log``, the limit finding; its other errors
    are of the rules in ``besides`` (the defects of the lines read before the limit)."""
    errors = [f for f in check_log(log, CheckOptions(strict=True)).findings if f.is_error]
    described = [f"{f.rule}: {f.message}" for f in errors]
    assert {f.rule for f in errors} == {rule, *besides}, described
    (limit,) = [f for f in errors if f.rule == rule]
    return limit


def test_the_defaults_admit_the_fixture(fixtures_dir: Path) -> None:
    for name in ("valid-v0.jsonl", "valid-v0.jsonl.zstd"):
        log = read_log(fixtures_dir / name)
        assert log.limit is None and len(log.events) == 76


def test_a_frame_over_the_frame_limit_stops_the_read_at_that_frame() -> None:
    noise = (
        random.Random(0).randbytes(70 * KIB).replace(b"\n", b" ")
    )  # incompressible: only the frame limit binds
    log = parse_log(zstd(line(0), noise + b"\n", line(1)), limits=SMALL)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.frame, hit.exact) == ("frame-bytes", 2, False)
    assert hit.offset == log.frames[2].offset and log.frames[2].status == "over-limit"
    assert len(log.events) == 1 and len(log.frames) == 3  # nothing after the frame is read
    finding = only_finding(log, RuleId.L1)
    assert finding.frame == 2 and finding.offset == hit.offset
    assert "per frame" in finding.message and "refuses the file or crashes" in finding.message


def test_a_declared_size_over_the_limit_is_refused_before_decoding() -> None:
    log = parse_log(zstd(line(0)) + repeat_frame(0x20, 10 * 1024 * KIB), limits=SMALL)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.observed, hit.exact) == ("ratio", 10 * 1024 * KIB, True)
    assert "declares 10485760 bytes" in hit.message


def test_an_undeclared_bomb_stops_at_the_ratio_limit() -> None:
    bomb = repeat_frame(0x20, 10 * 1024 * KIB, declare_size=False)
    log = parse_log(zstd(line(0)) + bomb, limits=SMALL)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.compressed, hit.exact) == ("ratio", len(bomb), False)
    assert SMALL.ratio_floor < hit.observed <= SMALL.ratio_floor + 512 * KIB
    only_finding(log, RuleId.L1)


def test_the_file_limit_counts_every_frame() -> None:
    batch = b"".join(line(i) for i in range(1000))  # ~60 KiB per frame, compressing well
    limits = Limits(file_bytes=100 * KIB, ratio=1000)
    log = parse_log(zstd(batch, batch), limits=limits)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.frame, hit.whole_file) == ("file-bytes", 2, True)
    assert hit.observed > 100 * KIB and len(log.events) == 1000


def test_an_over_long_line_is_measured_not_materialised() -> None:
    long_line = line(1, {"text": "x" * 20 * KIB})
    log = parse_log(header() + line(0) + long_line + line(2), limits=SMALL)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.line, hit.exact, hit.observed) == (
        "line-bytes",
        3,
        True,
        len(long_line) - 1,
    )
    assert [ln.number for ln in log.lines] == [1, 2] and len(log.events) == 1
    finding = only_finding(log, RuleId.L2)
    assert finding.line == 3 and "holds 20" in finding.message


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_a_line_spanning_blocks_or_frames_stops_as_soon_as_it_is_too_long(compression: str) -> None:
    pieces = [b"x" * 6 * KIB] * 4  # no newline: the line only grows
    data = zstd(line(0), *pieces) if compression == "zstd" else header() + line(0) + b"".join(pieces)
    log = parse_log(data, limits=SMALL)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.line, hit.exact) == ("line-bytes", 3, False)
    assert hit.observed > SMALL.line_bytes
    assert log.torn is None  # the line is unread, not torn


def test_nesting_beyond_the_depth_limit_stops_the_read() -> None:
    deep = line(1, {"x": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]})
    log = parse_log(header() + line(0) + deep + line(2), limits=SMALL)
    hit = log.limit
    assert hit is not None and (hit.kind, hit.line, hit.observed, hit.exact) == ("depth", 3, 17, False)
    finding = only_finding(log, RuleId.L3)
    assert "nests more than 16 levels deep" in finding.message and "does not recurse" in finding.message


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = line(1, {"x": "[" * 100 + "{" * 100})
    log = parse_log(header() + line(0) + text, limits=SMALL)
    assert log.limit is None and len(log.events) == 2


def test_a_limit_on_the_header_line_reports_only_the_limit() -> None:
    log = parse_log(b'{"type":"session","x":' + b"[" * 40 + b"]" * 40 + b"}\n" + line(0), limits=SMALL)
    assert log.header is None and log.limit is not None and log.limit.line == 1
    only_finding(log, RuleId.L3)


def unreadable(count: int) -> bytes:
    """``count`` lines that hold no event: empty, not JSON and a malformed packed row in turn."""
    kinds = (b"", b"{not json", b'{"type":"text-chunks"}')
    return b"".join(kinds[i % 3] + b"\n" for i in range(count))


def test_unreadable_lines_past_the_limit_stop_the_read_at_the_first_one_over() -> None:
    log = parse_log(header() + line(0) + unreadable(9) + line(1), limits=Limits(unreadable_lines=8))
    hit = log.limit
    assert hit is not None and (hit.kind, hit.line, hit.observed, hit.limit) == ("unreadable-lines", 11, 9, 8)
    assert [ln.number for ln in log.lines] == list(range(1, 11)) and len(log.rows) == 9
    finding = only_finding(log, RuleId.L4, besides=(RuleId.R1, RuleId.R2))
    assert finding.line == 11 and "unreadable line number 9" in finding.message and "however many" in finding.message


def test_unreadable_lines_up_to_the_limit_are_all_read() -> None:
    log = parse_log(header() + line(0) + unreadable(8) + line(1), limits=Limits(unreadable_lines=8))
    assert log.limit is None and len(log.lines) == 11 and len(log.events) == 2


def test_a_megabyte_of_bare_newlines_is_read_as_ten_thousand_lines() -> None:
    log = parse_log(header() + b"\n" * (1 << 20))
    assert log.limit is not None and log.limit.kind == "unreadable-lines"
    assert len(log.lines) == 1 + DEFAULT_LIMITS.unreadable_lines


def _zstd_lines(count: int) -> bytes:
    """One event written ``count`` times: a fraction of a compressed byte per line."""
    return zstd(line(0) * count)


def test_a_zstd_file_past_one_line_per_compressed_byte_stops_at_the_line_ratio() -> None:
    data = _zstd_lines(400)
    assert len(data) < 400
    log = parse_log(data, limits=Limits(line_floor=16))
    hit = log.limit
    assert hit is not None and (hit.kind, hit.limit, hit.compressed) == ("line-ratio", len(data), len(data))
    assert hit.line == len(data) + 1 and hit.frame == 1 and len(log.lines) == len(data)
    (finding,) = [f for f in check_log(log, CheckOptions(strict=True)).findings if f.rule == RuleId.L4]
    assert f"{len(data)} lines from its first {len(data)} compressed bytes" in finding.message
    assert finding.offset == log.frames[1].offset and finding.context["plaintextOffset"] == hit.offset


def test_a_zstd_file_within_the_line_floor_is_read_whole() -> None:
    log = parse_log(_zstd_lines(400), limits=Limits(line_floor=401))
    assert log.limit is None and len(log.lines) == 401
    assert RuleId.L4 not in {f.rule for f in check_log(log).findings}


def test_469_zstd_bytes_of_half_a_million_empty_lines_read_only_the_line_floor() -> None:
    """The atheris timeout (4 s): RLE blocks of newlines, read line by line."""
    data = zstd(b"\n" * 493_599)
    log = parse_log(data)
    assert len(data) < DEFAULT_LIMITS.line_floor
    assert log.limit is not None and log.limit.kind == "line-ratio"
    assert len(log.lines) == DEFAULT_LIMITS.line_floor


nested = st.recursive(
    st.integers() | st.text(alphabet='[]{}"\\ab', max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


@given(nested, st.integers(0, 12))
def test_json_depth_tells_exactly_whether_a_value_nests_past_the_bound(value: Any, bound: int) -> None:
    raw = dumps(value).encode()
    depth, got = _depth(value), json_depth(raw, bound)
    assert (got > bound) is (depth > bound), raw
    assert got == bound + 1 if depth > bound else depth <= got <= bound, raw


def test_json_depth_is_iterative_and_stops_one_level_past_the_bound() -> None:
    n = 10**6
    assert json_depth(b"[" * n + b"]" * n, 512) == 513
    assert json_depth(b"[" * 512 + b"[]" * n + b"]" * 512, 512) == 513
    assert json_depth(b"[" * 511 + b"[]" * n + b"]" * 511, 512) == 512
    assert json_depth(b'["' + b"[" * n + b'"]', 0) == 1  # brackets in a string are data
    assert json_depth(b'["\\\\", "\\"[' + b"[" * n + b'"]', 0) == 1  # so are they after escapes


@pytest.mark.parametrize("window", [1, 2, 3, 7])
@given(value=nested)
def test_json_depth_is_the_same_whatever_the_window_splitting_strings(value: Any, window: int) -> None:
    """A string may span the windows the scan splits a line into; the quote parity carries over."""
    import dshfuzz.model._limits as limits

    raw = dumps(value).encode()
    default = limits._WINDOW
    try:
        limits._WINDOW = window
        assert json_depth(raw, 0) == min(_depth(value), 1), raw
        assert json_depth(raw, 2) == min(_depth(value), 3) if _depth(value) > 2 else json_depth(raw, 2) <= 2
    finally:
        limits._WINDOW = default


def test_a_line_of_millions_of_strings_is_scanned_without_materialising_them() -> None:
    """A regex cutting strings out of 16 MiB of ``["a",`` built 360 MB of pieces (and took 0.4 s)."""
    raw = b'["a",' * ((4 << 20) // 5)
    tracemalloc.start()
    try:
        assert json_depth(raw, 512) == 513
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(raw) + (12 << 20), peak  # the line, its escape-blanked copy, one window of pieces


@given(st.binary(max_size=3000), st.integers(1, 4000))
def test_a_limited_decode_returns_the_plaintext_or_stops_near_the_limit(content: bytes, limit: int) -> None:
    frame = compress_frame(content)
    try:
        assert decode_frame(frame, limit) == content
    except FrameLimitError as exc:
        assert len(content) > limit and limit < exc.produced <= limit + 512 * KIB


def parse_traced(data: bytes) -> tuple[SessionLog, int]:
    """The model of ``data`` under the production limits, and the peak of Python allocations meanwhile."""
    tracemalloc.start()
    try:
        log = parse_log(data)
        return log, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_real_1_gib_frame_is_refused_without_allocating_it() -> None:
    log, peak = parse_traced(zstd(line(0)) + repeat_frame(0x20, 1 << 30))
    assert log.limit is not None and (log.limit.kind, log.limit.observed) == ("ratio", 1 << 30)
    assert peak < 1024 * KIB
    assert only_finding(log, RuleId.L1).context["observed"] == 1 << 30


def test_a_real_bomb_is_stopped_at_the_ratio_floor() -> None:
    log, peak = parse_traced(zstd(line(0)) + repeat_frame(0x20, 1 << 30, declare_size=False))
    assert log.limit is not None and log.limit.kind == "ratio" and not log.limit.exact
    assert peak < 2 * DEFAULT_LIMITS.ratio_floor


@pytest.mark.parametrize("byte", [b" ", b"9", b"-", b"[", b"{", b"\xff", b"\x00", b'"'])
def test_a_line_of_one_repeated_byte_is_a_finding_not_an_exception(byte: bytes) -> None:
    """Found by probing every byte value: 16 MiB of ``9`` raised from ``int()`` (over its
    4300-digit limit), and 16 MiB of blanks took a second in a Python whitespace loop."""
    log = parse_log(zstd(line(0)) + repeat_frame(byte[0], 1 << 20) + compress_frame(b"\n"))
    assert (len(log.lines), log.limit) == (3, None) or log.limit.kind == "depth"
    report = check_log(log, CheckOptions(strict=True))
    assert any(f.is_error and f.line == 3 for f in report.findings), report.findings
