"""Shared test fixtures: the official oracle, the vendored fixture and the shared reference data.

Hypothesis profiles (``dev``, ``ci`` with >= 200 examples per property, ``nightly``)
come from the dshfuzz pytest plugin (``dshfuzz._pytest_plugin``), selected with
``--dshfuzz-profile`` or ``DSHFUZZ_PROFILE``; ``ci`` whenever ``CI`` is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# the 76-event valid fixture, vendored from shared/reference/fixtures (tests/data/README.md)
FIXTURES = REPO / "tests" / "data"
SHARED = REPO.parent / "shared"
REAL_SESSIONS = SHARED / "real-sessions"


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


def _require(path: Path, what: str) -> Path:
    """``path``, or a skip naming it; CI always lays ``shared/`` beside the clone, so there it fails."""
    if not path.is_dir():
        message = f"{what} not found at {path} (shared/ belongs beside the repository)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The vendored fixtures: always there, so the tests reading them never skip."""
    return FIXTURES


@pytest.fixture(scope="session")
def real_sessions_dir() -> Path:
    return _require(REAL_SESSIONS, "shared real sessions")
