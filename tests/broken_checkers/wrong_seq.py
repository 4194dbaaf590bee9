"""Reports the wrong place: every E2 (seq not contiguous) finding names the seq after the real one."""

from __future__ import annotations

import sys

from tests.broken_checkers._base import main, run_with


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [
        {**f, "seq": f["seq"] + 1} if f["rule"] == "E2" and isinstance(f["seq"], int) else f for f in findings
    ]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
