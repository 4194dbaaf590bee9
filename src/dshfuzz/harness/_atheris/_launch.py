"""How the fuzzing child is started: its command line, and the launcher script.

libFuzzer's crash minimiser re-runs the fuzzer by executing its ``argv[0]``, so
the child is given an executable launcher (a two-line shell script in the run's
temporary directory) as ``argv[0]``, which re-runs the child for the same target.
"""

from __future__ import annotations

import shlex
import stat
import sys
from pathlib import Path

from dshfuzz._atomic import write_atomic

__all__ = ["CHILD", "child_command", "write_launcher"]

CHILD = Path(__file__).with_name("_child.py")


def child_command(target: str, *, argv0: str, structured_share: float, instrument: bool = True) -> list[str]:
    """The child's command line, before the libFuzzer flags and input paths (see ``_child``)."""
    return [sys.executable, str(CHILD), target, argv0, repr(structured_share), "1" if instrument else "0"]


def write_launcher(path: Path, target: str, *, structured_share: float, instrument: bool = True) -> Path:
    """Write at ``path`` an executable script running the child for ``target`` with libFuzzer's arguments."""
    command = child_command(target, argv0="", structured_share=structured_share, instrument=instrument)
    words = [shlex.quote(w) for w in command]
    words[3] = '"$0"'  # the launcher is the fuzzer's argv[0]
    write_atomic(path, f'#!/bin/sh\nexec {" ".join(words)} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
