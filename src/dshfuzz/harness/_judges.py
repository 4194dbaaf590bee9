"""Checkers under test, behind one interface.

A campaign fuzzes *a checker*: the built-in one (whole, or with rules switched off:
``builtin:-S5,-E2``, how detection power is measured), any command (``cmd:'... {log} ...'``),
a Python callable (``py:module:function``), or a plugin registered under the
``dshfuzz.checkers`` entry-point group. Whatever it is, the campaign sees a
:class:`CheckerVerdict`: the findings it reported, or how it failed (crash,
timeout, unparsable output). A checker failing is a finding about the checker,
never an exception in the campaign.
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import sys
import subprocess
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, Protocol

__all__ = [
    "CHECKER_SPEC_HELP",
    "CheckerFailure",
    "CheckerSpecError",
    "CheckerUnderTest",
    "CheckerVerdict",
    "ReportedFinding",
    "load_checker",
    "verdict_from_json",
]

CheckerFailure = Literal["crash", "timeout", "unparsable-output"]
DEFAULT_TIMEOUT = 20.0
CHECKER_SPEC_HELP = "builtin | builtin:-RULE,... | cmd:'... {log} ...' | py:module:function | a dshfuzz.checkers plugin name"
"""The ``--checker`` forms, for every command's help and every spec error."""


class CheckerSpecError(ValueError):
    """A ``--checker`` value that names no usable checker."""


@dataclass(frozen=True, slots=True)
class ReportedFinding:
    """One finding as the checker under test reported it (rule id, severity, seq)."""

    rule: str
    severity: str = "error"
    seq: int | None = None


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

    @property
    def error_rules(self) -> frozenset[str]:
        return frozenset(f.rule for f in self.findings if f.severity == "error")

    def seqs_of(self, rule: str) -> frozenset[int | None]:
        return frozenset(f.seq for f in self.findings if f.rule == rule)


class CheckerUnderTest(Protocol):
    """Anything the campaign can fuzz: ``check`` reads the file at ``path``, read-only."""

    name: str

    def check(self, path: Path) -> CheckerVerdict: ...


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def verdict_from_json(payload: Any) -> CheckerVerdict:
    """Map a checker's JSON report onto a verdict.

    Accepted shapes: a top-level ``violations`` or ``findings`` list, or a bare list,
    of objects carrying ``id`` or ``rule``, optional ``severity`` (default ``error``)
    and optional ``seq``. Anything else raises ``ValueError`` (unparsable output).
    """
    items: Any
    if isinstance(payload, list):
        items = payload
    elif isinstance(payload, Mapping):
        items = next((payload[k] for k in ("violations", "findings") if k in payload), None)
        if items is None:
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
            ReportedFinding(rule, severity if isinstance(severity, str) else "error", _int_or_none(item.get("seq")))
        )
    return CheckerVerdict(tuple(findings))


@dataclass(slots=True)
class BuiltinChecker:
    """The embedded contract checker (``dshfuzz.checker``), run in process.

    ``without`` names rules switched off (spec ``builtin:-S5,-E2``): the checker a
    detection-power campaign must catch, since it misses exactly those incidents.
    """

    without: frozenset[str] = frozenset()
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = "builtin" + (":" + ",".join(f"-{r}" for r in _rule_order(self.without)) if self.without else "")

    def check(self, path: Path) -> CheckerVerdict:
        from dshfuzz.checker import RULES, CheckOptions, check_path

        kept = frozenset(rid for rid in RULES if str(rid) not in self.without) if self.without else None
        try:
            report = check_path(path, CheckOptions(rules=kept))  # the streamed check `dshfuzz check` runs
        except Exception:  # a crash of the checker under test is a campaign finding
            return CheckerVerdict(failure="crash", detail=traceback.format_exc(limit=8))
        return CheckerVerdict(
            tuple(ReportedFinding(str(f.rule), str(f.severity), f.seq) for f in report.findings),
            exit_code=0 if report.ok else 1,
        )


@dataclass(slots=True)
class CommandChecker:
    """An external checker command; ``{log}`` in the template becomes the log's path.

    Exit codes 0 and 1 are the convention for "clean" and "findings". Death by a
    signal, a non-zero exit with nothing on stdout (an uncaught exception), or any
    other exit without a parsable report is a crash; output that is not a report
    after a conventional exit is unparsable output.
    """

    template: str
    timeout: float = DEFAULT_TIMEOUT
    name: str = field(init=False)

    def __post_init__(self) -> None:
        if "{log}" not in self.template:
            raise CheckerSpecError(f"command template has no {{log}} placeholder: {self.template!r}")
        self.name = f"cmd:{self.template}"

    def check(self, path: Path) -> CheckerVerdict:
        argv = [part.replace("{log}", str(path)) for part in shlex.split(self.template)]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=self.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return CheckerVerdict(failure="timeout", detail=f"no answer within {self.timeout:g}s")
        except OSError as exc:
            return CheckerVerdict(failure="crash", detail=f"could not start {argv[0]!r}: {exc}")
        stderr_tail = proc.stderr.decode("utf-8", "replace")[-2000:]
        if proc.returncode < 0:
            return CheckerVerdict(
                failure="crash", detail=f"killed by signal {-proc.returncode}\n{stderr_tail}", exit_code=proc.returncode
            )
        stdout = proc.stdout.decode("utf-8", "replace")
        if proc.returncode != 0 and not stdout.strip():
            return CheckerVerdict(
                failure="crash", detail=f"exit {proc.returncode} with no report\n{stderr_tail}", exit_code=proc.returncode
            )
        try:
            verdict = verdict_from_json(json.loads(stdout or "null"))
        except ValueError as exc:
            kind: CheckerFailure = "crash" if proc.returncode not in (0, 1) else "unparsable-output"
            return CheckerVerdict(failure=kind, detail=f"{exc}\n{stderr_tail}", exit_code=proc.returncode)
        return CheckerVerdict(verdict.findings, exit_code=proc.returncode)


@dataclass(slots=True)
class PythonChecker:
    """A Python callable ``function(path: str)`` returning a report (see :func:`verdict_from_json`).

    It runs in process on a worker thread so a hang becomes a timeout verdict; the
    hung thread cannot be killed, so campaigns should prefer ``cmd:`` for untrusted code.
    """

    target: str
    function: Callable[[str], Any]
    timeout: float = DEFAULT_TIMEOUT
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = f"py:{self.target}"

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
        value = box.get("value")
        if hasattr(value, "to_json"):
            value = value.to_json()
        try:
            return verdict_from_json(value)
        except ValueError as exc:
            return CheckerVerdict(failure="unparsable-output", detail=str(exc))


def _resolve_callable(target: str) -> Callable[[str], Any]:
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
    return obj


def _plugin_names() -> Iterable[str]:
    return sorted(ep.name for ep in entry_points(group="dshfuzz.checkers"))


def _rule_order(ids: Iterable[str]) -> list[str]:
    """``ids`` in the registry's order (the catalog's), which is how users read them."""
    from dshfuzz.checker import RULES

    order = {str(rid): n for n, rid in enumerate(RULES)}
    return sorted(ids, key=lambda r: order.get(r, len(order)))


def _builtin_without(options: str) -> BuiltinChecker:
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
    return BuiltinChecker(without=frozenset(item[1:] for item in items))


def load_checker(spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> CheckerUnderTest:
    """Turn a ``--checker`` value into a checker (:data:`CHECKER_SPEC_HELP` lists the forms)."""
    if spec == "builtin":
        return BuiltinChecker()
    if spec.startswith("builtin:"):
        return _builtin_without(spec[len("builtin:"):])
    if spec.startswith("cmd:"):
        return CommandChecker(spec[4:], timeout=timeout)
    if spec.startswith("py:"):
        return PythonChecker(spec[3:], _resolve_callable(spec[3:]), timeout=timeout)
    for ep in entry_points(group="dshfuzz.checkers"):
        if ep.name == spec:
            loaded = ep.load()
            if callable(loaded) and not hasattr(loaded, "check"):
                return PythonChecker(ep.value, loaded, timeout=timeout)
            return loaded() if isinstance(loaded, type) else loaded
    plugins = ", ".join(_plugin_names()) or "none installed"
    raise CheckerSpecError(f"unknown checker {spec!r}; expected {CHECKER_SPEC_HELP} (plugins: {plugins})")
