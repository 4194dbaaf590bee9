"""The migration pre-checks and E4 name the released layer exactly when it refuses.

Format-1 logs are read by the released layer alone (every rc.8 layer refuses format 1),
so the format-1 twins of ``test_checker_migration`` are judged by released only: it
refuses the broken log with the G3 relation, and restores the twin. A lossy number
(``test_checker_persistence.LOSSY_PLACES``) is refused by released exactly where E4
names it, in both formats.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and mutants

import test_checker_migration
import test_checker_persistence
from agent_loop_logs import Builder
from checker_logs import check, explain

from dshfuzz.checker import CheckOptions, OfficialLayer, RuleId, check_path

V1_TWINS = test_checker_migration.v1_twins()


def _released(official, b: Builder) -> str | None:
    """None when released restores ``b``, else its message."""
    (verdict,) = official.check(events=b.events, header=b.header, layers=("released",)).values()
    return None if verdict.ok else (verdict.error.message if verdict.error else "refused")


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), V1_TWINS, ids=[c[1] for c in V1_TWINS])
def test_format_1_title_breaks_are_refused_by_released_as_g3_says(official, rule: RuleId, why: str, broken: Builder,
                                                                   twin: Builder) -> None:
    assert _released(official, twin) is None, f"{why}: released refuses the twin"
    refusal = _released(official, broken)
    findings = [f for f in check(broken.header, broken.events).findings if f.rule is rule]
    assert refusal is not None and findings, f"{why}: released says {refusal!r}\n" + explain(
        check(broken.header, broken.events), broken.header, broken.events)
    assert all(f.refused_by == (OfficialLayer.RELEASED,) for f in findings)


@pytest.mark.parametrize("version", [0, 1])
def test_a_title_citing_a_later_human_message_is_refused_by_released_only_in_format_0(official, version: int) -> None:
    b = Builder(version=version)
    b.text_turn()
    test_checker_migration._later_title(b)
    refusal = _released(official, b)
    g3 = [f for f in check(b.header, b.events).findings if f.rule is RuleId.G3]
    assert (refusal is not None) == (version == 0) == bool(g3), (refusal, [f.message for f in g3])


@pytest.mark.parametrize("token", ["-0", "-1e400"])
@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize(("where", "index", "edit", "v0", "v1"), test_checker_persistence.LOSSY_PLACES,
                         ids=[p[0] for p in test_checker_persistence.LOSSY_PLACES])
def test_released_refuses_a_lossy_number_exactly_where_e4_names_it(official, tmp_path: Path, where: str, index: int,
                                                                   edit, v0: bool, v1: bool, version: int,
                                                                   token: str) -> None:
    path = tmp_path / "lossy.jsonl"
    path.write_bytes(test_checker_persistence.lossy_log(version, index, edit, token))
    (verdict,) = official.check(path=path, layers=("released",)).values()
    e4 = [f for f in check_path(path, CheckOptions(strict=True)).findings if f.rule is RuleId.E4]
    assert e4, f"{where}: E4 did not fire"
    named = any(OfficialLayer.RELEASED in f.refused_by for f in e4)
    assert (not verdict.ok) is named is (v0 if version == 0 else v1), (
        f"{where}: released {'accepts' if verdict.ok else 'refuses: ' + str(verdict.error and verdict.error.message)}")
