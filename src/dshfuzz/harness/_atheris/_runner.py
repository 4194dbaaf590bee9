"""Running libFuzzer on a target in a child process, and keeping what it finds.

``atheris.Fuzz()`` ends its process, so the fuzzer always runs in a child (see
``_child``), never in the caller's process. The runner streams the child's
stderr through :class:`OutputParser`, and after every failing input it
minimises the artefact with libFuzzer's own minimiser (``-minimize_crash=1``),
saves it in the corpus, and restarts libFuzzer on the same working corpus for
the rest of the budget, so one finding does not end the run. Seeds and the
working corpus live in a temporary directory per run; only the summary, the
libFuzzer log tails and the minimised findings are written under ``out``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from dshfuzz._atomic import write_atomic

from .._corpus import Corpus
from ._findings import HANG_SECONDS, RSS_LIMIT_MB, Finding, save_finding
from ._launch import write_launcher
from ._libfuzzer import FuzzStats, OutputParser, artefact_kind
from ._seeds import SeedSources, write_seeds
from ._summary import AtherisSummary, TargetSummary
from ._targets import resolve_target

__all__ = ["AtherisConfig", "AtherisError", "StatusCallback", "fuzz_target", "run_atheris"]

StatusCallback = Callable[[str, FuzzStats], None]
"""Called with the target's name and each status line libFuzzer prints."""

_LOG_TAIL = 200  # lines of libFuzzer output kept per session in ``libfuzzer.log``
_MIN_SESSION_SECONDS = 1
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")  # a py:module:function target's directory name


class AtherisError(RuntimeError):
    """The fuzzer could not run (it failed without saving an input): the message has its output's tail."""


@dataclass(frozen=True, slots=True)
class AtherisConfig:
    """One fuzzing run. The budget is ``runs`` executions and/or ``max_time`` seconds per target.

    ``max_len`` bounds an input (small inputs keep the exec rate up); a share
    ``structured_share`` of mutations goes through dshfuzz's edits; ``corpus``
    receives the findings (``None``: keep them under ``out`` only); ``seed`` is
    libFuzzer's ``-seed`` (the sessions after a finding use the next ones). The
    run stops after ``max_findings`` distinct findings or as many restarts.
    """

    out: Path
    runs: int | None = None
    max_time: float | None = None
    max_len: int = 1024
    structured_share: float = 0.15
    seed: int = 1
    sources: SeedSources = field(default_factory=SeedSources)
    corpus: Path | None = None
    minimise_seconds: int = 60
    max_findings: int = 10

    def __post_init__(self) -> None:
        if self.runs is None and self.max_time is None:
            raise ValueError("a fuzzing run needs a budget: runs and/or max_time")
        if (self.runs is not None and self.runs < 1) or (self.max_time is not None and self.max_time < 1):
            raise ValueError("runs and max_time must be at least 1")
        if self.max_len < 1 or not 0.0 <= self.structured_share <= 1.0:
            raise ValueError("max_len must be positive and structured_share within 0..1")

    def settings(self) -> dict[str, object]:
        return {
            "runs": self.runs,
            "maxTime": self.max_time,
            "maxLen": self.max_len,
            "structuredShare": self.structured_share,
            "seed": self.seed,
            "seeds": self.sources.to_json(),
        }


@dataclass(slots=True)
class _Session:
    parser: OutputParser
    seconds: float
    cpu_seconds: float
    returncode: int
    tail: list[str]


def _run_session(command: Sequence[str], target: str, on_status: StatusCallback | None) -> _Session:
    parser = OutputParser()
    tail: deque[str] = deque(maxlen=_LOG_TAIL)
    started = time.monotonic()
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:  # atheris prints tracebacks on stdout, libFuzzer everything else on stderr
            tail.append(line.rstrip("\n"))
            status = parser.feed(line)
            if status is not None and on_status is not None:
                on_status(target, status)
        _, wait_status, usage = os.wait4(proc.pid, 0)  # wait, and read the child's CPU time
        proc.returncode = os.waitstatus_to_exitcode(wait_status)
    cpu = usage.ru_utime + usage.ru_stime
    return _Session(parser, time.monotonic() - started, cpu, proc.returncode, list(tail))


def _limits(config: AtherisConfig) -> list[str]:
    return [f"-max_len={config.max_len}", f"-timeout={HANG_SECONDS}", f"-rss_limit_mb={RSS_LIMIT_MB}"]


def _budget(config: AtherisConfig, done: FuzzStats, elapsed: float) -> list[str] | None:
    """libFuzzer's budget flags for the next session, or ``None`` when the run's budget is spent."""
    flags = []
    if config.runs is not None:
        if done.executions >= config.runs:
            return None
        flags.append(f"-runs={config.runs - done.executions}")
    if config.max_time is not None:
        left = config.max_time - elapsed
        if left < _MIN_SESSION_SECONDS:
            return None
        flags.append(f"-max_total_time={math.ceil(left)}")
    return flags


def _minimise(launcher: Path, artefact: Path, dest: Path, config: AtherisConfig) -> Path:
    """libFuzzer's minimiser on ``artefact``, into ``dest``, for at most ``minimise_seconds``;
    the artefact itself when it cannot shrink it."""
    command = [
        str(launcher),
        "-minimize_crash=1",
        "-runs=100000",
        f"-max_total_time={config.minimise_seconds}",
        *_limits(config),
        f"-exact_artifact_path={dest}",
        str(artefact),
    ]
    # the minimiser re-runs itself through the shell at every step: stop the whole group at the deadline
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True) as proc:
        try:
            proc.wait(timeout=config.minimise_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    if not dest.is_file() or dest.stat().st_size > artefact.stat().st_size:
        shutil.copyfile(artefact, dest)
    return dest


def _forget(data: bytes, *directories: Path) -> None:
    """Remove ``data`` from the seeds and the working corpus, so the next session gets past it."""
    for directory in directories:
        for path in directory.iterdir():
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                path.unlink()


def _finding(
    target: str, artefact: Path, session: _Session, minimiser: Path, out: Path, config: AtherisConfig
) -> Finding:
    kind = artefact_kind(artefact)
    assert kind is not None
    data = artefact.read_bytes()
    found = out / "findings"
    found.mkdir(parents=True, exist_ok=True)
    minimal = _minimise(
        minimiser, artefact, found / f"{kind}-{hashlib.sha256(data).hexdigest()[:16]}", config
    )
    finding = Finding(
        target=target,
        kind=kind,
        artefact=minimal,
        original_size=len(data),
        size=minimal.stat().st_size,
        reason=session.parser.error or kind,
        traceback="\n".join(session.parser.traceback),
    )
    if config.corpus is None:
        return finding
    return replace(finding, corpus_file=save_finding(finding, Corpus(config.corpus)))


def fuzz_target(name: str, config: AtherisConfig, on_status: StatusCallback | None = None) -> TargetSummary:
    """Fuzz target ``name`` (see :func:`resolve_target`) for the configured budget; raises
    :class:`AtherisError` when libFuzzer cannot run and ``KeyError`` for an unknown target."""
    target = resolve_target(name)
    out = config.out / _SLUG.sub("-", name)
    with tempfile.TemporaryDirectory(prefix="dshfuzz-atheris-") as tmp:
        work, seeds, artefacts = Path(tmp) / "corpus", Path(tmp) / "seeds", Path(tmp) / "artefacts"
        for d in (work, seeds, artefacts):
            d.mkdir()
        seed_count = write_seeds(target, seeds, config.sources, max_len=config.max_len)
        launcher = write_launcher(Path(tmp) / "fuzz", name, structured_share=config.structured_share)
        # the minimiser needs no coverage, and restarts the child at every step
        minimiser = write_launcher(Path(tmp) / "minimise", name, structured_share=0.0, instrument=False)
        total, sessions = FuzzStats(), 0
        findings: list[Finding] = []
        log: list[str] = []
        started = time.monotonic()
        while len(findings) < config.max_findings and sessions <= config.max_findings:
            budget = _budget(config, total, time.monotonic() - started)
            if budget is None:
                break
            command = [
                str(launcher),
                *_limits(config),
                *budget,
                "-print_final_stats=1",
                f"-seed={config.seed + sessions}",
                f"-artifact_prefix={artefacts}/",
                str(work),
                str(seeds),
            ]
            session = _run_session(command, name, on_status)
            sessions += 1
            total = total.plus(session.parser.stats(session.seconds, session.cpu_seconds))
            log += [f"$ {' '.join(command)}", *session.tail]
            saved = [a for a in session.parser.artefacts if artefact_kind(a) is not None and a.is_file()]
            if session.returncode != 0 and not saved:
                raise AtherisError(
                    f"{name}: libFuzzer exited {session.returncode} without an input:\n"
                    + "\n".join(session.tail[-30:])
                )
            for artefact in saved:
                _forget(artefact.read_bytes(), work, seeds)
                key = Finding.key_of(artefact_kind(artefact) or "", "\n".join(session.parser.traceback))
                if key not in {f.key for f in findings}:  # the same bug again, through another input
                    findings.append(_finding(name, artefact, session, minimiser, out, config))
            if session.returncode == 0:
                break
    write_atomic(out / "libfuzzer.log", "\n".join(log) + "\n")
    return TargetSummary(name, total, sessions, seed_count, tuple(findings))


def run_atheris(
    names: Sequence[str], config: AtherisConfig, *, jobs: int = 1, on_status: StatusCallback | None = None
) -> AtherisSummary:
    """Fuzz each target (``jobs`` at a time, one child each). Each target's working files and
    findings go under ``config.out`` (and the findings into ``config.corpus``); the summary is
    returned, not written (``dshfuzz.report.write_atheris_summary`` writes it)."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        targets = tuple(pool.map(lambda n: fuzz_target(n, config, on_status), names))
    return AtherisSummary({"targets": list(names), **config.settings()}, targets)
