"""``dshfuzz check --serve``: the built-in checker behind the ``dshfuzz-checker/1`` protocol.

The reference implementation of the persistent checker protocol
(``docs/CHECKER_PROTOCOL.md``). JSON lines on stdin and stdout: the server first sends
its handshake, ``{"protocol": "dshfuzz-checker/1", "rules": [every registry id]}``, then
answers each request ``{"id": N, "path": "..."}`` with one line ``{"id": N, "findings":
[{"rule", "severity", "seq", "causedBy", "refusedBy"}, ...], "events": N}`` (the events it
judged, a packed chunk row counting as the events it holds), checking the file with the streamed check that
``dshfuzz check`` runs. A path it cannot read, or a check that raised, is answered
``{"id": N, "error": "..."}``; a line that is no request is answered ``{"id": null,
"error": "..."}``; the server goes on either way. End of input ends it (exit 0).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import IO, Any

import orjson

__all__ = ["PROTOCOL", "answer", "handshake", "serve"]

PROTOCOL = "dshfuzz-checker/1"


def handshake() -> dict[str, Any]:
    """The server's first line: the protocol and every rule id of the registry, in catalog order."""
    from dshfuzz.checker import RULES

    return {"protocol": PROTOCOL, "rules": [str(rid) for rid in RULES]}


def _request_id(request: Any) -> Any:
    """A request's id when it is one a reply can echo (a string or an integer), else None."""
    if isinstance(request, dict):
        rid = request.get("id")
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


def answer(line: bytes, options: Any) -> dict[str, Any]:
    """The reply to one request line (never raises)."""
    try:
        request = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return {"id": None, "error": f"malformed request: not JSON ({exc})"}
    rid = _request_id(request)
    if not isinstance(request, dict):
        return {"id": None, "error": f"malformed request: a JSON {type(request).__name__}, not an object"}
    if rid is None:
        return {"id": None, "error": "malformed request: no \"id\" (a string or an integer)"}
    path = request.get("path")
    if not isinstance(path, str) or not path:
        return {"id": rid, "error": "malformed request: no \"path\" string"}
    from dshfuzz.checker import check_stream
    from dshfuzz.model import FileBytes, compression_by_name

    try:
        with FileBytes.open(path) as data:
            report = check_stream(data, compression=compression_by_name(path), path=path, options=options)
    except OSError as exc:
        return {"id": rid, "error": f"cannot read {path}: {exc.strerror or exc}"}
    except Exception as exc:  # noqa: BLE001 - the server answers every request
        frames = traceback.format_exception(exc, limit=-4)
        return {"id": rid, "error": f"internal checker error on {path}: {''.join(frames).strip()}"}
    findings = [{"rule": str(f.rule), "severity": str(f.severity), "seq": f.seq, "causedBy": f.caused_by,
                 "refusedBy": [str(layer) for layer in f.refused_by]}
                for f in report.findings]
    if report.internal_errors:
        return {"id": rid, "error": f"internal checker error on {path}: {report.internal_errors[0]}", "findings": findings}
    return {"id": rid, "findings": findings, "events": report.events}


def serve(
    stdin: IO[bytes], stdout: IO[bytes], options: Any,
    around: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> int:
    """Answer requests from ``stdin`` on ``stdout`` until end of input; returns the exit status (0).

    ``around()`` is entered for each answer: the process-wide settings of the process that
    serves are its own (``dshfuzz check --serve`` pauses the cyclic collector there), and
    the library changes none."""
    stdout.write(orjson.dumps(handshake()) + b"\n")
    stdout.flush()
    for line in iter(stdin.readline, b""):
        if not line.strip():
            continue
        with around():
            reply = answer(line, options)
        stdout.write(orjson.dumps(reply) + b"\n")
        stdout.flush()
    return 0
