"""Probe the reader and checker with one huge line of a repeated pattern, under the production limits.

    .venv/bin/python benchmarks/hostile_probe.py [--bytes] [--patterns] [--dense]

Each case is a zstd log: the header frame, then one frame whose plaintext is a
single line of a repeated pattern (small on disk: zstd encodes the repetition
in a few hundred bytes to a few KiB, which is how a fuzzer reaches such lines).
Every case runs in a fresh process (``--one NAME``), so its peak RSS is its own:

- ``--bytes``: every byte value 0-255 repeated over 16 MiB minus 200 bytes (RLE
  blocks), then a newline; prints only the cases slower than 0.3 s;
- ``--patterns``: multi-byte patterns (``["a",``, ``{"a":1,``, ``[[],``, ...) over 8 MiB;
- ``--dense``: valid JSON of millions of small values over 15 MiB (``[{},{},...]``).

A case is a finding for the fuzzers when it takes over 2 s or 768 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT / "src"))

MIB = 1 << 20
PATTERNS = {
    "strings": b'["a",',
    "objects-with-ints": b'{"a":1,',
    "empty-arrays": b"[[],",
    "escaped-nul": b'"\\u0000',
    "floats": b"1e1,",
    "int-arrays": b"[1,",
    "nested-empty-keys": b'{"":{},',
    "keys": b'"a":',
    "object-arrays": b"[{},",
    "escaped-quotes": b'\\"',
    "events": b'{"type":"turn/start","seq":0,"time":0,"data":{}}\n',
    "empty-objects-per-line": b"{}\n",
}
DENSE = {
    "dense-strings": (b"[", b'"ab",', b"1]"),
    "dense-ints": (b"[", b"7,", b"1]"),
    "dense-floats": (b"[", b"1.5,", b"1]"),
    "dense-objects": (b"[", b"{},", b"1]"),
}
HEADER = b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\n'


def _case(name: str) -> bytes:
    from dshfuzz.model import compress_frame, repeat_frame

    header = compress_frame(HEADER)
    if name.startswith("byte-"):
        return header + repeat_frame(int(name[5:]), 16 * MIB - 200) + compress_frame(b"\n")
    if name in PATTERNS:
        pattern = PATTERNS[name]
        return header + compress_frame(pattern * (8 * MIB // len(pattern)) + b"\n")
    head, unit, tail = DENSE[name]
    return header + compress_frame(head + unit * (15 * MIB // len(unit)) + tail + b"\n")


def one(name: str) -> None:
    """Run one case in this process and print its figures as JSON."""
    from dshfuzz.checker import check_log
    from dshfuzz.model import parse_log

    data = _case(name)
    start = time.perf_counter()
    log = parse_log(data, compression="zstd")
    read = time.perf_counter()
    report = check_log(log)
    done = time.perf_counter()
    print(json.dumps({
        "case": name, "bytes": len(data), "readS": round(read - start, 3), "checkS": round(done - read, 3),
        "peakMB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "lines": len(log.lines),
        "limit": log.limit.kind if log.limit else None,
        "rules": sorted({f.rule.value for f in report.findings if f.is_error}),
    }))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", action="store_true")
    parser.add_argument("--patterns", action="store_true")
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return 0
    names = [f"byte-{b}" for b in range(256)] if args.bytes else []
    names += list(PATTERNS) if args.patterns else []
    names += list(DENSE) if args.dense else []
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| case | file bytes | read s | check s | peak RSS MB | lines | limit | error rules |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name in names:
        out = subprocess.run([sys.executable, __file__, "--one", name], check=True, capture_output=True, cwd=ROOT)
        r = json.loads(out.stdout)
        if name.startswith("byte-") and r["readS"] + r["checkS"] < 0.3:
            continue
        print(f"| {name} | {r['bytes']} | {r['readS']} | {r['checkS']} | {r['peakMB']} | {r['lines']} | "
              f"{r['limit'] or ''} | {' '.join(r['rules'])} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
