"""``--baseline``: the causes known before a campaign, read from a summary or a corpus, and a
campaign's causes sorted into known, new and gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.harness import Baseline, BaselineError, load_baseline


def _summary(path: Path, *signatures: str, kind: str = "miss") -> Path:
    findings = [{"signature": s, "kind": s.partition("|")[0]} for s in signatures]
    path.write_text(json.dumps({"format": "dshfuzz-campaign-summary/1", "findings": findings}))
    return path


def _entry(corpus: Path, name: str, signature: str, fixed_by: str | None = None) -> None:
    (corpus / name).mkdir(parents=True)
    entry = {"signature": signature, "kind": signature.partition("|")[0], "fixedBy": fixed_by}
    (corpus / name / "meta.json").write_text(json.dumps({"format": "dshfuzz-corpus/1", "entries": {"a": entry}}))


def test_a_summarys_causes_are_its_checker_defects_less_their_format(tmp_path):
    path = _summary(tmp_path / "summary.json", "miss|expected|S5|v0", "miss|expected|S5|v1",
                    "crash|-|said:cannot read line N|v0", "official-disagreement|fold+load|-|v0")
    baseline = load_baseline(tmp_path)  # the report folder holding it reads the same
    assert baseline == Baseline(str(path), frozenset({"miss|expected|S5", "crash|-|said:cannot read line N"}))


def test_a_corpus_knows_its_open_entries_and_not_the_fixed_ones(tmp_path):
    _entry(tmp_path, "one", "wrong-place|-|E2|v0")
    _entry(tmp_path, "two", "false-alarm|-|T3|valid")  # a signature of the earlier format, ending in its mutator
    _entry(tmp_path, "three", "miss|expected|S5|v0", fixed_by="abc123")
    assert load_baseline(tmp_path).causes == {"wrong-place|-|E2", "false-alarm|-|T3"}


def test_a_campaigns_causes_are_known_new_or_the_baselines_gone():
    baseline = Baseline("b", frozenset({"miss|expected|S5", "crash|-|KeyError@check"}))
    comparison = baseline.compare([["miss|expected|S5"], ["miss|expected|T3"], ["miss|expected|S5"]])
    assert (comparison.known, comparison.new, comparison.gone) == (
        ("miss|expected|S5",), ("miss|expected|T3",), ("crash|-|KeyError@check",)
    )


def test_a_cause_found_together_with_a_known_one_is_known():
    baseline = Baseline("b", frozenset({"miss|load|seq gap at N"}))
    comparison = baseline.compare([["miss|load|seq gap at N", "miss|fold|session event N is not contiguous"],
                                   ["miss|expected|T3", "miss-model-only|invariants|-"]])
    assert comparison.known == ("miss|fold|session event N is not contiguous", "miss|load|seq gap at N")
    assert comparison.new == ("miss-model-only|invariants|-", "miss|expected|T3") and comparison.gone == ()


@pytest.mark.parametrize(
    "content, words",
    [
        ("not json", "not JSON"),
        ('{"format": "dshfuzz-corpus/1"}', "not a dshfuzz campaign summary"),
        ('{"format": "dshfuzz-campaign-summary/1", "findings": [{"kind": "miss"}]}', "finding 0 has no signature"),
    ],
)
def test_a_summary_that_is_not_one_is_one_clear_error(tmp_path, content, words):
    path = tmp_path / "summary.json"
    path.write_text(content)
    with pytest.raises(BaselineError, match=words) as caught:
        load_baseline(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_folder_that_is_neither_a_report_nor_a_corpus_is_one_clear_error(tmp_path):
    with pytest.raises(BaselineError, match="neither a report folder nor a corpus"):
        load_baseline(tmp_path)
