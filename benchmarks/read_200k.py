"""``read_log`` of the 200k-event synthetic log vs the official loader, in one run.

    .venv/bin/python benchmarks/read_200k.py [--repeats 5] [--events 200000]

Builds ``.dshfuzz-cache/synth-<events>.jsonl.zstd`` once (``benchmarks/synth.py``),
then measures, interleaved so that machine load hits every side alike:

- ours: ``read_log`` into the model (wall time, median of ``--repeats``), also with
  the full collector pass that its paused collector defers (``gc.collect()`` after);
- official warm: the bridge server's own timing of its ``load`` op (readPrefix +
  prepareCore + Session.fromRestore) on the same file, median of ``--repeats``;
- official byte layer warm: ``readPrefix`` alone, the part ``read_log`` models,
  timed inside one Node process (``benchmarks/official_load.mjs``);
- official cold: a fresh ``node`` process loading the file once (start-up,
  imports and load), median of ``--repeats``;
- ours, memory: the peak RSS (``os.wait4``) of a fresh Python process that only
  runs ``read_log`` on the file, and of the official cold process.

It also prices the exact-JSON layer over the same log: ``loads`` (orjson plus the
exactness vetting, per line) against bare ``orjson.loads``, and ``dumps`` (orjson
plus the float/index-key scan) against bare ``orjson.dumps`` over every event.

Prints a JSON summary and the Markdown block recorded in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

import orjson  # noqa: E402

from dshfuzz.model import dumps, loads, read_log  # noqa: E402
from dshfuzz.oracle.official import OfficialOracle  # noqa: E402
from dshfuzz.oracle.official._server import node_executable  # noqa: E402
from synth import write_synth  # noqa: E402

TIMER = REPO / "benchmarks" / "official_load.mjs"


def cached_log(events: int) -> Path:
    prefix = REPO / ".dshfuzz-cache" / f"synth-{events // 1000}k"
    target = prefix.with_name(prefix.name + ".jsonl.zstd")
    if not target.exists():
        write_synth(prefix, events=events)
    return target


def time_ours(path: Path) -> tuple[float, float]:
    """``read_log`` wall time, and the same plus the collector pass it defers (ms)."""
    gc.collect()
    started = time.perf_counter()
    log = read_log(path)
    elapsed = time.perf_counter() - started
    gc.collect()
    with_collection = time.perf_counter() - started
    if log.refusal is not None or log.committed_events != len(log.events):
        raise SystemExit(f"benchmark log does not read cleanly: {log.refusal}")
    return elapsed * 1000, with_collection * 1000


def official_process(path: Path, repeats: int) -> tuple[float, dict[str, list[float]]]:
    started = time.perf_counter()
    out = subprocess.run([node_executable(), str(TIMER), str(path), str(repeats)], capture_output=True, text=True, check=True)
    return (time.perf_counter() - started) * 1000, json.loads(out.stdout)


def peak_rss_mb(cmd: list[str]) -> float:
    """Peak resident set of one fresh process running ``cmd`` (MB, from ``wait4``)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed")
    return usage.ru_maxrss / 1024


def _median_ms(repeats: int, work: Callable[[], object]) -> float:
    # The collector is paused so that its passes over the large live log do not drown the codec cost.
    times = []
    gc.disable()
    try:
        for _ in range(repeats):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
    finally:
        gc.enable()
    return statistics.median(times) * 1000


def json_overhead(path: Path, repeats: int = 3) -> dict[str, float]:
    log = read_log(path)
    lines = [line.text.encode() for line in log.lines]
    events = [e.raw for e in log.events]
    costs = {
        "orjson_loads_ms": _median_ms(repeats, lambda: [orjson.loads(x) for x in lines]),
        "loads_ms": _median_ms(repeats, lambda: [loads(x) for x in lines]),
        "orjson_dumps_ms": _median_ms(repeats, lambda: [orjson.dumps(e) for e in events]),
        "dumps_ms": _median_ms(repeats, lambda: [dumps(e) for e in events]),
    }
    costs["loads_vs_orjson"] = costs["loads_ms"] / costs["orjson_loads_ms"]
    costs["dumps_vs_orjson"] = costs["dumps_ms"] / costs["orjson_dumps_ms"]
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args()
    path = cached_log(args.events)
    # A forked child's peak RSS counts its parent's at the fork, so these run while this process is small.
    reader = f"import sys; sys.path.insert(0, {str(REPO / 'src')!r}); from dshfuzz.model import read_log; read_log({str(path)!r})"
    rss = {
        "ours_read_log_peak_rss_mb": peak_rss_mb([sys.executable, "-c", reader]),
        "official_cold_peak_rss_mb": peak_rss_mb([node_executable(), str(TIMER), str(path), "1"]),
    }
    ours: list[float] = []
    ours_collected: list[float] = []
    warm: list[float] = []
    cold: list[float] = []
    with OfficialOracle() as oracle:
        oracle.call("load", path=str(path))  # warm the server's imports and JIT
        time_ours(path)
        for _ in range(args.repeats):
            read_ms, collected_ms = time_ours(path)
            ours.append(read_ms)
            ours_collected.append(collected_ms)
            warm.append(oracle.call("load", path=str(path)).ms)
            cold.append(official_process(path, 1)[0])
    _, inside = official_process(path, args.repeats + 1)
    json_costs = json_overhead(path)
    prefix_warm = inside["readPrefixMs"][1:]
    result = {
        "file": str(path.relative_to(REPO)),
        "bytes": path.stat().st_size,
        "events": inside["events"],
        "ours_read_log_ms": statistics.median(ours),
        "ours_read_log_plus_collection_ms": statistics.median(ours_collected),
        "official_load_warm_ms": statistics.median(warm),
        "official_readPrefix_warm_ms": statistics.median(prefix_warm),
        "official_load_cold_process_ms": statistics.median(cold),
    }
    result["ratio_vs_load_warm"] = result["ours_read_log_ms"] / result["official_load_warm_ms"]
    result["ratio_vs_readPrefix_warm"] = result["ours_read_log_ms"] / result["official_readPrefix_warm_ms"]
    result["ratio_vs_load_cold"] = result["ours_read_log_ms"] / result["official_load_cold_process_ms"]
    result["collected_ratio_vs_load_warm"] = result["ours_read_log_plus_collection_ms"] / result["official_load_warm_ms"]
    result.update(rss)
    result.update(json_costs)
    print(json.dumps(result, indent=2))
    print(_markdown(result, args))
    return 0


def _markdown(r: dict[str, object], args: argparse.Namespace) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} vCPU, Python {platform.python_version()}, load avg {os.getloadavg()[0]:.1f}"
    return "\n".join(
        [
            "",
            f"`.venv/bin/python benchmarks/read_200k.py --repeats {args.repeats}` ({machine}); "
            f"{r['events']} events, {r['bytes']} bytes zstd; medians of {args.repeats}, ms:",
            "",
            "| measure | ms | ours / this |",
            "|---|---|---|",
            f"| ours: `read_log` into the model | {r['ours_read_log_ms']:.0f} | 1.00 |",
            f"| ours incl. the full collection it defers | {r['ours_read_log_plus_collection_ms']:.0f} | - |",
            f"| official `load` (bridge server, warm) | {r['official_load_warm_ms']:.0f} | {r['ratio_vs_load_warm']:.2f} |",
            f"| official `readPrefix` only (warm) | {r['official_readPrefix_warm_ms']:.0f} | {r['ratio_vs_readPrefix_warm']:.2f} |",
            f"| official load, fresh `node` process (cold) | {r['official_load_cold_process_ms']:.0f} | {r['ratio_vs_load_cold']:.2f} |",
            "",
            f"Including the deferred collection, ours / official warm load = {r['collected_ratio_vs_load_warm']:.2f}.",
            "",
            f"Peak RSS of a fresh process: `read_log` alone {r['ours_read_log_peak_rss_mb']:.0f} MB; the official cold load "
            f"{r['official_cold_peak_rss_mb']:.0f} MB.",
            "",
            f"Exact JSON over the same log: `loads` per line {r['loads_ms']:.0f} ms = {r['loads_vs_orjson']:.2f}x bare "
            f"`orjson.loads`; `dumps` per event {r['dumps_ms']:.0f} ms = {r['dumps_vs_orjson']:.2f}x bare `orjson.dumps`.",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
