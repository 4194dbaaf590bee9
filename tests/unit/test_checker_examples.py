"""The two example checkers of docs/CHECKER_PROTOCOL.md run as documented, through ServeChecker.

The Node one runs on the Node 24 the official oracle runs: skipped where `make setup`
was not run, a failure under CI.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from dshfuzz.harness import CheckerVerdict, ReportedFinding, load_checker

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HEADER = '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
EVENT = '{"seq":1,"time":0,"type":"user/message","data":{"text":"hi"}}\n'


@pytest.fixture(params=["python", "node"])
def example(request) -> str:
    if request.param == "python":
        return f"serve:'{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLES / 'python-checker' / 'checker.py'))}'"
    node = request.getfixturevalue("node24")
    return f"serve:'{shlex.quote(str(node))} {shlex.quote(str(EXAMPLES / 'node-checker' / 'checker.mjs'))}'"


def test_an_example_declares_h1_and_r1_and_judges_a_valid_and_a_broken_log(example, tmp_path):
    valid = tmp_path / "valid.jsonl"
    valid.write_text(HEADER + EVENT)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type":"sessio"}\n' + EVENT + '{"seq":2,\n' + "{\"torn")
    compressed = tmp_path / "valid.jsonl.zstd"
    compressed.write_bytes((REPO / "tests" / "data" / "valid-v0.jsonl.zstd").read_bytes())
    builtin = load_checker("builtin")
    with load_checker(example) as checker:
        assert checker.rules == {"H1", "R1"}
        assert checker.check(valid) == CheckerVerdict()
        assert checker.check(broken) == CheckerVerdict((ReportedFinding("H1"), ReportedFinding("R1")))
        for path in (valid, broken):  # what the built-in checker says of the same rules
            ours = sorted((f.rule, f.seq) for f in builtin.check(path).findings if f.rule in checker.rules)
            assert sorted((f.rule, f.seq) for f in checker.check(path).findings) == ours
        headless = tmp_path / "header-without-newline.jsonl"  # no complete line: the header is torn
        headless.write_text(HEADER.rstrip("\n"))
        assert checker.check(headless) == CheckerVerdict((ReportedFinding("H1"),)), "H1 as the built-in checker says"
        assert [f.rule for f in builtin.check(headless).findings if f.rule in checker.rules] == ["H1"]
        assert checker.check(compressed) == CheckerVerdict(assessable=False)
        missing = checker.check(tmp_path / "missing.jsonl")
        assert missing.failure == "crash" and "missing.jsonl" in missing.detail
        assert checker.check(valid) == CheckerVerdict() and checker.starts == 1


def test_the_readmes_show_the_documented_command():
    for name, script in (("python-checker", "python examples/python-checker/checker.py"),
                         ("node-checker", "node examples/node-checker/checker.mjs")):
        readme = (EXAMPLES / name / "README.md").read_text()
        assert f"dshfuzz fuzz --checker \"serve:'{script}'\"" in readme
    assert "examples/python-checker" in (REPO / "docs" / "CHECKER_PROTOCOL.md").read_text()
