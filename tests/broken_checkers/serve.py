"""Serves any broken checker of this package over the serve protocol (dshfuzz-checker/1).

``python tests/broken_checkers/serve.py MODULE`` (or ``python -m
tests.broken_checkers.serve MODULE`` from the repository root) answers each request
with ``MODULE.check(path)``: the built-in checker with that module's defect. The
handshake claims every registry id (or the module's ``RULES``), and the module's ``LAYERS``
when it has them (the official layers it answers for). The defect travels
as is: a module that raises (``crashes``) kills the server, as an uncaught exception
kills a real one; a module that answers text (``plain_text``) answers a text line.
Spec: ``serve:'python tests/broken_checkers/serve.py miss_rule'``.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: serve.py MODULE (a module of tests/broken_checkers)", file=sys.stderr)
        return 2
    module = importlib.import_module(f"tests.broken_checkers.{argv[0]}")
    from dshfuzz.checker import RULES

    hello = {"protocol": "dshfuzz-checker/1", "rules": list(getattr(module, "RULES", [str(rid) for rid in RULES]))}
    if hasattr(module, "LAYERS"):
        hello["layers"] = list(module.LAYERS)
    out = sys.stdout
    out.write(json.dumps(hello) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        report = module.check(request["path"])
        if isinstance(report, str):
            out.write(report.replace("\n", " ") + "\n")
        else:
            out.write(json.dumps({"id": request["id"], **report}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
