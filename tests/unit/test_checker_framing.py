"""Framing rules Z1-Z5, on logs whose physical layer (frames, torn tail) is given
explicitly; the reader that produces those records is tested with the codecs."""

from __future__ import annotations

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.model import Frame, TornTail

from checker_logs import fired, header, minimal_events, session_log


def _zstd(frame_lines: list[int], statuses: list[str] | None = None, torn: TornTail | None = None):
    """The minimal log as a zstd file whose frames hold ``frame_lines`` lines each."""
    log = session_log(header(), minimal_events())
    log.compression = "zstd"
    statuses = statuses or ["complete"] * len(frame_lines)
    first, offset = 1, 0
    for i, (n, status) in enumerate(zip(frame_lines, statuses)):
        log.frames.append(Frame(index=i, offset=offset, size=100, status=status, lines=range(first, first + n)))
        first += n
        offset += 100
    log.torn = torn
    return log


def _fired(log) -> set[RuleId]:
    return fired(check_log(log, CheckOptions(strict=True)))


OFFICIAL_SHAPE = [1, 6, 6, 6]


def test_the_official_frame_shape_is_clean() -> None:
    assert not _fired(_zstd(OFFICIAL_SHAPE)) & {RuleId.Z1, RuleId.Z2, RuleId.Z4, RuleId.Z5}


def test_z1_torn_tail_is_a_warning_with_the_truncation_offset() -> None:
    log = _zstd([1, 6, 6, 6], ["complete", "complete", "complete", "torn"], TornTail(truncate_to=300, recovered_lines=2, frame=3))
    report = check_log(log, CheckOptions(strict=True))
    (z1,) = [f for f in report.findings if f.rule is RuleId.Z1]
    assert z1.offset == 300 and z1.frame == 3 and report.ok


def test_z2_corrupt_or_skippable_frame() -> None:
    for status in ("corrupt", "skippable"):
        log = _zstd(OFFICIAL_SHAPE, ["complete", status, "complete", "complete"])
        report = check_log(log, CheckOptions(strict=True))
        (z2,) = [f for f in report.findings if f.rule is RuleId.Z2]
        assert z2.frame == 1 and z2.offset == 100
    assert RuleId.Z2 not in _fired(_zstd(OFFICIAL_SHAPE))


def test_z2_only_the_last_whole_frame_must_end_on_a_record_boundary() -> None:
    """The official reader lets a record span frames (measured: load and released accept a
    middle frame cut mid-record); only a last whole frame ending mid-record is refused."""
    assert RuleId.Z2 not in _fired(_zstd(OFFICIAL_SHAPE, ["complete", "not-record-aligned", "complete", "complete"]))
    report = check_log(_zstd(OFFICIAL_SHAPE, ["complete", "complete", "complete", "not-record-aligned"]), CheckOptions(strict=True))
    (z2,) = [f for f in report.findings if f.rule is RuleId.Z2]
    assert z2.frame == 3


def test_z4_header_frame_with_more_lines() -> None:
    assert RuleId.Z4 in _fired(_zstd([7, 6, 6]))
    assert RuleId.Z4 not in _fired(_zstd([1, 12, 6]))


def test_z5_whole_log_in_one_frame() -> None:
    assert {RuleId.Z4, RuleId.Z5} <= _fired(_zstd([19]))
    assert RuleId.Z5 not in _fired(_zstd([1, 18]))


def test_z3_header_without_events() -> None:
    assert RuleId.Z3 in _fired(session_log(header(), []))
    assert RuleId.Z3 not in _fired(session_log(header(), minimal_events()[:1]))
