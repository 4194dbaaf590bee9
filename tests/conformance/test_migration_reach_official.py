"""Three checker defects found by aiming the campaign at the migration checks' unexercised lines
(``aimed-migration``), each pinned against the official layers:

- released's unresolved-call check names only the first open lifecycle of a step and passes
  when its id is undefined (V01:2513-2515): a format-1 advert without an id left unanswered is
  accepted by every layer, and P5 (and W3's released attribution) must say nothing of released;
- a format-1 restore reads an appended tool/result's ``error`` as a record (V01:2362): an error
  that is no object is refused by released alone, which G5 must report;
- released's v0 migration renames the legacy ``compact/*`` types (V01:1923), so only the loader
  refuses them: E3 must not name released.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders

from agent_loop_logs import Builder, jsonl
from checker_logs import check

from dshfuzz.checker import OfficialLayer, RuleId
from dshfuzz.harness._judge import official_layers_for

pytestmark = pytest.mark.official


def _refusals(official: Any, tmp_path: Path, b: Builder) -> dict[str, str]:
    """The refusal of each layer that judges the log's format (from a file: the loader reads one)."""
    path = tmp_path / "log.jsonl"
    path.write_text(jsonl(b.header, b.events))
    verdicts = official.check(path=path, layers=official_layers_for(b.header["version"]))
    return {layer: v.error.message if v.error else "refused" for layer, v in verdicts.items() if not v.ok}


def _unanswered_adverts(ids: list[bool]) -> Builder:
    """A format-1 turn whose one step advertises calls (with or without an id, in that order) and answers none."""
    b = Builder(version=1)
    b.open_step()
    calls = b.assistant([{"type": "tool-call", "name": "read", "arguments": f'{{"n":{i}}}'} for i in range(len(ids))])
    message = b.events[-1]["data"]["message"]
    for keep, block in zip(ids, message["content"]):
        if not keep:
            del block["id"]
    assert len(calls) == len(ids)
    b.step_end()
    b.turn_end()
    return b


@pytest.mark.parametrize("ids", [[False], [False, True]], ids=["one-without-id", "first-without-id"])
def test_an_unanswered_first_advert_without_an_id_is_no_released_refusal(official: Any, tmp_path: Path, ids: list[bool]) -> None:
    b = _unanswered_adverts(ids)
    assert _refusals(official, tmp_path, b) == {}
    report = check(b.header, b.events)
    assert not [f for f in report.findings if f.rule is RuleId.P5]
    assert not [f for f in report.findings if OfficialLayer.RELEASED in f.refused_by]


def test_an_unanswered_first_advert_with_an_id_is_refused_by_released_as_p5_says(official: Any, tmp_path: Path) -> None:
    b = _unanswered_adverts([True, False])
    assert "leaves unresolved tool call" in _refusals(official, tmp_path, b).get("released", "")
    p5 = [f for f in check(b.header, b.events).findings if f.rule is RuleId.P5]
    assert p5 and all(OfficialLayer.RELEASED in f.refused_by for f in p5)


@pytest.mark.parametrize("error", ["the tool failed", None, ["x"]], ids=["string", "null", "array"])
def test_a_format_1_tool_result_error_that_is_no_object_is_refused_by_released_as_g5_says(official: Any, tmp_path: Path,
                                                                                          error: Any) -> None:
    b = Builder(version=1)
    b.tool_turn()
    (result,) = [e for e in b.events if e["type"] == "tool/result"]
    result["data"]["error"] = error
    assert _refusals(official, tmp_path, b) == {"released": f"tool/result {result['seq']} error must be a JSON object"}
    g5 = [f for f in check(b.header, b.events).findings if f.rule is RuleId.G5]
    assert [f.refused_by for f in g5] == [(OfficialLayer.RELEASED,)]
    assert g5[0].message.endswith(f"tool/result {result['seq']} error must be a JSON object")


def test_legacy_compact_types_in_format_0_are_refused_by_the_loader_only_as_e3_says(official: Any, tmp_path: Path) -> None:
    b = Builder(version=0)
    b.text_turn()
    first = b.surface[0]
    b.compaction(first, first)
    for event in b.events:
        if event["type"] in ("compaction/start", "compaction/summary", "compaction/end"):
            event["type"] = "compact/" + event["type"].split("/")[1]
    refusals = _refusals(official, tmp_path, b)
    assert set(refusals) == {"load"} and 'event type "compact/start"' in refusals["load"]
    e3 = [f for f in check(b.header, b.events).findings if f.rule is RuleId.E3]
    assert len(e3) == 3 and all(f.refused_by == (OfficialLayer.LOAD,) for f in e3)
