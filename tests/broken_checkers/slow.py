"""Slow: sleeps N seconds on every log, then reports what the built-in checker reports.

N is ``--seconds N`` before the log, else ``$DSHFUZZ_SLOW_SECONDS``, else 5. Per-log
command form: ``cmd:'python tests/broken_checkers/slow.py {log}'``. A campaign
against it must still end within its budget.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import main, run_with  # noqa: E402

DEFAULT_SECONDS = 5.0


def seconds() -> float:
    return float(os.environ.get("DSHFUZZ_SLOW_SECONDS", DEFAULT_SECONDS))


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return findings


def check(path: str) -> dict:
    time.sleep(seconds())
    return run_with(defect, path)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--seconds":
        os.environ["DSHFUZZ_SLOW_SECONDS"] = sys.argv[2]
        del sys.argv[1:3]
    time.sleep(seconds())
    sys.exit(main(defect))
