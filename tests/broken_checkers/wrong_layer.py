"""Says the wrong layers: every E2 (seq not contiguous) finding's refusedBy names the token meter,
which never checks a seq, instead of the layers that refuse the gap."""

from __future__ import annotations

import json
import sys
from typing import Any

from dshfuzz.checker import check_log
from dshfuzz.model import read_log


def check(path: str) -> dict[str, Any]:
    findings = [
        {"rule": str(f.rule), "severity": str(f.severity), "seq": f.seq, "causedBy": f.caused_by,
         "refusedBy": ["meter"] if str(f.rule) == "E2" else [str(layer) for layer in f.refused_by]}
        for f in check_log(read_log(path)).findings
    ]
    return {"findings": findings}


if __name__ == "__main__":
    report = check(sys.argv[1])
    print(json.dumps(report))
    sys.exit(1 if any(f["severity"] == "error" for f in report["findings"]) else 0)
