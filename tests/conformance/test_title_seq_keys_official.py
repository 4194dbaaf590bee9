"""A format-1 title's ``messageSeqs`` entry is read as JavaScript reads ``events[seq]``: by its
property key, ``String(seq)``. Released restores a title citing ``[[5]]`` (the key of ``[5]`` is
``"5"``), and the checker agrees with released on every encoding of a seq, G3 or not.

Found by a campaign (seed 14, 90 s, ``seq-encoding``): the checker read ``[5]`` as no seq at all and
reported G3, naming released, which restores the log (a false alarm, and a wrong layer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dshfuzz.checker import CheckOptions, RuleId, Severity, check_path

# the campaign's 1-minimal witness: a provider title citing the human message at seq 5
WITNESS = [
    {"type": "session", "version": 1, "id": "dec33f13-4d4b-4c2e-b49e-531fc4a6f41b", "createdAt": 1767000033561,
     "cwd": "/home/dev/project", "parentSession": "7cfab8cc-cc95-4844-a100-94a02a4e282e", "seedLength": 7,
     "delegationDepth": 0},
    {"type": "session/title", "seq": 0, "time": 1767000033562,
     "data": {"title": "Renamed session", "messageSeqs": [], "source": {"kind": "user"}}},
    {"type": "agent/inbox/spliced", "seq": 1, "time": 1767000033564,
     "data": {"target": "next-turn", "start": 0, "inserted": [
         {"content": [{"type": "text", "text": "change step"}], "source": {"kind": "user"}, "role": "user",
          "id": "b969ac3f-cb2a-4070-bc5a-01126b9d90a4"}]}},
    {"type": "turn/start", "seq": 2, "time": 1767000033567, "data": {"turn": 1}},
    {"type": "agent/inbox/spliced", "seq": 3, "time": 1767000033571,
     "data": {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}},
    {"type": "step/start", "seq": 4, "time": 1767000033576, "data": {"turn": 1, "step": 1}},
    {"type": "user/message", "seq": 5, "time": 1767000033582,
     "data": {"content": [{"type": "text", "text": "change step"}], "source": {"kind": "user"}, "role": "user",
              "id": "b969ac3f-cb2a-4070-bc5a-01126b9d90a4"}, "surfaceOp": "append"},
    {"type": "session/title", "seq": 6, "time": 1767000033589,
     "data": {"title": "change step", "messageSeqs": "CITED", "source": {"kind": "provider",
                                                                        "provider": "deepseek-official"}}},
]

ENCODINGS: dict[str, Any] = {
    "a number": [5],
    "a float": [5.0],
    "an array holding it": [[5]],
    "an array nested twice": [[[5]]],
    "a digit string": ["5"],
    "a non-canonical digit string": ["05"],
    "an array of two": [[5, 6]],
    "an empty array": [[]],
    "an object": [{"seq": 5}],
    "a boolean": [True],
    "another event's seq": [4],
    "a seq past the log": [9],
}


def _log(tmp_path: Path, cited: Any) -> Path:
    events = json.loads(json.dumps(WITNESS).replace('"CITED"', json.dumps(cited)))
    path = tmp_path / "title.jsonl"
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events), encoding="utf-8")
    return path


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_g3_agrees_with_released_on_every_encoding_of_a_cited_seq(official, tmp_path: Path, encoding: str) -> None:
    path = _log(tmp_path, ENCODINGS[encoding])
    (verdict,) = official.check(path=path, layers=("released",)).values()
    g3 = [f for f in check_path(path, CheckOptions(strict=True)).findings
          if f.rule is RuleId.G3 and f.severity is Severity.ERROR]
    said = "refuses: " + verdict.error.message if not verdict.ok and verdict.error else "restores it"
    assert (not verdict.ok) == bool(g3), (
        f"messageSeqs {json.dumps(ENCODINGS[encoding])}: released {said}; G3 says {[f.message for f in g3]}\n"
        + path.read_text())
