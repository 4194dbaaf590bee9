"""A fuzz target with a planted bug, to test the atheris pipeline end to end.

It raises on any input holding a session header while ``PLANTED_BUG_ENV`` is
set (every seed has one), so a test finds the bug at once, then "fixes" it by
unsetting the variable.
"""

from __future__ import annotations

import os

PLANTED_BUG_ENV = "DSHFUZZ_PLANTED_BUG"
MARKER = b'"type":"session"'


def target(data: bytes) -> None:
    if os.environ.get(PLANTED_BUG_ENV) and MARKER in data:
        raise ValueError("planted bug: a session header")
