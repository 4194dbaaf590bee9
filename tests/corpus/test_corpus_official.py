"""Every corpus entry's log gets the built-in checker's verdict compared with the official layers.

A corpus entry records what some checker got wrong (often a deliberately broken one), so its
replay (``test_corpus_replay.py``) says nothing about the built-in checker. Here each entry's log
is checked by the built-in checker and judged by every official layer, and the two must agree
as the harness needs them to: an error exactly when the loader or the released migration
refuses, every refusing layer named by some finding, and no finding naming a layer that accepts.
Where they do not agree, the entry's meta records it under ``builtinDisagreement``:
``{"expected": <the disagreement this test computes>, "reason": <why it is expected>}``; a
recorded disagreement that no longer happens, or another one, fails the test, so the record
stays true.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.checker import CheckOptions, OfficialLayer, check_path

REPO = Path(__file__).resolve().parents[2]
FOLDED = {"loadApp": "load", "loadDirect": "load"}
OFFLINE = {str(x) for x in OfficialLayer} - {"provider"}
HARNESS = {"load", "released"}
V0_ONLY = {"seed", "invariants", "load", "wire"}  # they refuse every header but format 0's, whatever its events


def _entries() -> list[tuple[Path, str, dict]]:
    out = []
    for meta_path in sorted((REPO / "corpus").glob("*/meta.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        for key, entry in sorted(meta["entries"].items()):
            out.append((meta_path.parent / entry["file"], key, entry))
    return out


ENTRIES = _entries()


def disagreement(official, path: Path) -> str:
    """How the built-in checker's verdict on ``path`` departs from the official layers' ('' when it
    does not), in words stable enough to be recorded."""
    report = check_path(path, CheckOptions(strict=True))
    v1 = report.format_version == 1
    refused: dict[str, str] = {}
    ran: set[str] = set()  # a layer is not run when the reader it judges refuses the file
    for name, verdict in official.check(path=path).items():
        name = FOLDED.get(name, name)
        ran.add(name)
        if not verdict.ok and not (v1 and name in V0_ONLY):
            refused[name] = verdict.error.message if verdict.error else "refused"
    named = {str(layer) for f in report.findings for layer in f.refused_by} & OFFLINE
    if "seed" in named:
        named.add("wire")  # the request serializer seeds its session first: what seed refuses, it refuses
    problems = []
    harness = sorted(HARNESS & set(refused))
    if bool(report.errors) != bool(harness):
        problems.append(f"{report.errors} error(s) while the loader/released verdicts refuse {harness or 'nothing'}")
    if set(refused) - named:
        problems.append(f"no finding names {sorted(set(refused) - named)}")
    accepting = (named & ran) - set(refused) - {"wire"}
    if accepting:
        problems.append(f"findings name {sorted(accepting)}, which accept")
    return "; ".join(problems)


@pytest.mark.official
@pytest.mark.parametrize(("path", "key", "entry"), ENTRIES, ids=[f"{p.parent.name}/{k}" for p, k, _ in ENTRIES])
def test_the_builtin_checker_agrees_with_the_official_layers_or_the_meta_says_why(official, path: Path, key: str,
                                                                                   entry: dict) -> None:
    found = disagreement(official, path)
    recorded = entry.get("builtinDisagreement")
    if not found:
        assert recorded is None, f"{path}: the meta records a disagreement that no longer happens: {recorded}"
        return
    assert recorded is not None, (
        f"{path}: the built-in checker disagrees with the official layers ({found}); fix the checker, or "
        "record it in the entry's meta as builtinDisagreement {expected, reason}"
    )
    assert recorded.get("reason"), f"{path}: the recorded disagreement gives no reason"
    assert recorded.get("expected") == found, f"{path}: recorded {recorded.get('expected')!r}, now {found!r}"


def test_every_corpus_entry_is_compared() -> None:
    assert len(ENTRIES) >= 7 and all(p.is_file() for p, _, _ in ENTRIES)
