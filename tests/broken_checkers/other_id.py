"""Refuses under another id: every S5 finding (a replace leaving a shadowed node
uncovered) is reported as S8. The log is still refused, so this is a rule-attribution
difference, never a miss."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import main, run_with  # noqa: E402

RENAMED = {"S5": "S8"}


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [{**f, "rule": RENAMED.get(f["rule"], f["rule"])} if f["severity"] == "error" else f for f in findings]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
