"""A format-0 ``steering/message`` (the pre-react-loop steering event) and its surface marker, judged
by the official layers and by the checker.

The fold, and the seed and invariant checks that fold the raw events, pass a steering/message
over as no surface type, and refuse it when it carries surface metadata. The v0 loader upgrades
it to a user/message before it validates (SP:540-565), and the released migration reads it as a
surface event (V01:1533, 2526): both need its append marker, and accept it with one. So a bare
steering/message is refused by the loader and released only, and one with an append marker by
the fold, the seed and the invariants only.

Found by the ``aimed-released`` family (issue 32): the checker reported nothing for a bare
steering/message, and named the loader, which accepts it, for one with an append marker.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders

from agent_loop_logs import Builder, jsonl
from checker_logs import check, explain

from dshfuzz.checker import Severity
from dshfuzz.harness._scope import official_layers_for

pytestmark = pytest.mark.official

_STEER = {"content": [{"type": "text", "text": "steer"}], "source": {"kind": "user"}}
SHAPES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "bare, content form": (dict(_STEER), {}),
    "bare, message form": ({"message": {"id": "steer-1", "role": "user", **_STEER}}, {}),
    "append marker": (dict(_STEER), {"surfaceOp": "append"}),
    "sourceEventSeqs only": (dict(_STEER), {"sourceEventSeqs": [0]}),
}


def _log(data: dict[str, Any], envelope: dict[str, Any]) -> Builder:
    b = Builder()
    b.text_turn()
    b.turn_start()
    b.push("steering/message", {"turn": b.turn, **data}, **envelope)
    b.step_start()
    b.step_end()
    b.turn_end()
    return b


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_checker_names_exactly_the_layers_that_refuse_a_steering_message(official: Any, tmp_path: Path,
                                                                             shape: str) -> None:
    b = _log(*SHAPES[shape])
    path = tmp_path / "steering.jsonl"  # the loader's legacy upgrade runs on a stored file's read
    path.write_text(jsonl(b.header, b.events))
    verdicts = official.check(path=path.resolve(), layers=official_layers_for(0))
    refusing = {str(layer) for layer, v in verdicts.items() if not v.ok}
    assert refusing, f"{shape}: every layer accepts the steering/message"
    report = check(b.header, b.events)
    named = {str(x) for f in report.findings if f.severity is Severity.ERROR for x in f.refused_by}
    assert named & set(official_layers_for(0)) == refusing, (
        f"{shape}: official {sorted(refusing)}, the checker names {sorted(named)}\n" + explain(report, b.header, b.events))
