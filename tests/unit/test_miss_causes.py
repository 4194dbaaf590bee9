"""A miss is one finding per check the checker lacks: keyed by the refusing layer's
message, with the values it quotes, numbers, seqs and ids dropped."""

from __future__ import annotations

import pytest

from dshfuzz.harness import CheckerVerdict, classify
from dshfuzz.harness._classify import refusal_fingerprint, truth_from

PREAMBLE = "@deepseek-ai/dsh-session-format-v0-to-v1 refuses this format v0 Session: "


def _miss(message: str, layer: str = "released") -> str:
    truth = truth_from({layer: False, "load": True}, reasons={layer: message})
    (found,) = [d for d in classify(CheckerVerdict(), truth) if d.kind == "miss"]
    assert message.removeprefix(PREAMBLE)[:40] in found.detail
    return found.signature


@pytest.mark.parametrize(
    "one, other",
    [
        (PREAMBLE + 'turn/start 3 data has unexpected member "foo"', PREAMBLE + 'turn/start 17 data has unexpected member "x y"'),
        ('session "5dfe0fff-b9ec-4611-9501-d014ad017e24" seq gap at 12', 'session "a" seq gap at 3'),
        ("compaction/prune 0 shadowedRange start must identify an earlier event",
         "compaction/prune 41 shadowedRange start must identify an earlier event"),
    ],
)
def test_one_check_reached_with_other_values_is_one_miss(one, other):
    assert _miss(one) == _miss(other)


@pytest.mark.parametrize(
    "one, other",
    [
        (PREAMBLE + "approval/policy 0 data must be a JSON object", PREAMBLE + "turn/start 0 data has unexpected member \"k\""),
        ("Cannot read properties of null (reading 'type')", "Cannot read properties of null (reading 'length')"),
    ],
)
def test_two_checks_of_one_layer_are_two_misses(one, other):
    assert _miss(one) != _miss(other)


def test_a_refusal_without_a_message_is_still_a_miss_of_its_layer():
    truth = truth_from({"released": False})
    (found,) = [d for d in classify(CheckerVerdict(), truth) if d.kind == "miss"]
    assert found.signature == "miss|released|-|v0"


def test_the_fingerprint_fits_a_signature():
    key = refusal_fingerprint('a|b, "c"\nsecond line ' + "x" * 500)
    assert "|" not in key and "," not in key and "\n" not in key and len(key) <= 160
