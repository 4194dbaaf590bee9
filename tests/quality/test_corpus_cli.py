"""``dshfuzz corpus`` as a user runs it (a subprocess of the installed CLI), exit codes included.

replay exits 0 when every entry behaves as its meta records (a known bug STILL FAILING, a
recorded fix FIXED, a witness HOLDS), 1 when any changed, 2 on a usage error; mark-fixed
records a fix; list shows each entry's checker; a missing corpus folder is an error; and
the project's own corpus replays clean from any directory.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dshfuzz.harness import Corpus

REPO = Path(__file__).resolve().parents[2]
VALID = REPO / "tests" / "data" / "valid-v0.jsonl"  # has a compaction/prune: the `crashes` checker raises
CRASHES = "py:tests.broken_checkers.crashes:check"
LAYERS = ("seed", "load", "fold", "invariants", "released", "meter", "inbox")
OFFICIAL_OK = {layer: {"ok": True} for layer in LAYERS}
COUNT_LINE = re.compile(r"^(\d+) entr(?:y|ies): (.*); (\d+) changed\b.*$", re.M)


def dshfuzz(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dshfuzz", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _crash_entry(root: Path, **kw) -> Path:
    """A corpus with one known bug: the `crashes` test checker raising on the valid fixture."""
    corpus = Corpus(root)
    args = dict(signature="crash|-|-|v0", kind="crash", compression="none", format_version=0,
                expected={"rules": [], "oracleRefusing": []}, actual={"rules": []}, checker=CRASHES,
                official=OFFICIAL_OK, seed=1, stage="minimal")
    args.update(kw)
    entry, _ = corpus.add(VALID.read_bytes(), **args)
    return corpus.path_of(entry)


def test_the_projects_corpus_replays_as_recorded_from_another_directory(tmp_path):
    proc = dshfuzz("corpus", "replay", "--corpus", str(REPO / "corpus"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    count = COUNT_LINE.search(proc.stdout)
    assert count and count[3] == "0", proc.stdout
    entries = len(list(Corpus(REPO / "corpus").entries()))
    assert int(count[1]) == entries == proc.stdout.count(" as recorded  ")
    assert "CHANGED" not in proc.stdout and "NOT REPLAYED" not in proc.stdout
    assert "STILL FAILING (as recorded)" in count[2], "the broken test checkers' bugs are known and unfixed"


def test_the_projects_corpus_replays_under_a_directory_with_its_own_tests_package(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")  # a user's own `tests` would hide the project's
    proc = dshfuzz("corpus", "--corpus", str(REPO / "corpus"), "replay", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"; 0 changed$", proc.stdout, re.M), proc.stdout


def test_list_shows_each_entrys_checker_and_the_path_other_actions_take(tmp_path):
    log = _crash_entry(tmp_path / "corpus")
    proc = dshfuzz("corpus", "--corpus", str(tmp_path / "corpus"), "list")
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    assert header.split() == ["KIND", "SIGNATURE", "CHECKER", "ENTRY"]
    assert row.split() == ["crash", "crash|-|-|v0", CRASHES, str(log)]
    assert "1 entry in" in proc.stderr


def test_a_bug_goes_from_still_failing_to_fixed_once_mark_fixed_records_its_fix(tmp_path):
    corpus = tmp_path / "corpus"
    log = _crash_entry(corpus)
    meta_path = log.with_name("meta.json")
    meta_before = json.loads(meta_path.read_text())

    known = dshfuzz("corpus", "--corpus", str(corpus), "replay")
    assert known.returncode == 0, known.stdout + known.stderr
    assert re.match(r"STILL FAILING +as recorded ", known.stdout), known.stdout
    assert "1 entry: 1 STILL FAILING (as recorded); 0 changed" in known.stdout

    unrecorded = dshfuzz("corpus", "--corpus", str(corpus), "replay", "--checker", "builtin")
    assert unrecorded.returncode == 1, unrecorded.stdout + unrecorded.stderr
    assert re.match(r"FIXED +CHANGED ", unrecorded.stdout), unrecorded.stdout
    assert "1 entry; 1 changed (1 fixed, but no fix is recorded)" in unrecorded.stdout
    assert "dshfuzz corpus mark-fixed ENTRY --by COMMIT" in unrecorded.stdout

    marked = dshfuzz("corpus", "--corpus", str(corpus), "mark-fixed", str(log), "--by", "abc1234")
    assert marked.returncode == 0, marked.stderr
    assert f"marked fixed by abc1234: {log}" in marked.stdout
    meta_after = json.loads(meta_path.read_text())
    [key] = meta_before["entries"]
    meta_before["entries"][key]["fixedBy"] = "abc1234"
    assert meta_after == meta_before, "mark-fixed changes fixedBy and nothing else (stage included)"
    assert meta_after["entries"][key]["stage"] == "minimal"

    fixed = dshfuzz("corpus", "--corpus", str(corpus), "replay", "--checker", "builtin")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "1 entry: 1 FIXED (as recorded); 0 changed" in fixed.stdout
    assert "fixed by abc1234" in fixed.stdout

    regressed = dshfuzz("corpus", "--corpus", str(corpus), "replay")
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "1 entry; 1 changed (1 failing again, though recorded as fixed)" in regressed.stdout


def test_a_new_verdict_is_a_change_and_a_witness_holds(tmp_path):
    corpus = tmp_path / "corpus"
    _crash_entry(corpus, signature="false-alarm|-|T3|v0", kind="false-alarm", actual={"rules": ["T3"]})
    changed = dshfuzz("corpus", "--corpus", str(corpus), "replay", "--json")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    [entry] = json.loads(changed.stdout)
    assert entry["status"] == "CHANGED VERDICT" and entry["recorded"] == "STILL FAILING"
    assert not entry["asRecorded"] and entry["checker"] == CRASHES
    assert "1 entry; 1 changed (1 recorded as STILL FAILING)" in changed.stderr

    witnesses = tmp_path / "witnesses"
    added = dshfuzz("corpus", "--corpus", str(witnesses), "add", str(VALID))
    assert added.returncode == 0 and witnesses.is_dir(), added.stderr  # add creates the folder
    holds = dshfuzz("corpus", "replay", "--corpus", str(witnesses))
    assert holds.returncode == 0, holds.stdout + holds.stderr
    assert "1 entry: 1 HOLDS; 0 changed" in holds.stdout


@pytest.mark.parametrize("action", [
    ["list"], ["replay"], ["minimise", "x.jsonl"], ["mark-fixed", "x.jsonl", "--by", "abc"],
])
def test_a_missing_corpus_folder_is_one_line_and_exit_2(tmp_path, action):
    missing = tmp_path / "no-corpus"
    proc = dshfuzz("corpus", "--corpus", str(missing), *action, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert f"{missing}: no such folder" in proc.stderr
    assert not missing.exists()


def test_the_default_corpus_folder_missing_is_named_too(tmp_path):
    proc = dshfuzz("corpus", "replay", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"corpus ({tmp_path / 'corpus'}): no such folder" in proc.stderr


def test_mark_fixed_usage_errors_are_one_line_and_exit_2(tmp_path):
    corpus = tmp_path / "corpus"
    log = _crash_entry(corpus)
    nope = tmp_path / "nope.jsonl"
    unknown = dshfuzz("corpus", "--corpus", str(corpus), "mark-fixed", str(nope), "--by", "abc")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1, unknown.stderr
    assert f"{nope} is not an entry of {corpus}" in unknown.stderr

    no_fix = dshfuzz("corpus", "--corpus", str(corpus), "mark-fixed", str(log))
    assert no_fix.returncode == 2 and "--by" in no_fix.stderr, no_fix.stderr

    empty = dshfuzz("corpus", "--corpus", str(corpus), "mark-fixed", str(log), "--by", " ")
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1, empty.stderr
    assert json.loads(log.with_name("meta.json").read_text())["entries"][log.name[:16]]["fixedBy"] is None

    witnesses = tmp_path / "witnesses"
    dshfuzz("corpus", "--corpus", str(witnesses), "add", str(VALID))
    [witness] = [p for p, _ in Corpus(witnesses).entries()]
    refused = dshfuzz("corpus", "--corpus", str(witnesses), "mark-fixed", str(witness), "--by", "abc")
    assert refused.returncode == 2 and "is a witness" in refused.stderr, refused.stderr


def test_replay_with_an_unusable_checker_is_a_usage_error(tmp_path):
    corpus = tmp_path / "corpus"
    _crash_entry(corpus)
    proc = dshfuzz("corpus", "--corpus", str(corpus), "replay", "--checker", "nope")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stdout == "", proc.stderr


def test_an_entry_whose_checker_cannot_be_loaded_is_not_replayed_and_exit_2(tmp_path):
    corpus = tmp_path / "corpus"
    _crash_entry(corpus)  # py:tests... does not load from tmp_path, nor from the corpus's root (tmp_path)
    proc = dshfuzz("corpus", "--corpus", str(corpus), "replay", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.startswith("NOT REPLAYED") and "No module named 'tests'" in proc.stdout
    assert "1 entry; 0 changed; 1 not replayed (the checker cannot be loaded)" in proc.stdout
