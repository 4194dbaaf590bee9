"""Redacting reports with stable hashes (the rendering lives in :mod:`dshfuzz.report`).

Redaction (seed 001: reports carry hash references only, never prompts, tool
arguments, tool results, session ids or call ids) replaces every occurrence of a
sensitive string of the log (ids and call ids as whole tokens, tool arguments,
message and tool-output text) in finding messages and context with ``h:`` plus
the first 8 hex digits of its SHA-256, so one value always maps to one reference.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dshfuzz.model import Compression, Event, FileBytes, SessionLog, StreamedLog, stream_log

from ._finding import Finding, Report

if TYPE_CHECKING:
    from ._prewrite import PrewriteResult
    from ._recover import RecoveryPlan

__all__ = ["redact_plan", "redact_prewrite", "redact_report", "redact_streamed", "stable_hash"]

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


def redact_streamed(report: Report, data: bytes | FileBytes, compression: Compression | None = None) -> Report:
    """:func:`redact_report` for a report of :func:`~dshfuzz.checker.check_stream`: the log's bytes
    are read again in one streamed read that keeps only the sensitive strings the report quotes
    (a string the findings do not contain is never replaced, so the result is the same)."""
    quoted = _Quoted(report)
    stream_log(data, quoted, compression=compression)
    return _redacted(report, _Redactor(quoted.ids, quoted.texts))


def redact_plan(plan: RecoveryPlan, data: bytes | FileBytes, compression: Compression | None = None) -> RecoveryPlan:
    """``plan`` with what its skipped forks' findings quote of the log ``data`` replaced by stable
    hashes (:func:`redact_streamed` on each); the fork point and the notes quote nothing."""
    def hidden(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        return tuple(redact_streamed(Report(plan.file, None, 0, 0, list(findings)), data, compression).findings)

    return replace(plan, rejected=tuple(replace(r, findings=hidden(r.findings)) for r in plan.rejected))


def redact_prewrite(result: PrewriteResult) -> PrewriteResult:
    """``result`` with what its report and its added findings quote of the edited log replaced by
    stable hashes (:func:`redact_streamed` over the edited bytes)."""
    added = redact_streamed(replace(result.report, findings=list(result.added)), result.edited, result.compression)
    return replace(result, added=tuple(added.findings),
                   report=redact_streamed(result.report, result.edited, result.compression))


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
        self.log: StreamedLog | None = None

    def begin(self, log: StreamedLog) -> None:
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
