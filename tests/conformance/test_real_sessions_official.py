"""The bridge reproduces the official verdicts recorded for the 34 real sessions.

``real-sessions/manifest.json`` holds, per file and layer, "ok" or the official
error name with its message (truncated). Every layer must agree, with one
documented difference: the manifest's ``released`` ran a v0-only wiring, while
our ``released`` is the official catalog with current version 1 (v0 codec +
v0->v1 migration, and the v1 codec restoring a format-1 log). So for a v1 file
the v0-only refusal "expected released v0 physical Session header" becomes the
v1 restore's verdict, a header refusal names "v1" instead of "v0", and a v2
file is refused by the catalog as newer than current.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_params

from dshfuzz.oracle.official import MANIFEST_LAYER_NAMES, OfficialOracle

pytestmark = pytest.mark.official


def _files(manifest: Path) -> list[dict]:
    return json.loads(manifest.read_text("utf-8"))["files"]


def _entries(manifest: Path) -> list:
    return [pytest.param(f, id=f["name"]) for f in _files(manifest)]


def expected_released(entry: dict) -> object:
    """The manifest's released verdict, translated to the v1-current catalog."""
    recorded = entry["official"]["released"]
    version = entry["format_version"]
    if version == 0:
        return recorded
    if version == 1:
        if recorded != "ok" and recorded["message"] == "expected released v0 physical Session header":
            return "ok"
        return {**recorded, "message": recorded["message"].replace("released v0 ", "released v1 ")}
    return {
        "error": "SessionFormatUnsupportedMigrationError",
        "message": f"stored Session uses newer format v{version}; this build writes v1",
    }


def test_manifest_lists_every_concrete_file(real_sessions_dir: Path):
    names = sorted(f["name"] for f in _files(real_sessions_dir / "manifest.json"))
    assert sorted(p.name for p in (real_sessions_dir / "concrete").iterdir()) == names


@shared_params("entry", "real-sessions/manifest.json", _entries)
def test_bridge_reproduces_the_recorded_verdicts(official: OfficialOracle, real_sessions_dir: Path, entry: dict):
    report = official.check_report(path=real_sessions_dir / "concrete" / entry["name"])
    assert report.decode_error is None, report.decode_error
    mismatches = []
    for manifest_name, recorded in entry["official"].items():
        expected = expected_released(entry) if manifest_name == "released" else recorded
        verdict = report.layers[MANIFEST_LAYER_NAMES[manifest_name]]
        if expected == "ok":
            agrees = verdict.ok
        else:
            # the manifest truncates messages; ours are normalised but the raw text is kept
            agrees = (
                not verdict.ok
                and verdict.error.name == expected["error"]
                and verdict.error.raw_message.startswith(expected["message"])
            )
        if not agrees:
            got = "ok" if verdict.ok else f"{verdict.error.name}: {verdict.error.raw_message}"
            mismatches.append(f"{manifest_name}: expected {expected}, got {got}")
    assert not mismatches, "\n".join(mismatches)
