"""The persistence, surface and framing rules name the official moments that really refuse.

Every minimal mutant of the unit tests (the event, header and surface cases of
``test_checker_persistence`` and ``test_checker_surface``) is written as a JSONL
file and judged by every official layer. For each finding of the mutated rule,
every harness layer its ``refused_by`` lists must refuse the mutant (``provider``
is the real endpoint, which no offline layer stands for) and accept the
unmutated twin; and every layer that refuses the mutant but not its twin must be
named by some finding.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and mutants

import test_checker_persistence  # noqa: E402
import test_checker_surface  # noqa: E402
from checker_logs import header, minimal_events  # noqa: E402

from dshfuzz.checker import CheckOptions, OfficialLayer, RuleId, check_path  # noqa: E402
from dshfuzz.model import dumps  # noqa: E402

FOLDED = {"loadApp": "load"}
OFFLINE = {str(x) for x in OfficialLayer} - {"provider"}


def _cases():
    for rule, breaks, keeps in test_checker_persistence.EVENT_CASES + test_checker_surface.CASES:
        bad, good = minimal_events(), minimal_events()
        breaks(bad)
        keeps(good)
        yield rule, header(), test_checker_surface._clean(bad), header(), test_checker_surface._clean(good)
    for rule, bad_head, good_head in test_checker_persistence.HEADER_CASES:
        yield rule, bad_head, minimal_events(), good_head, minimal_events()


CASES = list(_cases())


def _write(tmp_path: Path, name: str, head, events) -> Path:
    path = tmp_path / name
    path.write_text("".join(dumps(x) + "\n" for x in [head, *events]), encoding="utf-8")
    return path


def _refusals(official, path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, verdict in official.check(path=path).items():
        if not verdict.ok and name != "wire":
            out[FOLDED.get(name, name)] = verdict.error.message if verdict.error else "refused"
    return out


@pytest.mark.official
@pytest.mark.parametrize(("rule", "bad_head", "bad", "good_head", "good"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_refused_by_names_exactly_the_layers_that_refuse(official, tmp_path: Path, rule: RuleId, bad_head, bad, good_head, good) -> None:
    bad_path, good_path = _write(tmp_path, "bad.jsonl", bad_head, bad), _write(tmp_path, "good.jsonl", good_head, good)
    report = check_path(bad_path, CheckOptions(strict=True))
    refused, twin_refused = _refusals(official, bad_path), _refusals(official, good_path)
    mine = [f for f in report.findings if f.rule is rule]
    assert mine, f"{rule} did not fire"
    claimed = {str(layer) for f in mine for layer in f.refused_by} & OFFLINE
    assert claimed <= set(refused), f"{rule} claims {sorted(claimed - set(refused))} refuse, but they accept; refusals: {refused}"
    assert not (claimed & set(twin_refused)), f"the twin is refused by a claimed layer too: {twin_refused}"
    named = {str(layer) for f in report.findings for layer in f.refused_by}
    unexplained = set(refused) - set(twin_refused) - named
    assert not unexplained, f"official {sorted(unexplained)} refuse ({refused}) but no finding names them"
