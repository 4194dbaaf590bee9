"""``recover`` follows what the harness can use (issue 20, item 4).

A legacy shape the official loader and the released migration upgrade on read is a
warning that blocks no fork; what blocks one is said by moment: a session the loader
opens but the migration refuses opens today and will not migrate until the refused
event is fixed.
"""

from __future__ import annotations

from pathlib import Path

from checker_logs import header, minimal_events, session_log

from dshfuzz.checker import CheckOptions, check_log
from dshfuzz.checker._recover import advice, blocking, recover_plan
from dshfuzz.model import read_log

STRICT = CheckOptions(strict=True)
CANCEL = "toninfo.deepseek-harness__acp.cancel__07cd41c0.jsonl"


def _legacy_user(events: list) -> list:
    events[2]["data"] = {"content": [{"type": "text", "text": "list the files"}], "source": {"kind": "user"}}
    return events


def test_a_legacy_message_the_loader_upgrades_is_a_warning_that_blocks_no_fork() -> None:
    log = session_log(header(), _legacy_user(minimal_events()))
    report = check_log(log, STRICT)
    (legacy,) = [f for f in report.findings if str(f.rule) == "E6"]
    assert not legacy.is_error and "upgrade on read" in legacy.message and not blocking(legacy)
    plan = recover_plan(log, options=STRICT)
    assert plan.fork is not None and plan.fork.seq == 16 and not plan.rejected


def test_a_legacy_message_that_still_fails_once_upgraded_stays_an_error_and_blocks() -> None:
    events = _legacy_user(minimal_events())
    events[2]["data"]["source"] = {}
    log = session_log(header(), events)
    (legacy,) = [f for f in check_log(log, STRICT).findings if str(f.rule) == "E6"]
    assert legacy.is_error and blocking(legacy)
    plan = recover_plan(log, options=STRICT)
    assert plan.fork is None
    assert any("does not open" in note and "E6 seq 2" in note for note in plan.notes), plan.notes


def test_a_session_only_the_migration_refuses_opens_today_and_will_not_migrate(real_sessions_dir: Path) -> None:
    """The real acp.cancel session: a legacy first message (upgraded on read) and a turn/end whose
    string abort reason only the released migration refuses."""
    plan = recover_plan(read_log(real_sessions_dir / "concrete" / CANCEL), options=STRICT)
    assert plan.fork is None
    shown = [f for r in plan.rejected for f in r.findings]
    assert [str(f.rule) for f in shown] == ["T5"], shown
    assert plan.notes[0].startswith("the session opens today"), plan.notes
    assert any("will not migrate" in note and "T5 seq 7" in note for note in plan.notes), plan.notes
    assert not any("does not open" in note for note in plan.notes)


def test_advice_names_each_moment_once() -> None:
    events = minimal_events()
    events[16]["data"]["reason"] = {"kind": "aborted", "reason": "user"}
    report = check_log(session_log(header(), events), STRICT)
    lines = advice(report.findings)
    assert len(lines) == len({line.split(":")[0] for line in lines})
