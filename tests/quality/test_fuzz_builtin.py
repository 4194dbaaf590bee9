"""The fuzz property behind ``make fuzz``, as a test: the built-in checker agrees with the truth.

Truth here is the reference oracle plus each mutator's declared rules, so the
property runs without Node; ``tests/conformance`` adds the official layers. On
failure the plugin prints the minimal log, and ``--dshfuzz-save`` keeps it in
the corpus.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from dshfuzz.harness import Example, Judge
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.harness._strategy import examples


@pytest.fixture(scope="module")
def judge():
    with Judge(BuiltinChecker()) as j:
        yield j


@given(example=examples())
def test_the_builtin_checker_agrees_with_the_oracle_and_the_mutators(example: Example, judge, dshfuzz_witness):
    judged = judge.judge(example)
    defects = judged.defects
    dshfuzz_witness.record(
        example.data,
        example.compression,
        signature=defects[0].signature if defects else "",
        kind=defects[0].kind if defects else "witness",
        mutator=example.mutator,
        expected={"rules": sorted(example.expects), "oracleRefusing": sorted(judged.truth.oracle_refusing)},
        actual={"rules": sorted({f.rule for f in judged.verdict.findings})},
        format_version=example.format_version,
    )
    assert not defects, "\n".join(f"{d.signature}: {d.detail}" for d in defects)
