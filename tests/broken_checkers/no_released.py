"""Answers for every official layer but the released migration: it has none of the
migration pre-checks (G1-G5), and says so, in ``RULES`` and ``LAYERS`` (which
``serve.py`` puts in its handshake). A log only released refuses is out of its scope,
never its miss."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``tests.broken_checkers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dshfuzz.checker import RULES as REGISTRY  # noqa: E402
from dshfuzz.contracts.layers import OfficialLayer  # noqa: E402
from tests.broken_checkers._base import main, run_with  # noqa: E402

PRECHECKS = frozenset({"G1", "G2", "G3", "G4", "G5"})
RULES = sorted(str(rid) for rid in REGISTRY if str(rid) not in PRECHECKS)
LAYERS = sorted(str(layer) for layer in OfficialLayer if layer is not OfficialLayer.RELEASED)


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    return [f for f in findings if f["rule"] not in PRECHECKS]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
