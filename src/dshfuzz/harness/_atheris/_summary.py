"""The self-describing record of a fuzzing run: ``summary.json`` and ``summary.md``."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dshfuzz import __version__
from dshfuzz._atomic import write_atomic

from ._findings import HANG_SECONDS, RSS_LIMIT_MB, Finding
from ._libfuzzer import FuzzStats

__all__ = ["SUMMARY_FORMAT", "AtherisSummary", "TargetSummary"]

SUMMARY_FORMAT = "dshfuzz-atheris-summary/1"


@dataclass(frozen=True, slots=True)
class TargetSummary:
    """One target's run: libFuzzer's figures summed over its sessions (it restarts after each finding)."""

    target: str
    stats: FuzzStats
    sessions: int
    seeds: int
    findings: tuple[Finding, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            **self.stats.to_json(),
            "sessions": self.sessions,
            "seeds": self.seeds,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class AtherisSummary:
    """A whole ``dshfuzz atheris`` run: what was asked (``settings``) and what each target did."""

    settings: dict[str, Any]
    targets: tuple[TargetSummary, ...]

    @property
    def findings(self) -> int:
        return sum(len(t.findings) for t in self.targets)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SUMMARY_FORMAT,
            "dshfuzzVersion": __version__,
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "system": platform.system(),
            },
            "limits": {"hangSeconds": HANG_SECONDS, "rssLimitMb": RSS_LIMIT_MB},
            "settings": self.settings,
            "findings": self.findings,
            "targets": [t.to_json() for t in self.targets],
        }

    def to_markdown(self) -> str:
        lines = [
            "# dshfuzz atheris",
            "",
            (
                f"Settings: {', '.join(f'{k}={v}' for k, v in self.settings.items())}; "
                f"a finding is a crash, a hang over {HANG_SECONDS} s or a blow-up over {RSS_LIMIT_MB} MB."
            ),
            "",
            "| target | executions | s | CPU s | exec/s | exec/CPU s | cov | ft | corpus | RSS MB | found |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for t in self.targets:
            s = t.stats
            lines.append(
                f"| {t.target} | {s.executions} | {s.seconds:.0f} | {s.cpu_seconds:.0f} | "
                f"{s.exec_per_sec:.0f} | {s.exec_per_cpu_sec:.0f} | {s.coverage} | {s.features} | "
                f"{s.corpus_units} | {s.peak_rss_mb} | {len(t.findings)} |"
            )
        for t in self.targets:
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

    def write(self, out: Path) -> tuple[Path, Path]:
        """Write ``summary.json`` and ``summary.md`` into ``out`` (atomically)."""
        return (
            write_atomic(out / "summary.json", json.dumps(self.to_json(), indent=1) + "\n"),
            write_atomic(out / "summary.md", self.to_markdown()),
        )
