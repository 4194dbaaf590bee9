"""The official refusal sites no log can reach, each with its reason: ``unreachable-sites.json``.

A campaign's official reach is counted against the sites a log *can* reach (``throw``
statements of the packages a log passes through, :meth:`OfficialOracle.refusal_sites`),
so every site left out of that count is written down here with one of three reasons:

- ``api``: only an API that load, seed, fold, migrate, meter and wire do not call reaches it
  (the store's write and management calls, forks, construction-time option checks);
- ``write-path``: it guards a write (appending, packing, renaming, locking);
- ``platform``: it runs on another platform only (Windows renames and paths).

Invariant: each entry names a site of the pinned packages by id (``package/file:line:column``)
and keeps the site's message template, so a test (``tests/conformance/test_official_reach.py``)
flags an entry whose site disappeared or moved when the packages change.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

__all__ = ["UNREACHABLE_FILE", "UNREACHABLE_REASONS", "UnreachableSite", "unreachable_sites"]

UNREACHABLE_FILE = Path(__file__).resolve().parent / "unreachable-sites.json"
UNREACHABLE_FORMAT = "dshfuzz-unreachable-sites/1"

UnreachableReason = Literal["api", "write-path", "platform"]
UNREACHABLE_REASONS: tuple[UnreachableReason, ...] = ("api", "write-path", "platform")


@dataclass(frozen=True, slots=True)
class UnreachableSite:
    """A refusal site no log reaches: its ``id``, its message template (``message``, as the
    site table gives it), the ``reason`` class and a one-line ``why``."""

    id: str
    message: str
    reason: UnreachableReason
    why: str


@functools.cache
def unreachable_sites() -> Mapping[str, UnreachableSite]:
    """Every listed site by id. A malformed file raises ``ValueError`` naming the entry."""
    data = json.loads(UNREACHABLE_FILE.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != UNREACHABLE_FORMAT:
        raise ValueError(f"{UNREACHABLE_FILE}: not a {UNREACHABLE_FORMAT} file")
    out: dict[str, UnreachableSite] = {}
    for n, entry in enumerate(data.get("sites", []), 1):
        fields = ("id", "message", "reason", "why")
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in fields)):
            raise ValueError(f"{UNREACHABLE_FILE}: entry {n} needs string fields {', '.join(fields)}")
        if entry["reason"] not in UNREACHABLE_REASONS:
            raise ValueError(f"{UNREACHABLE_FILE}: entry {n} ({entry['id']}): reason {entry['reason']!r} is not one of "
                             f"{', '.join(UNREACHABLE_REASONS)}")
        if entry["id"] in out:
            raise ValueError(f"{UNREACHABLE_FILE}: entry {n} repeats site {entry['id']}")
        out[entry["id"]] = UnreachableSite(entry["id"], entry["message"], cast(UnreachableReason, entry["reason"]), entry["why"])
    return out
