"""The checker agrees with the official layers on every real v0 session.

``manifest.json`` records each official layer's verdict per file. For format v0
(where the official layers decide): a file every layer accepts gets no
error-level finding, and for each layer that refuses a file the checker reports
an error finding of a rule whose registry entry names that layer in
``refused_by``. v1/v2 files (which the rc.8 layers refuse by version alone) must
still be checked without crashing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.checker import RULES, CheckOptions, check_path

MANIFEST_LAYER = {"loadDirect": "load", "loadApp": "load"}


def _entries(real_sessions_dir: Path) -> list[dict]:
    return json.loads((real_sessions_dir / "manifest.json").read_text(encoding="utf-8"))["files"]


def _describe(report) -> str:
    return "\n".join(f"  {f.rule} seq={f.seq} line={f.line}: {f.message} (refused by {','.join(map(str, f.refused_by))})" for f in report.findings) or "  (no findings)"


def test_every_real_v0_session_is_judged_consistently_with_the_official_layers(real_sessions_dir: Path) -> None:
    problems = []
    v0 = [e for e in _entries(real_sessions_dir) if e["format_version"] == 0]
    assert len(v0) >= 20
    for entry in v0:
        report = check_path(real_sessions_dir / "concrete" / entry["name"], CheckOptions(strict=True))
        refused = {MANIFEST_LAYER.get(k, k) for k, v in entry["official"].items() if v != "ok"}
        errors = [f for f in report.findings if f.is_error]
        if not refused and errors:
            problems.append(f"{entry['name']}: every official layer accepts it, but the checker reports errors:\n{_describe(report)}")
        covered = {str(layer) for f in errors for layer in RULES[f.rule].refused_by}
        for layer in sorted(refused - covered):
            problems.append(
                f"{entry['name']}: official {layer} refuses it ({entry['official'][next(k for k in entry['official'] if MANIFEST_LAYER.get(k, k) == layer)]}), "
                f"but no error finding names {layer}:\n{_describe(report)}"
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", [1, 2])
def test_newer_format_real_sessions_are_checked_without_crashing(real_sessions_dir: Path, version: int) -> None:
    entries = [e for e in _entries(real_sessions_dir) if e["format_version"] == version]
    assert entries
    for entry in entries:
        report = check_path(real_sessions_dir / "concrete" / entry["name"], CheckOptions(strict=True))
        assert report.format_version == version and not report.internal_errors
