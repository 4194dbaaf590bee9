"""Runs any broken checker of this package in the batch protocol (``{logs}``).

``python tests/broken_checkers/batch.py [--array] MODULE LOG...`` prints one report
per log, ``MODULE.check(LOG)`` with ``file`` set to the path as given: JSON lines, or
one JSON array with ``--array``. The defect travels as is: a module that raises
(``crashes``) ends the whole invocation with a traceback, so every log of that batch
crashes, as an uncaught exception in a real batch checker does. Spec:
``cmd:'python tests/broken_checkers/batch.py miss_rule {logs}'``.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv: list[str]) -> int:
    array = bool(argv) and argv[0] == "--array"
    if array:
        argv = argv[1:]
    if not argv:
        print("usage: batch.py [--array] MODULE LOG...", file=sys.stderr)
        return 2
    module = importlib.import_module(f"tests.broken_checkers.{argv[0]}")
    reports = []
    for path in argv[1:]:
        report = module.check(path)
        if isinstance(report, str):  # a checker printing text prints text here too
            print(report)
            continue
        reports.append({"file": path, **report})
    if array:
        print(json.dumps(reports))
    else:
        for report in reports:
            print(json.dumps(report))
    errors = any(f.get("severity") == "error" for r in reports for f in r.get("findings", []))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
