"""What a fuzzing run found, and how a finding lives on in the corpus.

A finding is an input on which a target crashed (raised), hung (ran past
``HANG_SECONDS``) or blew its memory (past ``RSS_LIMIT_MB``), as libFuzzer
judged it, minimised by libFuzzer's minimiser. It is stored in the corpus as an
entry whose mutator is ``atheris:<target>`` and whose checker is
:func:`replay_witness`: the target runs on the witness once, under libFuzzer
with the same limits (uninstrumented: coverage is of no use there), in a child
process (so a hang or a blow-up cannot take the replaying process down).
Replay classifies a target that gives no answer as a ``crash``, so the entry's
signature is ``crash|-|-|atheris:<target>`` whatever libFuzzer called it (the
entry's ``kind`` keeps ``crash`` or ``timeout``, and ``actual.failure`` says
``oom`` for a memory blow-up); it replays STILL FAILING while the bug exists and
FIXED once the target returns.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._corpus import Corpus
from ._launch import CHILD, child_command
from ._libfuzzer import ArtefactKind, OutputParser
from ._targets import resolve_target

__all__ = [
    "HANG_SECONDS",
    "RSS_LIMIT_MB",
    "Finding",
    "TargetFailure",
    "replay_witness",
    "save_finding",
    "witness_signature",
]

HANG_SECONDS = 2
RSS_LIMIT_MB = 768
_REPLAY_DEADLINE = 15.0  # start-up plus the hang budget, below the replay's own 20 s
_TRACEBACK_LINES = 12


@dataclass(frozen=True, slots=True)
class Finding:
    """One failing input of ``target``: ``artefact`` is the minimised input (written in the run's out dir)."""

    target: str
    kind: ArtefactKind
    artefact: Path
    original_size: int
    size: int
    reason: str
    traceback: str
    corpus_file: Path | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return self.key_of(self.kind, self.traceback)

    @staticmethod
    def key_of(kind: str, traceback: str) -> tuple[str, ...]:
        """What tells two findings apart: the kind, and where and how the target failed."""
        return (kind, *[line for line in traceback.splitlines() if line.strip()][-3:])

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "artefact": str(self.artefact),
            "originalSize": self.original_size,
            "size": self.size,
            "reason": self.reason,
            "traceback": self.traceback,
            "corpusFile": str(self.corpus_file) if self.corpus_file else None,
        }


class TargetFailure(RuntimeError):
    """A witness still makes its target fail (the message is libFuzzer's verdict and the traceback)."""


def witness_signature(target: str) -> str:
    """The corpus signature of every finding of ``target`` (what replay's classification yields)."""
    return f"crash|-|-|atheris:{target}"


_MUTATOR_PREFIX = "atheris:"


def save_finding(finding: Finding, corpus: Corpus) -> Path:
    """Store ``finding`` in ``corpus`` (idempotent: entries are named by content); returns its path."""
    entry, _ = corpus.add(
        finding.artefact.read_bytes(),
        signature=witness_signature(finding.target),
        kind="timeout" if finding.kind == "timeout" else "crash",
        compression=resolve_target(finding.target).compression,
        format_version=None,
        expected={"rules": [], "oracleRefusing": []},
        actual={
            "rules": [],
            "failure": finding.kind,
            "reason": finding.reason,
            "traceback": finding.traceback,
        },
        checker=f"py:{__name__}:replay_witness",
        mutator=_MUTATOR_PREFIX + finding.target,
    )
    return corpus.path_of(entry)


def _target_of(path: Path) -> str:
    """The target whose finding the corpus entry at ``path`` records (from its ``mutator``)."""
    for entry_path, entry in Corpus(path.parent.parent).entries():
        if entry_path == path and entry.mutator and entry.mutator.startswith(_MUTATOR_PREFIX):
            return entry.mutator.removeprefix(_MUTATOR_PREFIX)
    raise TargetFailure(f"{path} is not an atheris finding of the corpus it lies in")


def replay_witness(path: str) -> dict[str, list[object]]:
    """Run the target of the corpus witness at ``path`` on it once; raise :class:`TargetFailure`
    while the target still fails, else return an empty report (the replay then says FIXED)."""
    witness = Path(path)
    target = _target_of(witness)
    command = child_command(target, argv0=str(CHILD), structured_share=0.0, instrument=False)
    flags = ["-runs=1", f"-timeout={HANG_SECONDS}", f"-rss_limit_mb={RSS_LIMIT_MB}", str(witness)]
    try:
        proc = subprocess.run(
            [*command, *flags],
            check=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=_REPLAY_DEADLINE,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise TargetFailure(f"{target}: no answer within {_REPLAY_DEADLINE:g} s") from None
    if proc.returncode != 0:
        said = OutputParser()
        for line in proc.stdout.splitlines():
            said.feed(line)
        raise TargetFailure(
            f"{target} still fails on {witness.name} ({said.error or f'exit {proc.returncode}'}):\n"
            + "\n".join(said.traceback[-_TRACEBACK_LINES:])
        )
    return {"findings": []}
