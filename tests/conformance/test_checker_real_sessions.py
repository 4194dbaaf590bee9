"""The checker agrees with the official layers on every real v0 session.

``manifest.json`` records each official layer's verdict per file. For format v0
(where the official layers decide):

- severity follows what the harness can use: the checker reports an error-level
  finding exactly when the official loader (either route) or the released v0->v1
  migration refuses the file. A shape that only the seed, invariant, meter or fold
  readers refuse (a legacy message the loader and the migration upgrade on read) is a
  warning;
- every layer that refuses a file is named in ``refused_by`` by some finding, and a
  file every layer accepts gets no error.

v1/v2 files (which the rc.8 layers refuse by version alone) must still be checked
without crashing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.checker import CheckOptions, check_path

MANIFEST_LAYER = {"loadDirect": "load", "loadApp": "load"}


def _entries(real_sessions_dir: Path) -> list[dict]:
    return json.loads((real_sessions_dir / "manifest.json").read_text(encoding="utf-8"))["files"]


def _describe(report) -> str:
    return "\n".join(f"  {f.rule} {f.severity} seq={f.seq} line={f.line}: {f.message} (refused by {','.join(map(str, f.refused_by))})"
                     for f in report.findings) or "  (no findings)"


HARNESS = {"load", "released"}
"""The layers a user's harness runs: opening a session (load) and migrating it (released)."""


def _v0_entries(real_sessions_dir: Path) -> list[dict]:
    v0 = [e for e in _entries(real_sessions_dir) if e["format_version"] == 0]
    assert len(v0) >= 20
    return v0


def _refused(entry: dict) -> dict[str, str]:
    """Layer -> the official refusal, the two load routes folded into ``load``."""
    out: dict[str, str] = {}
    for name, verdict in entry["official"].items():
        if verdict != "ok":
            out.setdefault(MANIFEST_LAYER.get(name, name), str(verdict))
    return out


def test_a_real_v0_session_gets_an_error_exactly_when_the_loader_or_the_migration_refuses(real_sessions_dir: Path) -> None:
    problems = []
    for entry in _v0_entries(real_sessions_dir):
        report = check_path(real_sessions_dir / "concrete" / entry["name"], CheckOptions(strict=True))
        refused = _refused(entry)
        blocking = sorted(HARNESS & set(refused))
        errors = [f for f in report.findings if f.is_error]
        if blocking and not errors:
            problems.append(f"{entry['name']}: official {blocking} refuse it ({[refused[x] for x in blocking]}), "
                            f"but the checker reports no error:\n{_describe(report)}")
        elif errors and not blocking:
            problems.append(f"{entry['name']}: the loader and the released migration accept it (refused by "
                            f"{sorted(refused) or 'no layer'}), but the checker reports errors:\n{_describe(report)}")
    assert not problems, "\n".join(problems)


def test_every_layer_refusing_a_real_v0_session_is_named_by_a_finding(real_sessions_dir: Path) -> None:
    problems = []
    for entry in _v0_entries(real_sessions_dir):
        report = check_path(real_sessions_dir / "concrete" / entry["name"], CheckOptions(strict=True))
        refused = _refused(entry)
        named = {str(layer) for f in report.findings for layer in f.refused_by}
        if not refused and report.findings and any(f.is_error for f in report.findings):
            problems.append(f"{entry['name']}: every official layer accepts it, but the checker reports errors:\n{_describe(report)}")
        for layer in sorted(set(refused) - named):
            problems.append(f"{entry['name']}: official {layer} refuses it ({refused[layer]}), "
                            f"but no finding names {layer}:\n{_describe(report)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", [1, 2])
def test_newer_format_real_sessions_are_checked_without_crashing(real_sessions_dir: Path, version: int) -> None:
    entries = [e for e in _entries(real_sessions_dir) if e["format_version"] == version]
    assert entries
    for entry in entries:
        report = check_path(real_sessions_dir / "concrete" / entry["name"], CheckOptions(strict=True))
        assert report.format_version == version and not report.internal_errors
