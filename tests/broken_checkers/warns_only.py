"""Only warns where the released migration refuses: an unanswered tool call is reported,
by every pairing rule that sees it (W3, and P5 for the call ids that disagree), as a
warning. The rules fire, but a warning never explains a refusal, so released's refusal
of such a log is a miss."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import main, run_with  # noqa: E402

WARNED = frozenset({"W3", "P5"})


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [{**f, "severity": "warning"} if f["rule"] in WARNED else f for f in findings]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
