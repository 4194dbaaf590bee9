"""The rule registry: complete, ordered, self-consistent, and every rule implemented."""

from __future__ import annotations

import re
from pathlib import Path

from dshfuzz.checker import RULES, RuleId, implemented_rules
from dshfuzz.checker.rules import ALL_FORMATS

CATALOG = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000-contracts-catalog.txt"
NEW_RULES = ["W3", "W4", "P5", "W5"]


def test_registry_holds_the_46_catalog_rules_in_catalog_order_then_the_seed_rules() -> None:
    index = CATALOG.read_text(encoding="utf-8").split("规则索引")[1].split("详细规则")[0]
    catalog_ids = re.findall(r"^([A-Z]\d+)(?:error|warning)", index, re.M)
    assert len(catalog_ids) == 46
    assert [str(r) for r in RULES] == catalog_ids + NEW_RULES
    assert list(RULES) == list(RuleId)


def test_every_rule_has_complete_metadata() -> None:
    for rid, rule in RULES.items():
        assert rule.id is rid
        assert rule.title and rule.contract and rule.source, rid
        assert rule.formats and rule.formats <= ALL_FORMATS, rid
        assert rule.origin == ("catalog" if str(rid) not in NEW_RULES else rule.origin), rid
        assert rule.divergence is None or rule.divergence.endswith("."), rid
        assert len(set(rule.refused_by)) == len(rule.refused_by), rid


def test_catalog_severity_and_layer_are_kept() -> None:
    index = CATALOG.read_text(encoding="utf-8").split("规则索引")[1].split("详细规则")[0]
    for rid, severity, layer in re.findall(r"^([A-Z]\d+)(error|warning)(persistence|engine|plugin|concurrency|framing|migration)", index, re.M):
        rule = RULES[RuleId(rid)]
        assert (str(rule.severity), str(rule.layer)) == (severity, layer), rid


def test_every_rule_of_the_registry_is_reported_by_some_pass() -> None:
    # 5a's and 5b's rule modules together must cover the registry
    missing = set(RULES) - implemented_rules()
    assert not missing, f"rules without a pass: {sorted(map(str, missing))}"
