"""The self-describing record of a fuzzing run (``dshfuzz.report`` writes it as ``summary.json`` and ``summary.md``)."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from typing import Any

from dshfuzz import __version__

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
    hang_seconds: float = HANG_SECONDS
    """An input that runs longer than this is a finding (a hang)."""
    rss_limit_mb: int = RSS_LIMIT_MB
    """A process that grows past this is a finding (a memory blow-up)."""

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
            "limits": {"hangSeconds": self.hang_seconds, "rssLimitMb": self.rss_limit_mb},
            "settings": self.settings,
            "findings": self.findings,
            "targets": [t.to_json() for t in self.targets],
        }
