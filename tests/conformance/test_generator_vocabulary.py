"""The generators speak the installed packages' whole v0 vocabulary (issue 32, item 3).

The vocabulary is read from the installed packages through Node, not from our constants: a type
a new official release adds, or a member a released disposition gains, fails here until the
generators write it. Checked: every type of ``KNOWN_SESSION_EVENT_TYPES`` and of
``RELEASED_V0_EVENT_DISPOSITIONS`` is generated; every required and optional member of every
disposition appears; docs/VOCABULARY.md lists exactly the installed types; and the logs carrying
the types rc.8 does not know pass every official layer (the property over all generated logs is
test_generated_official.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from dshfuzz.generators import FeatureWeights, GeneratedLog, generate
from dshfuzz.generators._vocabulary import KNOWN_V0_EVENT_TYPES, RELEASED_EXTRA_EVENT_TYPES

_JS = REPO / "src/dshfuzz/oracle/official/js"
_DOC = REPO / "docs/VOCABULARY.md"
_PRINT = """
import { KNOWN_SESSION_EVENT_TYPES } from '@deepseek-ai/dsh-session';
import { RELEASED_V0_EVENT_DISPOSITIONS } from '@deepseek-ai/dsh-session-format-v0-to-v1';
console.log(JSON.stringify({ known: [...KNOWN_SESSION_EVENT_TYPES], dispositions: RELEASED_V0_EVENT_DISPOSITIONS }));
"""
# Members a disposition admits only in format 1 (V01:1589, the delivery marker's generation).
_V1_ONLY = {"session-log-deepseek/delivery-accepted": ("sessionFormatVersion",)}


@cache
def _installed() -> dict[str, Any]:
    from dshfuzz.oracle.official import unavailable_reason
    from dshfuzz.oracle.official._server import node_executable

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"official packages unavailable ({reason})")
    node = node_executable()
    assert node is not None
    out = subprocess.run(
        [str(node), "--input-type=module", "-e", _PRINT], cwd=_JS, capture_output=True, text=True, check=True
    ).stdout
    installed: dict[str, Any] = json.loads(out)
    return installed


@cache
def _logs(version: int) -> tuple[GeneratedLog, ...]:
    return tuple(generate(600 if version == 0 else 300, 32, format_version=version, max_events=200))


def _members(version: int) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for log in _logs(version):
        for event in log.events:
            seen[event["type"]].update(event["data"])
    return seen


def test_our_vocabulary_constants_are_the_installed_ones() -> None:
    installed = _installed()
    assert set(installed["known"]) == KNOWN_V0_EVENT_TYPES
    assert set(installed["dispositions"]) - set(installed["known"]) == RELEASED_EXTRA_EVENT_TYPES


@pytest.mark.parametrize("version", [0, 1])
def test_every_type_the_installed_packages_accept_is_generated(version: int) -> None:
    installed = _installed()
    wanted = set(installed["known"]) | set(installed["dispositions"])
    assert sorted(wanted - set(_members(version))) == []


@pytest.mark.parametrize("version", [0, 1])
def test_every_member_of_every_released_disposition_is_generated(version: int) -> None:
    seen = _members(version)
    missing = {}
    for type_, disposition in _installed()["dispositions"].items():
        wanted = set(disposition["required"]) | set(disposition["optional"])
        if version == 1:
            wanted |= set(_V1_ONLY.get(type_, ()))
        if wanted - seen[type_]:
            missing[type_] = sorted(wanted - seen[type_])
    assert missing == {}


def test_the_vocabulary_doc_lists_exactly_the_installed_types() -> None:
    installed = _installed()
    listed = set(re.findall(r"^\| `([^`]+)` \|", _DOC.read_text(encoding="utf-8"), re.MULTILINE))
    assert listed == set(installed["known"]) | set(installed["dispositions"])


def test_logs_with_the_types_rc8_does_not_know_pass_every_official_layer(official) -> None:
    """Marked ignorable, released's three extra types pass rc.8's layers and released's payload
    validation, as ``.jsonl`` and ``.jsonl.zstd``, in format 0; format 1 through released's restore."""
    weights = FeatureWeights(side=1.0)
    refusals: list[str] = []
    checked = 0
    with tempfile.TemporaryDirectory(prefix="dshfuzz-vocab-") as tmp:
        for version in (0, 1):
            for log in generate(40, 5, format_version=version, weights=weights, max_events=120):
                if not RELEASED_EXTRA_EVENT_TYPES & {e["type"] for e in log.events}:
                    continue
                checked += 1
                plain, packed = Path(tmp) / "log.jsonl", Path(tmp) / "log.jsonl.zstd"
                plain.write_bytes(log.to_jsonl())
                layers = None if version == 0 else ("released",)
                verdicts = dict(official.check(path=plain, layers=layers))
                if version == 0:
                    packed.write_bytes(log.to_zstd())
                    verdicts |= {f"{k} (zstd)": v for k, v in official.check(path=packed, layers=("load", "loadApp")).items()}
                refusals += [f"v{version} {name}: {v.error}" for name, v in verdicts.items() if not v.ok]
    assert checked >= 20
    assert refusals == []
