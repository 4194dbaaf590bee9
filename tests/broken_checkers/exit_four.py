"""Exits 4 on a report that holds warnings and no error, as the seed-000 checker does on a
clean report carrying migration warnings: its own verdict, not a crash. ``--checker-exit
4=findings`` (or ``clean``) says so. Run as ``python tests/broken_checkers/exit_four.py LOG``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.broken_checkers._base import run_with  # noqa: E402


def main() -> int:
    report = run_with(lambda log, findings: findings, sys.argv[1])
    print(json.dumps(report))
    severities = {f["severity"] for f in report["findings"]}
    return 1 if "error" in severities else 4 if severities else 0


if __name__ == "__main__":
    sys.exit(main())
