"""A seq gap in a JSONL log's tail after its last turn/end: the loader keeps the prefix before the gap as
a torn tail (SPJ:285-294) and accepts the log, so no finding names the loader: neither C1's warning
(the trace two writers leave) nor S8's verdict (the fold throws at the gap), as E2's error already did not.

Found by the ``aimed-released`` family (issue 32, ``cite-past-end``): C1 named the loader on a log
whose only gap was in that tail (wrong-layer|load:accepts|C1), and so did S8 on this one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders

from agent_loop_logs import Builder, jsonl
from checker_logs import check, explain

from dshfuzz.checker import RuleId, check_path
from dshfuzz.harness._scope import official_layers_for

pytestmark = pytest.mark.official


def test_a_gap_in_the_tail_is_no_finding_naming_the_loader(official: Any, tmp_path: Path) -> None:
    b = Builder()
    b.text_turn()
    b.turn_start()
    b.events[-1]["seq"] += 1  # the open turn's turn/start, after the last turn/end, skips a seq
    path = tmp_path / "gap.jsonl"
    path.write_text(jsonl(b.header, b.events))
    verdicts = official.check(path=path.resolve(), layers=official_layers_for(0))
    assert verdicts["load"].ok, verdicts["load"]
    refusing = {str(layer) for layer, v in verdicts.items() if not v.ok}
    report = check(b.header, b.events)
    assert {f.rule for f in report.findings} >= {RuleId.E2, RuleId.C1}, explain(report, b.header, b.events)
    for f in report.findings:
        assert {str(x) for x in f.refused_by} <= refusing, (f.rule, f.refused_by, refusing)



def test_a_step_back_in_the_tail_is_no_c1_naming_the_loader(official: Any, tmp_path: Path) -> None:
    """The same tail with a step back in it: S9's finding there leaves the loader out, and C1, which
    restates S9 and E2 from no one place, names the loader only while one of them does. Found by a
    10-minute campaign (seed 1, ``aimed-released``): wrong-layer|load:accepts|C1, this minimal log."""
    b = Builder()
    b.text_turn()
    b.turn_start()
    b.step_start()
    b.events[-2]["seq"] += 100  # the open turn's turn/start skips ahead, and its step/start steps back
    path = tmp_path / "back.jsonl"
    path.write_text(jsonl(b.header, b.events))
    verdicts = official.check(path=path.resolve(), layers=official_layers_for(0))
    assert verdicts["load"].ok, verdicts["load"]
    refusing = {str(layer) for layer, v in verdicts.items() if not v.ok}
    report = check_path(path)  # as `dshfuzz check` reads the file: the reader knows its torn tail
    assert {f.rule for f in report.findings} >= {RuleId.S9, RuleId.C1}, explain(report, b.header, b.events)
    for f in report.findings:
        assert {str(x) for x in f.refused_by} <= refusing, (f.rule, f.refused_by, refusing)
