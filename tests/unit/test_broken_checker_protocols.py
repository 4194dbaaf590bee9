"""The broken checkers behind every protocol show exactly their planted defect.

The campaign's acceptance tests fuzz them; here each defect is shown on a log that
triggers it, through the per-log, batch and serve protocols (and the Node checker
through the Node 24 that the official oracle runs).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from dshfuzz.harness import load_checker
from dshfuzz.harness._judges import ServeChecker
from dshfuzz.model import read_log
from dshfuzz.mutators import apply_seeded, get_edit

REPO = Path(__file__).resolve().parents[2]
BROKEN = REPO / "tests" / "broken_checkers"
FIXTURE = REPO / "tests" / "data" / "valid-v0.jsonl"  # holds a compaction/prune event
HEADER = '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
PYTHON = shlex.quote(sys.executable)


def _script(name: str) -> str:
    return f"{PYTHON} {shlex.quote(str(BROKEN / name))}"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Logs that trigger each defect; ``pruned`` is the only one holding compaction/prune."""
    out = tmp_path_factory.mktemp("logs")
    fixture = read_log(FIXTURE)
    texts: dict[str, bytes] = {
        "header-only": HEADER.encode(),
        "gap": (HEADER + '{"seq":2,"time":0,"type":"user/message","data":{"text":"hi"}}\n').encode(),
        "not-a-session": b'{"type":"sessio","version":0}\n{"seq":1}\n',
        "corrupt-line": (HEADER + 'not json\n\n{"seq":1,"time":0,"type":"user/message","data":{"text":"hi"}}\ntorn').encode(),
        "v1": HEADER.replace('"version":0', '"version":1').encode(),
        "pruned": FIXTURE.read_bytes(),
        "s5": apply_seeded(get_edit("partial-coverage"), fixture, 0, compression="none").data,
    }
    paths = {}
    for name, data in texts.items():
        paths[name] = out / f"{name}.jsonl"
        paths[name].write_bytes(data)
    paths["zstd"] = out / "valid.jsonl.zstd"
    paths["zstd"].write_bytes((REPO / "tests" / "data" / "valid-v0.jsonl.zstd").read_bytes())
    return paths


def _builtin(path: Path):
    return load_checker("builtin").check(path)


def _places(verdict) -> list[tuple[str, str, int | None]]:
    return sorted(((f.rule, f.severity, f.seq) for f in verdict.findings), key=str)


# --- the serve and batch drivers --------------------------------------------------------


def test_the_serve_driver_serves_a_modules_defect_and_claims_the_registry(logs):
    from dshfuzz.harness._judges import registry_rules

    with load_checker(f"serve:{_script('serve.py')} miss_rule") as checker:
        assert checker.rules == registry_rules()
        verdict = checker.check(logs["s5"])
        assert verdict.failure is None and verdict.error_rules == _builtin(logs["s5"]).error_rules - {"S5"}


def test_the_serve_driver_dies_with_a_crashing_module_and_comes_back(logs):
    with load_checker(f"serve:{_script('serve.py')} crashes") as checker:
        crashed = checker.check(logs["pruned"])
        assert crashed.failure == "crash" and "KeyError: 'shadowedTokenCount'" in crashed.detail
        assert _places(checker.check(logs["gap"])) == _places(_builtin(logs["gap"]))
        assert checker.starts == 2


@pytest.mark.parametrize("array", [False, True])
def test_the_batch_driver_reports_a_modules_defect_per_file(logs, array):
    checker = load_checker(f"cmd:{_script('batch.py')} {'--array ' if array else ''}wrong_seq {{logs}}")
    gap, header = checker.check_many([logs["gap"], logs["header-only"]])
    shifted = [(r, s, q + 1 if r == "E2" else q) for r, s, q in _places(_builtin(logs["gap"]))]
    assert _places(gap) == sorted(shifted, key=str) and gap.failure is None
    assert _places(header) == _places(_builtin(logs["header-only"]))


def test_a_batch_crashed_by_one_log_is_that_logs_crash_and_the_others_get_their_verdicts(logs):
    checker = load_checker(f"cmd:{_script('batch.py')} crashes {{logs}}")
    verdicts = checker.check_many([logs["gap"], logs["pruned"], logs["header-only"]])
    assert [v.failure for v in verdicts] == [None, "crash", None] and "KeyError" in verdicts[1].detail
    assert verdicts[0].error_rules == _builtin(logs["gap"]).error_rules


# --- classification defects -------------------------------------------------------------


@pytest.mark.parametrize("form", ["py", "cmd", "serve", "batch"])
def test_no_seq_reports_the_right_rules_with_no_place(logs, form, monkeypatch):
    checker = _load(form, "no_seq", monkeypatch)
    with checker:
        for name in ("gap", "s5"):
            verdict = checker.check(logs[name])
            assert verdict.failure is None and {f.seq for f in verdict.findings} == {None}
            assert verdict.error_rules == _builtin(logs[name]).error_rules


@pytest.mark.parametrize("form", ["py", "cmd", "serve", "batch"])
def test_not_assessable_answers_no_verdict_on_format_1_and_later(logs, form, monkeypatch):
    with _load(form, "not_assessable", monkeypatch) as checker:
        v1 = checker.check(logs["v1"])
        assert v1.assessable is False and v1.failure is None and v1.findings == ()
        if form == "cmd":
            assert v1.exit_code == 3
        v0 = checker.check(logs["gap"])
        assert v0.assessable is True and v0.error_rules == _builtin(logs["gap"]).error_rules


@pytest.mark.parametrize("form", ["py", "cmd", "serve"])
def test_other_id_refuses_an_s5_log_under_s8(logs, form, monkeypatch):
    with _load(form, "other_id", monkeypatch) as checker:
        verdict = checker.check(logs["s5"])
        assert "S5" not in verdict.error_rules and "S8" in verdict.error_rules
        assert verdict.error_rules == (_builtin(logs["s5"]).error_rules - {"S5"}) | {"S8"}


@pytest.mark.parametrize("form", ["py", "cmd", "serve", "batch"])
def test_plain_text_is_unparsable_output_in_every_protocol(logs, form, monkeypatch):
    with _load(form, "plain_text", monkeypatch) as checker:
        verdict = checker.check(logs["s5"])
        assert verdict.failure == "unparsable-output" and "error" in verdict.detail


def test_slow_sleeps_on_every_log_then_answers_right(logs, monkeypatch):
    monkeypatch.setenv("DSHFUZZ_SLOW_SECONDS", "0")
    checker = load_checker(f"cmd:{_script('slow.py')} {{log}}")
    assert _places(checker.check(logs["gap"])) == _places(_builtin(logs["gap"]))
    monkeypatch.setenv("DSHFUZZ_SLOW_SECONDS", "30")
    assert load_checker(f"cmd:{_script('slow.py')} {{log}}", timeout=0.5).check(logs["gap"]).failure == "timeout"
    monkeypatch.delenv("DSHFUZZ_SLOW_SECONDS")
    fast = load_checker(f"cmd:{_script('slow.py')} --seconds 0 {{log}}")
    assert _places(fast.check(logs["gap"])) == _places(_builtin(logs["gap"]))


def _load(form: str, module: str, monkeypatch: pytest.MonkeyPatch):
    if form == "py":
        monkeypatch.chdir(REPO)
        return load_checker(f"py:tests.broken_checkers.{module}:check")
    if form == "cmd":
        return load_checker(f"cmd:{_script(module + '.py')} {{log}}")
    if form == "serve":
        return load_checker(f"serve:{_script('serve.py')} {module}")
    return load_checker(f"cmd:{_script('batch.py')} {module} {{logs}}")


# --- the Node checker that hangs ---------------------------------------------------------


@pytest.fixture(scope="module")
def node(node24: Path) -> Path:
    return node24


def _node_checker(node: Path, path: str, timeout: float = 20.0) -> ServeChecker:
    checker = load_checker(f"serve:{shlex.quote(str(node))} {shlex.quote(path)}", timeout=timeout)
    assert isinstance(checker, ServeChecker)
    return checker


def test_node_hang_declares_h1_and_r1_and_implements_them_as_the_builtin_does(node, logs):
    with _node_checker(node, str(BROKEN / "node_hang.mjs")) as checker:
        assert checker.rules == {"H1", "R1"}
        for name in ("header-only", "gap", "not-a-session", "corrupt-line", "v1"):
            verdict = checker.check(logs[name])
            wanted = [p for p in _places(_builtin(logs[name])) if p[0] in checker.rules]
            assert verdict.failure is None and _places(verdict) == wanted, name
        assert checker.check(logs["zstd"]).assessable is False


def test_node_hang_hangs_on_a_compaction_prune_and_a_fresh_process_goes_on(node, logs):
    with _node_checker(node, str(BROKEN / "node_hang.mjs"), timeout=2.0) as checker:
        assert checker.check(logs["gap"]).failure is None
        assert checker.check(logs["pruned"]).failure == "timeout"
        assert checker.check(logs["corrupt-line"]).error_rules == {"R1"} and checker.starts == 2
