"""The official bridge's client-side logic that needs no Node: message
normalisation, coordinate parsing, reply typing and the availability check."""

from __future__ import annotations

import sys

import pytest

from dshfuzz.oracle.official import (
    LAYERS,
    LayerVerdict,
    OfficialError,
    normalise_message,
    parse_coordinates,
    unavailable_reason,
)
from dshfuzz.oracle.official import _server


@pytest.mark.parametrize(
    ("message", "seq", "line", "offset"),
    [
        # one seq gap (seq 30 dropped), as each layer words it: all agree on seq 30
        ("session event seq 31 is not contiguous; expected 30", 30, None, None),
        ("seed event at index 30 has seq 31 (expected 30); seed must be contiguous from 0", 30, None, None),
        ("corrupt session log: seq gap in committed region at line 25 (expected 30, got 31)", 30, 26, None),
        ("released Session row 24 has seq gap (expected 30, got 31)", 30, 26, None),
        # released names the event as "<type> <seq>"
        ('@deepseek-ai/dsh-session-format-v0-to-v1 refuses this format v0 Session: turn/end 41 data lacks '
         'required member "reason"', 41, None, None),
        ("refuses this format v0 Session: step/start 50 turn must be a non-negative safe integer", 50, None, None),
        ("Session event 12 has non-dense seq 13", 12, None, None),
        ('session "s" contains event type "x-vendor/custom" (seq 42) unknown to this harness', 42, None, None),
        ("token meter: step/start at seq 7 arrived before turn 1/step 1 ended", 7, None, None),
        ("invalid persisted inbox splice at session seq 3", 3, None, None),
        ("corrupt Zstandard session log: frame at byte 1614 failed validation", None, None, 1614),
        ("corrupt Zstandard session log: invalid frame magic at byte 115", None, None, 115),
        ("corrupt session log: unparsable committed event at line 4", None, 5, None),
        ("physical line 7 is not JSON: Unexpected token", None, 7, None),
        # no coordinates: a message about a call id or the header
        ("step/end leaves unresolved tool call call_2", None, None, None),
        ('released v0 physical header has unexpected member "teamId"', None, None, None),
        ("@deepseek-ai/dsh-session-format-v0-to-v1 refuses this format v0 Session", None, None, None),
    ],
)
def test_coordinates_are_parsed_from_official_messages(message, seq, line, offset):
    assert parse_coordinates(message) == (seq, line, offset)


def test_normalisation_strips_run_specific_paths():
    raw = (
        'session "s" uses log format v1, but this harness reads only v0 '
        "(raw log: /home/u/logs/a.jsonl)"
    )
    assert normalise_message(raw) == 'session "s" uses log format v1, but this harness reads only v0'
    assert (
        normalise_message("ENOENT: no such file or directory, open '/home/u/logs/a.jsonl'", ["/home/u/logs/a.jsonl"])
        == "ENOENT: no such file or directory, open '<file>'"
    )
    # loadApp reads the file through a symlink below the server's scratch root
    assert normalise_message('invalid header line in "<scratch>/none/--p--/id/session.jsonl"') == (
        'invalid header line in "<file>"'
    )


def test_equal_verdicts_on_different_files_compare_equal():
    def refusal(path):
        return {
            "name": "SessionFormatUnsupportedError",
            "message": f'session "s" contains event type "x" (seq 4) unknown to this harness (raw log: {path})',
            "location": {"kind": "jsonl", "path": path},
        }

    a = OfficialError.from_json(refusal("/tmp/a/one.jsonl"), path="/tmp/a/one.jsonl")
    b = OfficialError.from_json(refusal("/tmp/b/two.jsonl"), path="/tmp/b/two.jsonl")
    assert a == b
    assert a.raw_message != b.raw_message
    assert a.seq == 4


def test_error_json_is_typed_with_class_code_and_cause_coordinates():
    error = OfficialError.from_json(
        {
            "name": "SessionPersistenceCorruptionError",
            "message": 'stored session "s" failed validation',
            "code": "CORRUPT",
            "cause": {"name": "Error", "message": "invalid seed event at index 45: sourceEventSeqs must not be empty"},
        }
    )
    assert error.cls is None and error.kind == "SessionPersistenceCorruptionError"
    assert error.code == "CORRUPT"
    assert error.cause is not None and error.cause.seq == 45
    assert error.seq == 45  # inherited: the top message names no coordinate
    assert error.to_json() == {
        "name": "SessionPersistenceCorruptionError",
        "class": "SessionPersistenceCorruptionError",
        "message": 'stored session "s" failed validation',
        "seq": 45,
        "code": "CORRUPT",
        "cause": {
            "name": "Error",
            "class": "Error",
            "message": "invalid seed event at index 45: sourceEventSeqs must not be empty",
            "seq": 45,
        },
    }


def test_class_differs_from_name_only_when_the_constructor_does():
    error = OfficialError.from_json({"name": "Error", "class": "InvariantError", "message": "m", "code": "INVARIANT"})
    assert (error.name, error.cls, error.kind, error.summary) == ("Error", "InvariantError", "InvariantError", "InvariantError: m")


def test_layer_verdicts_from_replies():
    accepted = LayerVerdict.from_json("fold", {"ok": True, "result": {"nodes": [1]}})
    refused = LayerVerdict.from_json("seed", {"ok": False, "error": {"name": "Error", "message": "seed event at index 2 has seq 3 (expected 2)"}})
    assert accepted.ok and accepted.error is None and accepted.result == {"nodes": [1]}
    assert not refused.ok and refused.error is not None and refused.error.seq == 2
    assert accepted.to_json() == {"ok": True}
    assert refused.to_json()["error"]["seq"] == 2


def test_layers_are_in_canonical_order():
    assert LAYERS == ("fold", "seed", "invariants", "load", "loadApp", "meter", "inbox", "released", "wire")


def test_unavailable_names_the_missing_node(monkeypatch, tmp_path):
    missing = tmp_path / "no-node"
    monkeypatch.setenv("DSHFUZZ_NODE", str(missing))
    reason = unavailable_reason()
    assert reason is not None and str(missing) in reason and "make setup" in reason


def test_unavailable_names_the_missing_node_modules(monkeypatch, tmp_path):
    monkeypatch.setenv("DSHFUZZ_NODE", sys.executable)
    monkeypatch.setattr(_server, "JS_DIR", tmp_path)
    assert unavailable_reason() == f"node_modules missing in {tmp_path}: run `make setup`"
