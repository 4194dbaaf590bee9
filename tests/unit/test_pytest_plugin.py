"""The pytest plugin: profiles, the minimal log printed on failure, and --dshfuzz-save."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

FAILING_PROPERTY = '''
from hypothesis import given, strategies as st

@given(n=st.integers(0, 1000))
def test_logs_are_short(n, dshfuzz_witness):
    log = b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\\n' + b'{"seq":%d}\\n' % n
    dshfuzz_witness.record(log, signature="test|long-log", kind="witness", expected={"rules": frozenset({"S5"})}, actual={"rules": []})
    assert n < 10
'''


def test_the_profile_is_chosen_by_option_then_environment(pytester: pytest.Pytester, monkeypatch):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("DSHFUZZ_PROFILE", "nightly")
    assert "hypothesis profile 'nightly'" in pytester.runpytest().stdout.str()
    assert "hypothesis profile 'ci'" in pytester.runpytest("--dshfuzz-profile=ci").stdout.str()


def test_a_failing_property_prints_its_minimal_log(pytester: pytest.Pytester):
    pytester.makepyfile(FAILING_PROPERTY)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*dshfuzz minimal log*", '*{"seq":10}*'])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_save_adds_the_minimal_witness_to_the_corpus(pytester: pytest.Pytester, workers):
    pytester.makepyfile(FAILING_PROPERTY)
    pytester.runpytest_subprocess("--dshfuzz-save", "--dshfuzz-corpus=witnesses", *workers).assert_outcomes(failed=1)
    [meta] = list((pytester.path / "witnesses").glob("*/meta.json"))
    [entry] = json.loads(meta.read_text())["entries"].values()
    assert entry["signature"] == "test|long-log"
    assert (meta.parent / entry["file"]).read_bytes().endswith(b'{"seq":10}\n')
