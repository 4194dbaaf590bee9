"""The corpus store: content-addressed, versioned, atomic, and replayable without Node."""

from __future__ import annotations

import json

import pytest

from dshfuzz.harness import CORPUS_FORMAT, Corpus, CorpusFormatError, ReplayStatus, replay
from dshfuzz.harness._judges import CheckerVerdict, ReportedFinding

LOG = b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'


def _add(corpus: Corpus, data: bytes = LOG, **kw):
    args = dict(
        signature="miss|expected|S5|partial-coverage",
        kind="miss",
        compression="none",
        format_version=0,
        expected={"rules": ["S5"]},
        actual={"rules": []},
        checker="builtin",
        mutator="partial-coverage",
    )
    args.update(kw)
    return corpus.add(data, **args)


def test_an_entry_is_named_by_content_hash_and_described_by_a_versioned_meta(tmp_path):
    corpus = Corpus(tmp_path)
    entry, new = _add(corpus)
    assert new
    path = corpus.path_of(entry)
    assert path.read_bytes() == LOG and path.name.startswith(entry.sha256[:16])
    meta = json.loads((path.parent / "meta.json").read_text())
    assert meta["format"] == CORPUS_FORMAT and meta["entries"][entry.sha256[:16]]["mutator"] == "partial-coverage"
    assert not list(tmp_path.rglob("*.tmp")), "no temp file may survive an atomic write"


def test_adding_the_same_log_twice_is_a_no_op(tmp_path):
    corpus = Corpus(tmp_path)
    first, _ = _add(corpus)
    again, new = _add(corpus)
    assert not new and again == first and len(list(corpus.entries())) == 1


def test_a_foreign_meta_file_is_a_precise_error(tmp_path):
    corpus = Corpus(tmp_path)
    entry, _ = _add(corpus)
    corpus.path_of(entry).with_name("meta.json").write_text('{"format": "something-else/9"}')
    with pytest.raises(CorpusFormatError, match="meta.json"):
        list(corpus.entries())


class _Fixed:
    name = "fixed"

    def check(self, path):
        return CheckerVerdict((ReportedFinding("S5", "error", 3),))


class _StillBroken:
    name = "broken"

    def check(self, path):
        return CheckerVerdict(())


def test_replay_says_still_failing_then_fixed(tmp_path):
    corpus = Corpus(tmp_path)
    _add(corpus)
    [before] = replay(corpus, _StillBroken())
    assert before.status is ReplayStatus.STILL_FAILING and before.reproduces
    [after] = replay(corpus, _Fixed())
    assert after.status is ReplayStatus.FIXED and not after.reproduces, "a fix must be recorded in the meta"


def test_a_witness_holds_while_its_verdict_is_unchanged(tmp_path):
    corpus = Corpus(tmp_path)
    _add(corpus, signature="witness|S5", kind="witness", actual={"rules": ["S5"]})
    [result] = replay(corpus, _Fixed())
    assert result.status is ReplayStatus.HOLDS
    [changed] = replay(corpus, _StillBroken())
    assert changed.status is ReplayStatus.CHANGED
