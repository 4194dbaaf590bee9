"""Shared plumbing: run the built-in checker, let a defect edit its findings, print JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from dshfuzz.checker import check_log
from dshfuzz.model import read_log

Defect = Callable[[Any, list[dict[str, Any]]], list[dict[str, Any]]]


def run_with(defect: Defect, path: str) -> dict[str, Any]:
    log = read_log(path)
    findings = [
        {"rule": str(f.rule), "severity": str(f.severity), "seq": f.seq}
        for f in check_log(log).findings
    ]
    return {"findings": defect(log, findings)}


def main(defect: Defect) -> int:
    report = run_with(defect, sys.argv[1])
    print(json.dumps(report))
    return 1 if any(f["severity"] == "error" for f in report["findings"]) else 0
