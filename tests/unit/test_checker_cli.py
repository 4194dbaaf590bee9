"""``dshfuzz check``: exit codes, the JSON report shape, redaction, unreadable files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dshfuzz.cli import main
from dshfuzz.model import dumps

from checker_logs import header, minimal_events
from conftest import FIXTURES



def _write(tmp_path: Path, head, events, name: str = "s.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(dumps(x) + "\n" for x in [head, *events]), encoding="utf-8")
    return p


@pytest.mark.parametrize("name", ["valid-v0.jsonl", "valid-v0.jsonl.zstd", "valid-v0.unpacked.jsonl"])
def test_the_valid_fixture_exits_0_with_no_findings(name: str, capsys) -> None:
    assert main(["check", "--json", str(FIXTURES / name)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["findings"] == []
    assert report["summary"]["events"] == 76


@pytest.mark.parametrize("encoding", [[], ["--zstd"]])
def test_every_log_dshfuzz_generate_writes_exits_0_with_no_findings(encoding: list[str], tmp_path: Path, capsys) -> None:
    """The acceptance as a user runs it: ``dshfuzz generate`` then ``dshfuzz check`` on what it wrote."""
    assert main(["generate", "--count", "100", "--seed", "7", "--out", str(tmp_path), *encoding]) == 0
    logs = sorted(str(p) for p in tmp_path.iterdir())
    capsys.readouterr()
    assert len(logs) == 100
    status = main(["check", "--json", *logs])
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    found = {r["file"]: [(f["rule"], f["message"]) for f in r["findings"]] for r in reports if r["findings"]}
    assert status == 0 and len(reports) == 100 and not found, found


def test_json_report_shape_and_exit_1_on_an_error(tmp_path: Path, capsys) -> None:
    events = minimal_events()
    events[9]["sourceEventSeqs"] = []
    path = _write(tmp_path, header(), events)
    assert main(["check", "--json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"file", "ok", "formatVersion", "summary", "findings"}
    assert set(report["summary"]) == {"events", "frames", "errors", "warnings", "roots"}
    assert report["ok"] is False and report["formatVersion"] == 0
    finding = next(f for f in report["findings"] if f["rule"] == "S3")
    assert {"rule", "severity", "layer", "seq", "line", "frame", "message", "refusedBy", "causedBy"} <= set(finding)
    assert finding["seq"] == 9 and finding["line"] == 11 and "fold" in finding["refusedBy"]


def _gap_log(tmp_path: Path) -> Path:
    """A seq gap at the fifth event: E2 is the root; the fold's S8 and the writers' C1 follow from it."""
    events = minimal_events()
    for ev in events[4:]:
        ev["seq"] += 1
    return _write(tmp_path, header(), events)


def test_json_keeps_every_finding_and_names_each_consequences_root(tmp_path: Path, capsys) -> None:
    assert main(["check", "--json", str(_gap_log(tmp_path))]) == 1
    report = json.loads(capsys.readouterr().out)
    findings = report["findings"]
    root = next(i for i, f in enumerate(findings) if f["rule"] == "E2")
    assert findings[root]["causedBy"] is None, findings
    followers = {f["rule"] for f in findings if f["causedBy"] == root}
    assert {"S8", "C1"} <= followers, findings
    assert all(f["causedBy"] in (None, root) for f in findings), findings
    assert report["summary"]["roots"] == sum(f["causedBy"] is None for f in findings)


def test_roots_only_prints_the_roots_and_keeps_the_exit_status(tmp_path: Path, capsys) -> None:
    path = _gap_log(tmp_path)
    assert main(["check", "--json", "--roots-only", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in report["findings"]] == ["E2"], report["findings"]
    assert report["consequencesOmitted"] >= 2
    assert main(["check", "--roots-only", str(path)]) == 1
    out = capsys.readouterr().out
    assert "E2" in out and "S8" not in out and "follow from these not shown" in out


def test_the_human_report_nests_consequences_under_their_root(tmp_path: Path, capsys) -> None:
    assert main(["check", str(_gap_log(tmp_path))]) == 1
    out = capsys.readouterr().out
    assert "root cause" in out
    lines = out.splitlines()
    e2 = next(i for i, line in enumerate(lines) if "│ E2 " in line)
    assert any("└ S8" in line for line in lines[e2:]), out


def test_warnings_alone_exit_0(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, header(), [])
    assert main(["check", str(path)]) == 0
    assert "Z3" in capsys.readouterr().out


def test_unreadable_file_exits_2_with_a_one_line_reason(tmp_path: Path, capsys) -> None:
    assert main(["check", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "missing.jsonl" in err


def test_no_log_is_a_usage_error(capsys) -> None:
    assert main(["check"]) == 2


def test_format_version_override(tmp_path: Path, capsys) -> None:
    events = minimal_events()
    events[3]["data"]["header"]["system"] = "be brief"
    path = _write(tmp_path, header(), events)
    assert main(["check", "--json", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", "--json", "--format-version", "3", str(path)]) == 1
    assert any(f["rule"] == "E10" for f in json.loads(capsys.readouterr().out)["findings"])


def test_redact_hides_ids_and_text_behind_stable_hashes(tmp_path: Path, capsys) -> None:
    events = minimal_events()
    events[9]["data"]["message"]["source"]["callId"] = "c9"
    path = _write(tmp_path, header(id="sess-secret"), events)
    main(["check", "--json", str(path)])
    plain = capsys.readouterr().out
    assert "c9" in plain
    main(["check", "--json", "--redact", str(path)])
    first = capsys.readouterr().out
    main(["check", "--json", "--redact", str(path)])
    second = capsys.readouterr().out
    assert not re.search(r"(?<![A-Za-z0-9_-])c9(?![A-Za-z0-9_-])", first) and "h:" in first
    assert first == second


def test_human_output_groups_findings_by_layer(tmp_path: Path, capsys) -> None:
    events = minimal_events()
    events[9]["sourceEventSeqs"] = []
    del events[0]["data"]
    path = _write(tmp_path, header(), events)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "persistence" in out and "S3" in out and "E1" in out


def _gapped(tmp_path: Path) -> Path:
    """Every seq doubled: E2 (a seq gap) fires on each of the 16 events after the first."""
    events = minimal_events()
    for i, event in enumerate(events):
        event["seq"] = 2 * i
    return _write(tmp_path, header(), events)


def test_a_rule_keeps_its_first_findings_up_to_the_cap_and_counts_the_rest(tmp_path: Path) -> None:
    from dshfuzz.checker import CheckOptions, RuleId, check_path

    uncapped = [f for f in check_path(_gapped(tmp_path)).findings if f.rule is RuleId.E2]
    assert len(uncapped) == 16
    report = check_path(_gapped(tmp_path), CheckOptions(max_findings_per_rule=3))
    e2 = [f for f in report.findings if f.rule is RuleId.E2]
    assert e2[:3] == uncapped[:3], "the kept findings are the earliest in log order"
    (summary,) = e2[3:]
    assert summary.message == "13 more E2 finding(s) suppressed from seq 8 on: the checker keeps the first 3 per rule"
    assert (summary.seq, summary.line) == (uncapped[3].seq, uncapped[3].line)
    assert summary.context == {"suppressed": 13, "cap": 3, "fromSeq": 8, "fromLine": uncapped[3].line}
    assert summary.is_error and report.suppressed == {RuleId.E2: 13}
    assert {f.rule for f in report.findings} == {f.rule for f in check_path(_gapped(tmp_path)).findings}


def test_the_cap_keeps_the_earliest_findings_whatever_order_a_pass_yields_them_in() -> None:
    from dshfuzz.checker import CheckOptions, RuleId, check_log, implemented_rules
    from dshfuzz.checker._run import PASSES, rule_pass

    from checker_logs import session_log

    log = session_log(header(), minimal_events())
    implemented_rules()  # the rule modules register first, so the pass below is the last one

    @rule_pass(RuleId.E2)
    def backwards(ctx):
        for seq in reversed(range(10)):
            yield ctx.finding(RuleId.E2, f"seq {seq}", seq=seq, line=seq + 2)

    try:
        report = check_log(log, CheckOptions(strict=True, rules=frozenset({RuleId.E2}), max_findings_per_rule=4))
    finally:
        PASSES.pop()
    assert [f.message for f in report.findings] == [
        "seq 0", "seq 1", "seq 2", "seq 3",
        "6 more E2 finding(s) suppressed from seq 4 on: the checker keeps the first 4 per rule",
    ]


def test_json_and_human_outputs_show_the_suppressed_count_with_unchanged_exit_codes(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # one table row per line
    path = _gapped(tmp_path)
    assert main(["check", "--json", "--max-findings-per-rule", "2", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    e2 = [f for f in report["findings"] if f["rule"] == "E2"]
    assert len(e2) == 3 and e2[-1]["context"]["suppressed"] == 14 and e2[-1]["seq"] == 6
    assert report["suppressed"] == {"E2": 14}
    assert main(["check", "--max-findings-per-rule", "2", str(path)]) == 1
    assert "14 more E2 finding(s) suppressed from seq 6 on" in capsys.readouterr().out


def test_a_cap_below_one_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["check", "--max-findings-per-rule", "0", str(_gapped(tmp_path))]) == 2
    assert "--max-findings-per-rule" in capsys.readouterr().err


def test_as_a_process_the_report_is_whole_and_the_exit_status_kept(tmp_path: Path) -> None:
    """``python -m dshfuzz check`` ends without freeing its heap: stdout must still be flushed
    in full and the status must survive."""
    import subprocess
    import sys

    gapped = _gapped(tmp_path)
    done = subprocess.run([sys.executable, "-m", "dshfuzz", "check", "--json", str(gapped), str(gapped)],
                          capture_output=True, check=False)
    assert done.returncode == 1, done.stderr
    reports = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [r["ok"] for r in reports] == [False, False] and len(reports[1]["findings"]) == 18
    missing = subprocess.run([sys.executable, "-m", "dshfuzz", "check", str(tmp_path / "absent.jsonl")],
                             capture_output=True, check=False)
    assert missing.returncode == 2 and b"cannot read" in missing.stderr
