"""The campaign summary every reporter renders: one witness per signature, counts from judged logs."""

from __future__ import annotations

from dshfuzz.harness import DisagreementFound, ExampleJudged
from dshfuzz.report import CampaignSummary, render_html, render_markdown


def _found(signature: str, events: int) -> DisagreementFound:
    kind, layer, rules, mutator = signature.split("|")
    return DisagreementFound(
        signature=signature, kind=kind, layer=layer, rules=(), mutator=mutator, detail="", data=b"{}\n",
        compression="none", format_version=0, events_found=events, events_minimal=1,
        checker_rules=(), expected_rules=(),
    )


def test_two_workers_finding_the_same_signature_give_one_finding_with_its_count():
    summary = CampaignSummary()
    sig = "miss|released|-|lossy-json"
    for worker in (0, 1):
        summary.add(ExampleJudged(worker, "lossy-json", 15, frozenset(), frozenset({"E4"}), frozenset(), (sig,), 0.0))
        summary.add(_found(sig, 15 + worker))
    assert [f.signature for f in summary.findings] == [sig]
    assert summary.to_json()["findings"][0]["count"] == 2
    assert summary.recall("lossy-json") == 0.0
    assert sig in render_markdown(summary) and sig in render_html(summary)


def _shown(signature: str, *shows: str) -> DisagreementFound:
    kind, layer, rules, version = signature.split("|")
    return DisagreementFound(
        signature=signature, kind=kind, layer=layer, rules=(rules,), mutator="seq-gap", detail="", data=b"{}\n",
        compression="none", format_version=int(version[1:]), events_found=3, events_minimal=3,
        checker_rules=(), expected_rules=(), shows=(signature, *shows),
    )


def test_findings_whose_witnesses_show_each_others_signatures_are_one_cause():
    fold, load, released = "miss|fold|gap at N|v0", "miss|load|seq gap at N|v0", "miss|released|seq N|v0"
    crash = "crash|-|KeyError@check|v0"
    summary = CampaignSummary()
    for found in (
        _shown(fold, load, released), _shown(load, fold, released), _shown(released, fold, load),
        _shown("miss|load|seq gap at N|v1"),  # the same cause in another format
        _shown("miss|meter|TypeError|v0"),  # its witness shows only itself: a defect of its own
        _shown(crash, fold),  # shows the fold's miss, but the fold's witness does not show the crash
    ):
        summary.add(found)
    causes = summary.causes()
    assert [[f.signature for f in group] for group in causes.values()] == [
        [fold, load, released, "miss|load|seq gap at N|v1"], ["miss|meter|TypeError|v0"], [crash],
    ]
    summary_json = summary.to_json()
    assert summary_json["causes"] == 3
    assert [f["sameCauseAs"] for f in summary_json["findings"]] == [None, 1, 1, 1, None, None]


def test_recall_stays_within_the_checkers_vocabulary():
    """A checker that does not claim W3 is never asked for it: its recall on orphan calls is
    the recall of P3, the one expected rule it claims."""
    summary = CampaignSummary()
    for fired in (frozenset({"P3"}), frozenset({"P3"})):
        summary.add(ExampleJudged(0, "orphan-tool-call", 9, fired, frozenset({"P3", "W3"}), frozenset(), (), 0.0,
                                  claimed_rules=frozenset({"P3"})))
    summary.add(ExampleJudged(0, "inbox-orphan-splice", 9, frozenset(), frozenset({"I1"}), frozenset(), (), 0.0,
                              claimed_rules=frozenset()))
    assert summary.recall("orphan-tool-call") == 1.0 and summary.low_recall() == []
    assert summary.recall("inbox-orphan-splice") is None  # it expects nothing the checker claims
    assert summary.to_json()["expectedRules"]["orphan-tool-call"] == ["P3"]


def test_a_py_checkers_reproduce_line_runs_the_checker_on_the_witness(tmp_path) -> None:
    """A finding's reproduce line is a shell line a user pastes: for a ``py:`` checker it calls the
    function as the campaign does and prints its report (it once named a command that takes no log)."""
    import json
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    from dshfuzz.generators import generate
    from dshfuzz.report._summary import reproduce_command

    witness = tmp_path / "witness one.jsonl"  # a space: the line quotes the path
    witness.write_bytes(next(generate(1, seed=3, max_events=20)).to_jsonl())
    line = reproduce_command("py:tests.broken_checkers.three_misses:check", str(witness))
    argv = shlex.split(line)
    assert argv[0] == "python"
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, *argv[1:]], cwd=repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "findings" in json.loads(proc.stdout), proc.stdout
