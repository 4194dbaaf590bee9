"""Fails two unrelated ways, each answered as a ``serve:`` reply's ``error`` without a
traceback: a log with an unreadable line (R1) is "cannot read line N of PATH", a log whose
seqs repeat (E2) is "seq N repeats". Two causes, which a campaign must keep apart."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import run_with  # noqa: E402


def check(path: str) -> dict:
    report = run_with(lambda log, findings: findings, path)
    for f in report["findings"]:
        if f["rule"] == "R1":
            return {"error": f"cannot read line {f['seq'] or 0} of {path}: not JSON"}
    for f in report["findings"]:
        if f["rule"] == "E2":
            return {"error": f"seq {f['seq']} repeats an earlier one"}
    return report
