"""A coverage-guided fuzzing run rendered: ``summary.md``, ``summary.json`` and the progress lines.

The harness returns an :class:`~dshfuzz.harness.AtherisSummary` and prints nothing; these
turn it (and libFuzzer's status as it runs) into text.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dshfuzz._atomic import write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable

    from dshfuzz.harness import AtherisSummary

__all__ = ["atheris_markdown", "atheris_status", "write_atheris_summary"]


def atheris_markdown(summary: AtherisSummary) -> str:
    """``summary.md``: the settings, one table row per target, then each finding with its input and traceback."""
    lines = [
        "# dshfuzz atheris",
        "",
        (
            f"Settings: {', '.join(f'{k}={v}' for k, v in summary.settings.items())}; "
            f"a finding is a crash, a hang over {summary.hang_seconds} s or a blow-up over "
            f"{summary.rss_limit_mb} MB."
        ),
        "",
        "| target | executions | s | CPU s | exec/s | exec/CPU s | cov | ft | corpus | RSS MB | found |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in summary.targets:
        s = t.stats
        lines.append(
            f"| {t.target} | {s.executions} | {s.seconds:.0f} | {s.cpu_seconds:.0f} | "
            f"{s.exec_per_sec:.0f} | {s.exec_per_cpu_sec:.0f} | {s.coverage} | {s.features} | "
            f"{s.corpus_units} | {s.peak_rss_mb} | {len(t.findings)} |"
        )
    for t in summary.targets:
        for f in t.findings:
            lines += [
                "",
                f"## {f.kind} in {f.target}: {f.reason}",
                "",
                f"Input ({f.size} B, minimised from {f.original_size}): `{f.corpus_file or f.artefact}`",
                "",
                "```",
                f.traceback,
                "```",
            ]
    return "\n".join(lines) + "\n"


def write_atheris_summary(out: Path, summary: AtherisSummary) -> tuple[Path, Path]:
    """Write ``summary.json`` and ``summary.md`` into ``out`` (atomically); raises OSError."""
    return (
        write_atomic(out / "summary.json", json.dumps(summary.to_json(), indent=1) + "\n"),
        write_atomic(out / "summary.md", atheris_markdown(summary)),
    )


def atheris_status(stream: TextIO | None = None, every: float = 5.0) -> Callable[[str, Any], None]:
    """A status callback for a run: one line per target on ``stream`` (stderr by default), at most
    one per target every ``every`` seconds; safe to call from the run's threads."""
    last: dict[str, float] = {}
    lock = threading.Lock()

    def show(target: str, stats: Any) -> None:
        now = time.monotonic()
        with lock:
            if now - last.get(target, 0.0) < every:
                return
            last[target] = now
        print(
            f"{target}: #{stats.executions} cov {stats.coverage} ft {stats.features} "
            f"corpus {stats.corpus_units} rss {stats.peak_rss_mb}MB",
            file=stream or sys.stderr,
            flush=True,
        )

    return show
