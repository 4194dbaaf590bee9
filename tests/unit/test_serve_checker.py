"""``serve:`` checkers: a long-lived process speaking dshfuzz-checker/1.

Whatever the process does on a log (dies, hangs, prints garbage, answers an error),
that log gets a verdict and the next log a fresh process; a process that cannot
start or greets wrongly is one clear CheckerSpecError from ``start()``.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dshfuzz.harness import CheckerVerdict, ReportedFinding, load_checker
from dshfuzz.harness._judges import CheckerSpecError, ServeChecker

# A serve checker whose behaviour on a log follows the log's file name.
_SERVER = """
import json, os, sys, time

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n")
    sys.stdout.flush()

send({"protocol": "dshfuzz-checker/1", "rules": ["H1", "R1"]})
for line in sys.stdin:
    request = json.loads(line)
    rid, name = request["id"], os.path.basename(request["path"])
    if "crash" in name:
        sys.stderr.write("Traceback (most recent call last):\\nKeyError: 'shadowedTokenCount'\\n")
        sys.stderr.flush()
        os._exit(7)
    if "hang" in name:
        time.sleep(60)
    if "garbage" in name:
        print("checking " + name, flush=True)
        continue
    if "wrong-id" in name:
        send({"id": rid + 100, "findings": []})
        continue
    if "error" in name:
        send({"id": rid, "error": "cannot parse " + name})
        continue
    if "chatty" in name:
        sys.stderr.write("x" * 1_000_000 + "\\n")
        sys.stderr.flush()
    if "v1" in name:
        send({"id": rid, "assessable": False, "findings": []})
        continue
    if "blank" in name:
        print("", flush=True)
    send({"id": rid, "findings": [{"rule": "H1", "severity": "error", "seq": None},
                                  {"id": "R1", "seq": rid}], "pid": os.getpid()})
"""


@pytest.fixture
def server(tmp_path: Path) -> str:
    script = tmp_path / "server.py"
    script.write_text(_SERVER)
    return f"serve:'{sys.executable} {script}'"


def _log(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text("{}\n")
    return path


def test_loading_a_serve_checker_starts_nothing(server):
    checker = load_checker(server)
    assert isinstance(checker, ServeChecker) and not checker.running and checker.pid is None


def test_a_serve_round_trip_reads_the_handshake_and_each_reply(server, tmp_path):
    with load_checker(server) as checker:
        first = checker.check(_log(tmp_path, "a.jsonl"))
        assert first == CheckerVerdict((ReportedFinding("H1", "error", None), ReportedFinding("R1", "error", 1)))
        assert checker.rules == {"H1", "R1"}
        second = checker.check(_log(tmp_path, "b.jsonl"))
        assert second.findings[1] == ReportedFinding("R1", "error", 2)
        assert checker.check_many([_log(tmp_path, "c.jsonl"), _log(tmp_path, "v1.jsonl")])[1] == CheckerVerdict(
            assessable=False
        )
        assert checker.starts == 1
        pid = checker.pid
    assert not checker.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: gone


def test_reading_the_vocabulary_starts_the_process_unless_one_is_given(server):
    with load_checker(server) as checker:
        assert checker.rules == {"H1", "R1"} and checker.running
    with load_checker(server, rules=frozenset({"H1"})) as given:
        assert given.rules == {"H1"} and not given.running


def test_the_child_stays_in_the_callers_process_group(server):
    with load_checker(server) as checker:
        checker.start()
        assert os.getpgid(checker.pid) == os.getpgid(0)


def test_a_crash_is_that_logs_verdict_and_the_next_log_gets_a_fresh_process(server, tmp_path):
    with load_checker(server) as checker:
        assert checker.check(_log(tmp_path, "a.jsonl")).failure is None
        crashed = checker.check(_log(tmp_path, "crash.jsonl"))
        assert crashed.failure == "crash" and crashed.exit_code == 7
        assert "exit 7" in crashed.detail and "KeyError: 'shadowedTokenCount'" in crashed.detail
        after = checker.check(_log(tmp_path, "b.jsonl"))
        assert after.failure is None and after.findings[0].rule == "H1"
        assert checker.starts == 2


def test_a_hang_is_a_timeout_and_the_hung_process_is_killed_and_replaced(server, tmp_path):
    with load_checker(server, timeout=1.0) as checker:
        checker.start()
        hung = checker.pid
        started = time.monotonic()
        verdict = checker.check(_log(tmp_path, "hang.jsonl"))
        assert verdict.failure == "timeout" and "1s" in verdict.detail
        assert time.monotonic() - started < 10
        assert checker.check(_log(tmp_path, "a.jsonl")).failure is None
        assert checker.pid != hung and checker.starts == 2
    with pytest.raises(ProcessLookupError):
        os.kill(hung, 0)


@pytest.mark.parametrize("name, words", [("garbage.jsonl", "checking garbage.jsonl"), ("wrong-id.jsonl", "answers id 101")])
def test_an_unparsable_reply_is_that_logs_verdict_and_the_process_restarts(server, tmp_path, name, words):
    with load_checker(server) as checker:
        verdict = checker.check(_log(tmp_path, name))
        assert verdict.failure == "unparsable-output" and words in verdict.detail
        assert checker.check(_log(tmp_path, "a.jsonl")).failure is None and checker.starts == 2


def test_an_error_reply_is_a_crash_of_that_log_and_the_process_goes_on(server, tmp_path):
    with load_checker(server) as checker:
        verdict = checker.check(_log(tmp_path, "error.jsonl"))
        assert verdict == CheckerVerdict(failure="crash", detail="cannot parse error.jsonl")
        assert checker.check(_log(tmp_path, "a.jsonl")).failure is None and checker.starts == 1


def test_a_chatty_stderr_and_blank_lines_never_block_a_reply(server, tmp_path):
    with load_checker(server, timeout=10.0) as checker:
        for n in range(5):
            assert checker.check(_log(tmp_path, f"chatty-blank{n}.jsonl")).failure is None
        assert checker.starts == 1


def _greeting(tmp_path: Path, body: str) -> str:
    script = tmp_path / "greets.py"
    script.write_text(textwrap.dedent(body))
    return f"serve:{sys.executable} {script}"


@pytest.mark.parametrize(
    "body, words",
    [
        ("print('hello', flush=True)\n", "sent 'hello' instead of the dshfuzz-checker/1 handshake"),
        ("print('{\"protocol\": \"other/2\", \"rules\": [\"H1\"]}', flush=True)\n", "instead of the dshfuzz-checker/1"),
        ("print('{\"protocol\": \"dshfuzz-checker/1\", \"rules\": []}', flush=True)\n", "not a non-empty list of rule ids"),
        ("print('{\"protocol\": \"dshfuzz-checker/1\"}', flush=True)\n", "not a non-empty list of rule ids"),
        ("import nosuchmodule\n", "before sending the dshfuzz-checker/1 handshake"),
        ("import time\ntime.sleep(30)\n", "no handshake within 1s"),
    ],
)
def test_a_bad_start_is_one_clear_spec_error(tmp_path, body, words):
    checker = load_checker(_greeting(tmp_path, body), timeout=1.0)
    with pytest.raises(CheckerSpecError) as caught:
        checker.start()
    message = str(caught.value)
    assert words in message and "\n" not in message and message.startswith(f"{checker.name} did not start: ")
    assert not checker.running


def test_a_start_error_names_the_checkers_last_words(tmp_path):
    checker = load_checker(_greeting(tmp_path, "import nosuchmodule\n"))
    with pytest.raises(CheckerSpecError, match="exit 1 before sending .*; stderr: ModuleNotFoundError: No module named 'nosuchmodule'"):
        checker.start()


def test_a_command_that_does_not_exist_cannot_start():
    with pytest.raises(CheckerSpecError, match="did not start: could not run '/no/such/checker'"):
        load_checker("serve:/no/such/checker --serve").start()
    with pytest.raises(CheckerSpecError):
        load_checker("serve:/no/such/checker --serve").rules  # noqa: B018 - reading it starts the process


def test_in_check_a_failing_start_is_a_crash_verdict_not_an_exception(tmp_path):
    checker = load_checker(_greeting(tmp_path, "print('hello', flush=True)\n"))
    verdict = checker.check(_log(tmp_path, "a.jsonl"))
    assert verdict.failure == "crash" and "instead of the dshfuzz-checker/1 handshake" in verdict.detail


def test_a_serve_checker_is_named_by_a_spec_that_loads_it_again(server):
    checker = load_checker(server)
    assert checker.name.startswith("serve:") and "'" not in checker.name.split()[0]
    assert load_checker(checker.name).name == checker.name


def _hello(tmp_path: Path, extra: str) -> str:
    hello = '{"protocol": "dshfuzz-checker/1", "rules": ["H1"]' + extra + "}"
    return _greeting(tmp_path, f"import sys\nprint({hello!r}, flush=True)\nsys.stdin.read()\n")


def test_the_handshakes_layers_are_the_checkers_scope_and_without_them_it_answers_for_every_layer(tmp_path):
    with load_checker(_hello(tmp_path, ', "layers": ["loadApp", "released"]')) as scoped:
        assert scoped.layers == {"load", "released"} and scoped.running  # reading the scope starts it
    with load_checker(_hello(tmp_path, "")) as unscoped:
        assert unscoped.layers is None


@pytest.mark.parametrize(
    "layers, words",
    [
        ('"released"', "is not a list of official layer names"),
        ('["load", 7]', "is not a list of official layer names"),
        ('["load", "migrate"]', "'migrate' is not an official layer"),
        ("[]", "no official layer given"),
    ],
)
def test_a_handshake_with_bad_layers_is_one_clear_spec_error(tmp_path, layers, words):
    checker = load_checker(_hello(tmp_path, f', "layers": {layers}'), timeout=5.0)
    with pytest.raises(CheckerSpecError) as caught:
        checker.start()
    message = str(caught.value)
    assert words in message and "\n" not in message and message.startswith(f"{checker.name} did not start: ")
