"""The ``serve:'...'`` checker: a long-lived process speaking the ``dshfuzz-checker/1``
protocol, JSON lines on stdin and stdout (``docs/CHECKER_PROTOCOL.md``).

Every failure on a log is that log's verdict, and the process is restarted for the next;
no checker process outlives the Python process that started it.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._command import _split
from ._interface import DEFAULT_TIMEOUT, CheckerSpecError, CheckerVerdict, _Checker
from ._report import _STDERR_TAIL, _exited, _head, _stderr_tail, verdict_from_json
from ._vocabulary import declared_layers

__all__ = ["PROTOCOL", "ServeChecker"]


PROTOCOL = "dshfuzz-checker/1"
"""The ``serve:`` protocol's name, sent first by the checker in its handshake."""


class ServeChecker(_Checker):
    """A long-lived checker process speaking ``dshfuzz-checker/1`` (JSON lines on stdin/stdout).

    The checker first sends its handshake, ``{"protocol": "dshfuzz-checker/1", "rules":
    [...]}``, then answers each request ``{"id": N, "path": "..."}`` with one line
    ``{"id": N, "findings": [...]}`` (optionally ``"assessable": false``, or an
    ``"error"`` string: a crash on that log). Creating the object starts nothing:
    :meth:`start` starts the process and reads the handshake, raising
    :class:`CheckerSpecError` (one line) when it cannot; :meth:`check` starts it
    lazily, and there every failure is a verdict. A timeout, a death of the process, or
    an unparsable reply is that log's verdict; the process is then killed and restarted
    for the next log. Reading :attr:`rules` starts the process (the handshake holds
    them) unless a vocabulary was given. The child stays in the caller's process group,
    so killing a worker's group kills it too; :meth:`close` ends it.
    """

    name: str

    def __init__(self, template: str, timeout: float = DEFAULT_TIMEOUT, rules: frozenset[str] | None = None) -> None:
        if "{log}" in template or "{logs}" in template:
            raise CheckerSpecError(f"serve:{template}: takes no {{log}}/{{logs}} placeholder (paths are sent as requests)")
        self.template = template
        self.name = f"serve:{template}"
        self.timeout = timeout
        self._argv = _split(template, self.name)
        if not self._argv:
            raise CheckerSpecError("serve: needs a command (serve:'mychecker --serve')")
        self._given_rules = rules
        self._declared: frozenset[str] | None = None
        self._declared_layers: frozenset[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[bytes | None] = queue.Queue()
        self._stderr = _Tail()
        self._next_id = 0
        self._lock = threading.RLock()
        self._finalizer: weakref.finalize[..., ServeChecker] | None = None
        self.env: Mapping[str, str] | None = None
        """The process's whole environment (checker coverage adds to ours), else ours."""
        self.starts = 0
        """How many times the process was started (restarts included)."""

    def __repr__(self) -> str:
        return f"ServeChecker({self.template!r}, timeout={self.timeout!r})"

    @property
    def rules(self) -> frozenset[str]:
        """The vocabulary: the one given to :func:`load_checker`, else the handshake's
        (which starts the process if it is not running; :class:`CheckerSpecError` if it cannot)."""
        if self._given_rules is not None:
            return self._given_rules
        if self._declared is None:
            self.start()
        assert self._declared is not None
        return self._declared

    @rules.setter
    def rules(self, rules: frozenset[str]) -> None:
        self._given_rules = frozenset(rules)

    @property
    def layers(self) -> frozenset[str] | None:
        """The official layers the handshake says the checker answers for (its optional
        ``layers``), ``None`` for every layer; reading it starts the process once, as
        :attr:`rules` does (:class:`CheckerSpecError` if it cannot)."""
        if self._declared is None:
            self.start()
        return self._declared_layers

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the process (if not running) and read its handshake; ``CheckerSpecError`` if it cannot."""
        with self._lock:
            if self.running:
                return
            self._stop()
            try:
                # no start_new_session: the child stays in the caller's process group
                proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=self.env)
            except OSError as exc:
                raise CheckerSpecError(f"{self.name} did not start: could not run {self._argv[0]!r}: {exc}") from None
            self.starts += 1
            self._proc = proc
            replies: queue.Queue[bytes | None] = queue.Queue()
            self._replies = replies
            self._stderr = stderr = _Tail()
            threading.Thread(target=_drain_lines, args=(proc.stdout, replies), daemon=True,
                             name=f"dshfuzz-serve-stdout-{proc.pid}").start()
            threading.Thread(target=_drain_tail, args=(proc.stderr, stderr), daemon=True,
                             name=f"dshfuzz-serve-stderr-{proc.pid}").start()
            # also runs at interpreter exit, so no checker outlives its Python process
            self._finalizer = weakref.finalize(self, _end_process, proc)
            try:
                declared = self._handshake()
            except CheckerSpecError:
                self._stop()
                raise
            if self._declared is None:
                self._declared, self._declared_layers = declared

    def _handshake(self) -> tuple[frozenset[str], frozenset[str] | None]:
        expected = f'the {PROTOCOL} handshake {{"protocol": "{PROTOCOL}", "rules": [...]}}'
        try:
            line = self._replies.get(timeout=self.timeout)
        except queue.Empty:
            raise CheckerSpecError(
                f"{self.name} did not start: no handshake within {self.timeout:g}s (expected {expected})"
            ) from None
        if line is None:
            code = self._returncode()
            self._stderr.ended.wait(1.0 if code is not None else 0.0)  # its last words, whole
            status = "ended" if code is None else _exited(code, "", "").strip()
            raise CheckerSpecError(
                f"{self.name} did not start: {status} before sending {expected}{self._stderr_last_line()}"
            )
        text = line.decode("utf-8", "replace").strip()
        try:
            hello = json.loads(text)
        except ValueError:
            hello = None
        rules = hello.get("rules") if isinstance(hello, Mapping) else None
        if not isinstance(hello, Mapping) or hello.get("protocol") != PROTOCOL:
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise CheckerSpecError(f"{self.name} did not start: sent {shown!r} instead of {expected}")
        if not isinstance(rules, list) or not rules or not all(isinstance(r, str) and r for r in rules):
            raise CheckerSpecError(
                f"{self.name} did not start: its handshake's \"rules\" is not a non-empty list of rule ids "
                f"(got {json.dumps(rules)[:80]})"
            )
        if "layers" not in hello:
            return frozenset(rules), None
        layers = hello["layers"]
        if not isinstance(layers, list) or not all(isinstance(name, str) for name in layers):
            raise CheckerSpecError(
                f"{self.name} did not start: its handshake's \"layers\" is not a list of official layer names "
                f"(got {json.dumps(layers)[:80]})"
            )
        return frozenset(rules), declared_layers(layers, f"{self.name} did not start: its handshake's \"layers\"")

    def _stderr_last_line(self) -> str:
        lines = [line for line in self._stderr_text().splitlines() if line.strip()]
        if not lines:
            return ""
        last = lines[-1].strip()
        return "; stderr: " + (last if len(last) <= 160 else last[:157] + "...")

    def _stderr_text(self) -> str:
        return _stderr_tail(self._stderr.text())

    def _returncode(self, wait: float = 1.0) -> int | None:
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def check(self, path: Path) -> CheckerVerdict:
        with self._lock:
            if not self.running:
                try:
                    self.start()
                except CheckerSpecError as exc:
                    return CheckerVerdict(failure="crash", detail=str(exc))
            return self._ask(path)

    def _ask(self, path: Path) -> CheckerVerdict:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        self._next_id += 1
        rid = self._next_id
        request = json.dumps({"id": rid, "path": os.path.abspath(path)}) + "\n"
        self._stderr.clear()  # a failure's detail holds what the checker wrote while on this log
        try:
            proc.stdin.write(request.encode("utf-8"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return self._died("before reading the request")
        deadline = time.monotonic() + self.timeout
        text = ""
        while not text:
            try:
                line = self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                detail = f"no answer within {self.timeout:g}s\n{self._stderr_text()}".rstrip("\n")
                self._stop()
                return CheckerVerdict(failure="timeout", detail=detail)
            if line is None:
                return self._died("before answering")
            text = line.decode("utf-8", "replace").strip()  # a blank line is no reply
        try:
            reply = json.loads(text)
            if not isinstance(reply, Mapping):
                raise ValueError(f"reply is a JSON {type(reply).__name__}, not an object")
            if reply.get("id") != rid:
                raise ValueError(f"reply answers id {json.dumps(reply.get('id'))[:40]}, not request {rid}")
            error = reply.get("error")
            if error is not None:  # its words first: the crash's fingerprint reads them before stderr's
                return CheckerVerdict(failure="crash", detail=f"{error}\n{self._stderr_text()}".rstrip("\n"))
            return verdict_from_json(reply)
        except ValueError as exc:
            detail = f"{exc}\n{_head(text)}\n{self._stderr_text()}".rstrip("\n")
            self._stop()
            return CheckerVerdict(failure="unparsable-output", detail=detail)

    def _died(self, when: str) -> CheckerVerdict:
        code = self._returncode()
        # the traceback is the crash's fingerprint: read it whole, not as far as the drain got
        self._stderr.ended.wait(1.0 if code is not None else 0.0)
        stderr = self._stderr_text()
        self._stop()
        if code is None:
            return CheckerVerdict(failure="crash", detail=f"closed its output {when}\n{stderr}".rstrip("\n"))
        return CheckerVerdict(failure="crash", detail=_exited(code, when, stderr), exit_code=code)

    def _stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._proc is not None:
            _end_process(self._proc, grace=0.0)
            self._proc = None

    def close(self) -> None:
        """End the process: close its stdin, give it a moment to exit, kill it otherwise."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
                self._finalizer = None
            self._proc = None


def _drain_lines(pipe: Any, replies: queue.Queue[bytes | None]) -> None:
    """The child's stdout, line by line, into ``replies``; ``None`` at end of output."""
    try:
        with pipe:
            for line in iter(pipe.readline, b""):
                replies.put(line)
    except (OSError, ValueError):
        pass
    replies.put(None)


class _Tail:
    """The last ``keep`` bytes a child wrote to a pipe (a bounded buffer, thread-safe)."""

    def __init__(self, keep: int = 4 * _STDERR_TAIL) -> None:
        self.keep = keep
        self._chunks: collections.deque[bytes] = collections.deque()
        self._held = 0
        self._lock = threading.Lock()
        self.ended = threading.Event()
        """Set once the pipe is at its end: everything the child wrote is in the tail."""

    def append(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._held += len(chunk)
            while len(self._chunks) > 1 and self._held - len(self._chunks[0]) >= self.keep:
                self._held -= len(self._chunks.popleft())

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
            self._held = 0

    def text(self) -> bytes:
        with self._lock:
            return b"".join(self._chunks)[-self.keep :]


def _drain_tail(pipe: Any, tail: _Tail) -> None:
    """The child's stderr as it comes, into a bounded tail (so a chatty child never blocks)."""
    try:
        with pipe:
            for chunk in iter(lambda: pipe.read1(65536), b""):
                tail.append(chunk)
    except (OSError, ValueError):
        pass
    finally:
        tail.ended.set()


def _end_process(proc: subprocess.Popen[bytes], grace: float = 1.0) -> None:
    """Close stdin (the protocol's "no more requests"), wait up to ``grace``, then kill."""
    if proc.poll() is None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        if grace > 0:
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a kill always ends it
                pass
    elif proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
