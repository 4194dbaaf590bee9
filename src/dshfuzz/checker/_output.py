"""Presenting reports: redaction with stable hashes, and the human rendering.

Redaction (seed 001: reports carry hash references only, never prompts, tool
arguments, tool results, session ids or call ids) replaces every occurrence of a
sensitive string of the log (ids and call ids as whole tokens, tool arguments,
message and tool-output text) in finding messages and context with ``h:`` plus
the first 8 hex digits of its SHA-256, so one value always maps to one reference.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dshfuzz.model import Compression, Event, SessionLog, stream_log

from ._finding import Finding, Report
from .rules import RULES, RuleLayer, Severity

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["redact_report", "redact_streamed", "render_human", "stable_hash"]

_ID_KEYS = frozenset({"id", "callId", "toolCallId", "compactionId", "sourceCommandId", "rpcId", "parentSession"})
_TEXT_KEYS = frozenset({"text", "arguments", "argumentsDelta", "reasoning", "title", "summary"})
_MIN_TEXT = 3
"""Text values shorter than this are not redacted (they would blank common words);
ids of any length are, as whole tokens."""


def stable_hash(value: str) -> str:
    return "h:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _collect(value: Any, ids: set[str], texts: set[str], key: str | None = None) -> None:
    stack: list[tuple[str | None, Any]] = [(key, value)]
    while stack:
        k, v = stack.pop()
        t = type(v)
        if t is dict:
            stack.extend(v.items())
        elif t is list:
            stack.extend((k, x) for x in v)
        elif t is str and k is not None and v:
            if k in _ID_KEYS:
                ids.add(v)
            elif (k in _TEXT_KEYS or k in ("texts", "args")) and len(v) >= _MIN_TEXT:
                texts.add(v)


def sensitive_strings(log: SessionLog) -> tuple[set[str], set[str]]:
    """The ids (session, message, call, compaction ids) and the texts (message
    text, tool arguments and output) the log holds."""
    ids: set[str] = set()
    texts: set[str] = set()
    if log.header is not None and type(log.header.raw) is dict:
        _collect(log.header.raw, ids, texts)
    for ev in log.events:
        raw = ev.raw
        if type(raw) is dict:
            _collect(raw.get("data"), ids, texts, "data")
    return ids, texts


_TOKEN = r"A-Za-z0-9_\-"


class _Redactor:
    def __init__(self, ids: set[str], texts: set[str]) -> None:
        alternatives = [(len(x), re.escape(x)) for x in texts - ids]
        alternatives += [(len(x), f"(?<![{_TOKEN}]){re.escape(x)}(?![{_TOKEN}])") for x in ids]
        alternatives.sort(key=lambda a: a[0], reverse=True)
        self._pattern = re.compile("|".join(p for _, p in alternatives)) if alternatives else None

    def text(self, s: str) -> str:
        if self._pattern is None:
            return s
        return self._pattern.sub(lambda m: stable_hash(m.group(0)), s)

    def value(self, v: Any) -> Any:
        if type(v) is str:
            return self.text(v)
        if type(v) is list:
            return [self.value(x) for x in v]
        if type(v) is dict:
            return {k: self.value(x) for k, x in v.items()}
        return v


def redact_report(report: Report, log: SessionLog) -> Report:
    """A copy of ``report`` whose findings quote no sensitive value of ``log``."""
    return _redacted(report, _Redactor(*sensitive_strings(log)))


def redact_streamed(report: Report, data: bytes, compression: Compression | None = None) -> Report:
    """:func:`redact_report` for a report of :func:`~dshfuzz.checker.check_stream`: the log's bytes
    are read again in one streamed read that keeps only the sensitive strings the report quotes
    (a string the findings do not contain is never replaced, so the result is the same)."""
    quoted = _Quoted(report)
    stream_log(data, quoted, compression=compression)
    return _redacted(report, _Redactor(quoted.ids, quoted.texts))


def _redacted(report: Report, r: _Redactor) -> Report:
    findings = [replace(f, message=r.text(f.message), context=r.value(dict(f.context))) for f in report.findings]
    return replace(report, findings=findings)


class _QuotedSet(set[str]):
    """A set that admits only the strings the report's text contains (a whole token of it is
    admitted by one set lookup). Ids and texts are filtered alike, so a string that is both
    stays an id, as in :func:`sensitive_strings`."""

    def __init__(self, text: str, tokens: frozenset[str]) -> None:
        super().__init__()
        self.text = text
        self.tokens = tokens

    def add(self, value: str) -> None:
        if value in self.tokens or value in self.text:
            super().add(value)


class _Quoted:
    """A :class:`~dshfuzz.model.RowConsumer` collecting the sensitive strings of each row's events
    that the report quotes (:func:`sensitive_strings`, filtered as it goes)."""

    def __init__(self, report: Report) -> None:
        pieces: list[str] = []
        for f in report.findings:
            pieces.append(f.message)
            _strings(f.context, pieces)
        text = "\0".join(pieces)
        tokens = frozenset(re.findall(f"[{_TOKEN}]+", text))
        self.ids = _QuotedSet(text, tokens)
        self.texts = _QuotedSet(text, tokens)
        self.log: SessionLog | None = None

    def begin(self, log: SessionLog) -> None:
        self.log = log

    def row(self, first: int, stop: int, head: Event) -> None:
        log = self.log
        assert log is not None
        if first == 0 and log.header is not None and type(log.header.raw) is dict:
            _collect(log.header.raw, self.ids, self.texts)
        if not self.ids.text:
            return
        events = log.events
        for i in range(first, stop):
            raw = events[i].raw
            if type(raw) is dict:
                _collect(raw.get("data"), self.ids, self.texts, "data")


def _strings(value: Any, out: list[str]) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is str:
            out.append(v)
        elif type(v) is list:
            stack.extend(v)
        elif type(v) is dict:
            stack.extend(v.keys())
            stack.extend(v.values())


_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}


def _where(f: Finding) -> str:
    parts = []
    if f.seq is not None:
        parts.append(f"seq {f.seq}")
    if f.line is not None:
        parts.append(f"line {f.line}")
    if f.frame is not None:
        parts.append(f"frame {f.frame}")
    if f.offset is not None:
        parts.append(f"byte {f.offset}")
    return ", ".join(parts) or "-"


def _by_layer(findings: list[tuple[int, Finding]]) -> Iterator[tuple[RuleLayer, list[tuple[int, Finding]]]]:
    for layer in RuleLayer:
        group = [(i, f) for i, f in findings if f.layer is layer]
        if group:
            yield layer, group


def render_human(report: Report, console: Console, *, roots_only: bool = False) -> None:
    """The report as rich tables, one per rule layer of the root findings, each root
    followed by the findings that follow from it (wherever their layer), with a one-line
    verdict. ``roots_only`` leaves the consequences out and says how many."""
    from rich.table import Table  # rich costs a tenth of a second to import; --json never needs it
    from rich.text import Text

    verdict = Text("OK", style="bold green") if report.ok else Text("FAIL", style="bold red")
    roots = [i for i, f in enumerate(report.findings) if f.caused_by is None]
    followers: dict[int, list[Finding]] = {}
    for f in report.findings:
        if f.caused_by is not None:
            followers.setdefault(f.caused_by, []).append(f)
    rooted = len(report.findings) - len(roots)
    head = Text.assemble(
        verdict,
        f"  {report.file or '<log>'}  "
        + ("format unknown  " if report.format_version is None else f"format v{report.format_version}  "),
        f"{_count(report.events, 'event')}, {_count(report.frames, 'frame')}, ",
        (_count(report.errors, "error"), "red" if report.errors else ""),
        ", ",
        (_count(report.warnings, "warning"), "yellow" if report.warnings else ""),
        f" ({_count(len(roots), 'root cause')})" if rooted else "",
    )
    console.print(head, soft_wrap=True)
    for layer, group in _by_layer([(i, report.findings[i]) for i in roots]):
        table = Table(title=f"{layer} ({len(group)})", title_justify="left", expand=True, show_lines=False)
        table.add_column("rule", no_wrap=True)
        table.add_column("where", no_wrap=True)
        table.add_column("message (refused by)", ratio=1)
        for i, f in group:
            table.add_row(Text(str(f.rule), style=_STYLE[f.severity]), _where(f), _message(f))
            if roots_only:
                continue
            for c in followers.get(i, ()):
                table.add_row(Text.assemble(("└ ", "dim"), (str(c.rule), _STYLE[c.severity])), _where(c),
                              Text.assemble(("follows: ", "dim"), _message(c)))
        console.print(table)
    if roots_only and rooted:
        console.print(f"[dim]{_count(rooted, 'finding')} that follow from these not shown (without --roots-only, "
                      "each is listed under its root)[/dim]")
    for rule, n in report.suppressed.items():
        console.print(f"[dim]{n} more {rule} finding(s) suppressed ({RULES[rule].title})[/dim]")
    for err in report.internal_errors:
        console.print(Text("internal checker error: " + err.splitlines()[0], style="bold magenta"))


def _message(f: Finding) -> Any:
    from rich.text import Text

    refused = ", ".join(map(str, f.refused_by)) or "no official layer"
    return Text.assemble(f.message, (f"  [{refused}]", "dim"))


def _count(n: int, noun: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
