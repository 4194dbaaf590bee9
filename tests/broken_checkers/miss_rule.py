"""Misses one rule: S5 (a replace that leaves a shadowed node uncovered) never fires."""

from __future__ import annotations

import sys

from tests.broken_checkers._base import main, run_with

MISSED = "S5"


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [f for f in findings if f["rule"] != MISSED]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
