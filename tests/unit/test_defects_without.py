"""Detection power derives a crippled checker's trial from one judgement of the whole
built-in checker (``JudgedExample.defects_without``): switching rules off drops their
findings, and the checker attributes root causes among the findings left. The derived
defects must be exactly what judging with ``builtin:-RULE`` gives."""

from __future__ import annotations

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness._judge import Example, Judge
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.mutators import MUTATORS, Inapplicable, apply_seeded

CAUSAL_MUTATORS = ("scheduler-failure", "seq-gap", "orphan-tool-call", "interleaved-writers", "duplicate-seq")


def _examples(name: str) -> list[Example]:
    found = []
    for number, log in enumerate(generate(count=6, seed=4, max_events=60)):
        try:
            mutant = apply_seeded(MUTATORS[name], log, number)
        except Inapplicable:
            continue
        found.append(Example(mutant.data, mutant.compression, mutator=name, expects=frozenset(mutant.expects),
                             format_version=mutant.format_version))
    return found


@pytest.mark.parametrize("name", CAUSAL_MUTATORS)
def test_defects_without_rules_are_the_crippled_checkers_defects(name: str) -> None:
    examples = _examples(name)
    assert examples, f"{name} applied to none of the logs"
    compared = 0
    with Judge(BuiltinChecker()) as whole:
        for example in examples:
            judged = whole.judge(example)
            for rule in sorted({f.rule for f in judged.verdict.findings}):
                with Judge(BuiltinChecker(without=frozenset({rule}))) as crippled:
                    expected = crippled.judge(example).defects
                got = judged.defects_without(frozenset({rule}))
                assert {d.signature for d in got} == {d.signature for d in expected}, (
                    f"{name} without {rule}: derived {[d.signature for d in got]}, "
                    f"judged {[d.signature for d in expected]}\n{example.data[:2000]!r}"
                )
                compared += 1
    assert compared
