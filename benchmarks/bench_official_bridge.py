"""Throughput of the official bridge (``dshfuzz.oracle.official``).

    .venv/bin/python benchmarks/bench_official_bridge.py [--seconds 3]

Inline: 50-event logs (the first 50 events of the valid fixture, a prefix every
layer accepts) sent as JSON, sequentially (one round trip per log) and
pipelined (64 in flight). File ops: the 76-event valid fixture (.jsonl.zstd) by
path. Reference, measured in the same run: ``ping`` carrying the same 50-event
payload, i.e. the pure transport cost; every figure is also given as a ratio
to it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from dshfuzz.model import loads
from dshfuzz.oracle.official import OfficialOracle, Reply

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "fixtures"


def rate(fn, seconds: float) -> tuple[float, float]:
    """(calls per second, median server ms) of ``fn`` over about ``seconds``,
    after a warm-up of a quarter of that (V8 compiles the hot paths first)."""
    warm = time.perf_counter()
    while time.perf_counter() - warm < seconds / 4:
        fn()
    server_ms: list[float] = []
    n, t0 = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:
        server_ms.extend(fn())
        n += 1
    return n / elapsed, statistics.median(server_ms) if server_ms else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    lines = (FIXTURES / "valid-v0.unpacked.jsonl").read_text("utf-8").splitlines()
    header, events = loads(lines[0]), [loads(line) for line in lines[1:51]]
    zstd = str(FIXTURES / "valid-v0.jsonl.zstd")
    batch = 64

    with OfficialOracle() as oracle:
        verdicts = oracle.check(events=events, header=header)
        assert all(v.ok for v in verdicts.values()), {n: v.error for n, v in verdicts.items() if not v.ok}

        def one(op: str, **fields):
            return lambda: [oracle.call(op, **fields).ms]

        def piped(op: str, **fields):
            def go():
                replies = oracle.pipeline([{"op": op, **fields}] * batch, window=batch)
                return [r.ms for r in replies if isinstance(r, Reply)]

            return go

        rows = []
        ref_seq, _ = rate(one("ping", events=events), args.seconds)
        ref_pipe, _ = rate(piped("ping", events=events), args.seconds)
        ref_pipe *= batch
        for op in ("ping", "fold", "seed", "invariants", "meter", "inbox", "wire", "all"):
            seq, ms = rate(one(op, events=events, header=header), args.seconds)
            pipe, _ = rate(piped(op, events=events, header=header), args.seconds)
            pipe *= batch
            rows.append((f"inline `{op}`", seq, seq / ref_seq, pipe, pipe / ref_pipe, ms))
        for op in ("readRaw", "load", "loadApp", "released", "all"):
            seq, ms = rate(one(op, path=zstd), args.seconds)
            rows.append((f"file `{op}` (.zstd)", seq, seq / ref_seq, None, None, ms))

    print(f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 vCPU)")
    print(f"reference: ping with a 50-event payload, {ref_seq:.0f}/s sequential, {ref_pipe:.0f}/s pipelined\n")
    print("| op | sequential logs/s | x ping | pipelined logs/s | x ping | server median ms |")
    print("|---|---|---|---|---|---|")
    for name, seq, rseq, pipe, rpipe, ms in rows:
        pipe_cells = f"{pipe:.0f} | {rpipe:.2f}" if pipe is not None else "- | -"
        print(f"| {name} | {seq:.0f} | {rseq:.2f} | {pipe_cells} | {ms:.3f} |")


if __name__ == "__main__":
    main()
