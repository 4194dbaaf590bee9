"""The corpus for a reader: ``dshfuzz corpus list`` and ``replay``'s lines, summary and JSON.

The harness replays entries into typed :class:`~dshfuzz.harness.ReplayResult` values and
prints nothing; these render them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dshfuzz.harness import CorpusEntry, ReplayResult

__all__ = ["corpus_list_lines", "marked_fixed_line", "replay_json", "replay_line", "replay_summary"]


def _short(text: str | None, width: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def corpus_list_lines(entries: Iterable[tuple[Path, CorpusEntry]]) -> list[str]:
    """One line per entry under a header, columns padded to their widest cell: kind, signature,
    the checker it was found with, and its log (the ENTRY other actions take); none for no entry."""
    rows = [(e.kind, e.signature, e.checker, str(p) + ("  (fixed)" if e.fixed_by else "")) for p, e in entries]
    if not rows:
        return []
    header = ("KIND", "SIGNATURE", "CHECKER", "ENTRY")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3] for row in [header, *rows]]


def replay_line(result: ReplayResult) -> str:
    """One replayed entry: its status, whether it behaves as recorded, its signature, its log and why."""
    from dshfuzz.harness import ReplayStatus

    r = result
    mark, note = "as recorded", r.detail
    if not r.as_recorded:
        mark, note = "CHANGED", f"{r.change}; {r.detail}"
    if r.as_recorded and r.status is ReplayStatus.FIXED:
        note = f"fixed by {_short(r.entry.fixed_by)}"
    return f"{r.status:<15} {mark:<11}  {r.entry.signature:<32} {r.path}  ({note})"


def replay_summary(results: Sequence[ReplayResult]) -> str:
    """One line: how many entries, per status those that behave as recorded, then how many
    changed and how."""
    from dshfuzz.harness import ReplayStatus

    same = Counter(r.status for r in results if r.as_recorded)
    unloaded = sum(r.status is ReplayStatus.NOT_REPLAYED for r in results)
    changed = Counter(r.change for r in results
                      if not r.as_recorded and r.status is not ReplayStatus.NOT_REPLAYED)
    parts = [f"{same[s]} {s}" + ("" if s is ReplayStatus.HOLDS else " (as recorded)")
             for s in ReplayStatus if same[s]]
    line = f"{len(results)} {'entry' if len(results) == 1 else 'entries'}"
    if parts:
        line += ": " + ", ".join(parts)
    line += f"; {sum(changed.values())} changed"
    if changed:
        line += " (" + ", ".join(f"{n} {why}" for why, n in changed.items()) + ")"
    if unloaded:
        line += f"; {unloaded} not replayed (the checker cannot be loaded)"
    return line


def replay_json(results: Sequence[ReplayResult], checker: str | None = None) -> str:
    """``corpus replay --json``: one object per entry, in a list; ``checker`` is the spec replayed
    against instead of each entry's own (None: the entry's)."""
    return json.dumps([
        {"file": str(r.path), "signature": r.entry.signature, "checker": checker or r.entry.checker,
         "status": str(r.status), "recorded": str(r.expected), "asRecorded": r.as_recorded,
         "reproduces": r.reproduces, "change": r.change or None, "fixedBy": r.entry.fixed_by,
         "rulesNow": list(r.rules_now), "detail": r.detail}
        for r in results
    ], indent=1)


def marked_fixed_line(path: Path, by: str, before: str | None) -> str:
    """What ``corpus mark-fixed`` did: the fix now recorded, and the one it replaced."""
    was = f" (was: fixed by {_short(before)})" if before and before != by else ""
    return f"marked fixed by {by}: {path}{was}; `dshfuzz corpus replay` now expects it FIXED"
