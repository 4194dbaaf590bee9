"""A judgement can be left in flight: the official server judges while the campaign draws on.

Judgements resolve in the order they were submitted, whichever is asked for first (the
server answers in order), a pipelined judgement says exactly what a judgement at once
says, and an abandoned one leaves no file and no unread reply behind.
"""

from __future__ import annotations

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness import Example, Judge, PendingJudgement
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.mutators import MUTATORS, apply_seeded


def _examples() -> list[Example]:
    """Valid logs and mutants of a few incident classes, the official layers' verdicts varied."""
    logs = list(generate(4, seed=5, min_events=6, max_events=40))
    out = [Example(logs[0].to_jsonl(), "none"), Example(logs[1].to_zstd(), "zstd")]
    for log, name in zip(logs, ("seq-gap", "orphan-tool-call", "torn-tail-frame", "frame-over-limit")):
        try:
            mutant = apply_seeded(MUTATORS[name], log, 1)
        except Exception:  # noqa: BLE001 - a log this mutator cannot take is simply left out
            continue
        out.append(Example(mutant.data, mutant.compression, mutant.mutator, frozenset(mutant.expects),
                           format_version=mutant.format_version))
    return out


def _said(judged) -> list[tuple]:
    return [
        (j.example.data, sorted(j.official), tuple(d.signature for d in j.disagreements), j.truth.refusing)
        for j in judged
    ]


@pytest.mark.official
def test_judgements_in_flight_resolve_in_order_and_say_what_a_judgement_at_once_says(official):
    examples = _examples()
    assert len(examples) >= 4, "the fixture logs must include mutants"
    with Judge(BuiltinChecker(), official=official) as judge:
        at_once = [judge.judge(e) for e in examples]
        pending: list[PendingJudgement] = [judge.submit([e]) for e in examples]
        # the newest first: every earlier one is resolved on the way
        last = pending[-1].result()
        assert all(p.resolved for p in pending)
        pipelined = [p.result()[0] for p in pending[:-1]] + last
    assert _said(pipelined) == _said(at_once)
    assert any(j.official for j in at_once), "the official layers were consulted"


@pytest.mark.official
def test_an_abandoned_judgement_leaves_no_file_and_the_next_judgement_is_answered(official):
    first, second, *_ = _examples()
    with Judge(BuiltinChecker(), official=official) as judge:
        expected = judge.judge(second)
        pending = judge.submit([first])
        pending.abandon()
        assert not list(judge.scratch.iterdir()), "an abandoned judgement removed its scratch files"
        again = judge.judge(second)
    assert _said([again]) == _said([expected])


@pytest.mark.official
def test_a_judgement_in_flight_becomes_ready_without_being_asked(official):
    import time

    example = _examples()[0]
    with Judge(BuiltinChecker(), official=official) as judge:
        pending = judge.submit([example])
        deadline = time.monotonic() + 60
        while not pending.ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pending.ready(), "the server's replies arrived while no one waited"
        assert pending.result()[0].official
