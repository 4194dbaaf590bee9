"""docs/CONTRACTS.md is generated from the registry; this fails when it drifts."""

from __future__ import annotations

import json
from pathlib import Path

from dshfuzz.checker import RULES
from dshfuzz.cli import main
from dshfuzz.report import contracts_markdown as render_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "CONTRACTS.md"


def test_committed_contracts_doc_matches_the_registry() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/CONTRACTS.md drifted from dshfuzz.contracts.rules; regenerate it with "
        "`dshfuzz contracts --markdown > docs/CONTRACTS.md`"
    )


def test_contracts_json_lists_every_rule_with_refused_by(capsys) -> None:
    assert main(["contracts", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed] == [str(r) for r in RULES]
    assert all(isinstance(r["refusedBy"], list) for r in listed)
    assert {"W3", "W4", "P5", "W5"} <= {r["id"] for r in listed}
