"""What an external checker prints and how its exit status reads, as a verdict
(``docs/CHECKER_PROTOCOL.md``): the report format every protocol shares, the exit
statuses of a command, and the details of a failure.

A report that is not one is unparsable output; a checker's bad pointer between its
findings makes its finding a root, never hides it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from ._interface import CheckerSpecError, CheckerVerdict, ReportedFinding
from ._vocabulary import _LOAD_ROUTES

__all__ = [
    "NOT_ASSESSABLE_EXIT",
    "PARSABLE_REPORT",
    "ExitMeaning",
    "parse_checker_exits",
    "verdict_from_json",
]


NOT_ASSESSABLE_EXIT = 3
"""The exit status by which a ``cmd:`` checker says "I cannot judge this log" (no verdict)."""


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


_STDERR_TAIL = 2000


def _stderr_tail(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text[-_STDERR_TAIL:]


def _exited(returncode: int, what: str, stderr: str) -> str:
    how = f"killed by signal {-returncode}" if returncode < 0 else f"exit {returncode}"
    return "\n".join(part for part in (f"{how} {what}".strip(), stderr) if part)


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
