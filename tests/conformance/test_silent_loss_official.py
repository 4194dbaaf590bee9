"""``silent-loss`` against the official loader itself: its count is of events (packed chunk rows
expanded, its crash closers left out), the built-in checker's count agrees with it on valid
logs of either container, and a checker that never reads the last zstd frame is found, its
finding kept by the minimiser's predicate only while the loss is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness import Example, Judge, load_checker
from dshfuzz.harness._judges import BuiltinChecker

DATA = Path(__file__).resolve().parents[1] / "data"
LOSES = "py:tests.broken_checkers.drops_last_frame:check"


def _losses(judged) -> list[str]:
    return [d.signature for d in judged.disagreements if d.kind == "silent-loss"]


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(DATA.parents[1])  # py:tests.… imports from the repository's root


@pytest.mark.parametrize("name, compression", [("valid-v0.jsonl", "none"), ("valid-v0.jsonl.zstd", "zstd")])
def test_the_loader_counts_the_events_the_builtin_checker_counts(official, name, compression):
    example = Example((DATA / name).read_bytes(), compression)
    with Judge(BuiltinChecker(), official=official) as judge:
        judged = judge.judge(example)
    assert judged.truth.loaded_events == judged.verdict.events == 76  # 63 rows, chunk runs packed
    assert _losses(judged) == []


def test_generated_logs_in_either_container_show_no_silent_loss_of_the_builtin_checker(official):
    logs = list(generate(6, seed=11, turns=(1, 3)))
    with Judge(BuiltinChecker(), official=official) as judge:
        for log in logs:
            for example in (Example(log.to_jsonl(), "none"), Example(log.to_zstd(), "zstd")):
                judged = judge.judge(example)
                assert judged.truth.loaded_events == judged.verdict.events, example
                assert _losses(judged) == []


def test_a_checker_that_skips_the_last_zstd_frame_is_found_and_the_predicate_keeps_the_loss(official, in_repo):
    zstd = Example((DATA / "valid-v0.jsonl.zstd").read_bytes(), "zstd")
    plain = Example((DATA / "valid-v0.jsonl").read_bytes(), "none")
    with Judge(load_checker(LOSES), official=official) as judge:
        judged = judge.judge(zstd)
        assert _losses(judged) == ["silent-loss|load|-|v0"]
        [defect] = [d for d in judged.disagreements if d.kind == "silent-loss"]
        assert judged.verdict.events is not None and judged.verdict.events < 76
        still_fails = judge.still_fails(defect, zstd)
        assert still_fails is not None and still_fails(zstd)
        assert not still_fails(plain)  # read whole: nothing lost
        assert _losses(judge.judge(plain)) == []
