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


def test_a_recorded_fix_makes_fixed_as_recorded_and_a_failure_again_a_change(tmp_path):
    corpus = Corpus(tmp_path)
    entry, _ = _add(corpus)
    path = corpus.path_of(entry)
    [before] = replay(corpus, _StillBroken())
    assert before.expected is ReplayStatus.STILL_FAILING and before.as_recorded and not before.change
    updated, previous = corpus.mark_fixed(path, "abc1234")
    assert previous is None and updated.fixed_by == "abc1234"
    [fixed] = replay(corpus, _Fixed())
    assert fixed.status is ReplayStatus.FIXED and fixed.as_recorded and fixed.reproduces
    [again] = replay(corpus, _StillBroken())
    assert again.status is ReplayStatus.STILL_FAILING and not again.as_recorded
    assert again.change == "failing again, though recorded as fixed"


def test_mark_fixed_changes_only_fixed_by_in_the_meta_atomically(tmp_path):
    corpus = Corpus(tmp_path)
    entry, _ = _add(corpus, stage="cut")
    other, _ = _add(corpus, data=LOG + b"\n")
    meta_path = corpus.path_of(entry).with_name("meta.json")
    raw = json.loads(meta_path.read_text())
    raw["entries"][entry.sha256[:16]]["futureField"] = {"kept": True}  # a field this version does not know
    meta_path.write_text(json.dumps(raw, indent=1, sort_keys=True) + "\n")

    _, previous = corpus.mark_fixed(str(corpus.path_of(entry)), "deadbeef")
    after = json.loads(meta_path.read_text())
    expected = raw["entries"][entry.sha256[:16]] | {"fixedBy": "deadbeef"}
    assert after["entries"][entry.sha256[:16]] == expected
    assert after["entries"][other.sha256[:16]] == raw["entries"][other.sha256[:16]]
    assert after.keys() == raw.keys() and all(after[k] == raw[k] for k in raw if k != "entries")
    assert previous is None and not list(tmp_path.rglob("*.tmp"))
    _, previous = corpus.mark_fixed(corpus.path_of(entry), "cafe")
    assert previous == "deadbeef"


def test_mark_fixed_refuses_an_unknown_entry_and_an_empty_fix(tmp_path):
    corpus = Corpus(tmp_path)
    entry, _ = _add(corpus)
    with pytest.raises(KeyError):
        corpus.mark_fixed(tmp_path / "nope.jsonl", "abc")
    with pytest.raises(ValueError, match="fix needs a name"):
        corpus.mark_fixed(corpus.path_of(entry), "  ")
    assert corpus.find(corpus.path_of(entry)) == (corpus.path_of(entry), entry)
    assert corpus.find(tmp_path / "nope.jsonl") is None


def test_an_entry_whose_checker_cannot_load_is_not_replayed_and_the_rest_go_on(tmp_path):
    corpus = Corpus(tmp_path / "corpus")
    _add(corpus, checker="py:no_such_module_anywhere:check")
    _add(corpus, signature="witness|Z3", kind="witness", expected={"rules": ["Z3"]}, actual={"rules": ["Z3"]})
    by_kind = {r.entry.kind: r for r in replay(corpus)}
    assert by_kind["miss"].status is ReplayStatus.NOT_REPLAYED and not by_kind["miss"].as_recorded
    assert "no_such_module_anywhere" in by_kind["miss"].detail and str(tmp_path) in by_kind["miss"].detail
    assert by_kind["witness"].status is ReplayStatus.HOLDS


def _project(root, package, body):
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "chk.py").write_text(body)


def test_a_py_checker_loads_from_the_corpus_project_root_under_a_shadowing_package(tmp_path, monkeypatch):
    import sys
    import uuid

    from dshfuzz.harness._replay import load_entry_checker

    package = f"corpus_root_probe_{uuid.uuid4().hex[:8]}"  # not `tests`: this process has its own
    monkeypatch.setattr(sys, "path", list(sys.path))
    project, here = tmp_path / "project", tmp_path / "elsewhere"
    finding = "{'rule': 'S5', 'severity': 'error'}"
    _project(project, package, f"def check(path):\n    return {{'findings': [{finding}]}}\n")
    _project(here, package, "")  # the current directory's package of that name, without the checker
    monkeypatch.chdir(here)
    try:
        checker = load_entry_checker(f"py:{package}.chk:check", project)
        assert [f.rule for f in checker.check(tmp_path / "x.jsonl").findings] == ["S5"]
        assert sys.path[0] == str(project.resolve())
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == package]:
            del sys.modules[name]
