"""Broken three ways, as a real checker is: S5 (a replace that leaves a shadowed node
uncovered), T3 (a reused step key) and E2 (a seq gap or repeat) never fire. Three root
causes, whatever each shows in the layers: what a campaign's cause count is measured against."""

from __future__ import annotations

import sys

from tests.broken_checkers._base import main, run_with

MISSED = frozenset({"S5", "T3", "E2"})


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [f for f in findings if f["rule"] not in MISSED]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
