"""A metamorphic finding says that a verdict changed under a rewrite that must not change it.
A rewrite the official layers refuse changed the log itself: that log is judged as a log of
its own, never as metamorphic. A metamorphic witness is a pair, kept whole: the log before the
rewrite beside it, a reproduce line over both, and no delta-debugging of one half alone."""

from __future__ import annotations

import json

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness import DisagreementFound, Example, Judge
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.mutators import MUTATORS, apply_seeded
from dshfuzz.report import CampaignSummary, write_reports


def _rewritten_into_a_seq_gap() -> Example:
    """A valid log 'rewritten' into one with a seq gap: the rewrite broke it (E2), as a
    transform the official layers refuse would."""
    log = next(iter(generate(1, seed=3, min_events=8, max_events=30)))
    broken = apply_seeded(MUTATORS["seq-gap"], log, 1)
    return Example(broken.data, broken.compression, transform="whitespace", original=log.to_jsonl(),
                   original_compression="none")


@pytest.mark.official
def test_a_rewrite_the_official_layers_refuse_is_judged_as_a_log_of_its_own(official):
    example = _rewritten_into_a_seq_gap()
    with Judge(BuiltinChecker(), official=official) as judge:
        judged = judge.judge(example)
    assert judged.truth.refusing, "the rewritten log is refused"
    assert not [d for d in judged.disagreements if d.kind == "metamorphic"], judged.disagreements
    assert not judged.defects, judged.defects  # the built-in checker refuses it too: no defect at all
    with Judge(BuiltinChecker()) as alone:  # with no official layer to say so, the change shows
        assert [d.kind for d in alone.judge(example).disagreements if d.kind == "metamorphic"] == ["metamorphic"]


def test_a_metamorphic_finding_is_not_delta_debugged_half_at_a_time():
    example = _rewritten_into_a_seq_gap()
    with Judge(BuiltinChecker()) as judge:
        judged = judge.judge(example)
        [defect] = [d for d in judged.disagreements if d.kind == "metamorphic"]
        assert judge.still_fails(defect, example) is None


def test_a_metamorphic_witness_holds_both_logs_and_its_reproduce_line_runs_both(tmp_path):
    found = DisagreementFound(
        signature="metamorphic|whitespace|E2|v0", kind="metamorphic", layer="whitespace", rules=("E2",),
        mutator=None, detail="[] became ['E2']", data=b"after\n", compression="none", format_version=0,
        events_found=3, events_minimal=3, checker_rules=("E2",), expected_rules=(), original=b"before\n",
        original_compression="zstd",
    )
    summary = CampaignSummary()
    summary.add(found)
    write_reports(summary, tmp_path)
    [entry] = json.loads((tmp_path / "summary.json").read_text())["findings"]
    assert (tmp_path / entry["witness"]).read_bytes() == b"after\n"
    assert entry["original"] == "witnesses/001.original.jsonl.zstd"
    assert (tmp_path / entry["original"]).read_bytes() == b"before\n"
    before, after = str(tmp_path / entry["original"]), str(tmp_path / entry["witness"])
    assert entry["reproduce"].index(before) < entry["reproduce"].index(after), entry["reproduce"]
