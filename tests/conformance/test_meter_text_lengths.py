"""P4 names the token meter exactly where the meter refuses a replaced tool result's text.

A campaign against examples/python-checker found a format-1 log that only the meter refuses
(a ZodError: the replaced result's text 7 has no length, so its projected tokens are NaN), on
which the built-in checker said a P4 warning naming no layer. The meter measures a text's
length: a string or an array has one; a number, a boolean or an object counts NaN, which its
schema refuses, and null is a TypeError. The pair below holds P4's claim to the meter's verdict
for each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.checker import check_path

_LOG = [
 {
  "type": "session",
  "version": 1,
  "id": "852b6db2-9ac3-40dc-ae55-7777382e28e9",
  "createdAt": 1767001160430,
  "cwd": "/home/dev/project",
  "delegationDepth": 0
 },
 {
  "type": "turn/start",
  "seq": 0,
  "time": 1767001160433,
  "data": {
   "turn": 1
  }
 },
 {
  "type": "step/start",
  "seq": 1,
  "time": 1767001160440,
  "data": {
   "turn": 1,
   "step": 1
  }
 },
 {
  "type": "assistant/message",
  "seq": 2,
  "time": 1767001160661,
  "data": {
   "turn": 1,
   "step": 1,
   "message": {
    "role": "assistant",
    "content": [
     {
      "type": "text",
      "text": "import summary beta test code module directory merge done read"
     },
     {
      "type": "tool-call",
      "id": "call_fe095498-97ed-4134",
      "name": "bash",
      "arguments": "{\"command\":\"path\"}"
     }
    ],
    "source": {
     "kind": "model",
     "provider": "deepseek-official",
     "model": "deepseek-v4-flash"
    },
    "id": "9c40ce52-1738-4d4a-b1cd-12f564aafc74"
   },
   "usage": {
    "inputTokens": 206,
    "outputTokens": 30
   }
  },
  "sourceEventSeqs": [],
  "surfaceOp": "append"
 },
 {
  "type": "tool/call",
  "seq": 3,
  "time": 1767001160683,
  "data": {
   "turn": 1,
   "step": 1,
   "callId": "call_fe095498-97ed-4134",
   "name": "bash",
   "arguments": "{\"command\":\"path\"}"
  }
 },
 {
  "type": "tool/result",
  "seq": 4,
  "time": 1767001160706,
  "data": {
   "turn": 1,
   "step": 1,
   "message": {
    "source": {
     "kind": "tool",
     "callId": "call_fe095498-97ed-4134"
    },
    "content": [
     {
      "type": "tool-result",
      "toolCallId": "call_fe095498-97ed-4134",
      "content": [
       {
        "type": "text",
        "text": "merge"
       }
      ],
      "isError": False
     }
    ],
    "role": "user",
    "id": "3a78480b-9682-4960-9b52-d50c4602b013"
   }
  },
  "sourceEventSeqs": [
   3
  ],
  "surfaceOp": "append"
 },
 {
  "type": "compaction/prune",
  "seq": 5,
  "time": 1767001160755,
  "data": {
   "shadowedRange": {
    "start": 4,
    "end": 4
   },
   "shadowedSeqs": [
    4
   ],
   "shadowedTokenCount": 14
  }
 },
 {
  "type": "tool/result",
  "seq": 6,
  "time": 1767001160781,
  "data": {
   "turn": 1,
   "step": 1,
   "message": {
    "source": {
     "kind": "tool",
     "callId": "call_fe095498-97ed-4134"
    },
    "content": [
     {
      "type": "tool-result",
      "toolCallId": "call_fe095498-97ed-4134",
      "content": [
       {
        "type": "text",
        "text": 7
       }
      ],
      "isError": False
     }
    ],
    "role": "user",
    "id": "3a78480b-9682-4960-9b52-d50c4602b013"
   }
  },
  "sourceEventSeqs": [
   4
  ],
  "surfaceOp": {
   "op": "replace",
   "start": 4,
   "end": 4
  }
 }
]
"""The campaign's minimal witness, the replaced result's text at ``_LOG[-1]``."""


def _with_text(text: object) -> str:
    events = json.loads(json.dumps(_LOG))
    events[-1]["data"]["message"]["content"][0]["content"][0]["text"] = text
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)


@pytest.mark.official
@pytest.mark.parametrize("text", [7, True, {"a": 1}, None, "words", []], ids=repr)
def test_p4_names_the_meter_exactly_where_the_meter_refuses_the_replaced_text(official, tmp_path: Path, text) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(_with_text(text))
    meter_refuses = not official.check(path=path)["meter"].ok
    p4 = [f for f in check_path(path).findings if str(f.rule) == "P4"]
    claims_meter = any("meter" in map(str, f.refused_by) for f in p4)
    assert claims_meter == meter_refuses, (text, meter_refuses, p4)
    assert any(f.is_error for f in p4) == meter_refuses, (text, p4)

