"""Prewrite (seed 000): judge an edit before it lands, without touching the log.

An edit is either one event to append, or a complete edited event list that
replaces the log's events. The edited log is built *physically*, as the official
writer would leave it: an appended event is one more batch (a plain JSONL line,
or one more checksummed zstd frame) after the log's bytes, cut back first to the
start of a torn tail as the loader's repair does; an edited list is the header
plus one batch. The edited bytes are checked in full, as ``dshfuzz check`` reads a
file, so every rule (framing and coordinates included) sees exactly the file that
would exist. ``dshfuzz check --prewrite`` (:mod:`dshfuzz.cli`) streams both checks
(:func:`prewrite_bytes`): it holds the log's bytes and the edited file's, never a model
of either.

The verdict is defined against the unedited log: the edit is accepted exactly
when the edited log has no error-level finding that the original lacks. Findings
are matched by rule and seq (by rule and line where no seq applies), counted as
a multiset, so an edit that only changes the wording of an existing finding (an
unanswered call that now ends "before the next assistant message" instead of
"before the end of history") adds nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from io import BytesIO
from typing import Any, Literal

from dshfuzz.model import (
    Compression,
    FileBytes,
    SessionLog,
    StreamedLog,
    batch_text,
    compress_frame,
    encode_jsonl,
    encode_log,
    encode_zstd,
    parse_log,
)

from ._context import CheckOptions
from ._finding import Finding, Report
from ._run import check_log, stream_check

__all__ = [
    "EditError", "PrewriteResult", "added_errors", "apply_edit", "edit_bytes", "edit_mode", "prewrite", "prewrite_bytes",
]

EditMode = Literal["append", "replace"]


class EditError(ValueError):
    """The edit is neither an event object nor an event list."""


@dataclass(frozen=True, slots=True)
class PrewriteResult:
    """The verdict on one edit: ``added`` holds the error-level findings the edit
    introduces (empty exactly when ``accepted``); ``report`` is the report on
    ``edited`` (the bytes of the file as it would be, in ``compression``) and
    ``before`` the original's."""

    mode: EditMode
    accepted: bool
    added: tuple[Finding, ...]
    report: Report
    before: Report
    edited: bytes
    compression: Compression

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.before.file,
            "mode": self.mode,
            "accepted": self.accepted,
            "added": [f.to_json() for f in self.added],
            "report": self.report.to_json(),
        }


def edit_mode(edit: Any) -> EditMode:
    """``append`` for one event, ``replace`` for an event list; :class:`EditError` otherwise."""
    if type(edit) is dict:
        return "append"
    if type(edit) is list:
        return "replace"
    raise EditError("an edit is one event (a JSON object) or a complete event list (a JSON array)")


def _write_intact(out: BytesIO, log: SessionLog | StreamedLog, data: bytes | FileBytes | None) -> None:
    """Write the log's bytes (``data``, as read, or rebuilt from the model) without its torn tail
    (the loader's repair truncates there before writing), a piece at a time: the edited file is
    the one copy of them held."""
    if data is None:
        assert isinstance(log, SessionLog), "a streamed read keeps no text: its bytes are given"
        data = encode_log(log)
    end = len(data) if log.torn is None else log.torn.truncate_to
    for start in range(0, end, _PIECE):
        out.write(data[start : min(start + _PIECE, end)])
    if log.compression == "none" and end and data[end - 1 : end] != b"\n":
        out.write(b"\n")


_PIECE = 1 << 20


def edit_bytes(log: SessionLog | StreamedLog, edit: Any, data: bytes | FileBytes | None = None) -> bytes:
    """The file's bytes after the official writer applied ``edit`` to ``log``, whose bytes are
    ``data`` when given (a streamed read keeps no text to rebuild them from)."""
    mode = edit_mode(edit)
    header = log.header.raw if log.header is not None else None
    if mode == "append":
        batch = batch_text([edit])
        out = BytesIO()  # getvalue() hands its buffer over, where joining bytes would copy them
        _write_intact(out, log, data)
        out.write(compress_frame(batch) if log.compression == "zstd" else batch)
        return out.getvalue()
    if log.compression == "zstd":
        return encode_zstd(header, [edit])
    return encode_jsonl(header, [edit])


def apply_edit(log: SessionLog, edit: Any) -> SessionLog:
    """The log as it would be after the official writer applied ``edit`` (read back, never written)."""
    return parse_log(edit_bytes(log, edit), compression=log.compression, path=log.path)


def _key(f: Finding) -> tuple[str, Any]:
    return (str(f.rule), f.seq if f.seq is not None else ("line", f.line))


def added_errors(before: Report, after: Report) -> tuple[Finding, ...]:
    """The error-level findings of ``after`` beyond those of ``before`` (multiset by rule and seq)."""
    budget = Counter(_key(f) for f in before.findings if f.is_error)
    out = []
    for f in after.findings:
        if not f.is_error:
            continue
        key = _key(f)
        if budget[key] > 0:
            budget[key] -= 1
        else:
            out.append(f)
    return tuple(out)


def _verdict(mode: EditMode, before: Report, after: Report, edited: bytes, compression: Compression) -> PrewriteResult:
    added = added_errors(before, after)
    ok = not added and not after.internal_errors
    return PrewriteResult(mode, ok, added, after, before, edited, compression)


def prewrite(log: SessionLog, edit: Any, options: CheckOptions = CheckOptions()) -> PrewriteResult:
    """Judge ``edit`` (one event to append, or a complete edited event list) against ``log``."""
    mode = edit_mode(edit)
    edited = edit_bytes(log, edit)
    after, _ = stream_check(edited, compression=log.compression, path=log.path, options=options)
    return _verdict(mode, check_log(log, options), after, edited, log.compression)


def prewrite_bytes(
    data: bytes | FileBytes, edit: Any, *, compression: Compression | None = None, path: str | None = None,
    options: CheckOptions = CheckOptions(),
) -> PrewriteResult:
    """:func:`prewrite` of the log file whose bytes are ``data``, both checks streamed: memory
    follows the two files' bytes and what the rules keep, not the log's length."""
    mode = edit_mode(edit)
    before, log = stream_check(data, compression=compression, path=path, options=options)
    edited = edit_bytes(log, edit, data)
    after, _ = stream_check(edited, compression=log.compression, path=path, options=options)
    return _verdict(mode, before, after, edited, log.compression)
