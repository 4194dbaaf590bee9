"""Reports no places: every finding comes without a seq, as a checker that judges the
whole log reports it (right rules, no location). Never a wrong-place defect."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import main, run_with  # noqa: E402


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [{**f, "seq": None} for f in findings]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
