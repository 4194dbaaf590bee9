"""Messages a new user reads (issue 22, item 5), each from the installed CLI as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "data" / "valid-v0.jsonl"


def _dshfuzz(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dshfuzz", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_an_unknown_option_of_a_command_shows_that_commands_usage():
    proc = _dshfuzz("check", "--bogus", str(FIXTURE))
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: dshfuzz check"), proc.stderr
    assert "dshfuzz check: error: unrecognized arguments: --bogus" in proc.stderr


def test_mutate_into_a_missing_folder_is_refused_and_creates_nothing(tmp_path):
    out = tmp_path / "nonexistent" / "dir" / "x.jsonl"
    proc = _dshfuzz("mutate", str(FIXTURE), "--mutator", "seq-gap", "--seed", "1", "--out", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == f"dshfuzz mutate: --out {out}: the folder {out.parent} does not exist"
    assert not (tmp_path / "nonexistent").exists()


def test_counts_in_the_check_summary_agree_with_their_number(tmp_path):
    header_only = tmp_path / "one.jsonl"
    header_only.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n')
    proc = _dshfuzz("check", str(header_only))
    assert "0 events" in proc.stdout and "1 warning" in proc.stdout and "1 warnings" not in proc.stdout, proc.stdout
    assert "0 errors" in proc.stdout, proc.stdout


def test_recover_tells_a_new_session_from_unusable_input_by_its_exit_status(tmp_path):
    header_only = tmp_path / "s.jsonl"
    header_only.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n')
    new_session = _dshfuzz("recover", str(header_only))
    assert new_session.returncode == 1, new_session.stdout + new_session.stderr
    assert "NEW SESSION" in new_session.stdout and "anchor" not in new_session.stdout
    assert _dshfuzz("recover", str(tmp_path / "missing.jsonl")).returncode == 2
    negative = _dshfuzz("recover", str(header_only), "--at", "-5")
    assert negative.returncode == 2 and "--at -5: a seq is a non-negative integer" in negative.stderr


def test_plain_jsonl_named_zstd_is_not_called_empty_and_the_name_is_questioned(tmp_path):
    misnamed = tmp_path / "session.jsonl.zstd"
    misnamed.write_bytes(FIXTURE.read_bytes())
    proc = _dshfuzz("check", str(misnamed))
    assert proc.returncode == 1
    assert "the file is empty" not in proc.stdout and "no line could be read" in proc.stdout, proc.stdout
    assert f"{misnamed} is named .zstd but starts with '{{': it looks like plain JSONL" in proc.stderr, proc.stderr
