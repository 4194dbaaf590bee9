"""Reading libFuzzer's output: status lines, final statistics, errors and artefacts.

libFuzzer reports on stderr, one line at a time (``#4096 pulse cov: 1114 ft: 2934
corp: 230/136Kb ... exec/s: 682 rss: 174Mb``); with ``-print_final_stats=1`` it
ends with ``stat::`` lines, which are authoritative for the execution count. A
failing input is announced by ``==PID== ERROR: libFuzzer: <reason>`` and saved
where ``Test unit written to <path>`` says; atheris prints the Python traceback
of an uncaught exception after ``=== Uncaught Python exception: ===``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

__all__ = ["ArtefactKind", "FuzzStats", "OutputParser", "artefact_kind"]

ArtefactKind = Literal["crash", "timeout", "oom"]

_STATUS = re.compile(
    r"^#(?P<execs>\d+)\s+\w+\s+cov: (?P<cov>\d+) ft: (?P<ft>\d+) "
    r"corp: (?P<units>\d+)/(?P<size>\d+)(?P<unit>b|Kb|Mb)"
    r".*?exec/s: (?P<rate>\d+) rss: (?P<rss>\d+)Mb"
)
_STAT = re.compile(r"^stat::(?P<key>\w+):\s+(?P<value>\d+)")
_DONE = re.compile(r"^Done (?P<runs>\d+) runs in (?P<seconds>\d+) second")
_ERROR = re.compile(r"^==\d+== ERROR: libFuzzer: (?P<reason>.*)")
_WRITTEN = re.compile(r"Test unit written to (?P<path>\S+)")
_STACK_START = re.compile(r"^ ?=== (?:Uncaught Python exception:|Timeout: .*) ===$")
_STACK_END = ("==", "MS:", "ALARM:", "SUMMARY:", "#", "Done ")
_UNIT_BYTES = {"b": 1, "Kb": 1024, "Mb": 1024 * 1024}
_PREFIXES: dict[str, ArtefactKind] = {"crash-": "crash", "timeout-": "timeout", "oom-": "oom"}


def artefact_kind(path: Path) -> ArtefactKind | None:
    """What libFuzzer saved ``path`` for, from its name; ``None`` for anything else."""
    return next((kind for prefix, kind in _PREFIXES.items() if path.name.startswith(prefix)), None)


@dataclass(frozen=True, slots=True)
class FuzzStats:
    """What libFuzzer reported about one run (or the sum of several, see :meth:`plus`).

    ``coverage`` is libFuzzer's ``cov:`` (instrumented edges reached) and
    ``features`` its ``ft:`` (edges with hit-count buckets); ``corpus_units`` and
    ``corpus_bytes`` the in-memory corpus at the end. ``seconds`` is wall time and
    ``cpu_seconds`` the fuzzer process's CPU time, both including its start-up;
    on a shared machine the CPU rate is the one that compares across runs.
    """

    executions: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    coverage: int = 0
    features: int = 0
    corpus_units: int = 0
    corpus_bytes: int = 0
    new_units: int = 0
    peak_rss_mb: int = 0

    @property
    def exec_per_sec(self) -> float:
        return self.executions / self.seconds if self.seconds > 0 else 0.0

    @property
    def exec_per_cpu_sec(self) -> float:
        return self.executions / self.cpu_seconds if self.cpu_seconds > 0 else 0.0

    def plus(self, later: FuzzStats) -> FuzzStats:
        """This run followed by ``later`` on the same corpus (coverage is the later's: it kept the corpus)."""
        return replace(
            later,
            executions=self.executions + later.executions,
            seconds=self.seconds + later.seconds,
            cpu_seconds=self.cpu_seconds + later.cpu_seconds,
            coverage=max(self.coverage, later.coverage),
            features=max(self.features, later.features),
            new_units=self.new_units + later.new_units,
            peak_rss_mb=max(self.peak_rss_mb, later.peak_rss_mb),
        )

    def to_json(self) -> dict[str, float | int]:
        return {
            "executions": self.executions,
            "seconds": round(self.seconds, 2),
            "cpuSeconds": round(self.cpu_seconds, 2),
            "execPerSec": round(self.exec_per_sec, 1),
            "execPerCpuSec": round(self.exec_per_cpu_sec, 1),
            "coverage": self.coverage,
            "features": self.features,
            "corpusUnits": self.corpus_units,
            "corpusBytes": self.corpus_bytes,
            "newUnits": self.new_units,
            "peakRssMb": self.peak_rss_mb,
        }


@dataclass(slots=True)
class OutputParser:
    """Feed libFuzzer's stderr line by line; read what it said from the attributes.

    ``status`` is the latest status line (a :class:`FuzzStats` without
    ``seconds``); ``error`` the libFuzzer error reason; ``traceback`` the Python
    stack atheris printed (of the uncaught exception, or of the hung thread);
    ``artefacts`` the files libFuzzer wrote.
    """

    status: FuzzStats = field(default_factory=FuzzStats)
    final: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    traceback: list[str] = field(default_factory=list)
    artefacts: list[Path] = field(default_factory=list)
    _in_traceback: bool = False

    def feed(self, line: str) -> FuzzStats | None:
        """Take one line; returns the new status when the line was a status line."""
        line = line.rstrip("\n")
        if self._in_traceback:
            if not line.startswith(_STACK_END):
                if line.strip():
                    self.traceback.append(line)
                return None
            self._in_traceback = False
        if _STACK_START.match(line):  # the latest stack only: a slow mutation dumps one without failing
            self._in_traceback = True
            self.traceback = [line.strip()]
        elif m := _STATUS.match(line):
            self.status = FuzzStats(
                executions=int(m["execs"]),
                coverage=int(m["cov"]),
                features=int(m["ft"]),
                corpus_units=int(m["units"]),
                corpus_bytes=int(m["size"]) * _UNIT_BYTES[m["unit"]],
                peak_rss_mb=int(m["rss"]),
            )
            return self.status
        elif m := _STAT.match(line):
            self.final[m["key"]] = int(m["value"])
        elif m := _ERROR.match(line):
            self.error = m["reason"].strip()
        elif m := _WRITTEN.search(line):
            self.artefacts.append(Path(m["path"]))
        return None

    def stats(self, seconds: float, cpu_seconds: float) -> FuzzStats:
        """The run's figures: the final ``stat::`` lines where printed, else the last status line."""
        return replace(
            self.status,
            executions=self.final.get("number_of_executed_units", self.status.executions),
            seconds=seconds,
            cpu_seconds=cpu_seconds,
            new_units=self.final.get("new_units_added", 0),
            peak_rss_mb=max(self.final.get("peak_rss_mb", 0), self.status.peak_rss_mb),
        )
