"""JSON with the semantics of JavaScript's ``JSON.parse`` and ``JSON.stringify``.

The official writer is ``JSON.stringify``; the official reader is ``JSON.parse``
over UTF-8 text. Matching them byte for byte is what makes our codecs lossless
and our verdicts comparable.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["JsonDecodeError", "loads", "dumps"]


class JsonDecodeError(ValueError):
    """Text that ``JSON.parse`` would refuse."""


def _reject_constant(name: str) -> Any:
    raise JsonDecodeError(f"{name} is not valid JSON")


_fallback = json.JSONDecoder(parse_constant=_reject_constant)


def loads(text: str | bytes) -> Any:
    """Parse one JSON text as ``JSON.parse`` would (NaN/Infinity refused, lone surrogates kept)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", errors="replace")
    try:
        value, end = _fallback.raw_decode(text, _skip_ws(text, 0))
    except json.JSONDecodeError as exc:
        raise JsonDecodeError(exc.msg + f" at position {exc.pos}") from None
    except RecursionError:
        raise JsonDecodeError("nesting too deep") from None
    if _skip_ws(text, end) != len(text):
        raise JsonDecodeError(f"unexpected data after JSON at position {end}")
    return value


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\n\r":
        i += 1
    return i


def dumps(value: Any) -> str:
    """Serialise as ``JSON.stringify`` would (compact, insertion order, UTF-8)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
