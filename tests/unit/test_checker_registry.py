"""The rule registry: complete, ordered, self-consistent, and every rule implemented."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from dshfuzz.checker import RULES, RuleId, implemented_rules
from dshfuzz.contracts.rules import ALL_FORMATS

NEW_RULES = ["W3", "W4", "P5", "W5", "L1", "L2", "L3", "L4", "G4", "G5"]


@pytest.fixture(scope="module")
def catalog_index(shared: Callable[..., Path]) -> str:
    """The rule index of the contract catalog (the seed text ``seeds/000-contracts-catalog.txt``)."""
    catalog = shared("seeds", "000-contracts-catalog.txt")
    return catalog.read_text(encoding="utf-8").split("规则索引")[1].split("详细规则")[0]


def test_registry_holds_the_46_catalog_rules_in_catalog_order_then_the_seed_rules(catalog_index: str) -> None:
    catalog_ids = re.findall(r"^([A-Z]\d+)(?:error|warning)", catalog_index, re.M)
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


def test_catalog_severity_and_layer_are_kept(catalog_index: str) -> None:
    """The catalog's severity holds, except that a rule the loader or the released migration
    refuses is an error (the harness cannot use such a log), and its divergence says so."""
    for rid, severity, layer in re.findall(r"^([A-Z]\d+)(error|warning)(persistence|engine|plugin|concurrency|framing|migration)", catalog_index, re.M):
        rule = RULES[RuleId(rid)]
        assert str(rule.layer) == layer, rid
        if str(rule.severity) != severity:
            assert (severity, str(rule.severity)) == ("warning", "error"), rid
            assert {"load", "released"} & {str(x) for x in rule.refused_by}, rid
            assert "The catalog grades it a warning" in (rule.divergence or ""), rid


def test_every_rule_of_the_registry_is_reported_by_some_pass() -> None:
    # 5a's and 5b's rule modules together must cover the registry
    missing = set(RULES) - implemented_rules()
    assert not missing, f"rules without a pass: {sorted(map(str, missing))}"


def _all_unit_logs() -> list[tuple[str, bytes]]:
    """Every minimal log of the checker unit tests (both twins)."""
    import test_checker_engine
    import test_checker_migration
    import test_checker_persistence
    import test_checker_plugin
    import test_checker_surface
    import test_checker_wire
    from agent_loop_logs import jsonl
    from checker_logs import header, minimal_events

    from dshfuzz.model import dumps

    out = []
    for rule, breaks, keeps in test_checker_persistence.EVENT_CASES + test_checker_surface.CASES:
        for mutate in (breaks, keeps):
            events = minimal_events()
            mutate(events)
            events = test_checker_surface._clean(events)
            out.append((f"{rule} mutant", "".join(dumps(x) + "\n" for x in [header(), *events]).encode()))
    for module in (test_checker_engine, test_checker_plugin, test_checker_wire, test_checker_migration):
        for rule, name, bad, good in module.twins():
            for builder in (bad, good):
                out.append((f"{rule} {name}", jsonl(builder.header, builder.events).encode()))
    return out


def _widened(logs: list[tuple[str, bytes]]) -> set[str]:
    """The findings on ``logs`` that claim a layer their rule does not list."""
    from dshfuzz.checker import CheckOptions, check_log
    from dshfuzz.model import parse_log

    wider = set()
    for name, data in logs:
        for f in check_log(parse_log(data), CheckOptions(strict=True)).findings:
            extra = set(f.refused_by) - set(RULES[f.rule].refused_by)
            if extra:
                wider.add(f"{f.rule} on {name}: {sorted(map(str, extra))}")
    return wider


def test_every_finding_claims_only_layers_its_rule_lists() -> None:
    """A finding may narrow its rule's ``refused_by``, never widen it: the registry
    (and the generated doc) must name every layer any finding of the rule can claim."""
    wider = _widened(_all_unit_logs())
    assert not wider, "\n".join(sorted(wider))


def test_every_finding_on_a_real_session_claims_only_layers_its_rule_lists(real_sessions_dir: Path) -> None:
    real = sorted((real_sessions_dir / "concrete").glob("*.jsonl"))
    assert real
    wider = _widened([(p.name, p.read_bytes()) for p in real])
    assert not wider, "\n".join(sorted(wider))
