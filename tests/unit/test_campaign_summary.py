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
