"""Crashes on some inputs: any log holding a compaction/prune event raises KeyError."""

from __future__ import annotations

import sys

from tests.broken_checkers._base import main, run_with


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    for event in log.events:
        if event.type == "compaction/prune":
            raise KeyError("shadowedTokenCount")
    return findings


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
