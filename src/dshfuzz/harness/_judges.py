"""Checkers under test, behind one interface.

A campaign fuzzes *a checker*: the built-in one (whole, or with rules switched off:
``builtin:-S5,-E2``, how detection power is measured), any command run once per log
(``cmd:'... {log} ...'``) or once per batch of logs (``cmd:'... {logs} ...'``), a
long-lived process speaking the ``dshfuzz-checker/1`` protocol (``serve:'...'``), a
Python callable (``py:module:function``), or a plugin registered under the
``dshfuzz.checkers`` entry-point group. ``docs/CHECKER_PROTOCOL.md`` documents what
an external checker prints and answers.

Whatever it is, the campaign sees a :class:`CheckerVerdict` per log: the findings it
reported, "not assessable", or how it failed (crash, timeout, unparsable output). A
checker failing is a finding about the checker, never an exception in the campaign.
Every checker has ``rules``, the rule ids it claims to implement (its vocabulary),
``check``, ``check_many`` and ``close``, and is a context manager.
"""

from __future__ import annotations

import collections
import functools
import importlib
import json
import os
import queue
import shlex
import sys
import subprocess
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeVar

if TYPE_CHECKING:
    from dshfuzz.checker import CheckOptions, Report
    from dshfuzz.model import Compression


__all__ = [
    "CHECKER_SPEC_HELP",
    "NOT_ASSESSABLE_EXIT",
    "PROTOCOL",
    "BatchCommandChecker",
    "BuiltinChecker",
    "CheckerFailure",
    "CheckerSpecError",
    "CheckerUnderTest",
    "CheckerVerdict",
    "CommandChecker",
    "PythonChecker",
    "ReportedFinding",
    "ServeChecker",
    "catalog_rules",
    "declared_layers",
    "load_checker",
    "parse_checker_exits",
    "parse_checker_layers",
    "parse_checker_rules",
    "registry_rules",
    "verdict_from_json",
]

CheckerFailure = Literal["crash", "timeout", "unparsable-output"]
DEFAULT_TIMEOUT = 20.0
NOT_ASSESSABLE_EXIT = 3
"""The exit status by which a ``cmd:`` checker says "I cannot judge this log" (no verdict)."""
PROTOCOL = "dshfuzz-checker/1"
"""The ``serve:`` protocol's name, sent first by the checker in its handshake."""
CHECKER_SPEC_HELP = (
    "builtin | builtin:-RULE,... | cmd:'... {log} ...' | cmd:'... {logs} ...' | serve:'...' "
    "| py:module:function | a dshfuzz.checkers plugin name"
)
"""The ``--checker`` forms, for every command's help and every spec error."""
_STDERR_TAIL = 2000


class CheckerSpecError(ValueError):
    """A ``--checker`` value that names no usable checker."""


@dataclass(frozen=True, slots=True)
class ReportedFinding:
    """One finding as the checker under test reported it (rule id, severity, seq), the
    index of its root finding in the same report when the checker says it follows from one
    (``causedBy``), and the official layers it says refuse the log for it (``refusedBy``:
    ``None`` when the checker does not say, as most do not; ``loadApp`` is ``load``)."""

    rule: str
    severity: str = "error"
    seq: int | None = None
    caused_by: int | None = None
    refused_by: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class CheckerVerdict:
    """What one checker said about one log.

    ``failure`` is set when the checker did not produce a usable report; then
    ``detail`` says why (stderr tail, traceback or the unparsable output).
    """

    findings: tuple[ReportedFinding, ...] = ()
    failure: CheckerFailure | None = None
    detail: str = ""
    exit_code: int | None = None
    assessable: bool = True
    """False when the checker said it cannot judge this log (exit 3, or ``"assessable":
    false`` in its report): no verdict, so never a miss. Its findings, if any, are kept."""
    checked: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    """The built-in checker's own findings behind ``findings`` (``dshfuzz.checker.Finding``):
    enough to attribute root causes again when rules are switched off (empty for any other
    checker)."""
    events: int | None = None
    """How many events the checker says it judged (its report's optional ``events``): a packed
    chunk row counts as the events it holds. ``None`` when it does not say, and then it is never
    judged for a silent loss of events."""

    @property
    def error_rules(self) -> frozenset[str]:
        return frozenset(f.rule for f in self.findings if f.severity == "error")

    @property
    def root_error_rules(self) -> frozenset[str]:
        """The rules of error findings that follow from no other finding: what the kill
        matrix's precision counts."""
        return frozenset(f.rule for f in self.findings if f.severity == "error" and f.caused_by is None)

    @property
    def standalone_error_rules(self) -> frozenset[str]:
        """The rules of error findings no other *error* explains: the roots, and the
        errors whose root is only a warning (a warning cannot excuse a refusal)."""
        findings = self.findings
        return frozenset(
            f.rule for f in findings
            if f.severity == "error" and (f.caused_by is None or findings[f.caused_by].severity != "error")
        )

    def seqs_of(self, rule: str) -> frozenset[int | None]:
        return frozenset(f.seq for f in self.findings if f.rule == rule)


class CheckerUnderTest(Protocol):
    """Anything the campaign can fuzz: ``check`` reads the file at ``path``, read-only.

    ``rules`` is the checker's vocabulary: the rule ids it claims to implement (a rule
    outside it is "not implemented", never missed). ``check_many`` judges several logs,
    in order (one invocation for a ``{logs}`` command); ``close`` ends whatever the
    checker keeps running (a ``serve:`` process) and is safe to call twice.
    """

    @property
    def name(self) -> str: ...

    @property
    def rules(self) -> frozenset[str]: ...

    def check(self, path: Path) -> CheckerVerdict: ...

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]: ...

    def close(self) -> None: ...


class LoadedChecker(CheckerUnderTest, Protocol):
    """A checker :func:`load_checker` made: a context manager too, whose exit closes it."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


class _Checker:
    """What every checker class shares: ``check_many`` as a loop, a no-op ``close``, ``with``."""

    if TYPE_CHECKING:  # each class has its own (a field or a property)

        @property
        def name(self) -> str: ...

        @property
        def rules(self) -> frozenset[str]: ...

    __slots__ = ()

    def check(self, path: Path) -> CheckerVerdict:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        return [self.check(path) for path in paths]

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@functools.cache
def registry_rules() -> frozenset[str]:
    """Every rule id of the registry (the built-in checker's vocabulary)."""
    from dshfuzz.checker import RULES

    return frozenset(str(rid) for rid in RULES)


@functools.cache
def catalog_rules() -> frozenset[str]:
    """The 46 ids of the seed-000 contract catalog: an external checker's default vocabulary.

    The registry's other rules (W3/W4 of seed 001, P5/W5 of seed 002, the resource limits
    L1-L4, G4 found by fuzzing) are dshfuzz's own additions, expected of an external
    checker only when it declares them."""
    from dshfuzz.checker import RULES

    return frozenset(str(rule.id) for rule in RULES.values() if rule.origin == "catalog")


def parse_checker_rules(text: str) -> frozenset[str]:
    """A vocabulary given on the command line (``--checker-rules FILE|ids``).

    ``text`` is a file holding ids separated by whitespace or commas (``#`` starts a
    comment) or a JSON list of strings, or else an inline list (``H1,R1,S5``). Ids
    unknown to the registry are kept (a checker may have rules of its own); no id at
    all is a :class:`CheckerSpecError`.
    """
    source = text.strip()
    where = f"--checker-rules {text!r}"
    path = Path(source) if source else None
    if path is not None and path.is_file():
        where = f"--checker-rules {source}"
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CheckerSpecError(f"{where}: cannot read the file: {exc}") from None
        if content.lstrip().startswith("["):
            try:
                listed = json.loads(content)
            except ValueError as exc:
                raise CheckerSpecError(f"{where}: not a JSON list of rule ids: {exc}") from None
            if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
                raise CheckerSpecError(f"{where}: a JSON vocabulary must be a list of rule-id strings")
            ids = [item.strip() for item in listed]
        else:
            content = "\n".join(line.partition("#")[0] for line in content.splitlines())
            ids = content.replace(",", " ").split()
    elif os.sep in source or source.endswith((".txt", ".json")):
        raise CheckerSpecError(f"{where}: no such file")
    else:
        ids = source.replace(",", " ").split()
    rules = frozenset(item for item in ids if item)
    if not rules:
        raise CheckerSpecError(f"{where}: no rule id given")
    return rules


ExitMeaning = Literal["clean", "findings", "not-assessable", "crash"]
_EXIT_AS: dict[str, int] = {"clean": 0, "findings": 1, "not-assessable": 3, "crash": 2}
"""Each meaning a checker's own exit status may be given, as the protocol's own status."""


def parse_checker_exits(text: str) -> dict[int, ExitMeaning]:
    """``--checker-exit 4=findings,5=clean``: what a command checker's own exit statuses mean
    (``clean``, ``findings``, ``not-assessable`` or ``crash``); anything else is a
    :class:`CheckerSpecError`."""
    out: dict[int, ExitMeaning] = {}
    for part in (p.strip() for p in text.split(",")):
        code, sep, meaning = part.partition("=")
        if not sep or not code.strip().lstrip("-").isdigit() or meaning.strip() not in _EXIT_AS:
            raise CheckerSpecError(
                f"--checker-exit {text!r}: {part!r} is not CODE=MEANING (a meaning is one of {', '.join(_EXIT_AS)})"
            )
        out[int(code)] = meaning.strip()  # type: ignore[assignment]  # checked against _EXIT_AS above
    return out


def _as_protocol(code: int, exits: Mapping[int, str]) -> int:
    """A command's exit status as the protocol reads it (0, 1, 3, or a crash's), after the
    checker's own statuses (``--checker-exit``) are mapped."""
    meaning = exits.get(code)
    return code if meaning is None else _EXIT_AS[meaning]


_LOAD_ROUTES = frozenset({"loadApp", "loadDirect"})
"""The official load routes' names, which agree on every known input: a declaration of
either answers for ``load``."""


def declared_layers(names: Iterable[str], where: str) -> frozenset[str]:
    """The official layers a checker answers for, as a campaign names them (``loadApp`` and
    ``loadDirect`` are ``load``). A name no official layer has, or no name at all, is a
    :class:`CheckerSpecError` naming ``where`` the declaration came from."""
    from dshfuzz.contracts.layers import OfficialLayer

    listed = [name.strip() for name in names]
    known = {str(layer) for layer in OfficialLayer} | _LOAD_ROUTES
    unknown = sorted({name for name in listed if name not in known})
    if unknown:
        raise CheckerSpecError(
            f"{where}: {', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not an official layer "
            f"(the layers: {', '.join(str(layer) for layer in OfficialLayer if layer is not OfficialLayer.LOAD_APP)})"
        )
    layers = frozenset("load" if name in _LOAD_ROUTES else name for name in listed if name)
    if not layers:
        raise CheckerSpecError(f"{where}: no official layer given")
    return layers


def parse_checker_layers(text: str) -> frozenset[str]:
    """The official layers given on the command line (``--checker-layers load,released``)."""
    return declared_layers(text.replace(",", " ").split(), f"--checker-layers {text!r}")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def verdict_from_json(payload: Any) -> CheckerVerdict:
    """Map a checker's JSON report onto a verdict.

    Accepted shapes: a top-level ``violations`` or ``findings`` list, or a bare list,
    of objects carrying ``id`` or ``rule``, optional ``severity`` (default ``error``)
    and optional ``seq``. A report object may say ``"assessable": false`` (the checker
    cannot judge this log), and then needs no findings list, and ``"events": N``, how many
    events it judged (a non-negative integer). Anything else raises ``ValueError``
    (unparsable output).
    """
    items: Any
    assessable = True
    events: int | None = None
    if isinstance(payload, list):
        items = payload
    elif isinstance(payload, Mapping):
        flag = payload.get("assessable", True)
        if not isinstance(flag, bool):
            raise ValueError(f"'assessable' is not a boolean: {flag!r:.40}")
        assessable = flag
        if "events" in payload:
            events = _event_count(payload["events"])
        items = next((payload[k] for k in ("violations", "findings") if k in payload), None)
        if items is None:
            if not assessable:
                return CheckerVerdict(assessable=False, events=events)
            raise ValueError("report has neither a 'violations' nor a 'findings' list")
    else:
        raise ValueError(f"report is a JSON {type(payload).__name__}, not an object or list")
    if not isinstance(items, list):
        raise ValueError("findings are not a list")
    findings = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ValueError(f"finding is not an object: {item!r:.80}")
        rule = item.get("rule", item.get("id"))
        if not isinstance(rule, str) or not rule:
            raise ValueError(f"finding has no string 'rule' or 'id': {item!r:.80}")
        severity = item.get("severity", "error")
        findings.append(
            ReportedFinding(rule, severity if isinstance(severity, str) else "error", _int_or_none(item.get("seq")),
                            _int_or_none(item.get("causedBy")), _layers_or_none(item.get("refusedBy")))
        )
    return CheckerVerdict(_rooted(findings), assessable=assessable, events=events)


def _event_count(value: Any) -> int:
    """A report's ``events``: a non-negative JSON integer (not ``true``, not ``3.0``, not ``null``),
    else ``ValueError`` saying what came instead."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"'events' is not a non-negative integer (the events the checker judged): {value!r:.40}")
    return value


def _layers_or_none(value: Any) -> tuple[str, ...] | None:
    """A finding's ``refusedBy``: the layer names it lists (the load routes as ``load``), or
    ``None`` when it lists none in a form that says anything (absent, or not a list of strings)."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    return tuple(dict.fromkeys("load" if name in _LOAD_ROUTES else name for name in value))


def _rooted(findings: list[ReportedFinding]) -> tuple[ReportedFinding, ...]:
    """``findings`` with every ``causedBy`` that names no root of the same report dropped
    (out of range, itself, or a finding that has a cause of its own): a checker's bad
    pointer makes its finding a root, never hides it."""
    n = len(findings)
    out = list(findings)
    for i, f in enumerate(findings):
        c = f.caused_by
        if c is not None and not (0 <= c < n and c != i and findings[c].caused_by is None):
            out[i] = ReportedFinding(f.rule, f.severity, f.seq, None, f.refused_by)
    return tuple(out)


@dataclass(slots=True)
class BuiltinChecker(_Checker):
    """The embedded contract checker (``dshfuzz.checker``), run in process.

    ``without`` names rules switched off (spec ``builtin:-S5,-E2``): the checker a
    detection-power campaign must catch, since it misses exactly those incidents.
    Its vocabulary is the whole registry, the switched-off rules included: they are
    claimed and missed on purpose.
    """

    without: frozenset[str] = frozenset()
    rules: frozenset[str] = field(default_factory=registry_rules)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = "builtin" + (":" + ",".join(f"-{r}" for r in _rule_order(self.without)) if self.without else "")
        if self.rules is None:  # given as None: the default vocabulary, as when not given
            self.rules = registry_rules()

    def check(self, path: Path) -> CheckerVerdict:
        from dshfuzz.checker import check_path

        try:
            report = check_path(path, self._options())  # the streamed check `dshfuzz check` runs
        except Exception:  # a crash of the checker under test is a campaign finding
            return CheckerVerdict(failure="crash", detail=traceback.format_exc(limit=8))
        return self._verdict(report)

    def check_data(self, data: bytes, compression: Compression) -> CheckerVerdict:
        """:meth:`check` of a log's bytes, with no file: the same streamed check of the same bytes."""
        from dshfuzz.checker import check_stream

        try:
            report = check_stream(data, compression=compression, options=self._options())
        except Exception:  # a crash of the checker under test is a campaign finding
            return CheckerVerdict(failure="crash", detail=traceback.format_exc(limit=8))
        return self._verdict(report)

    def _options(self) -> CheckOptions:
        from dshfuzz.checker import RULES, CheckOptions

        return CheckOptions(rules=frozenset(rid for rid in RULES if str(rid) not in self.without) if self.without else None)

    @staticmethod
    def _verdict(report: Report) -> CheckerVerdict:
        return CheckerVerdict(
            tuple(ReportedFinding(str(f.rule), str(f.severity), f.seq, f.caused_by, tuple(map(str, f.refused_by)))
                  for f in report.findings),
            exit_code=0 if report.ok else 1,
            checked=tuple(report.findings),
            events=report.events,
        )


def _stderr_tail(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text[-_STDERR_TAIL:]


def _exited(returncode: int, what: str, stderr: str) -> str:
    how = f"killed by signal {-returncode}" if returncode < 0 else f"exit {returncode}"
    return "\n".join(part for part in (f"{how} {what}".strip(), stderr) if part)


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


def _report_of(stdout: str) -> object:
    return verdict_from_json(json.loads(stdout))


def _crashed(code: int, stdout: str, stderr_tail: str, reads: Callable[[str], object] = _report_of) -> str:
    """A crash's detail: the exit status (2, or anything but 0, 1 and 3), then what it printed;
    a status that came with output ``reads`` takes as the protocol's report says so, and
    names the flag that maps it (:data:`PARSABLE_REPORT`)."""
    if not stdout.strip():
        return _exited(code, "with no report", stderr_tail)
    try:
        reads(stdout)
    except ValueError:
        return _exited(code, "", f"{_head(stdout)}\n{stderr_tail}".rstrip("\n"))
    return _exited(code, PARSABLE_REPORT, f"{_head(stdout)}\n{stderr_tail}".rstrip("\n"))


PARSABLE_REPORT = "with a parsable report (if the status is a verdict, map it: --checker-exit CODE=findings|clean|not-assessable)"
"""What a crash's detail says after its exit status when the checker printed a report anyway."""


def _head(text: str, limit: int = 300) -> str:
    """The start of a checker's output, for a detail that says what came instead of a report."""
    text = text.strip()
    return "output: " + (repr(text[:limit]) + ("..." if len(text) > limit else "") if text else "(nothing)")


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


class CheckerPool:
    """One checker shared by several threads that each judge through it (concurrent
    minimisations): their ``check_many`` questions wait until every member still at work
    has asked, and are then put to the checker as one ``check_many``, so that a checker
    that starts a process per question answers them all for one start.

    Invariant: a member that stops asking (its work done, or cut) calls :meth:`leave`, or
    the others would wait for it forever. Only one thread at a time runs the checker, the
    one whose question completed the round; a failure of that call is every asker's.
    """

    def __init__(self, checker: CheckerUnderTest, members: int) -> None:
        self.checker = checker
        self.active = members
        self.rounds = 0
        self._cond = threading.Condition()
        self._asks: dict[int, list[Path]] = {}
        self._answers: dict[int, list[CheckerVerdict] | BaseException] = {}

    def member(self, number: int) -> PooledChecker:
        return PooledChecker(self, number)

    def ask(self, member: int, paths: Sequence[Path]) -> list[CheckerVerdict]:
        with self._cond:
            self._asks[member] = list(paths)
            self._run_when_complete()
            while member not in self._answers:
                self._cond.wait()
            answer = self._answers.pop(member)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def leave(self) -> None:
        with self._cond:
            self.active -= 1
            self._run_when_complete()

    def _run_when_complete(self) -> None:
        if not self._asks or len(self._asks) < self.active:
            return
        asks, self._asks = self._asks, {}
        everything = [path for paths in asks.values() for path in paths]
        self.rounds += 1
        try:
            verdicts: list[CheckerVerdict] | BaseException = self.checker.check_many(everything)
        except BaseException as exc:  # noqa: BLE001 - every asker gets the failure, none waits forever
            verdicts = exc
        at = 0
        for member, paths in asks.items():
            self._answers[member] = verdicts if isinstance(verdicts, BaseException) else verdicts[at : at + len(paths)]
            at += len(paths)
        self._cond.notify_all()


@dataclass(slots=True)
class PooledChecker(_Checker):
    """A member's view of a :class:`CheckerPool`: the pooled checker's name and rules,
    its questions put through the pool."""

    pool: CheckerPool
    number: int

    @property
    def name(self) -> str:
        return self.pool.checker.name

    @property
    def rules(self) -> frozenset[str]:
        return self.pool.checker.rules

    def check(self, path: Path) -> CheckerVerdict:
        return self.pool.ask(self.number, [path])[0]

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        return self.pool.ask(self.number, paths)


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


@dataclass(slots=True)
class PythonChecker(_Checker):
    """A Python callable ``function(path: str)`` returning a report (see :func:`verdict_from_json`).

    It runs in process on a worker thread so a hang becomes a timeout verdict; the
    hung thread cannot be killed, so campaigns should prefer ``cmd:`` or ``serve:``
    for untrusted code.
    """

    target: str
    function: Callable[[str], Any]
    timeout: float = DEFAULT_TIMEOUT
    rules: frozenset[str] = field(default_factory=catalog_rules)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = f"py:{self.target}"
        if self.rules is None:  # given as None: the default vocabulary, as when not given
            self.rules = catalog_rules()

    def check(self, path: Path) -> CheckerVerdict:
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = self.function(str(path))
            except BaseException:  # noqa: BLE001 - any escape from the checker is its crash
                box["error"] = traceback.format_exc(limit=8)

        worker = threading.Thread(target=call, daemon=True, name=f"checker {self.target}")
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            return CheckerVerdict(failure="timeout", detail=f"no answer within {self.timeout:g}s")
        if "error" in box:
            return CheckerVerdict(failure="crash", detail=box["error"])
        value: Any = box.get("value")  # whatever the user's function returned
        if hasattr(value, "to_json"):
            value = value.to_json()
        try:
            return verdict_from_json(value)
        except ValueError as exc:
            shown = _head(value if isinstance(value, str) else repr(value)).replace("output: ", "returned: ", 1)
            return CheckerVerdict(failure="unparsable-output", detail=f"{exc}\n{shown}")


class _PluginChecker(_Checker):
    """A plugin's checker object, given what it lacks: ``rules`` (the catalog's ids unless
    it says), ``check_many`` and ``close`` (its own when it has them)."""

    name: str
    rules: frozenset[str]

    def __init__(self, inner: Any, rules: frozenset[str] | None) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", type(inner).__name__))
        own = getattr(inner, "rules", None)
        self.rules = rules if rules is not None else (frozenset(map(str, own)) if own else catalog_rules())

    def check(self, path: Path) -> CheckerVerdict:
        verdict: CheckerVerdict = self.inner.check(path)  # a plugin's checker, typed by its protocol alone
        return verdict

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        many = getattr(self.inner, "check_many", None)
        return list(many(paths)) if callable(many) else [self.inner.check(path) for path in paths]

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def _resolve_callable(target: str) -> Callable[..., Any]:
    """Import ``module:function``, from the current directory too (as ``python -m`` would)."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise CheckerSpecError(f"expected py:module:function, got py:{target}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise CheckerSpecError(f"cannot load py:{target}: {exc}") from None
    if not callable(obj):
        raise CheckerSpecError(f"py:{target} is not callable")
    function: Callable[..., Any] = obj
    return function


def _plugin_names() -> Iterable[str]:
    return sorted(ep.name for ep in entry_points(group="dshfuzz.checkers"))


def _rule_order(ids: Iterable[str]) -> list[str]:
    """``ids`` in the registry's order (the catalog's), which is how users read them."""
    from dshfuzz.checker import RULES

    order = {str(rid): n for n, rid in enumerate(RULES)}
    return sorted(ids, key=lambda r: order.get(r, len(order)))


def _builtin_without(options: str, rules: frozenset[str] | None) -> BuiltinChecker:
    """Parse the ``-RULE,-RULE`` list of ``builtin:-RULE,...``; unknown ids are a usage error."""
    from dshfuzz.checker import RULES

    items = [item.strip() for item in options.split(",")]
    malformed = [item for item in items if not item.startswith("-") or not item[1:]]
    if malformed:
        raise CheckerSpecError(f"builtin:{options}: expected a comma-separated list of -RULE (e.g. builtin:-S5,-E2)")
    known = {str(rid) for rid in RULES}
    unknown = [item[1:] for item in items if item[1:] not in known]
    if unknown:
        raise CheckerSpecError(
            f"builtin:{options}: unknown rule id{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"known: {', '.join(_rule_order(known))}"
        )
    return _given(BuiltinChecker(without=frozenset(item[1:] for item in items)), rules)


_Given = TypeVar("_Given", BuiltinChecker, CommandChecker, BatchCommandChecker, PythonChecker)


def _given(checker: _Given, rules: frozenset[str] | None) -> _Given:
    """``checker`` with the vocabulary ``rules`` when given (else its own default)."""
    if rules is not None:
        checker.rules = rules
    return checker


def _unwrap(value: str) -> str:
    """A command as a shell user quotes it: ``'node c.mjs {log}'`` (one word wrapped in one
    pair of matching quotes) is unwrapped as the shell would; anything else is kept."""
    value = value.strip()
    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
        try:
            words = shlex.split(value)
        except ValueError:
            return value
        if len(words) == 1:
            return words[0]
    return value


def _split(template: str, spec: str) -> list[str]:
    try:
        return shlex.split(template)
    except ValueError as exc:
        raise CheckerSpecError(f"{spec}: cannot split the command as a shell would: {exc}") from None


def load_checker(
    spec: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    rules: frozenset[str] | None = None,
    exits: Mapping[int, str] | None = None,
) -> LoadedChecker:
    """Turn a ``--checker`` value into a checker (:data:`CHECKER_SPEC_HELP` lists the forms).

    Starts no process. ``rules``, when given, replaces the checker's vocabulary (by
    default the registry for ``builtin``, the handshake for ``serve:``, else the
    catalog's 46 ids); ``exits`` maps a ``cmd:`` checker's own exit statuses
    (:func:`parse_checker_exits`; a checker without exit statuses takes none, and a
    mapping given to one is a :class:`CheckerSpecError`). After ``cmd:`` or ``serve:``, a command wrapped in one pair of
    quotes (as a shell user writes ``--checker "cmd:'node c.mjs {log}'"``) is
    unwrapped. A checker's ``name`` is a spec that loads the same checker again.
    """
    if rules is not None:
        rules = frozenset(rules)
        if not rules:
            raise CheckerSpecError("a checker's vocabulary (rules) must name at least one rule id")
    if exits and not spec.startswith("cmd:"):
        raise CheckerSpecError(f"--checker-exit maps a cmd: checker's exit statuses; {spec!r} has none")
    if spec == "builtin":
        return _given(BuiltinChecker(), rules)
    if spec.startswith("builtin:"):
        return _builtin_without(spec[len("builtin:"):], rules)
    if spec.startswith("cmd:"):
        template = _unwrap(spec[4:])
        if "{logs}" in template:
            return _given(BatchCommandChecker(template, timeout=timeout, exits=dict(exits or {})), rules)
        if "{log}" not in template:
            raise CheckerSpecError(f"command template has no {{log}} or {{logs}} placeholder: {template!r}")
        return _given(CommandChecker(template, timeout=timeout, exits=dict(exits or {})), rules)
    if spec.startswith("serve:"):
        return ServeChecker(_unwrap(spec[6:]), timeout=timeout, rules=rules)
    if spec.startswith("py:"):
        return _given(PythonChecker(spec[3:], _resolve_callable(spec[3:]), timeout=timeout), rules)
    for ep in entry_points(group="dshfuzz.checkers"):
        if ep.name == spec:
            loaded = ep.load()
            if callable(loaded) and not hasattr(loaded, "check"):
                return _given(PythonChecker(ep.value, loaded, timeout=timeout), rules)
            obj = loaded() if isinstance(loaded, type) else loaded
            if isinstance(obj, _Checker):
                if rules is not None:
                    setattr(obj, "rules", rules)  # a field, or ServeChecker's setter
                return obj
            return _PluginChecker(obj, rules)
    plugins = ", ".join(_plugin_names()) or "none installed"
    raise CheckerSpecError(f"unknown checker {spec!r}; expected {CHECKER_SPEC_HELP} (plugins: {plugins})")
