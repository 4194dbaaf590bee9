"""The ``cmd:'... {log} ...'`` checker: an external command run once per log, its exit
status and printed report read as the protocol says (:mod:`._report`)."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._interface import DEFAULT_TIMEOUT, CheckerSpecError, CheckerVerdict, _Checker
from ._report import NOT_ASSESSABLE_EXIT, _as_protocol, _crashed, _exited, _head, _stderr_tail, verdict_from_json
from ._vocabulary import catalog_rules

__all__ = ["CommandChecker"]


def _run_command(
    argv: list[str], timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes] | CheckerVerdict:
    """Run one checker invocation (``env``: its whole environment, else ours): its completed
    process, or the verdict of its failing to."""
    try:
        return subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired as exc:
        return CheckerVerdict(
            failure="timeout", detail=f"no answer within {timeout:g}s\n{_stderr_tail(exc.stderr or b'')}".rstrip("\n")
        )
    except OSError as exc:
        return CheckerVerdict(failure="crash", detail=f"could not start {argv[0]!r}: {exc}")


@dataclass(slots=True)
class CommandChecker(_Checker):
    """An external checker command run once per log; ``{log}`` in the template becomes the log's path.

    Exit codes 0 and 1 are the convention for "clean" and "findings"; 3 says "not
    assessable" (no verdict; a report, if printed, is still read). Death by a
    signal or any other exit status is a crash, whatever was printed, and so is exit 1
    with nothing on stdout (an uncaught exception); output that is not a report after
    exit 0 or 1 is unparsable output. ``exits`` maps the checker's own statuses onto
    those meanings (``--checker-exit 4=findings``).
    """

    template: str
    timeout: float = DEFAULT_TIMEOUT
    rules: frozenset[str] = field(default_factory=catalog_rules)
    exits: Mapping[int, str] = field(default_factory=dict)
    env: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """The processes' whole environment (checker coverage adds to ours), else ours."""
    name: str = field(init=False)
    _argv: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if "{log}" not in self.template:
            raise CheckerSpecError(f"command template has no {{log}} placeholder: {self.template!r}")
        self._argv = _split(self.template, f"cmd:{self.template}")
        self.name = f"cmd:{self.template}"
        if self.rules is None:  # given as None: the default vocabulary, as when not given
            self.rules = catalog_rules()

    def check(self, path: Path) -> CheckerVerdict:
        argv = [part.replace("{log}", str(path)) for part in self._argv]
        proc = _run_command(argv, self.timeout, self.env)
        if isinstance(proc, CheckerVerdict):
            return proc
        own = proc.returncode
        code = _as_protocol(own, self.exits)
        stderr_tail = _stderr_tail(proc.stderr)
        if own < 0:
            return CheckerVerdict(failure="crash", detail=_exited(own, "", stderr_tail), exit_code=own)
        stdout = proc.stdout.decode("utf-8", "replace")
        if code == NOT_ASSESSABLE_EXIT:
            try:
                findings = verdict_from_json(json.loads(stdout)).findings if stdout.strip() else ()
            except ValueError:
                findings = ()
            return CheckerVerdict(findings, exit_code=own, assessable=False, detail=stderr_tail)
        if code not in (0, 1) or (code == 1 and not stdout.strip()):  # exit 1, silent: an uncaught exception
            return CheckerVerdict(failure="crash", detail=_crashed(own, stdout, stderr_tail), exit_code=own)
        try:
            verdict = verdict_from_json(json.loads(stdout or "null"))
        except ValueError as exc:
            return CheckerVerdict(
                failure="unparsable-output", detail=f"{exc}\n{_head(stdout)}\n{stderr_tail}".rstrip("\n"), exit_code=own
            )
        return CheckerVerdict(verdict.findings, exit_code=own, assessable=verdict.assessable, events=verdict.events)


def _split(template: str, spec: str) -> list[str]:
    try:
        return shlex.split(template)
    except ValueError as exc:
        raise CheckerSpecError(f"{spec}: cannot split the command as a shell would: {exc}") from None
