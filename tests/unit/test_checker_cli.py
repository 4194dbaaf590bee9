"""``dshfuzz check``: exit codes, the JSON report shape, redaction, unreadable files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dshfuzz.cli import main
from dshfuzz.model import dumps

from checker_logs import header, minimal_events

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "reference" / "fixtures"


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


def test_json_report_shape_and_exit_1_on_an_error(tmp_path: Path, capsys) -> None:
    events = minimal_events()
    events[9]["sourceEventSeqs"] = []
    path = _write(tmp_path, header(), events)
    assert main(["check", "--json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"file", "ok", "formatVersion", "summary", "findings"}
    assert set(report["summary"]) == {"events", "frames", "errors", "warnings"}
    assert report["ok"] is False and report["formatVersion"] == 0
    finding = next(f for f in report["findings"] if f["rule"] == "S3")
    assert {"rule", "severity", "layer", "seq", "line", "frame", "message", "refusedBy"} <= set(finding)
    assert finding["seq"] == 9 and finding["line"] == 11 and "fold" in finding["refusedBy"]


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
