"""``DSHFUZZ_DATABASE`` gives the plugin's profile a shared example database: ``pytest -n 2``
on a project that asks for a dshfuzz profile stores its failing examples in that redis
server, where the next run (on any machine) finds them (a real redis-server)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

FAILING = '''
from hypothesis import given, strategies as st


@given(st.integers())
def test_small(x):
    assert x < 10
'''


def test_pytest_n_2_with_dshfuzz_database_stores_its_examples_in_that_redis_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, redis_server: str
) -> None:
    import redis

    url = redis_server.rsplit("/", 1)[0] + "/3"
    client = redis.Redis.from_url(url)
    client.flushdb()
    for name in ("DSHFUZZ_PROFILE", "CI", "TF_BUILD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DSHFUZZ_DATABASE", url)
    pytester.makepyfile(test_small=FAILING)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist", "--dshfuzz-profile", "dev")
    result.assert_outcomes(failed=1)
    assert client.dbsize() > 0, "the failing example was not saved in the redis server"


def test_a_dshfuzz_database_that_does_not_answer_is_one_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHFUZZ_DATABASE", "redis://127.0.0.1:1/0")
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_small=FAILING)
    result = pytester.runpytest_subprocess("--dshfuzz-profile", "dev")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*DSHFUZZ_DATABASE redis://127.0.0.1:1/0: cannot reach the redis server*"])
