"""Every log the generators produce (format 0 and 1, JSONL and zstd) checks clean:
no error and no warning beyond the two the catalog demands for what the
generators write on purpose, and no pass raises."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.generators import GeneratedLog, session_logs
from dshfuzz.model import parse_log
from dshfuzz.mutators import MUTATORS, LogShape, logs_for


def _report(data: bytes):
    return check_log(parse_log(data), CheckOptions(strict=True))


def _unexpected(report, log: GeneratedLog) -> list:
    """Findings other than Z3's warning on a generated session with no events, and
    E7's on the unconsumed ``ignorable`` plugin events the v1 generator writes on
    purpose (the catalog warns on exactly those)."""
    return [
        f
        for f in report.findings
        if not (f.rule is RuleId.Z3 and not log.events)
        and not (f.rule is RuleId.E7 and log.format_version == 1)
    ]


def _explain(report, log: GeneratedLog) -> str:
    found = "\n".join(f"  {f.rule} seq={f.seq}: {f.message}" for f in report.findings)
    return f"findings:\n{found}\nlog:\n{log.to_jsonl().decode()}"


@given(session_logs(format_version=0, max_events=80))
def test_generated_v0_logs_check_clean(log: GeneratedLog) -> None:
    report = _report(log.to_jsonl())
    assert _unexpected(report, log) == [], _explain(report, log)


@given(session_logs(format_version=1, max_events=60))
def test_generated_v1_logs_check_clean(log: GeneratedLog) -> None:
    report = _report(log.to_jsonl())
    assert _unexpected(report, log) == [], _explain(report, log)


@given(session_logs(format_version=0, max_events=60))
def test_generated_zstd_logs_check_clean(log: GeneratedLog) -> None:
    report = _report(log.to_zstd())
    assert _unexpected(report, log) == [], _explain(report, log)


_SHAPED = sorted(name for name, m in MUTATORS.items() if m.logs != LogShape())


@given(st.sampled_from(_SHAPED).flatmap(lambda name: logs_for(name, max_events=120)))
def test_logs_of_every_declared_mutator_shape_check_clean(log: GeneratedLog) -> None:
    """A mutator's declared :class:`LogShape` only reweights the one generator: its logs are valid."""
    report = _report(log.to_jsonl())
    assert _unexpected(report, log) == [], _explain(report, log)
