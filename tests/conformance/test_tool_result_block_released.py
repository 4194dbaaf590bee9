"""A tool/result's tool-result block itself (not the fragments inside it, which are P4's) breaks
released's ``contentBlocksValue`` in ways no other rule reports: released refuses the log, and the
checker says so (G5, naming released) with released's own message.

Found by a campaign (seed 12, 90 s, ``type-confusion``): a ``"toString"`` member added to the block
was refused by released and reported by no rule, since the released walk left every
tool-result content problem to P4, which reports only fragments that are not text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders

from agent_loop_logs import Builder
from checker_logs import check, explain

from dshfuzz.checker import OfficialLayer, RuleId, Severity

BLOCK_BREAKS = {
    "an extra member": lambda block: block.update(toString="x"),
    "another extra member": lambda block: block.update(note="x"),
    "isError not a boolean": lambda block: block.update(isError="yes"),
    "an empty toolCallId": lambda block: block.update(toolCallId=""),
}


def _broken(edit: Any) -> Builder:
    b = Builder()
    b.tool_turn()
    result = next(e for e in b.events if e["type"] == "tool/result")
    edit(result["data"]["message"]["content"][0])
    return b


@pytest.mark.parametrize("why", list(BLOCK_BREAKS))
def test_a_broken_tool_result_block_is_an_error_naming_released_with_its_message(official, why: str) -> None:
    b = _broken(BLOCK_BREAKS[why])
    (verdict,) = official.check(events=b.events, header=b.header, layers=("released",)).values()
    assert not verdict.ok and verdict.error is not None, f"{why}: released restores the log"
    report = check(b.header, b.events)
    errors = [f for f in report.findings if f.severity is Severity.ERROR and OfficialLayer.RELEASED in f.refused_by]
    assert errors, f"{why}: released refuses ({verdict.error.message}); the checker:\n" + explain(
        report, b.header, b.events)
    # G5 speaks for released itself, in its words (another rule may own the break: an empty id is P5's)
    g5 = [f for f in errors if f.rule is RuleId.G5]
    assert all(verdict.error.message.endswith(f.message.split(": ", 1)[-1]) for f in g5), (
        verdict.error.message, [f.message for f in g5])
