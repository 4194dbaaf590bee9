"""The ``cmd:'... {logs} ...'`` checker: an external command judging many logs per
invocation, one report per file.

A failure is charged to the logs that cause it, never to the others of their batch, and a
slow batch costs time, never a verdict (see :class:`BatchCommandChecker`).
"""

from __future__ import annotations

import collections
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._command import _run_command, _split
from ._interface import DEFAULT_TIMEOUT, CheckerSpecError, CheckerVerdict, _Checker
from ._report import NOT_ASSESSABLE_EXIT, _as_protocol, _crashed, _exited, _head, _stderr_tail, verdict_from_json
from ._vocabulary import catalog_rules

__all__ = ["BATCH_FILE_FLOOR", "BATCH_LOGS", "BatchCommandChecker"]


BATCH_LOGS = 64
"""Logs a batch checker (``cmd:'… {logs} …'``) is asked about at once while hunting: one process
start for this many logs. Hypothesis draws them one by one as usual; the worker holds them
until it has this many (across rounds), and a finding among them goes straight to the
minimiser, which asks about its candidates in batches too."""


BATCH_FILE_FLOOR = 0.5
"""Seconds an invocation of a batch checker is given, at least, for each log past its first."""


@dataclass(slots=True)
class BatchCommandChecker(_Checker):
    """An external checker command judging many logs per invocation: ``{logs}``, a word of
    its own in the template, becomes the paths, one argument each.

    The command prints one report per file with ``file`` set to the path as given: a
    JSON array of report objects, or one report object per line. A file with no
    report is unparsable output for that file. When an invocation of several files fails
    as a whole (a crash, a timeout, output that is not reports), each file is asked about
    alone, so that a failure is charged to the logs that cause it and never to the others
    of their batch. ``timeout`` is a log's: one file alone has it all; an invocation of
    ``n`` has ``timeout`` plus, for each further file, a few times the time a file took in
    earlier invocations (at least ``BATCH_FILE_FLOOR``, at most ``timeout``), since ``n``
    times ``timeout`` would make one hanging log cost a batch minutes. Past that deadline
    each file is asked alone with its full timeout: a slow batch costs time, never a
    verdict. ``batch_size`` caps the files per invocation.
    Exit codes as for :class:`CommandChecker`; a batch says "not assessable" per file
    with ``"assessable": false`` (exit 3 with no output says it for every file).
    """

    template: str
    timeout: float = DEFAULT_TIMEOUT
    rules: frozenset[str] = field(default_factory=catalog_rules)
    exits: Mapping[int, str] = field(default_factory=dict)
    """The checker's own exit statuses and what they mean (``--checker-exit``)."""
    batch_size: int = 256
    env: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """The processes' whole environment (checker coverage adds to ours), else ours."""
    name: str = field(init=False)
    _argv: list[str] = field(init=False, repr=False)
    _file_seconds: collections.deque[float] = field(
        init=False, repr=False, default_factory=lambda: collections.deque(maxlen=64)
    )

    def __post_init__(self) -> None:
        if "{log}" in self.template:
            raise CheckerSpecError(f"command template has both {{log}} and {{logs}}: {self.template!r}")
        self._argv = _split(self.template, f"cmd:{self.template}")
        if "{logs}" not in self._argv or sum(part.count("{logs}") for part in self._argv) != 1:
            raise CheckerSpecError(
                f"cmd:{self.template}: {{logs}} must appear once, as a word of its own (it becomes one argument per log)"
            )
        self.name = f"cmd:{self.template}"
        if self.rules is None:  # given as None: the default vocabulary, as when not given
            self.rules = catalog_rules()

    def check(self, path: Path) -> CheckerVerdict:
        return self.check_many([path])[0]

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        verdicts: list[CheckerVerdict] = []
        for start in range(0, len(paths), max(1, self.batch_size)):
            verdicts.extend(self._invoke(paths[start : start + max(1, self.batch_size)]))
        return verdicts

    def _invoke(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        verdicts = self._run(paths)
        if len(paths) > 1 and verdicts[0].failure is not None and all(v is verdicts[0] for v in verdicts):
            return [self._run([path])[0] for path in paths]
        return verdicts

    def deadline(self, files: int) -> float:
        """The seconds an invocation of ``files`` logs may take (see the class docstring)."""
        seen = sorted(self._file_seconds)
        typical = 4 * seen[len(seen) // 2] if seen else 0.0
        return self.timeout + (files - 1) * min(self.timeout, max(BATCH_FILE_FLOOR, typical))

    def _run(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        """One invocation; a failure of the whole invocation is the same verdict object for every file."""
        at = self._argv.index("{logs}")
        names = [str(path) for path in paths]
        began = time.monotonic()
        proc = _run_command([*self._argv[:at], *names, *self._argv[at + 1 :]], self.deadline(len(paths)), self.env)
        if not isinstance(proc, CheckerVerdict):  # a log alone counts its start-up: an upper bound
            self._file_seconds.append((time.monotonic() - began) / len(paths))
        if isinstance(proc, CheckerVerdict):
            return [proc] * len(paths)
        own = proc.returncode
        code = _as_protocol(own, self.exits)
        stderr_tail = _stderr_tail(proc.stderr)
        if own < 0:
            return [CheckerVerdict(failure="crash", detail=_exited(own, "", stderr_tail), exit_code=own)] * len(paths)
        stdout = proc.stdout.decode("utf-8", "replace")
        if code not in (0, 1, NOT_ASSESSABLE_EXIT) or (code == 1 and not stdout.strip()):
            detail = _crashed(own, stdout, stderr_tail, _batch_reports)
            return [CheckerVerdict(failure="crash", detail=detail, exit_code=own)] * len(paths)
        if not stdout.strip():
            if code == NOT_ASSESSABLE_EXIT:
                return [CheckerVerdict(exit_code=code, assessable=False, detail=stderr_tail)] * len(paths)
            detail = _exited(code, "but printed no report", stderr_tail)
            return [CheckerVerdict(failure="unparsable-output", detail=detail, exit_code=code)] * len(paths)
        try:
            reports = _batch_reports(stdout)
        except ValueError as exc:
            detail = f"{exc}\n{_head(stdout)}\n{stderr_tail}".rstrip("\n")
            return [CheckerVerdict(failure="unparsable-output", detail=detail, exit_code=code)] * len(paths)
        by_file: dict[str, CheckerVerdict | str] = {}
        for report in reports:
            file = report.get("file")
            try:
                verdict: CheckerVerdict | str = verdict_from_json(report)
            except ValueError as exc:
                verdict = f"{exc}: {json.dumps(report)[:200]}"
            by_file.setdefault(str(file), verdict)
            if isinstance(file, str):
                by_file.setdefault(os.path.realpath(file), verdict)
        out = []
        for name in names:
            found = by_file.get(name, by_file.get(os.path.realpath(name)))
            if isinstance(found, CheckerVerdict):
                out.append(CheckerVerdict(found.findings, exit_code=code, assessable=found.assessable, events=found.events))
            else:
                why = found if found is not None else f"no report has \"file\": {json.dumps(name)}"
                detail = f"{why}\n{stderr_tail}".rstrip("\n")
                out.append(CheckerVerdict(failure="unparsable-output", detail=detail, exit_code=code))
        return out


def _batch_reports(stdout: str) -> list[Mapping[str, Any]]:
    """A batch's reports: one JSON array of report objects, or one report object per line."""
    text = stdout.strip()
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"line {number} of the batch output is not JSON ({exc})") from None
    else:
        items = whole if isinstance(whole, list) else [whole]
    for item in items:
        if not isinstance(item, Mapping) or "file" not in item:
            raise ValueError(f"a batch report is not an object with a 'file': {json.dumps(item)[:80]}")
    return items
