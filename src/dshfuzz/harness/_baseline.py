"""A baseline of known causes, so that a campaign in CI fails only on what is new.

A team with known bugs in its checker runs ``dshfuzz fuzz --baseline PATH`` in CI: the
causes of an earlier campaign's ``summary.json``, or of a corpus folder's open entries
(those not marked fixed), are known. A campaign's causes are then *known* (in the
baseline), *new* (not in it) or the baseline's *gone* (not found this time: fixed, or not
reached in this budget). Only a new cause fails the run.

A cause is a finding's signature less its format version (``kind|layer|rules``): one
defect that shows in several formats is one cause. A corpus entry saved before causes
carried their rule set (its signature ends in the mutator) is read as its earlier format
says (:func:`signature_cause`). A corpus entry marked fixed is not known: its cause found
again is a regression, and new.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._classify import signature_cause

__all__ = ["Baseline", "BaselineComparison", "BaselineError", "cause_of", "load_baseline"]

_VERSION = re.compile(r"v(?:\d+|\?)")


class BaselineError(ValueError):
    """A ``--baseline`` that cannot be read: one line naming the path and the reason."""


def cause_of(signature: str) -> str:
    """A signature less its format version (``kind|layer|rules``); a signature of the earlier
    format (ending in the mutator) as that format reads (:func:`signature_cause`)."""
    head, _, last = signature.rpartition("|")
    if head and _VERSION.fullmatch(last):
        return head
    return signature_cause(signature)


@dataclass(frozen=True, slots=True)
class BaselineComparison:
    """A campaign's causes against a baseline: each list sorted, the three disjoint."""

    known: tuple[str, ...]
    new: tuple[str, ...]
    gone: tuple[str, ...]

    def to_json(self) -> dict[str, list[str]]:
        return {"known": list(self.known), "new": list(self.new), "gone": list(self.gone)}


@dataclass(frozen=True, slots=True)
class Baseline:
    """The causes known before a campaign, and where they were read (``source``)."""

    source: str
    causes: frozenset[str]

    def compare(self, groups: Iterable[Iterable[str]]) -> BaselineComparison:
        """A campaign's checker defects, as groups of causes found together (their witnesses
        show each other's signatures: one defect), against the baseline. A group with a known
        cause is known whole: the baseline knew the defect under another of its signatures."""
        known: set[str] = set()
        new: set[str] = set()
        for group in groups:
            members = set(group)
            (known if members & self.causes else new).update(members)
        found = known | new
        return BaselineComparison(tuple(sorted(known)), tuple(sorted(new - known)), tuple(sorted(self.causes - found)))


def load_baseline(path: Path) -> Baseline:
    """The baseline at ``path``: a campaign's ``summary.json`` (or the report folder holding
    it), or a corpus folder (its entries' ``meta.json``). Anything else is a
    :class:`BaselineError`; nothing at ``path`` is modified."""
    if path.is_dir() and (path / "summary.json").is_file():
        path = path / "summary.json"
    if path.is_file():
        return Baseline(str(path), _summary_causes(path))
    if path.is_dir():
        return Baseline(str(path), _corpus_causes(path))
    raise BaselineError(f"--baseline {path}: no such file or folder (a summary.json, a report folder or a corpus)")


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"--baseline {path}: cannot read it: {exc}") from None
    except ValueError as exc:
        raise BaselineError(f"--baseline {path}: not JSON ({exc})") from None


def _summary_causes(path: Path) -> frozenset[str]:
    summary = _read_json(path)
    findings = summary.get("findings") if isinstance(summary, dict) else None
    if not isinstance(summary, dict) or not str(summary.get("format", "")).startswith("dshfuzz-campaign-summary/") \
            or not isinstance(findings, list):
        raise BaselineError(f"--baseline {path}: not a dshfuzz campaign summary (summary.json)")
    causes = set()
    for at, finding in enumerate(findings):
        signature = finding.get("signature") if isinstance(finding, dict) else None
        if not isinstance(signature, str) or not signature:
            raise BaselineError(f"--baseline {path}: finding {at} has no signature")
        if finding.get("kind") not in ("official-disagreement", "oracle-crash"):  # only a checker's defects
            causes.add(cause_of(signature))
    return frozenset(causes)


def _corpus_causes(folder: Path) -> frozenset[str]:
    metas = sorted(folder.glob("*/meta.json"))
    if not metas:
        raise BaselineError(f"--baseline {folder}: neither a report folder nor a corpus (no */meta.json inside)")
    causes = set()
    for meta_path in metas:
        meta = _read_json(meta_path)
        entries = meta.get("entries") if isinstance(meta, dict) else None
        if not isinstance(entries, dict):
            raise BaselineError(f"--baseline {meta_path}: not a corpus entry's meta.json (no entries)")
        for name, entry in entries.items():
            signature = entry.get("signature") if isinstance(entry, dict) else None
            if not isinstance(signature, str) or not signature:
                raise BaselineError(f"--baseline {meta_path}: entry {name} has no signature")
            if entry.get("fixedBy") is None and entry.get("kind") not in ("official-disagreement", "oracle-crash"):
                causes.add(cause_of(signature))
    return frozenset(causes)
