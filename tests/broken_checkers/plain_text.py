"""Prints plain text instead of JSON ("session.jsonl: 2 errors (S5 at seq 4, ...)").

Its exit codes follow the convention, but no output is a report: a campaign must stop
before its first example with one clear error, not report a finding per log."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import run_with  # noqa: E402


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return findings


def check(path: str) -> str:
    errors = [f for f in run_with(defect, path)["findings"] if f["severity"] == "error"]
    if not errors:
        return f"{path}: OK"
    listed = ", ".join(f"{f['rule']} at seq {f['seq']}" for f in errors[:5])
    return f"{path}: {len(errors)} error{'s' if len(errors) > 1 else ''} ({listed})"


if __name__ == "__main__":
    text = check(sys.argv[1])
    print(text)
    sys.exit(0 if text.endswith(": OK") else 1)
