"""The reference oracle abstains on a log holding a message in a pre-identity shape: the loader
and the released migration upgrade it on read (SP:665-722) and accept the log, while the
released model, which reads the events as stored, refuses it. Without the official layers
(``--no-official``) a campaign reported the built-in checker's designed E6 warning as a
``miss-model-only`` of released (found by a campaign drawing aimed-meter's legacy message)."""

from __future__ import annotations

import copy
import json

from dshfuzz import oracle
from dshfuzz.harness._reference import judges, reference_refusals
from dshfuzz.model import parse_log

from reference_oracle_logs import HEADER, edited, tool_turn


def _legacy_assistant(events: list[dict]) -> list[dict]:
    out = copy.deepcopy(events)
    for event in out:
        if event["type"] == "assistant/message":
            message = event["data"].pop("message")
            source = {k: v for k, v in message["source"].items() if k != "kind"}
            event["data"]["content"], event["data"]["provenance"] = message["content"], source
            return out
    raise AssertionError("no assistant/message")


def test_the_oracle_abstains_on_a_legacy_message_the_released_model_would_refuse() -> None:
    events = _legacy_assistant(edited(tool_turn()))
    assert isinstance(oracle.check_lifecycle(events, HEADER), oracle.Violation), "the model reads it as stored"
    assert not judges(HEADER, 0, events)
    assert reference_refusals(events, HEADER, 0) == frozenset()


def test_the_oracle_still_judges_a_log_without_legacy_shapes() -> None:
    events = edited(tool_turn())
    assert judges(HEADER, 0, events) and judges(HEADER, 0)
    broken = copy.deepcopy(events)
    del broken[-1]  # the turn/end: the step and turn stay open, which no layer minds; a valid log still
    assert judges(HEADER, 0, broken)
    log = parse_log(("\n".join(json.dumps(x) for x in [HEADER, *events]) + "\n").encode())
    assert judges(log.header.raw, log.format_version, [e.raw for e in log.events])
