"""The fire/no-fire pairs of issue 20's shapes agree with the official layers.

``tests/unit/test_rule_twins.py`` proves each rule fires on its broken file and not on
its twin, through the streamed read. For the shapes the checker once missed or misjudged
(every way the first zstd frame is not exactly the header line, a content element that is
not a typed object, a tool-call id advertised differently from the one answered, a legacy
pre-identity message) this suite asks the official layers about the same two files: every
offline layer a finding of the pair's rule names refuses the broken file, every layer
that refuses it is named by some finding, and every layer accepts the twin. A pair's
broken file is an error exactly when some layer refuses it (a warning never answers for a
refusal), but for a legacy shape the loader and the released migration upgrade on read: that
one is an error exactly when the loader or the migration refuses it, since the layers that
refuse it read the raw shape the harness never hands them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and pairs

import test_rule_twins  # noqa: E402

from dshfuzz.checker import OfficialLayer  # noqa: E402

FOLDED = {"loadApp": "load", "loadDirect": "load"}
OFFLINE = {str(x) for x in OfficialLayer} - {"provider"}
HARNESS = {"load", "released"}
V0_ONLY = {"seed", "invariants", "load", "wire"}  # the layers that refuse any header but format 0

PAIRS = test_rule_twins.ISSUE_20_PAIRS


def _write(directory: Path, name: str, file: test_rule_twins.File) -> Path:
    path = directory / (name + (".jsonl.zstd" if file.compression == "zstd" else ".jsonl"))
    path.write_bytes(file.data)
    return path


def _refusals(official, path: Path) -> dict[str, str]:
    """Each refusing layer's message; for a format-1 file, only the layers that read format 1 (the
    others refuse its header, whatever its events)."""
    v1 = b'"version":1' in path.read_bytes().split(b"\n", 1)[0]
    out: dict[str, str] = {}
    for name, verdict in official.check(path=path).items():
        name = FOLDED.get(name, name)
        if not verdict.ok and not (v1 and name in V0_ONLY):
            out[name] = verdict.error.message if verdict.error else "refused"
    return out


@pytest.mark.official
@pytest.mark.parametrize(("rule", "why", "broken", "twin"), PAIRS, ids=[f"{c[0]}-{c[1]}" for c in PAIRS])
def test_the_pair_matches_the_official_verdicts(official, tmp_path: Path, rule, why: str, broken, twin) -> None:
    bad, good = broken(), twin()
    refused = _refusals(official, _write(tmp_path, "broken", bad))
    twin_refused = _refusals(official, _write(tmp_path, "twin", good))
    assert not twin_refused, f"{why}: the twin is refused: {twin_refused}"
    assert refused, f"{why}: every official layer accepts the broken file"
    report = bad.check()
    mine = [f for f in report.findings if f.rule is rule]
    assert mine, f"{why}: {rule} did not fire"
    claimed = {str(layer) for f in mine for layer in f.refused_by} & OFFLINE
    if b'"version":1' in bad.data.split(b"\n", 1)[0]:
        claimed -= V0_ONLY  # as for the refusals (_refusals): their verdicts on a format-1 file are not compared
    assert claimed <= set(refused), f"{why}: {rule} claims {sorted(claimed)}; official refusals: {refused}"
    named = {str(layer) for f in report.findings for layer in f.refused_by}
    assert set(refused) <= named, f"{why}: official {sorted(set(refused) - named)} refuse ({refused}) but no finding names them"
    upgraded = all(f.context.get("upgraded") for f in mine)
    blocking = HARNESS & set(refused) if upgraded else set(refused)
    assert bool(report.errors) == bool(blocking), (
        f"{why}: {report.errors} error(s), but the {'loader/released ' if upgraded else ''}verdicts are {refused}"
    )
    assert good.check().errors == 0


@pytest.mark.official
@pytest.mark.parametrize(("rule", "why", "file"), test_rule_twins.ISSUE_20_SILENT,
                         ids=[f"{c[0]}-{c[1]}" for c in test_rule_twins.ISSUE_20_SILENT])
def test_a_silent_case_is_accepted_by_every_layer_that_reads_it(official, tmp_path: Path, rule, why: str, file) -> None:
    """A rule once fired here; every official layer that reads the file's format accepts it (seed,
    the invariants and the loader read format 0 only, so their refusal of a format-1 file's header
    says nothing about its events)."""
    f = file()
    refused = _refusals(official, _write(tmp_path, "silent", f))
    assert not refused, f"{why}: refused by {refused}"
    assert rule not in {x.rule for x in f.check().findings}


@pytest.mark.official
@pytest.mark.parametrize(("rule", "why", "broken", "twin"), test_rule_twins.MIGRATION_PRECHECK_PAIRS,
                         ids=[f"{c[0]}-{c[1]}" for c in test_rule_twins.MIGRATION_PRECHECK_PAIRS])
def test_a_migration_precheck_pair_matches_the_official_verdicts(official, tmp_path: Path, rule, why: str, broken,
                                                                 twin) -> None:
    """As for the issue-20 pairs: the catalog grades the rule a warning, but released refuses the
    broken file, so its findings are errors (a warning never answers for a refusal)."""
    bad, good = broken(), twin()
    refused = _refusals(official, _write(tmp_path, "broken", bad))
    assert not _refusals(official, _write(tmp_path, "twin", good)), f"{why}: the twin is refused"
    assert refused, f"{why}: every official layer accepts the broken file"
    mine = [f for f in bad.check().findings if f.rule is rule]
    assert mine and all(str(f.severity) == "error" for f in mine), f"{why}: {mine}"
    claimed = {str(layer) for f in mine for layer in f.refused_by} & OFFLINE
    assert claimed and claimed <= set(refused), f"{why}: {rule} claims {sorted(claimed)}; official refusals: {refused}"
    assert set(refused) <= claimed, f"{why}: official {sorted(set(refused) - claimed)} refuse ({refused}), unnamed"
