"""Shared test configuration: Hypothesis profiles and the official-oracle fixture.

Profiles (select with ``DSHFUZZ_PROFILE`` or ``--hypothesis-profile``): ``dev`` is
quick, ``ci`` runs >= 200 examples per property, ``nightly`` runs long. They are
defined explicitly so that Hypothesis' own ``CI``-triggered defaults never apply.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "reference" / "fixtures"
REAL_SESSIONS = SHARED / "real-sessions"

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=50, **_common)
settings.register_profile("ci", max_examples=200, print_blob=True, **_common)
settings.register_profile("nightly", max_examples=5000, **_common)
settings.load_profile(os.environ.get("DSHFUZZ_PROFILE", "ci" if os.environ.get("CI") else "dev"))


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


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture(scope="session")
def real_sessions_dir() -> Path:
    if not REAL_SESSIONS.is_dir():
        pytest.skip(f"shared real sessions not found at {REAL_SESSIONS}")
    return REAL_SESSIONS
