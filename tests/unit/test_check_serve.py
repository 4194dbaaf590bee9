"""``dshfuzz check --serve``: the built-in checker behind the dshfuzz-checker/1 protocol.

Driven as a client drives it: a subprocess, JSON lines on its stdin and stdout.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dshfuzz.checker import RULES
from dshfuzz.harness import load_checker

HEADER = '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    written = {
        "valid": HEADER,
        "gap": HEADER + '{"seq":2,"time":0,"type":"user/message","data":{"text":"hi"}}\n',
        "garbage": "not a session\n",
    }
    paths = {}
    for name, text in written.items():
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text(text)
    return paths


class _Client:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dshfuzz", "check", "--serve", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

    def line(self) -> dict:
        return json.loads(self.proc.stdout.readline())

    def ask(self, raw: str) -> dict:
        self.proc.stdin.write(raw + "\n")
        self.proc.stdin.flush()
        return self.line()

    def end(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def _builtin(path: Path) -> list[dict]:
    verdict = load_checker("builtin").check(path)
    return [{"rule": f.rule, "severity": f.severity, "seq": f.seq, "causedBy": f.caused_by,
             "refusedBy": list(f.refused_by or ())} for f in verdict.findings]


def _events(path: Path) -> int | None:
    return load_checker("builtin").check(path).events


def test_the_server_greets_answers_survives_bad_requests_and_ends_at_eof(logs, tmp_path):
    client = _Client()
    try:
        hello = client.line()
        assert hello == {"protocol": "dshfuzz-checker/1", "rules": [str(rid) for rid in RULES]}
        for n, name in enumerate(("valid", "gap", "garbage"), 1):
            reply = client.ask(json.dumps({"id": n, "path": str(logs[name])}))
            assert reply == {"id": n, "findings": _builtin(logs[name]), "events": _events(logs[name])}
        assert client.ask(json.dumps({"id": 4, "path": str(logs["gap"])}))["findings"] != []
        missing = client.ask(json.dumps({"id": "m", "path": str(tmp_path / "missing.jsonl")}))
        assert missing["id"] == "m" and "cannot read" in missing["error"] and "missing.jsonl" in missing["error"]
        malformed = client.ask("this is not json")
        assert malformed["id"] is None and "not JSON" in malformed["error"]
        assert client.ask("[1, 2]")["id"] is None
        assert client.ask('{"path": "x"}')["id"] is None
        assert "path" in client.ask('{"id": 9}')["error"]
        assert client.ask(json.dumps({"id": 5, "path": str(logs["valid"])})) == {
            "id": 5, "findings": _builtin(logs["valid"]), "events": 0}
        assert client.end() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_the_options_of_check_apply_to_every_request(logs):
    client = _Client("--format-version", "3")
    try:
        client.line()
        reply = client.ask(json.dumps({"id": 1, "path": str(logs["valid"])}))
        assert reply["findings"] != []  # a v0 header checked as v3
        assert client.end() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


@pytest.mark.parametrize("args", [["some.jsonl"], ["--prewrite", "edit.json", "--log", "x.jsonl"]])
def test_serve_takes_its_paths_from_stdin_only(args):
    proc = subprocess.run([sys.executable, "-m", "dshfuzz", "check", "--serve", *args],
                          capture_output=True, text=True, input="", timeout=60)
    assert proc.returncode == 2 and "--serve" in proc.stderr and proc.stdout == ""


def test_the_builtin_checker_fuzzed_as_an_external_one_agrees_with_itself(logs, tmp_path):
    with load_checker(f"serve:'{sys.executable} -m dshfuzz check --serve'") as served:
        assert served.rules == {str(rid) for rid in RULES}
        for path in logs.values():
            assert served.check(path).findings == load_checker("builtin").check(path).findings
        unreadable = served.check(tmp_path / "missing.jsonl")
        assert unreadable.failure == "crash" and "cannot read" in unreadable.detail
        assert served.check(logs["gap"]).failure is None and served.starts == 1


def test_a_check_that_raises_is_an_error_reply(monkeypatch, logs):
    from dshfuzz.checker import _serve

    def boom(*args, **kwargs):
        raise RuntimeError("walk exploded")

    monkeypatch.setattr("dshfuzz.checker.check_stream", boom)
    out = io.BytesIO()
    request = json.dumps({"id": 1, "path": str(logs["valid"])}).encode() + b"\n\n"
    assert _serve.serve(io.BytesIO(request), out, None) == 0
    hello, reply = (json.loads(line) for line in out.getvalue().splitlines())
    assert hello["protocol"] == "dshfuzz-checker/1"
    assert reply["id"] == 1 and "RuntimeError: walk exploded" in reply["error"]


def test_server_and_client_speak_one_protocol():
    from dshfuzz.checker._serve import PROTOCOL as served
    from dshfuzz.harness._judges import PROTOCOL as spoken

    assert served == spoken == "dshfuzz-checker/1"
