"""The checker-under-test adapters: any checker's failure becomes a verdict, never an exception."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from dshfuzz.harness import CheckerVerdict, ReportedFinding, load_checker, verdict_from_json
from dshfuzz.harness._judges import CheckerSpecError, CommandChecker


@pytest.mark.parametrize(
    "payload, expected",
    [
        ({"violations": [{"id": "S5", "seq": 4}]}, (ReportedFinding("S5", "error", 4),)),
        ({"findings": [{"rule": "Z1", "severity": "warning"}]}, (ReportedFinding("Z1", "warning", None),)),
        ([{"rule": "E2", "seq": True}], (ReportedFinding("E2", "error", None),)),
        ({"findings": []}, ()),
    ],
)
def test_reports_in_every_documented_shape_map_to_findings(payload, expected):
    assert verdict_from_json(payload).findings == expected


@pytest.mark.parametrize(
    "payload",
    [None, 3, "ok", {"result": []}, {"findings": {}}, {"findings": [1]}, {"findings": [{"severity": "error"}]}],
)
def test_reports_without_rule_ids_are_unparsable(payload):
    with pytest.raises(ValueError):
        verdict_from_json(payload)


def _script(tmp_path: Path, body: str) -> str:
    script = tmp_path / "checker.py"
    script.write_text(textwrap.dedent(body))
    return f"cmd:{sys.executable} {script} {{log}}"


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n')
    return path


def test_a_command_checker_report_is_read_from_stdout(tmp_path, log_file):
    spec = _script(tmp_path, 'import json, sys\nprint(json.dumps({"findings": [{"rule": "Z3", "severity": "warning", "seq": 0}]}))\n')
    verdict = load_checker(spec).check(log_file)
    assert verdict == CheckerVerdict((ReportedFinding("Z3", "warning", 0),), exit_code=0)


def test_a_command_that_dies_by_signal_is_a_crash(tmp_path, log_file):
    spec = _script(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    verdict = load_checker(spec).check(log_file)
    assert verdict.failure == "crash" and "signal" in verdict.detail


def test_a_command_that_exits_with_a_traceback_is_a_crash(tmp_path, log_file):
    spec = _script(tmp_path, "raise KeyError('boom')\n")
    verdict = load_checker(spec).check(log_file)
    assert verdict.failure == "crash" and "KeyError" in verdict.detail


def test_garbage_on_stdout_with_a_normal_exit_is_unparsable_output(tmp_path, log_file):
    spec = _script(tmp_path, "print('all good!')\n")
    assert load_checker(spec).check(log_file).failure == "unparsable-output"


def test_a_command_that_hangs_times_out(tmp_path, log_file):
    spec = _script(tmp_path, "import time\ntime.sleep(30)\n")
    verdict = load_checker(spec, timeout=0.5).check(log_file)
    assert verdict.failure == "timeout"


def test_a_python_checker_that_raises_is_a_crash(log_file):
    verdict = load_checker("py:json:loads").check(log_file)
    assert verdict.failure == "crash" and "JSONDecodeError" in verdict.detail


@pytest.mark.parametrize("spec", ["nonsense", "py:no.such.module:check", "py:json", "cmd:true"])
def test_unusable_checker_specs_are_refused_with_a_reason(spec):
    with pytest.raises(CheckerSpecError):
        load_checker(spec)


def test_the_builtin_checker_is_also_registered_as_an_entry_point():
    from importlib.metadata import entry_points

    assert "builtin" in {ep.name for ep in entry_points(group="dshfuzz.checkers")}


def test_command_template_needs_a_log_placeholder():
    with pytest.raises(CheckerSpecError):
        CommandChecker("checker --strict")


def _log_missing_seq_1(tmp_path: Path) -> Path:
    """A session whose first event has seq 2: E2 (contiguous seqs) fires on it."""
    path = tmp_path / "gap.jsonl"
    path.write_text(
        '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
        '{"seq":2,"time":0,"type":"user/message","data":{"text":"hi"}}\n'
    )
    return path


def test_builtin_with_rules_switched_off_never_reports_them(tmp_path):
    log = _log_missing_seq_1(tmp_path)
    whole = load_checker("builtin").check(log).error_rules
    assert "E2" in whole
    crippled = load_checker("builtin:-E2").check(log)
    assert crippled.error_rules == whole - {"E2"}
    assert crippled.failure is None


def test_builtin_without_rules_is_named_by_its_spec_in_catalog_order():
    assert load_checker("builtin:-S5,-E2").name == "builtin:-E2,-S5"
    assert load_checker("builtin").name == "builtin"


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("builtin:-S5,-X9", "unknown rule id X9"),
        ("builtin:-s5", "unknown rule id s5"),
        ("builtin:S5", "expected a comma-separated list of -RULE"),
        ("builtin:", "expected a comma-separated list of -RULE"),
        ("builtin:-S5,", "expected a comma-separated list of -RULE"),
    ],
)
def test_switching_off_a_rule_that_is_not_one_is_a_usage_error(spec, reason):
    with pytest.raises(CheckerSpecError, match=reason):
        load_checker(spec)


def test_an_unknown_checker_error_lists_every_form():
    from dshfuzz.harness._judges import CHECKER_SPEC_HELP

    with pytest.raises(CheckerSpecError) as caught:
        load_checker("nonsense")
    assert CHECKER_SPEC_HELP in str(caught.value) and "builtin:-RULE" in CHECKER_SPEC_HELP


# --- "not assessable" -------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload, findings",
    [
        ({"assessable": False}, ()),
        ({"assessable": False, "findings": [{"rule": "Z3", "severity": "warning"}]}, (ReportedFinding("Z3", "warning"),)),
    ],
)
def test_a_report_may_say_the_log_is_not_assessable(payload, findings):
    verdict = verdict_from_json(payload)
    assert verdict.assessable is False and verdict.findings == findings and verdict.failure is None


def test_a_report_is_assessable_unless_it_says_otherwise():
    assert verdict_from_json({"findings": []}).assessable is True
    assert verdict_from_json({"assessable": True, "findings": []}).assessable is True
    with pytest.raises(ValueError, match="assessable"):
        verdict_from_json({"assessable": "no", "findings": []})


def test_exit_3_of_a_command_is_not_assessable_with_or_without_a_report(tmp_path, log_file):
    bare = load_checker(_script(tmp_path, "import sys\nsys.exit(3)\n")).check(log_file)
    assert (bare.assessable, bare.failure, bare.exit_code, bare.findings) == (False, None, 3, ())
    (tmp_path / "r").mkdir()
    reported = load_checker(
        _script(tmp_path / "r", 'import sys\nprint(\'{"findings": [{"rule": "H2", "seq": null}]}\')\nsys.exit(3)\n')
    ).check(log_file)
    assert (reported.assessable, reported.failure, reported.findings) == (False, None, (ReportedFinding("H2"),))


def test_assessable_false_in_a_command_report_is_read(tmp_path, log_file):
    verdict = load_checker(_script(tmp_path, 'print(\'{"assessable": false, "findings": []}\')\n')).check(log_file)
    assert verdict.assessable is False and verdict.failure is None and verdict.exit_code == 0


def test_a_python_checker_may_answer_not_assessable(log_file, monkeypatch):
    import types

    monkeypatch.setitem(sys.modules, "fake_checker", types.SimpleNamespace(check=lambda path: {"assessable": False}))
    assert load_checker("py:fake_checker:check").check(log_file).assessable is False


# --- vocabulary -------------------------------------------------------------------------


def test_the_builtin_vocabulary_is_the_registry_switched_off_rules_included():
    from dshfuzz.checker import RULES

    registry = {str(rid) for rid in RULES}
    assert load_checker("builtin").rules == registry
    assert load_checker("builtin:-S5,-E2").rules == registry  # claimed, and missed on purpose


def test_an_external_checker_claims_the_46_catalog_ids_by_default(tmp_path):
    from dshfuzz.harness._judges import catalog_rules

    assert len(catalog_rules()) == 46
    assert {"H1", "S5", "G3", "Z5"} <= catalog_rules()
    assert not catalog_rules() & {"W3", "W4", "P5", "W5", "L1", "L2", "L3", "L4", "G4"}
    for spec in (_script(tmp_path, "print('{}')"), "py:json:loads", f"cmd:{sys.executable} x.py {{logs}}"):
        assert load_checker(spec).rules == catalog_rules()


def test_a_given_vocabulary_replaces_the_default(tmp_path):
    mine = frozenset({"H1", "R1", "X-OWN"})
    for spec in ("builtin", "builtin:-S5", _script(tmp_path, "print('{}')"), "py:json:loads", "serve:mychecker --serve"):
        assert load_checker(spec, rules=mine).rules == mine
    with pytest.raises(CheckerSpecError):
        load_checker("builtin", rules=frozenset())


@pytest.mark.parametrize(
    "text, content, expected",
    [
        ("H1,R1, S5", None, {"H1", "R1", "S5"}),
        ("H1 R1", None, {"H1", "R1"}),
        ("{file}", "H1, R1\nS5 # ours too:\nX-OWN\n", {"H1", "R1", "S5", "X-OWN"}),
        ("{file}", '["H1", "P5"]', {"H1", "P5"}),
    ],
)
def test_a_vocabulary_is_read_from_ids_or_a_file(tmp_path, text, content, expected):
    from dshfuzz.harness._judges import parse_checker_rules

    if content is not None:
        path = tmp_path / "rules.txt"
        path.write_text(content)
        text = text.format(file=path)
    assert parse_checker_rules(text) == expected


@pytest.mark.parametrize("text, content", [("", None), (" , ", None), ("{file}", "# nothing\n"), ("{file}", "[]"),
                                           ("{file}", '["H1", 2]'), ("{file}", "[H1"), ("no/such/rules.txt", None)])
def test_an_empty_or_broken_vocabulary_is_a_spec_error(tmp_path, text, content):
    from dshfuzz.harness._judges import parse_checker_rules

    if content is not None:
        path = tmp_path / "rules.json"
        path.write_text(content)
        text = text.format(file=path)
    with pytest.raises(CheckerSpecError) as caught:
        parse_checker_rules(text)
    assert "--checker-rules" in str(caught.value) and "\n" not in str(caught.value)


def test_a_plugin_object_gets_a_vocabulary_check_many_and_close(monkeypatch, log_file):
    import types

    from dshfuzz.harness import _judges
    from dshfuzz.harness._judges import _spec

    class Bare:
        name = "bare"

        def check(self, path):
            return CheckerVerdict((ReportedFinding("H1"),))

    class Declaring(Bare):
        rules = ("H1", "OWN1")
        closed = False

        def close(self):
            Declaring.closed = True

    points = [types.SimpleNamespace(name="bare", value="x:Bare", load=lambda: Bare),
              types.SimpleNamespace(name="declaring", value="x:Declaring", load=lambda: Declaring)]
    monkeypatch.setattr(_spec, "entry_points", lambda group: points)
    bare = load_checker("bare")
    assert bare.rules == _judges.catalog_rules() and bare.name == "bare"
    assert bare.check_many([log_file, log_file]) == [CheckerVerdict((ReportedFinding("H1"),))] * 2
    bare.close()
    with load_checker("declaring") as declaring:
        assert declaring.rules == {"H1", "OWN1"}
    assert Declaring.closed
    assert load_checker("bare", rules=frozenset({"R1"})).rules == {"R1"}


# --- check_many, close, with --------------------------------------------------------------


def test_every_checker_judges_many_logs_in_order_and_closes(tmp_path, log_file):
    gap = _log_missing_seq_1(tmp_path)
    script = _script(tmp_path, 'import json, sys\nprint(json.dumps({"findings": [{"rule": "X", "seq": len(sys.argv[1])}]}))\n')
    for spec in ("builtin", script):
        with load_checker(spec) as checker:
            assert checker.check_many([log_file, gap, log_file]) == [checker.check(p) for p in (log_file, gap, log_file)]
            assert checker.check_many([]) == []
        checker.close()  # twice is fine


# --- quoting -------------------------------------------------------------------------------


@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_command_quoted_as_a_shell_user_quotes_it_is_unwrapped(tmp_path, log_file, quote):
    script = tmp_path / "my checker.py"  # a space in the path: quoted inside the quotes
    script.write_text('import json, sys\nprint(json.dumps({"findings": [{"rule": "R1", "seq": len(sys.argv)}]}))\n')
    inner = '"' if quote == "'" else "'"
    spec = f"cmd:{quote}{sys.executable} {inner}{script}{inner} {{log}} --json{quote}"
    checker = load_checker(spec)
    assert checker.check(log_file) == CheckerVerdict((ReportedFinding("R1", "error", 3),), exit_code=0)  # script, log, --json
    assert load_checker(checker.name).name == checker.name  # the name is a spec of the same checker


def test_a_double_quoted_command_keeps_its_escaped_quotes(tmp_path, log_file):
    code = "import json; print(json.dumps({'findings': []}))"
    checker = load_checker(f'cmd:"{sys.executable} -c \\"{code}\\" {{log}}"')
    assert checker.check(log_file) == CheckerVerdict((), exit_code=0)


def test_quotes_that_do_not_wrap_the_whole_command_are_kept():
    checker = load_checker("cmd:'python' 'checker.py' {log}")
    assert checker.name == "cmd:'python' 'checker.py' {log}"
    assert checker._argv == ["python", "checker.py", "{log}"]


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("cmd:'python checker.py {log}", "cannot split"),
        ("cmd:python checker.py --files={logs}", "a word of its own"),
        ("cmd:python checker.py {logs} {logs}", "appear once"),
        ("cmd:python checker.py {log} {logs}", "both"),
        ("cmd:'python checker.py'", "no {log} or {logs}"),
        ("serve:python checker.py {log}", "no {log}"),
        ("serve:''", "needs a command"),
    ],
)
def test_malformed_command_specs_are_refused_with_a_reason(spec, reason):
    with pytest.raises(CheckerSpecError, match=re.escape(reason)):
        load_checker(spec)


# --- batch: {logs} ------------------------------------------------------------------------

_BATCH = """
import json, os, sys
paths = sys.argv[1:]
mode = os.environ.get("BATCH_MODE", "lines")
reports = [{"file": p, "findings": [{"rule": "R1", "seq": n}]} for n, p in enumerate(paths)]
if mode == "array":
    print(json.dumps(reports))
elif mode == "lines":
    print("\\n".join(json.dumps(r) for r in reversed(reports)))
elif mode == "absolute":
    print("\\n".join(json.dumps({**r, "file": os.path.abspath(r["file"])}) for r in reports))
elif mode == "skip-first":
    print("\\n".join(json.dumps(r) for r in reports[1:]))
elif mode == "not-assessable":
    print(json.dumps([{"file": p, "assessable": n != 0, "findings": []} for n, p in enumerate(paths)]))
elif mode == "crash":
    raise SystemExit("batch checker died")
elif mode == "exit3":
    sys.exit(3)
elif mode == "text":
    print("all fine")
elif mode == "hang":
    import time; time.sleep(60)
elif mode == "hang-on-log0":
    if any(p.endswith("log0.jsonl") for p in paths):
        import time; time.sleep(60)
    print(json.dumps(reports))
"""


@pytest.fixture
def batch(tmp_path, monkeypatch):
    script = tmp_path / "batch.py"
    script.write_text(_BATCH)
    logs = []
    for n in range(3):
        path = tmp_path / f"log{n}.jsonl"
        path.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n')
        logs.append(path)
    monkeypatch.chdir(tmp_path)

    def run(mode: str, timeout: float = 20.0, relative: bool = False):
        monkeypatch.setenv("BATCH_MODE", mode)
        checker = load_checker(f"cmd:'{sys.executable} {script} {{logs}}'", timeout=timeout)
        return checker.check_many([Path(p.name) if relative else p for p in logs])

    return run


@pytest.mark.parametrize("mode", ["array", "lines", "absolute"])
def test_a_batch_report_is_matched_to_each_log_by_its_file(batch, mode):
    verdicts = batch(mode, relative=mode == "absolute")
    assert [v.findings for v in verdicts] == [(ReportedFinding("R1", "error", n),) for n in range(3)]
    assert all(v.failure is None and v.exit_code == 0 for v in verdicts)


def test_a_log_without_its_batch_report_is_unparsable_output_for_that_log(batch):
    first, *rest = batch("skip-first")
    assert first.failure == "unparsable-output" and "log0.jsonl" in first.detail
    assert [v.failure for v in rest] == [None, None]


def test_a_batch_says_not_assessable_per_file_or_by_exit_3(batch):
    assert [v.assessable for v in batch("not-assessable")] == [False, True, True]
    assert [(v.assessable, v.failure) for v in batch("exit3")] == [(False, None)] * 3


@pytest.mark.parametrize("mode, failure, words", [("crash", "crash", "batch checker died"), ("text", "unparsable-output", "all fine")])
def test_a_batch_failing_as_a_whole_asks_each_log_alone_and_each_fails_alone_here(batch, mode, failure, words):
    verdicts = batch(mode)
    assert [v.failure for v in verdicts] == [failure] * 3 and all(words in v.detail for v in verdicts)
    assert len({id(v) for v in verdicts}) == 3  # three answers of their own, not one shared


def test_a_hanging_batch_times_out_then_each_log_alone_times_out_after_the_per_log_timeout(batch):
    import time

    started = time.monotonic()
    verdicts = batch("hang", timeout=0.4)
    assert [v.failure for v in verdicts] == ["timeout"] * 3
    assert "0.4s" in verdicts[0].detail and time.monotonic() - started < 20


def test_one_hanging_log_times_out_alone_and_the_rest_of_its_batch_get_their_verdicts(batch):
    verdicts = batch("hang-on-log0", timeout=0.5)
    assert [v.failure for v in verdicts] == ["timeout", None, None]
    assert [len(v.findings) for v in verdicts[1:]] == [1, 1]


def test_a_batch_deadline_grows_by_what_its_logs_took_not_by_the_whole_timeout_each():
    checker = load_checker(f"cmd:{sys.executable} x.py {{logs}}", timeout=20.0)
    assert checker.deadline(1) == 20.0
    assert checker.deadline(64) == 20.0 + 63 * 0.5  # nothing seen yet: the floor a log
    checker._file_seconds.extend([0.002] * 5)
    assert checker.deadline(64) == 20.0 + 63 * 0.5
    checker._file_seconds.extend([3.0] * 10)
    assert checker.deadline(3) == 20.0 + 2 * 12.0
    checker._file_seconds.extend([60.0] * 30)
    assert checker.deadline(3) == 20.0 + 2 * 20.0  # never more than the timeout a log


def test_a_batch_checker_checks_one_log_as_a_batch_of_one(tmp_path, log_file, monkeypatch):
    script = tmp_path / "batch.py"
    script.write_text(_BATCH)
    monkeypatch.setenv("BATCH_MODE", "array")
    checker = load_checker(f"cmd:{sys.executable} {script} {{logs}}")
    assert checker.check(log_file) == CheckerVerdict((ReportedFinding("R1", "error", 0),), exit_code=0)


def test_any_exit_but_0_1_and_3_is_a_crash_even_with_a_report(tmp_path, log_file):
    verdict = load_checker(_script(tmp_path, 'import sys\nprint(\'{"findings": []}\')\nsys.exit(2)\n')).check(log_file)
    assert verdict.failure == "crash" and verdict.exit_code == 2 and "exit 2" in verdict.detail and "findings" in verdict.detail


def test_checker_exit_maps_a_command_checkers_own_statuses(tmp_path):
    from dshfuzz.harness import parse_checker_exits

    script = tmp_path / "four.py"
    script.write_text("import json, sys\nprint(json.dumps({'findings': [{'rule': 'Z1', 'severity': 'warning'}]}))\nsys.exit(4)\n")
    log = tmp_path / "a.jsonl"
    log.write_text("{}\n")
    spec = f"cmd:{sys.executable} {script} {{log}}"
    unmapped = load_checker(spec).check(log)
    assert unmapped.failure == "crash" and unmapped.detail.startswith("exit 4 with a parsable report"), unmapped
    mapped = load_checker(spec, exits=parse_checker_exits("4=findings")).check(log)
    assert mapped.failure is None and [f.rule for f in mapped.findings] == ["Z1"] and mapped.exit_code == 4
    assert load_checker(spec, exits={4: "not-assessable"}).check(log).assessable is False
    assert parse_checker_exits("4=clean, 5=crash") == {4: "clean", 5: "crash"}
    for bad in ("4", "four=clean", "4=fine"):
        with pytest.raises(CheckerSpecError, match="is not CODE=MEANING"):
            parse_checker_exits(bad)
    with pytest.raises(CheckerSpecError, match="maps a cmd: checker's exit statuses"):
        load_checker("builtin", exits={4: "clean"})
