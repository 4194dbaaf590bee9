"""The seed inputs of a fuzzing run, written to a per-run temporary directory.

Seeds are valid and realistic inputs libFuzzer starts from: the corpus witnesses,
generated logs (``dshfuzz.generators.generate``), the reference fixture and the
real sessions. Only seeds in the target's container and within ``max_len`` are
kept (libFuzzer would truncate a longer one into a torn log). A row target's
seeds are the storage rows of those logs, one row per seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dshfuzz._atomic import write_atomic

from ._targets import Target

__all__ = ["SeedSources", "write_seeds"]


@dataclass(frozen=True, slots=True)
class SeedSources:
    """Where seeds come from. Missing directories contribute nothing.

    ``generated`` logs of ``max_events`` events at most are drawn with ``seed``.
    """

    corpus: Path | None = None
    fixtures: Path | None = None
    real_sessions: Path | None = None
    generated: int = 16
    max_events: int = 12
    seed: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "corpus": str(self.corpus) if self.corpus else None,
            "fixtures": str(self.fixtures) if self.fixtures else None,
            "realSessions": str(self.real_sessions) if self.real_sessions else None,
            "generated": self.generated,
            "maxEvents": self.max_events,
            "seed": self.seed,
        }


def _files(directory: Path | None, pattern: str) -> list[Path]:
    return sorted(directory.glob(pattern)) if directory is not None and directory.is_dir() else []


def _logs(target: Target, sources: SeedSources) -> Iterator[bytes]:
    from dshfuzz.generators import generate

    suffix = ".jsonl.zstd" if target.compression == "zstd" else ".jsonl"
    for path in (
        *_files(sources.corpus, "*/*.jsonl*"),
        *_files(sources.fixtures, "*.jsonl*"),
        *_files(sources.real_sessions, "*.jsonl*"),
    ):
        if path.name.endswith(suffix):
            yield path.read_bytes()
    for log in generate(sources.generated, sources.seed, max_events=sources.max_events):
        yield log.to_zstd() if target.compression == "zstd" else log.to_jsonl()


def _rows(logs: Iterable[bytes]) -> Iterator[bytes]:
    for data in logs:
        yield from (line for line in data.split(b"\n")[1:] if line)


def write_seeds(target: Target, directory: Path, sources: SeedSources, *, max_len: int) -> int:
    """Write the seeds of ``target`` into ``directory`` (named by content); returns how many."""
    logs = _logs(target, sources)
    seeds = {s for s in (_rows(logs) if target.shape == "row" else logs) if 0 < len(s) <= max_len}
    for data in seeds:
        write_atomic(directory / hashlib.sha256(data).hexdigest()[:16], data)
    return len(seeds)
