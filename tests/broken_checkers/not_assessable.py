"""Judges only format version 0: on a log whose header declares format version 1 or
later it answers "not assessable" (exit 3 with no report as a command; ``"assessable":
false`` as a function, a batch report or a serve reply). No verdict, so never a miss."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import run_with  # noqa: E402

NOT_ASSESSABLE = 3


def assessable(path: str) -> bool:
    from dshfuzz.model import read_log

    version = read_log(path).format_version
    return not (type(version) in (int, float) and version >= 1)


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return findings


def check(path: str) -> dict:
    if not assessable(path):
        return {"assessable": False, "findings": []}
    return run_with(defect, path)


if __name__ == "__main__":
    if not assessable(sys.argv[1]):
        sys.exit(NOT_ASSESSABLE)
    from tests.broken_checkers._base import main

    sys.exit(main(defect))
