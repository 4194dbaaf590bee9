"""``FindingRecorder``: each finding is in the corpus from the moment it reaches the
coordinator, and the corpus keeps one entry per finding from a campaign, its latest witness."""

from __future__ import annotations

from dataclasses import replace

from dshfuzz.harness import Corpus, DisagreementFound, FindingRecorder


def _finding(data: bytes, stage: str, worker: int = 0, signature: str = "miss|expected|S5|v0") -> DisagreementFound:
    return DisagreementFound(
        signature=signature, kind="miss", layer=None, rules=("S5",), mutator="partial-coverage", detail="",
        data=data, compression="none", format_version=0, events_found=9, events_minimal=3,
        checker_rules=(), expected_rules=("S5",), worker=worker, stage=stage,  # type: ignore[arg-type]
    )


def _saved(corpus: Corpus) -> list[tuple[bytes, str | None]]:
    return [(path.read_bytes(), entry.stage) for path, entry in corpus.entries()]


def test_each_witness_replaces_the_last_and_a_restaged_one_keeps_its_log(tmp_path):
    corpus = Corpus(tmp_path)
    recorder = FindingRecorder(corpus, checker="builtin", seed=1)
    first = _finding(b'{"big": 1}\n' * 9, "found")
    recorder.record(first)
    assert _saved(corpus) == [(first.data, "found")]
    smaller = replace(first, data=b'{"small": 1}\n', stage="minimising")
    recorder.record(smaller)
    assert _saved(corpus) == [(smaller.data, "minimising")]
    recorder.record(replace(smaller, stage="minimal"))
    assert _saved(corpus) == [(smaller.data, "minimal")]
    assert sorted(p.name for p in next(tmp_path.iterdir()).iterdir()) == sorted(["meta.json", corpus_file(corpus)])


def corpus_file(corpus: Corpus) -> str:
    [(_, entry)] = corpus.entries()
    return entry.file


def test_another_workers_witness_and_an_entry_from_before_are_left_alone(tmp_path):
    corpus = Corpus(tmp_path)
    before = _finding(b'{"old": 1}\n', "minimal")
    FindingRecorder(corpus, checker="builtin", seed=0).record(before)
    recorder = FindingRecorder(corpus, checker="builtin", seed=1)
    assert recorder.record(_finding(b'{"elsewhere": 1}\n', "found", worker=1)) is not None
    assert recorder.record(_finding(b'{"late": 1}\n', "found", worker=0)) is None  # not the owner's
    recorder.record(replace(before, worker=1))  # the owner's witness is the old entry: the new one goes
    assert _saved(corpus) == [(before.data, "minimal")]
