"""Mutation analysis (``dshfuzz mutants``) without campaigns: enumeration, ids, static skips,
sampling, the resumable results file, the score and its report, and bad input.

The judging process is replaced by a stand-in (``_run_child``) that answers at once, so these
tests exercise the planning, recording and resuming around it; ``tests/quality/
test_mutants.py`` judges real mutants by real campaigns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cosmic_ray")

from dshfuzz.cli import main  # noqa: E402
from dshfuzz.harness import (  # noqa: E402
    MutantJudged,
    MutantsFinished,
    MutantsPlanned,
    MutationConfig,
    MutationSetupError,
    run_mutants,
    summarise_mutants,
)
from dshfuzz.harness import _mutation_run  # noqa: E402
from dshfuzz.harness._mutation import enumerate_mutants, materialise, resolve_target  # noqa: E402

CHECKER = '''"""A toy py: checker."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["check"]

LIMIT: int = 3


def count(lines: list[str] | None) -> int:
    return 0 if lines is None else len(lines)


def check(path: str) -> dict[str, object]:
    with open(path, encoding="utf-8") as fh:
        n = count(fh.read().splitlines())
    if n > LIMIT and n != 7:
        return {"findings": [{"rule": "X1", "severity": "error", "seq": None}]}
    return {"findings": []}
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A single-file py: checker ``toychk`` importable from ``tmp_path``."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "toychk.py").write_text(CHECKER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(src))
    return src / "toychk.py"


class FakeJudge:
    """Stands for the judging process: the baseline imports the toy, and a mutant is killed when
    its operator is listed in ``kill`` (every call recorded)."""

    def __init__(self, kill: tuple[str, ...] = ("core/AddNot",)) -> None:
        self.calls: list[str | None] = []
        self.kill = kill

    def __call__(self, target: Any, config: Any, mutant: Any, known: Any, children: Any) -> dict[str, Any]:
        self.calls.append(None if mutant is None else mutant.id)
        if mutant is None:
            return {"status": "baseline", "causes": ["crash|-|X9"], "imported": ["toychk"], "reach": None,
                    "examples": 10, "seconds": 1.0}
        if mutant.operator in self.kill:
            return {"status": "killed", "how": "a new cause", "cause": "false-alarm|-|X1", "seconds": 0.5}
        return {"status": "survived", "how": "no new cause in 10 examples", "seconds": 0.5}


def _events(config: MutationConfig) -> list[Any]:
    return list(run_mutants(config))


def test_mutants_are_enumerated_with_stable_ids_and_static_skips(toy: Path) -> None:
    target = resolve_target("py:toychk:check")
    mutants = list(enumerate_mutants(target))
    assert mutants and len({m.id for m in mutants}) == len(mutants)
    skips = {m.skip for m in mutants if m.skip}
    assert "type annotation (no verdict depends on it)" in skips  # list[str] | None, int
    assert "if TYPE_CHECKING: block (never run)" in skips
    assert all(m.rule is None for m in mutants)  # a py: checker has no registry
    judged = [m for m in mutants if m.skip is None]
    assert any("n > LIMIT" in m.source_line for m in judged)
    # an edit elsewhere leaves every unedited line's mutant ids as they were
    before = {m.id for m in mutants if "n > LIMIT" in m.source_line}
    toy.write_text(CHECKER.replace("LIMIT: int = 3", "LIMIT: int = 3\nOTHER = 1 + 2\n"), encoding="utf-8")
    after = {m.id for m in enumerate_mutants(target) if "n > LIMIT" in m.source_line}
    assert before == after


def test_a_copy_carries_the_mutant_and_the_original_is_untouched(toy: Path, tmp_path: Path) -> None:
    target = resolve_target("py:toychk:check")
    mutant = next(m for m in enumerate_mutants(target) if m.operator == "core/ReplaceComparisonOperator_Gt_Lt")
    original = toy.read_text(encoding="utf-8")
    folder = materialise(target, tmp_path / "copy", mutant)
    copied = (folder / "toychk.py").read_text(encoding="utf-8")
    assert "if n < LIMIT and n != 7:" in copied and "if n > LIMIT" not in copied
    assert toy.read_text(encoding="utf-8") == original


def test_the_built_in_checker_maps_mutants_to_its_rules() -> None:
    target = resolve_target("builtin", ["dshfuzz.checker._plugin"])
    by_line = {m.line: m.rule for m in enumerate_mutants(target)}
    assert by_line[61] == "P1,P2"  # Markers.visit: the marker prefix check
    assert by_line[102] == "P3"  # CallPairing.call
    assert by_line[36] == "engine"  # _get, shared by every walk of the module
    # _serializer_throws, a helper only P4's walk calls, is P4's code
    helper = [rule for line, rule in by_line.items() if 175 <= line <= 189]
    assert helper and set(helper) == {"P4"}
    # _unparseable serves P4 and the released walk's ownership test (reports_fragments): shared, engine
    shared = [rule for line, rule in by_line.items() if 113 <= line <= 131]
    assert shared and set(shared) == {"engine"}


def test_a_sample_is_deterministic_in_its_seed(toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mutation_run, "_run_child", FakeJudge())
    picked = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        events = _events(MutationConfig(checker="py:toychk:check", sample=4, seed=seed, out=tmp_path / name))
        picked[name] = [e.result.mutant.id for e in events if isinstance(e, MutantJudged)]
    assert len(picked["a"]) == 4
    assert sorted(picked["a"]) == sorted(picked["b"])
    assert sorted(picked["a"]) != sorted(picked["c"])


def test_a_stopped_run_resumes_and_judges_nothing_twice(toy: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config = MutationConfig(checker="py:toychk:check", sample=6, seed=3, out=tmp_path / "run")
    first = FakeJudge()
    monkeypatch.setattr(_mutation_run, "_run_child", first)
    recorded = []
    with pytest.raises(KeyboardInterrupt):
        for event in run_mutants(config):  # Ctrl-C arrives in the consumer, as in the command
            if isinstance(event, MutantJudged):
                recorded.append(event.result.mutant.id)
                if len(recorded) == 2:
                    raise KeyboardInterrupt
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [r["mutant"]["id"] for r in records if "mutant" in r] == recorded
    second = FakeJudge()
    monkeypatch.setattr(_mutation_run, "_run_child", second)
    events = _events(config)
    plan = next(e for e in events if isinstance(e, MutantsPlanned))
    assert plan.done == 2 and plan.baseline.cached
    assert None not in second.calls  # the baseline is read back, not run again
    assert not set(second.calls) & set(recorded)
    assert len(second.calls) == 4
    finished = events[-1]
    assert isinstance(finished, MutantsFinished) and len(finished.results) == 6
    third = FakeJudge()
    monkeypatch.setattr(_mutation_run, "_run_child", third)
    _events(config)
    assert third.calls == []


def test_the_results_file_is_checked(toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mutation_run, "_run_child", FakeJudge())
    config = MutationConfig(checker="py:toychk:check", sample=2, out=tmp_path / "run")
    _events(config)
    results = tmp_path / "run" / "results.jsonl"
    with results.open("ab") as fh:
        fh.write(b'{"mutant": {"id": "torn')  # a line cut by a kill: ignored
    _events(config)
    with pytest.raises(MutationSetupError, match="another run"):
        _events(MutationConfig(checker="py:toychk:check", sample=2, seed=9, out=tmp_path / "run"))
    lines = results.read_text().splitlines()
    results.write_text("\n".join([lines[0], "not json", *lines[1:]]) + "\n")
    with pytest.raises(MutationSetupError, match="line 2 is not a results record"):
        _events(config)


def test_the_score_counts_equivalents_apart(toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mutation_run, "_run_child", FakeJudge(kill=("core/AddNot",)))
    target = resolve_target("py:toychk:check")
    survivor = next(m for m in enumerate_mutants(target) if m.skip is None and m.operator != "core/AddNot")
    killed = [m.id for m in enumerate_mutants(target) if m.skip is None and m.operator == "core/AddNot"][:2]
    equivalents = tmp_path / "equivalents.json"
    equivalents.write_text(json.dumps({"format": "dshfuzz-mutation-equivalents/1", "equivalents": [
        {"mutant": survivor.id, "reason": "reviewed: no log tells it apart"}]}))
    config = MutationConfig(checker="py:toychk:check", only=(survivor.id, *killed), out=tmp_path / "run",
                            equivalents=equivalents)
    finished = _events(config)[-1]
    summary = summarise_mutants(finished, config)
    assert (summary.overall.killed, summary.overall.survived, summary.overall.equivalent) == (2, 0, 1)
    assert summary.overall.score == 1.0
    (only,) = summary.survivors
    assert only.verdict == "equivalent" and only.reason.startswith("reviewed")
    assert only.replay.startswith("dshfuzz mutants --checker py:toychk:check --module toychk --only ")
    assert only.diff.startswith("--- a/toychk.py")
    data = summary.to_json()
    assert data["format"] == "dshfuzz-mutants-summary/1"
    assert data["modules"]["toychk"]["score"] == 1.0
    # without the reviewed entry the same survivor is a blind spot, and the score drops
    plain = MutationConfig(checker="py:toychk:check", only=(survivor.id, *killed), out=tmp_path / "r2")
    summary = summarise_mutants(_events(plain)[-1], plain)
    assert [s.verdict for s in summary.survivors] == ["blind spot"]
    assert summary.overall.score == pytest.approx(2 / 3)


def test_the_command_writes_the_summary_and_reports_blind_spots(
        toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_mutation_run, "_run_child", FakeJudge())
    out = tmp_path / "run"
    status = main(["mutants", "--checker", "py:toychk:check", "--sample", "3", "--seed", "5", "--budget", "2s",
                   "--out", str(out)])
    captured = capsys.readouterr()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == "dshfuzz-mutants-summary/1"
    blind = [s for s in summary["survivors"] if s["verdict"] == "blind spot"]
    assert status == (1 if blind else 0)
    assert "mutation score" in captured.out and "[3/3]" in captured.err
    page = (out / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "Mutation score" in page
    assert all(s["where"] in page for s in summary["survivors"])


@pytest.mark.parametrize("argv, message", [
    (["--checker", "cmd:'node x.mjs {log}'"], "mutates Python checkers"),
    (["--checker", "py:no_such_module_anywhere:check"], "no module named no_such_module_anywhere"),
    (["--checker", "builtin", "--module", "dshfuzz.checker._nope"], "not a Python module of builtin"),
    (["--checker", "builtin", "--budget", "soon"], "budget must look like"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_broken_results_file_is_one_line_and_exit_2(toy: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.jsonl").write_text("garbage\n{}\n")
    assert main(["mutants", "--checker", "py:toychk:check", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "results record" in err and err.count("\n") == 1


def test_a_cluster_that_cannot_be_reached_is_one_line_and_exit_2(
        toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--cluster`` at a closed port: one usage line, before any judging (no results file)."""
    import socket

    pytest.importorskip("distributed", reason="the cluster extra: pip install 'dshfuzz[cluster]'")
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    assert main(["mutants", "--checker", "py:toychk:check", "--cluster", address,
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dshfuzz mutants: cannot reach a Dask scheduler at {address}"), err
    assert err.count("\n") == 1 and "--cluster local" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_cluster_task_judges_only_the_checker_files_the_coordinator_sees(
        toy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant's task on a cluster worker (``_judge_remote``) judges when the worker sees the
    coordinator's checker files, and is an ``error`` (never a verdict of other code) when not."""
    judge = FakeJudge(kill=())
    monkeypatch.setattr(_mutation_run, "_run_child", judge)
    target = resolve_target("py:toychk:check")
    mutant = next(m for m in enumerate_mutants(target) if m.skip is None)
    config = MutationConfig(checker="py:toychk:check")
    seen = _mutation_run._fingerprint(target)
    assert _mutation_run._judge_remote(target, config, mutant, [], seen)["status"] == "survived"
    toy.write_text(CHECKER.replace("LIMIT: int = 3", "LIMIT: int = 4"), encoding="utf-8")  # the worker's copy
    other = _mutation_run._judge_remote(target, config, mutant, [], seen)
    assert other["status"] == "error" and "other checker files" in other["how"]
    assert judge.calls == [mutant.id]


def test_without_the_library_the_command_says_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "cosmic_ray" else real(name, *a))
    assert main(["mutants", "--out", str(tmp_path / "out")]) == 2
    assert "pip install 'dshfuzz[mutation]'" in capsys.readouterr().err


def test_fuzzing_does_not_import_the_mutation_library() -> None:
    import subprocess

    code = ("import sys, dshfuzz.harness, dshfuzz.cli._fuzz; "
            "print(any(m.split('.')[0] == 'cosmic_ray' for m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "False", run.stderr


def test_only_logging_calls_are_skipped_as_logging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "logchk.py").write_text(
        "import logging\nlogger = logging.getLogger(__name__)\n\n\n"
        "def check(path):\n"
        "    log = open(path).read().splitlines()\n"
        "    logger.info('lines: %d', len(log) + 1)\n"
        "    return {'findings': [] if log.count('') < 2 else [{'rule': 'X1', 'severity': 'error', 'seq': None}]}\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    mutants = list(enumerate_mutants(resolve_target("py:logchk:check")))
    by_line = {}
    for m in mutants:
        by_line.setdefault(m.line, set()).add(m.skip)
    assert by_line[7] == {"logging call"}  # logger.info(...)
    assert by_line[8] == {None}  # `log` here is the lines read, not a logger


def test_every_reviewed_equivalent_names_a_mutant_of_the_built_in_checker() -> None:
    """A stale entry (its line edited or gone) would silently stop counting: each must still exist."""
    from dshfuzz.harness._mutation import EQUIVALENTS_FILE, load_equivalents

    equivalents = load_equivalents(EQUIVALENTS_FILE)
    assert equivalents
    modules = sorted({mutant_id.split(":")[0] for mutant_id in equivalents})
    ids = {m.id for m in enumerate_mutants(resolve_target("builtin", modules))}
    assert set(equivalents) <= ids, sorted(set(equivalents) - ids)
    assert all(reason.strip() and "\n" not in reason for reason in equivalents.values())


def test_a_mutant_that_does_not_compile_is_invalid_and_never_judged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "starchk.py").write_text(
        "def check(path, *, strict=False):\n"
        "    return {'findings': [] if strict or path else [{'rule': 'X1', 'severity': 'error', 'seq': None}]}\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    target = resolve_target("py:starchk:check")
    # cosmic-ray reads the keyword-only marker as a multiplication (and `/`, positional-only, compiles)
    star = [m.id for m in enumerate_mutants(target) if m.line == 1 and m.operator.startswith("core/ReplaceBinary")
            and m.operator != "core/ReplaceBinaryOperator_Mul_Div"]
    assert len(star) >= 5
    judge = FakeJudge()
    monkeypatch.setattr(_mutation_run, "_run_child", judge)
    config = MutationConfig(checker="py:starchk:check", only=tuple(star), out=tmp_path / "run")
    finished = _events(config)[-1]
    assert {r.status for r in finished.results} == {"invalid"}
    assert set(judge.calls) == {None}  # the baseline (and its reach) only
    summary = summarise_mutants(finished, config)
    assert summary.overall.invalid == len(star) and summary.overall.score is None and not summary.survivors
