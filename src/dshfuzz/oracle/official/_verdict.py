"""Typed official verdicts, and the normalisation that makes them comparable.

The official layers answer with an error name, class and message. Messages embed
things that differ between runs of the same verdict (the file's absolute path,
``(raw log: ...)`` suffixes, the server's scratch root), and they embed the
coordinates of the defect in several conventions. :class:`OfficialError` keeps
the official text, normalised, and lifts the coordinates into fields:

- ``seq``: the position of the offending event (for a seq gap, the first missing
  seq, so ``fold``, ``seed``, ``load`` and ``released`` agree on one gap);
- ``line``: the 1-based physical line, header = line 1 (the convention of
  :class:`dshfuzz.model.Event`), converted from persistence's row-counted
  ``at line N`` and the released codec's 0-based ``row N``;
- ``offset``: a byte offset into the file (zstd frame errors).

A coordinate the message does not name is taken from the cause chain, if any.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LayerVerdict",
    "OfficialError",
    "OfficialRefusal",
    "OracleCrashed",
    "OracleError",
    "OracleProtocolError",
    "OracleTimeout",
    "OracleUnavailable",
    "Reply",
    "normalise_message",
    "parse_coordinates",
]

_RAW_LOG_SUFFIX = re.compile(r"\s*\(raw log: [^)]*\)")
_SCRATCH = re.compile(r"<scratch>(?:/[^\s'\"():,]*)?")

# (pattern, field, adjustment) tried in order; the first match per field wins.
_SEQ_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bexpected (\d+), got -?\d+"),
    re.compile(r"\bseq -?\d+ is not contiguous; expected (\d+)"),
    re.compile(r"\bat index (\d+)"),
    re.compile(r"\bat (?:session )?seq (\d+)"),
    re.compile(r"\(seq (\d+)\)"),
    re.compile(r"(?:^|[\s:])(?:[a-z][\w-]*(?:/[\w-]+)+|Session event) (\d+)\b"),
)
_LINE_PATTERNS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"\bphysical line (\d+)"), 0),
    (re.compile(r"\bat line (\d+)"), 1),
    (re.compile(r"\brow (\d+)\b"), 2),
)
_OFFSET_PATTERN = re.compile(r"\bat byte (\d+)")


def normalise_message(message: str, paths: Iterable[str] = ()) -> str:
    """The message with run-specific text removed.

    Strips ``(raw log: ...)`` suffixes and replaces each of ``paths`` (the judged
    file, as given, absolute and resolved) with ``<file>``, and so any path below
    the server's scratch root (``loadApp``'s symlink to the judged file), so that
    ``load`` and ``loadApp`` word one refusal identically.
    """
    out = _RAW_LOG_SUFFIX.sub("", message)
    for path in sorted({p for p in paths if p}, key=len, reverse=True):
        out = out.replace(path, "<file>")
    return _SCRATCH.sub("<file>", out)


def parse_coordinates(message: str) -> tuple[int | None, int | None, int | None]:
    """``(seq, line, offset)`` named by an official message (see module doc)."""
    seq = next((int(m.group(1)) for p in _SEQ_PATTERNS if (m := p.search(message))), None)
    line = next((int(m.group(1)) + adjust for p, adjust in _LINE_PATTERNS if (m := p.search(message))), None)
    offset_match = _OFFSET_PATTERN.search(message)
    return seq, line, int(offset_match.group(1)) if offset_match else None


def _paths_of(path: str | os.PathLike[str] | None) -> tuple[str, ...]:
    if path is None:
        return ()
    given = os.fspath(path)
    return (given, os.path.abspath(given), os.path.realpath(given))


@dataclass(frozen=True, slots=True)
class OfficialError:
    """One official error: ``name`` (``error.name``), ``cls`` (its constructor when
    that differs, e.g. ``SessionFormatUnsupportedMigrationError``), the normalised
    ``message``, ``code`` (e.g. ``INVARIANT``), coordinates and the ``cause``
    chain. ``raw_message`` is the unnormalised text and never takes part in
    equality."""

    name: str
    cls: str | None
    message: str
    code: str | int | None = None
    seq: int | None = None
    line: int | None = None
    cause: OfficialError | None = None
    offset: int | None = None
    raw_message: str = field(default="", compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any], *, path: str | os.PathLike[str] | None = None) -> OfficialError:
        """Build from the server's error JSON; ``path`` is the judged file, if any."""
        raw = str(value.get("message", ""))
        message = normalise_message(raw, _paths_of(path))
        cause_json = value.get("cause")
        cause = cls.from_json(cause_json, path=path) if isinstance(cause_json, Mapping) else None
        seq, line, offset = parse_coordinates(message)
        code = value.get("code")
        return cls(
            name=str(value.get("name", "Error")),
            cls=value.get("class") if isinstance(value.get("class"), str) else None,
            message=message,
            code=code if isinstance(code, (str, int)) and not isinstance(code, bool) else None,
            seq=seq if seq is not None else (cause.seq if cause else None),
            line=line if line is not None else (cause.line if cause else None),
            cause=cause,
            offset=offset if offset is not None else (cause.offset if cause else None),
            raw_message=raw,
        )

    @property
    def kind(self) -> str:
        """The most specific class name: ``cls`` when set, else ``name``."""
        return self.cls or self.name

    @property
    def summary(self) -> str:
        return f"{self.kind}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """``{name, class, message, seq?, line?, offset?, code?, cause?}`` (absent fields omitted)."""
        out: dict[str, Any] = {"name": self.name, "class": self.kind, "message": self.message}
        for key in ("seq", "line", "offset", "code"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.cause is not None:
            out["cause"] = self.cause.to_json()
        return out


@dataclass(frozen=True, slots=True)
class LayerVerdict:
    """One layer's verdict on one log: ``ok`` with the layer's JSON ``result``, or
    the official ``error`` that refused it."""

    layer: str
    ok: bool
    error: OfficialError | None = None
    result: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, layer: str, value: Mapping[str, Any], *, path: str | os.PathLike[str] | None = None) -> LayerVerdict:
        if value.get("ok"):
            return cls(layer, True, None, value.get("result"))
        return cls(layer, False, OfficialError.from_json(value.get("error") or {}, path=path))

    def to_json(self) -> dict[str, Any]:
        return {"ok": True} if self.ok else {"ok": False, "error": self.error.to_json() if self.error else None}


@dataclass(frozen=True, slots=True)
class RefusalSite:
    """One ``throw`` statement of an official package a log passes through: where it is
    (``line`` 1-based, ``column`` 0-based) and its message template (the source of what it
    throws). ``id`` is ``package/file:line:column``: a site that moves changes id."""

    id: str
    package: str
    file: str
    line: int
    column: int
    message: str


@dataclass(frozen=True, slots=True)
class ReachedFirst:
    """Official coverage a request reached for the first time on this oracle (a client of a
    server started with coverage on): refusal ``sites`` by id, and a count of ``code`` units
    (functions or blocks, as the oracle's coverage granularity says)."""

    sites: tuple[str, ...] = ()
    code: int = 0


@dataclass(frozen=True, slots=True)
class Reply:
    """One server reply: ``result`` when ``ok``, else the official ``error``;
    ``ms`` is the server-side time; ``reached`` the coverage it reached first (coverage on)."""

    id: int
    ok: bool
    result: Any
    error: OfficialError | None
    ms: float
    reached: ReachedFirst | None = None


class OracleError(Exception):
    """Anything that kept the official oracle from giving a verdict."""


class OracleUnavailable(OracleError):
    """Node or the pinned packages are missing; the message says what to run."""


class OracleTimeout(OracleError):
    """A request exceeded its timeout; the server was killed and will restart."""

    def __init__(self, op: str, timeout: float) -> None:
        super().__init__(f"official oracle op {op!r} timed out after {timeout:g}s; server killed")
        self.op = op
        self.timeout = timeout


class OracleCrashed(OracleError):
    """The server exited while a request was in flight; the next call restarts it."""

    def __init__(self, op: str, returncode: int | None, stderr_tail: str) -> None:
        tail = f"\n{stderr_tail}" if stderr_tail else ""
        super().__init__(f"official oracle exited (code {returncode}) during op {op!r}{tail}")
        self.op = op
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class OracleProtocolError(OracleError):
    """The server could not understand a request (a bug on the calling side)."""


class OfficialRefusal(OracleError):
    """An official function refused its input; ``error`` is the official error."""

    def __init__(self, op: str, error: OfficialError) -> None:
        super().__init__(f"official {op} refused: {error.summary}")
        self.op = op
        self.error = error
