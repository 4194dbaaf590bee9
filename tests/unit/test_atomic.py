"""Files dshfuzz writes (reports, witnesses, corpus entries) are written atomically and get
the user's umask, like any file a command-line tool writes (not mkstemp's 0600)."""

from __future__ import annotations

import os
import stat

import pytest

from dshfuzz._atomic import write_atomic


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="POSIX file modes")
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_a_written_file_has_the_mode_the_umask_gives(tmp_path, mask):
    previous = os.umask(mask)
    try:
        path = write_atomic(tmp_path / "sub" / "report.json", "{}\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert path.read_text() == "{}\n"
    assert [p.name for p in path.parent.iterdir()] == ["report.json"], "no temporary file is left behind"
