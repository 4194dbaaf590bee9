"""The logs on which the checker's G4 and the reference oracle's relation walk once disagreed:
released (format 1, the restore's relation walk) refuses each with the message G4 reports."""

from __future__ import annotations

import pytest
from reference_oracle_logs import HEADER
from test_g4_differential import WITNESSES

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.model import encode_jsonl, parse_log


@pytest.mark.parametrize("why", sorted(WITNESSES))
def test_released_refuses_each_witness_as_g4_says(official, why: str) -> None:
    events, refusal = WITNESSES[why]
    header = {**HEADER, "version": 1}
    (released,) = official.check(events=events, header=header, layers=("released",)).values()
    g4 = [f.message for f in check_log(parse_log(encode_jsonl(header, [events], pack=False)),
                                       CheckOptions(rules=frozenset({RuleId.G4}), strict=True)).findings]
    assert released.error is not None and released.error.message == refusal, (why, released)
    assert g4 == [refusal], (why, g4)
