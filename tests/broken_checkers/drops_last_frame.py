"""Loses the end of a zstd log without a word: it never decodes the last frame of a
``.jsonl.zstd`` log (when the log has more than one), judges the rest with the built-in
checker, reports what that finds and how many events it judged, and nothing about the frame
it skipped. A plain ``.jsonl`` log it judges whole. What ``silent-loss`` is measured against:
the official loader recovers that frame's events too."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dshfuzz.checker import check_stream
from dshfuzz.model import compression_by_name, scan_frames


def check(path: str) -> dict[str, Any]:
    data = Path(path).read_bytes()
    compression = compression_by_name(path)
    if compression == "zstd":
        frames = scan_frames(data)
        if len(frames) > 1:
            data = data[: frames[-1].offset]  # the defect: the last frame is never read
    report = check_stream(data, compression=compression)
    findings = [
        {"rule": str(f.rule), "severity": str(f.severity), "seq": f.seq, "causedBy": f.caused_by}
        for f in report.findings
    ]
    return {"findings": findings, "events": report.events}


if __name__ == "__main__":
    report = check(sys.argv[1])
    print(json.dumps(report))
    sys.exit(1 if any(f["severity"] == "error" for f in report["findings"]) else 0)
