"""A streamed read is the whole read, minus what it does not keep.

``stream_log`` hands each row's events to a consumer as they are read and keeps the
physical layer compactly; ``check_stream`` (what ``dshfuzz check`` runs) feeds the walk
loop from it. The reader's verdicts, the physical layer and every report must be exactly
those of ``parse_log`` + ``check_log`` on the whole model, on valid, mutated and damaged logs.
"""

from __future__ import annotations

import tempfile
from itertools import groupby
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_loop_logs import jsonl
from conftest import FIXTURES
from recovery_scenarios import session

from dshfuzz.checker import CheckOptions, check_log, check_stream
from dshfuzz.checker import redact_report, redact_streamed
from dshfuzz.generators import session_logs
from dshfuzz.model._stream import CompactLines, CompactRows
from dshfuzz.model import FileBytes, SessionLog, StreamedLog, compression_by_name, dumps, encode_zstd, parse_events, parse_log, stream_log
from dshfuzz.mutators import MUTATORS, mutants



class _Collect:
    """A consumer that keeps every event handed over, with the row it came in."""

    def __init__(self) -> None:
        self.raws: list[Any] = []
        self.rows: list[tuple[int, int]] = []
        self.log: StreamedLog | None = None

    def begin(self, log: StreamedLog) -> None:
        self.log = log

    def row(self, first: int, stop: int, head: Any) -> None:
        assert self.log is not None
        assert first == len(self.raws), "rows are handed over in order, none skipped"
        assert head is self.log.events[first]
        self.rows.append((first, stop))
        self.raws.extend(event.raw for event in self.log.events[first:stop])  # a packed row's from one expansion


def _physical(log: SessionLog | StreamedLog) -> dict[str, Any]:
    return {
        "header": None if log.header is None else (log.header.raw, log.header.line, log.header.frame),
        "lines": [(x.number, x.frame, x.offset, x.size, x.terminated, x.error, x.data) for x in log.lines],
        "rows": [(r.line, r.kind, r.events, r.frame, r.error) for r in log.rows],
        "irregular row values": [r.value for r in log.rows if r.kind not in ("event", "packed")],
        "frames": [(f.index, f.offset, f.size, f.status, f.lines, f.error, bytes(f.data), f.content_size, f.has_checksum,
                    f.block_types, f.content) for f in log.frames],
        "diagnostics": log.diagnostics,
        "refusal": log.refusal,
        "committed": log.committed_events,
        "torn": log.torn,
        "limit": log.limit,
        "suspects": log.lossy_suspects,
        "events": len(log.events),
    }


@contextmanager
def _on_disk(data: bytes) -> Iterator[FileBytes]:
    """``data`` as a file read on demand, as ``dshfuzz check`` reads a log."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log"
        path.write_bytes(data)
        with FileBytes.open(path) as file:
            yield file


def _same_read(data: bytes, compression: Any = None) -> None:
    whole = parse_log(data, compression=compression)
    with _on_disk(data) as file:
        for source in (data, file):
            consumer = _Collect()
            streamed = stream_log(source, consumer, compression=compression)
            assert _physical(streamed) == _physical(whole)
            assert consumer.raws == [e.raw for e in whole.events]
            assert consumer.rows == [(r.events.start, r.events.stop) for r in whole.rows if r.events]
    streamed, events = parse_events(data, compression=compression)
    assert _physical(streamed) == _physical(whole)
    assert [(e.raw, e.line, e.row, e.member, e.frame) for e in events] == [
        (e.raw, e.line, e.row, e.member, e.frame) for e in whole.events
    ]


def _same_report(data: bytes, compression: Any = None, **options: Any) -> None:
    opts = CheckOptions(strict=True, **options)
    whole = check_log(parse_log(data, compression=compression), opts).to_json()
    with _on_disk(data) as file:
        for source in (data, file):
            streamed = check_stream(source, compression=compression, options=opts).to_json()
            assert streamed == whole, f"streamed report ({type(source).__name__}) differs on:\n{data[:4000]!r}"


@pytest.mark.parametrize("name", ["valid-v0.jsonl", "valid-v0.jsonl.zstd"])
def test_the_fixture_streams_as_it_reads(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    _same_read(data)
    _same_report(data)


@given(session_logs(format_version=0, max_events=80), st.booleans())
def test_generated_logs_stream_as_they_read(log, zstd: bool) -> None:
    data = log.to_zstd() if zstd else log.to_jsonl()
    _same_read(data)
    _same_report(data)
    _same_report(data, max_findings_per_rule=1)


@given(session_logs(format_version=1, max_events=60))
def test_generated_v1_logs_stream_as_they_read(log) -> None:
    _same_report(log.to_jsonl())


@given(st.data())
def test_every_mutant_streams_as_it_reads(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(MUTATORS)))
    mutant = data.draw(mutants(name))
    _same_read(mutant.data, mutant.compression)
    _same_report(mutant.data, mutant.compression)
    _same_report(mutant.data, mutant.compression, max_findings_per_rule=2)


@given(st.binary(max_size=1024))
def test_random_bytes_stream_as_they_read(data: bytes) -> None:
    _same_read(data)
    _same_report(data)


@given(st.integers(0, 10_000), st.binary(min_size=1, max_size=8))
def test_a_damaged_fixture_streams_as_it_reads(position: int, junk: bytes) -> None:
    for name in ("valid-v0.jsonl", "valid-v0.jsonl.zstd"):
        data = (FIXTURES / name).read_bytes()
        at = position % len(data)
        damaged = data[:at] + junk + data[at + len(junk):]
        _same_read(damaged, "zstd" if name.endswith("zstd") else "none")
        _same_report(damaged, "zstd" if name.endswith("zstd") else "none")


def test_a_streamed_read_keeps_only_the_row_being_handed_over() -> None:
    seen: list[str] = []

    class Peek(_Collect):
        def row(self, first: int, stop: int, head: Any) -> None:
            events = self.log.events  # type: ignore[union-attr]
            assert len(events) == stop
            if first:
                with pytest.raises(LookupError, match="keeps only the row"):
                    events[first - 1]
                with pytest.raises(LookupError, match="keeps only the row"):
                    events[first - 1 : stop]
            row = events[first:stop]  # built at once, and then the very events read one by one
            assert len(row) == stop - first and all(e is events[k] for k, e in enumerate(row, first))
            seen.append(events[first].type)

    log = stream_log((FIXTURES / "valid-v0.jsonl.zstd").read_bytes(), Peek())
    assert len(seen) == len(log.rows) and len(log.events) == 76
    with pytest.raises(LookupError):
        list(log.events)
    # a streamed log is its own type, which has no events to iterate over
    assert isinstance(log, StreamedLog) and not isinstance(log, SessionLog)
    with pytest.raises(TypeError):
        iter(log)  # type: ignore[call-overload]  # the point: mypy refuses it too


def test_an_ordinary_line_comes_back_with_its_text_but_not_its_value() -> None:
    data = (FIXTURES / "valid-v0.jsonl").read_bytes()
    log = stream_log(data, _Collect())
    whole = parse_log(data)
    assert log.lines[0].value == whole.lines[0].value  # the header line is kept whole
    assert [x.text for x in log.lines] == [x.text for x in whole.lines]
    assert log.lines[-1].value is not whole.lines[-1].value


def test_redaction_of_a_streamed_report_is_the_whole_one() -> None:
    lines = (FIXTURES / "valid-v0.jsonl").read_bytes().split(b"\n")
    # a gap and a repeat make findings that quote seqs, ids and text
    broken = b"\n".join(lines[:5] + lines[6:9] + lines[8:])
    log = parse_log(broken)
    report = check_log(log)
    assert report.findings
    whole = redact_report(report, log).to_json()
    streamed = redact_streamed(check_stream(broken), broken).to_json()
    assert dumps(streamed) == dumps(whole)


@pytest.mark.parametrize("name", ["valid-v0.jsonl", "valid-v0.jsonl.zstd"])
def test_a_streamed_check_leaves_no_cycle_behind(name: str) -> None:
    """The CLI checks with the cyclic collector paused: a reference cycle through the read (the
    log's lines referring back to the reader, which refers to the walks) would keep every
    checked log alive."""
    import gc

    data = (FIXTURES / name).read_bytes()
    check_stream(data)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        report = check_stream(data)
        del report
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


@given(session_logs(format_version=0, max_events=60), st.booleans(), st.integers(1, 300), st.integers(1, 300),
       st.integers(1, 5), st.data())
def test_a_file_read_in_any_pieces_reads_as_the_bytes(
    log, zstd: bool, block: int, window: int, batch: int, data: st.DataObject
) -> None:
    """A log file is read block by block (plain) and frame by frame (zstd), the frame scanner's
    small reads go through a window, and the compact tables settle their lines in batches: at any
    block, window and batch size the read and the report are those of the file's bytes, torn and
    damaged files included."""
    raw = bytearray(log.to_zstd() if zstd else log.to_jsonl())
    if data.draw(st.booleans(), label="damage"):
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        raw[at] ^= data.draw(st.integers(1, 255), label="mask")
        del raw[data.draw(st.integers(at, len(raw)), label="cut"):]
    with (patch("dshfuzz.model._reader._BLOCK", block), patch("dshfuzz.model._file._WINDOW", window),
          patch("dshfuzz.model._stream._BATCH", batch)):
        _same_read(bytes(raw))
        _same_report(bytes(raw))


class _Recording(FileBytes):
    __slots__ = ("reads",)

    def _pread(self, offset: int, size: int) -> bytes:
        self.reads.append(size)
        return super()._pread(offset, size)


def _largest_read(path: Path) -> int:
    with _Recording.open(path) as recording:
        recording.reads = []
        report = check_stream(recording, compression=compression_by_name(str(path)))
        assert report.ok, report.findings[:3]
    return max(recording.reads)


def test_a_log_file_is_never_read_whole(tmp_path: Path) -> None:
    """What ``dshfuzz check`` holds of a file at once: a block of a plain log, a frame of a zstd one."""
    b = session(["text", "tool"] * 800)
    plain = jsonl(b.header, b.events).encode()
    zstd = encode_zstd(b.header, [b.events[i : i + 40] for i in range(0, len(b.events), 40)])
    largest_frame = max(f.size for f in parse_log(zstd).frames)
    for name, data, most in (("big.jsonl", plain, 1 << 20), ("big.jsonl.zstd", zstd, max(64 << 10, largest_frame))):
        path = tmp_path / name
        path.write_bytes(data)
        assert _largest_read(path) <= most < len(data) / 4, name


@given(st.lists(st.tuples(st.integers(0, 2**33), st.integers(-1, 4), st.integers(0, 3), st.booleans()), max_size=40),
       st.integers(0, 2**40), st.integers(1, 4), st.booleans())
def test_the_compact_tables_give_back_every_line_and_row_staged(
    steps: list[tuple[int, int, int, bool]], start: int, batch: int, jump: bool
) -> None:
    """As the reader stages them (lines end to end, one row a line from line 2, the events following
    on), every line's offset, size and frame and every row's line, first event and count come back
    as staged, before and after the tables settle, sizes and counts beyond 32 bits included; a
    batch whose last line does not follow on (``jump``) is kept as staged (each batch keeps its
    own first offset, so a batch may start anywhere). The lines' frame runs
    are those of the staged frames."""
    lines = CompactLines()
    rows = CompactRows(lines)
    want_lines: list[tuple[int, int, int]] = []
    want_rows: list[tuple[int, int, int]] = []
    offset, event = start, 0
    with patch("dshfuzz.model._stream._BATCH", batch):
        for k, (size, frame, count, settle) in enumerate(steps):
            if jump and k % batch == batch - 1:
                offset, event = offset + 1, event + 1
            signed = -count if frame == 4 else count
            lines.staged.extend((offset, size, frame))
            rows.staged.extend((k + 2, event, signed))
            want_lines.append((offset, size, frame))
            want_rows.append((k + 2, event, signed))
            offset, event = offset + size + 1, event + count
            if settle:
                rows.settle()
            assert [lines.cells(i) for i in range(len(lines))] == want_lines
            assert [rows.cells(i) for i in range(len(rows))] == want_rows
        if jump and batch > 1:  # a batch of one line follows on from nothing
            assert len(lines.loose) == lines.settled // batch and len(rows.loose) == rows.settled // batch
        runs = []
        number = 1
        for frame, run in groupby(f for _, _, f in want_lines):
            count = sum(1 for _ in run)
            if frame >= 0:
                runs.append((frame, number, number + count - 1))
            number += count
        assert list(lines.frame_spans()) == runs
        assert [lines.frame_of(n) for n in range(1, len(want_lines) + 1)] == [None if f < 0 else f for _, _, f in want_lines]


@pytest.mark.parametrize("declared", [2**63 - 1, 2**63, 2**64 - 1])
def test_a_frame_declaring_more_than_63_bits_streams_as_it_reads(declared: int) -> None:
    """A zstd frame header may declare up to 2**64 - 1 bytes of content (an 8-byte size field);
    the frame tables keep what their int64 cells cannot hold aside (CI's atheris found the crash)."""
    fixture = (FIXTURES / "valid-v0.jsonl.zstd").read_bytes()
    header = b"\x28\xb5\x2f\xfd" + bytes([0xC4, 0x00]) + declared.to_bytes(8, "little")  # 8-byte size, checksum, a window byte
    for data in (header, fixture + header + b"\x01\x00\x00", header + fixture):
        _same_read(data, "zstd")
        _same_report(data, "zstd")
        assert declared in [f.content_size for f in parse_log(data, compression="zstd").frames]


@given(st.lists(st.tuples(st.integers(0, 80), st.integers(1, 40)), max_size=4), st.booleans(), st.booleans(),
       st.integers(1, 60), st.integers(0, 30))
def test_runs_of_empty_lines_stream_as_they_read(
    runs: list[tuple[int, int]], zstd: bool, closed: bool, unreadable: int, cap: int
) -> None:
    """A run of empty lines is one record in a streamed read's tables and one R1 run in the check:
    the lines, rows, findings (their lines and the cap's count) are still the whole read's, one by
    one, whichever limit cuts the run."""
    from dshfuzz.model import Limits, compress_frame

    lines = (FIXTURES / "valid-v0.jsonl").read_bytes().split(b"\n")[:-1]
    if closed:
        lines = lines[:20] + lines[-1:]  # a turn/end after the runs commits them
    for at, count in sorted(runs, reverse=True):
        at = 1 + at % len(lines)
        lines[at:at] = [b""] * count
    text = b"\n".join(lines) + b"\n"
    half = len(lines) // 2  # a run may span two frames
    frames = [lines[:1], lines[1:half], lines[half:]]
    data = b"".join(compress_frame(b"\n".join(f) + b"\n") for f in frames if f) if zstd else text
    compression = "zstd" if zstd else "none"
    limits = Limits(unreadable_lines=unreadable)
    whole = parse_log(data, compression=compression, limits=limits)
    streamed = stream_log(data, _Collect(), compression=compression, limits=limits)
    assert _physical(streamed) == _physical(whole)
    empties = [d for d in whole.diagnostics if d.code == "line.empty"]
    assert len(empties) <= len(runs)  # a run of empty lines is one diagnostic
    opts = CheckOptions(strict=True, max_findings_per_rule=cap)
    expected = check_log(parse_log(data, compression=compression, limits=limits), opts).to_json()
    assert check_stream(data, compression=compression, options=opts, limits=limits).to_json() == expected
