"""The memory floor a streaming checker could reach: peak RSS of reading a log whole (the
model as ``dshfuzz check`` builds it) against the same read with every event, line and row
dropped once read (the reader's ``_line`` patched), as a streaming reader would.

Usage: ``.venv/bin/python benchmarks/stream_floor.py LOG`` (each mode in a fresh process).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

_KEEP = 5000


def _measure(path: str, mode: str) -> dict[str, float]:
    from dshfuzz.model import _reader

    if mode == "dropped":
        line = _reader._Reader._line

        def dropping(self, raw, frame, offset, exact, shallow):  # noqa: ANN001 - the reader's signature
            line(self, raw, frame, offset, exact, shallow)
            log = self.log
            if len(log.events) > _KEEP:
                del log.events[:], log.rows[:], log.lines[1:]

        _reader._Reader._line = dropping
    start = time.perf_counter()
    _reader.read_log(path)
    return {"seconds": round(time.perf_counter() - start, 2),
            "peakMB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(_measure(sys.argv[1], sys.argv[2])))
        return
    path = sys.argv[1]
    out = {}
    for mode in ("whole", "dropped"):
        run = subprocess.run([sys.executable, __file__, path, mode], capture_output=True, text=True, check=True)
        out[mode] = json.loads(run.stdout)
    print(json.dumps({"log": path, **out}, indent=1))


if __name__ == "__main__":
    main()
