"""Raises a false alarm: reports T3 (step key reuse) on any turn with three or more steps."""

from __future__ import annotations

import sys

from tests.broken_checkers._base import main, run_with


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    steps: dict[object, int] = {}
    for event in log.events:
        data = event.data
        if event.type == "step/start" and isinstance(data, dict):
            steps[data.get("turn")] = steps.get(data.get("turn"), 0) + 1
            if steps[data.get("turn")] == 3:
                findings = [*findings, {"rule": "T3", "severity": "error", "seq": event.seq}]
    return findings


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
