"""``dshfuzz generate``: write valid session logs drawn from the generators.

Deterministic for ``--seed``: the same command writes the same bytes. Files are
``NNNN.jsonl`` (or ``NNNN.jsonl.zstd``), each written atomically, exactly as the
official writer lays them out (packed chunk rows; one zstd frame per batch).
``--stats`` prints coverage and the comparison with the real sessions.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HELP = "write valid session logs drawn from the generators"

_REAL_SESSIONS_ENV = "DSHFUZZ_REAL_SESSIONS"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "every log written",
        2: "usage error (a negative --count, a bad --events range) or --out cannot be written",
    })
    parser.add_argument("--count", type=int, default=100, help="number of logs (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--out", type=Path, required=True, help="output directory (created if missing)")
    parser.add_argument("--zstd", action="store_true", help="write .jsonl.zstd instead of .jsonl")
    parser.add_argument(
        "--events",
        type=_event_range,
        default=(1, 250),
        metavar="LO..HI",
        help="events per log (default 1..250; a range from 0 admits header-only sessions, "
        "a real state that the checker's Z3 warns of)",
    )
    parser.add_argument(
        "--format-version",
        type=int,
        choices=(0, 1),
        default=0,
        help="header version (1: v0 rows under a v1 header)",
    )
    parser.add_argument(
        "--stats", action="store_true", help="print coverage and the comparison with the real sessions"
    )
    parser.add_argument(
        "--real",
        type=Path,
        default=None,
        help=f"real sessions for --stats (default ${_REAL_SESSIONS_ENV}, else the shared concrete/ set)",
    )


def _event_range(text: str) -> tuple[int, int]:
    lo, sep, hi = text.partition("..")
    try:
        low, high = int(lo), int(hi) if sep else int(lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO..HI, got {text!r}") from None
    if low < 0 or high < low:
        raise argparse.ArgumentTypeError(f"expected 0 <= LO <= HI, got {text!r}")
    return low, high


def _real_dir(given: Path | None) -> Path | None:
    if given is not None:
        return given
    if os.environ.get(_REAL_SESSIONS_ENV):
        return Path(os.environ[_REAL_SESSIONS_ENV])
    guess = Path(__file__).resolve().parents[4] / "shared" / "real-sessions" / "concrete"
    return guess if guess.is_dir() else None


def run(args: argparse.Namespace) -> int:
    from dshfuzz.generators import coverage_stats, generate, real_shapes
    from dshfuzz.model import write_atomic
    from dshfuzz.report import coverage_text

    if args.count < 0:
        print("dshfuzz generate: --count must be >= 0", file=sys.stderr)
        return 2
    lo, hi = args.events
    suffix = ".jsonl.zstd" if args.zstd else ".jsonl"
    logs = []
    try:
        for index, log in enumerate(
            generate(args.count, args.seed, format_version=args.format_version, min_events=lo, max_events=hi)
        ):
            data = log.to_zstd() if args.zstd else log.to_jsonl()
            write_atomic(args.out / f"{index:04d}{suffix}", data)
            if args.stats:
                logs.append(log)
    except ValueError as exc:
        print(f"dshfuzz generate: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dshfuzz generate: cannot write to {args.out}: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {args.count} logs to {args.out} (seed {args.seed}, format v{args.format_version}, {suffix})"
    )
    if args.stats:
        real_dir = _real_dir(args.real)
        real = real_shapes(real_dir) if real_dir is not None and real_dir.is_dir() else None
        print(coverage_text(coverage_stats(logs), real))
        if real is None:
            print(
                f"(no real sessions found; pass --real DIR or set ${_REAL_SESSIONS_ENV} for the comparison)"
            )
    return 0
