"""The corpus: every minimised witness, kept forever as a regression test.

Layout: ``corpus/<signature>/<sha256-prefix>.jsonl[.zstd]`` plus one versioned
``corpus/<signature>/meta.json`` describing each entry of that signature. Entries
are named by content hash, so adding the same log twice is a no-op; every write
is atomic (temp file + rename), so a crash never leaves a torn witness.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dshfuzz import __version__
from dshfuzz._atomic import write_atomic
from dshfuzz.model import Compression

__all__ = ["CORPUS_FORMAT", "Corpus", "CorpusEntry", "CorpusFormatError", "FindingRecorder", "signature_slug"]

CORPUS_FORMAT = "dshfuzz-corpus/1"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def signature_slug(signature: str) -> str:
    """A directory-safe, readable name for a signature (stable across runs)."""
    slug = _SLUG.sub("-", signature).strip("-.")[:80] or "unnamed"
    return f"{slug}-{hashlib.sha256(signature.encode()).hexdigest()[:8]}"


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    """One witness log and what was recorded about it.

    ``expected`` is what the truth says (official layers, oracle, the mutator's
    declared rules); ``actual`` is what the checker said when the entry was saved.
    ``fixed_by`` names the change that made the checker agree with ``expected``;
    once set, replay expects the entry to be FIXED rather than STILL FAILING.
    """

    signature: str
    kind: str
    file: str
    sha256: str
    compression: Compression
    format_version: Any
    expected: Mapping[str, Any]
    actual: Mapping[str, Any]
    checker: str = "builtin"
    mutator: str | None = None
    seed: int | None = None
    official: Mapping[str, Any] = field(default_factory=dict)
    date: str = ""
    dshfuzz_version: str = __version__
    fixed_by: str | None = None
    stage: str | None = None
    """How far the witness was minimised (``minimal``, ``cut``: ``dshfuzz corpus minimise``
    continues it, ``found``, ``off``); ``None`` for entries saved before stages existed."""

    def to_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "kind": self.kind,
            "file": self.file,
            "sha256": self.sha256,
            "compression": self.compression,
            "formatVersion": self.format_version,
            "expected": dict(self.expected),
            "actual": dict(self.actual),
            "checker": self.checker,
            "mutator": self.mutator,
            "seed": self.seed,
            "official": dict(self.official),
            "date": self.date,
            "dshfuzzVersion": self.dshfuzz_version,
            "fixedBy": self.fixed_by,
            **({} if self.stage is None else {"stage": self.stage}),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> CorpusEntry:
        return cls(
            signature=obj["signature"],
            kind=obj["kind"],
            file=obj["file"],
            sha256=obj["sha256"],
            compression=obj.get("compression", "none"),
            format_version=obj.get("formatVersion"),
            expected=obj.get("expected", {}),
            actual=obj.get("actual", {}),
            checker=obj.get("checker", "builtin"),
            mutator=obj.get("mutator"),
            seed=obj.get("seed"),
            official=obj.get("official", {}),
            date=obj.get("date", ""),
            dshfuzz_version=obj.get("dshfuzzVersion", ""),
            fixed_by=obj.get("fixedBy"),
            stage=obj.get("stage"),
        )


class CorpusFormatError(ValueError):
    """A meta.json this version of dshfuzz cannot read (names the file and reason)."""


@dataclass(slots=True)
class Corpus:
    """A corpus directory (default ``corpus/`` at the repository root)."""

    root: Path

    def _meta_path(self, signature: str) -> Path:
        return self.root / signature_slug(signature) / "meta.json"

    def path_of(self, entry: CorpusEntry) -> Path:
        """Where ``entry``'s log lives."""
        return self._meta_path(entry.signature).parent / entry.file

    def _load_meta(self, path: Path) -> dict[str, Any]:
        try:
            meta = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise CorpusFormatError(f"{path}: unreadable corpus meta ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != CORPUS_FORMAT:
            raise CorpusFormatError(f"{path}: not a {CORPUS_FORMAT} meta file")
        return meta

    def add(
        self,
        data: bytes,
        *,
        signature: str,
        kind: str,
        compression: Compression,
        format_version: Any,
        expected: Mapping[str, Any],
        actual: Mapping[str, Any],
        checker: str = "builtin",
        mutator: str | None = None,
        seed: int | None = None,
        official: Mapping[str, Any] | None = None,
        stage: str | None = None,
    ) -> tuple[CorpusEntry, bool]:
        """Store ``data`` under its signature; returns the entry and whether it was new."""
        sha = hashlib.sha256(data).hexdigest()
        suffix = ".jsonl.zstd" if compression == "zstd" else ".jsonl"
        meta_path = self._meta_path(signature)
        meta: dict[str, Any] = self._load_meta(meta_path) if meta_path.exists() else {
            "format": CORPUS_FORMAT,
            "signature": signature,
            "kind": kind,
            "entries": {},
        }
        if sha[:16] in meta["entries"]:
            return CorpusEntry.from_json(meta["entries"][sha[:16]]), False
        entry = CorpusEntry(
            signature=signature,
            kind=kind,
            file=sha[:16] + suffix,
            sha256=sha,
            compression=compression,
            format_version=format_version,
            expected=expected,
            actual=actual,
            checker=checker,
            mutator=mutator,
            seed=seed,
            official=official or {},
            stage=stage,
            date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        )
        write_atomic(meta_path.parent / entry.file, data)
        meta["entries"][sha[:16]] = entry.to_json()
        write_atomic(meta_path, json.dumps(meta, indent=1, sort_keys=True) + "\n")
        return entry, True

    def _rewrite(self, entry: CorpusEntry, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the meta's entries of ``entry``'s signature; one atomic write."""
        meta_path = self._meta_path(entry.signature)
        meta = self._load_meta(meta_path)
        change(meta["entries"])
        write_atomic(meta_path, json.dumps(meta, indent=1, sort_keys=True) + "\n")

    def restage(self, entry: CorpusEntry, stage: str) -> CorpusEntry:
        """Record that ``entry``'s witness got as far as ``stage`` (the same log, judged again
        later in its minimisation); returns the updated entry."""
        key = entry.sha256[:16]
        self._rewrite(entry, lambda entries: entries[key].__setitem__("stage", stage))
        return CorpusEntry.from_json({**entry.to_json(), "stage": stage})

    def remove(self, entry: CorpusEntry) -> None:
        """Drop ``entry`` (superseded by a smaller witness of its signature): the meta first, in
        one atomic write, then its log; a crash between them leaves only an unlisted file."""
        self._rewrite(entry, lambda entries: entries.pop(entry.sha256[:16], None))
        (self._meta_path(entry.signature).parent / entry.file).unlink(missing_ok=True)

    def entries(self) -> Iterator[tuple[Path, CorpusEntry]]:
        """Every entry with the path of its log, in a stable order (none when the folder is
        missing: the CLI says so instead)."""
        if not self.root.is_dir():
            return
        for meta_path in sorted(self.root.glob("*/meta.json")):
            meta = self._load_meta(meta_path)
            for key in sorted(meta["entries"]):
                entry = CorpusEntry.from_json(meta["entries"][key])
                yield meta_path.parent / entry.file, entry

    def find(self, path: str | Path) -> tuple[Path, CorpusEntry] | None:
        """The entry whose log is ``path`` (as :meth:`entries` gives it, relative to the
        current directory or absolute), or ``None``."""
        wanted = Path(path).resolve()
        return next(((p, e) for p, e in self.entries() if p.resolve() == wanted), None)

    def mark_fixed(self, path: str | Path, by: str) -> tuple[CorpusEntry, str | None]:
        """Record in the meta that the change ``by`` (a commit) fixed the entry whose log is
        ``path``: replay then expects it FIXED. Every other field of the meta is kept as it
        was; the write is atomic. Returns the updated entry and the fix recorded before, if
        any. Raises :class:`KeyError` when ``path`` is no entry of this corpus."""
        if not by.strip():
            raise ValueError("a fix needs a name (the commit that made the checker agree)")
        found = self.find(path)
        if found is None:
            raise KeyError(str(path))
        log_path, entry = found
        meta_path = log_path.parent / "meta.json"
        meta = self._load_meta(meta_path)
        key = next(k for k, v in meta["entries"].items() if v.get("file") == entry.file)
        before = meta["entries"][key].get("fixedBy")
        meta["entries"][key]["fixedBy"] = by
        write_atomic(meta_path, json.dumps(meta, indent=1, sort_keys=True) + "\n")
        return CorpusEntry.from_json(meta["entries"][key]), before


class FindingRecorder:
    """Puts a campaign's findings into a corpus as they reach the coordinator, so that a
    coordinator that dies leaves every finding so far on disk.

    Each signature keeps one entry from this campaign: its latest witness. A finding is
    heard as its owner sends it (first ``found``, then smaller witnesses as minimisation
    goes on); a smaller witness is added before the one it supersedes is removed, so the
    corpus never lacks the finding, and each write is atomic. Witnesses of a signature from
    another worker than its first are ignored, as the coordinator and the report do. An
    entry already in the corpus before the campaign is never removed."""

    def __init__(self, corpus: Corpus, *, checker: str, seed: int | None) -> None:
        self.corpus = corpus
        self.checker = checker
        self.seed = seed
        self._owner: dict[str, int] = {}
        self._mine: dict[str, CorpusEntry] = {}
        """Per signature, the entry this campaign added and still keeps."""

    def record(self, finding: Any) -> CorpusEntry | None:
        """Store ``finding`` (a ``DisagreementFound``); the entry that now holds it, or
        ``None`` when the finding is not its signature owner's."""
        signature = finding.signature
        if self._owner.setdefault(signature, finding.worker) != finding.worker:
            return None
        entry, new = self.corpus.add(
            finding.data,
            signature=signature,
            kind=finding.kind,
            compression=finding.compression,
            format_version=finding.format_version,
            expected={"rules": list(finding.expected_rules), "oracleRefusing": list(finding.oracle_refusing)},
            actual={"rules": list(finding.checker_rules)},
            checker=self.checker,
            mutator=finding.mutator,
            seed=self.seed,
            official=finding.official,
            stage=finding.stage,
        )
        before = self._mine.get(signature)
        if before is not None and before.sha256 == entry.sha256:
            if before.stage != finding.stage:
                self._mine[signature] = entry = self.corpus.restage(before, finding.stage)
            return entry
        if before is not None:
            self.corpus.remove(before)
            del self._mine[signature]
        if new:
            self._mine[signature] = entry
        return entry
