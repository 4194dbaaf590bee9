"""JSON with the semantics of JavaScript's ``JSON.parse`` and ``JSON.stringify``.

The official writer is ``JSON.stringify``; the official reader is ``JSON.parse``
over UTF-8 text decoded the way Node's ``Buffer.toString("utf8")`` does. Matching
them byte for byte is what makes our codecs lossless and our verdicts comparable.

Value mapping (JS -> Python): object -> ``dict`` (textual key order, duplicate
keys last-wins at the first key's position), array -> ``list``, string -> ``str``
(lone surrogates kept as lone code points), ``true``/``false``/``null`` ->
``bool``/``None``, number -> ``int`` for an integer literal within +-2**53, else
the ``float`` JavaScript holds (``1e400`` is ``inf`` like ``Infinity``, the token
``-0`` is ``-0.0``, ``12345678901234567890`` is ``1.2345678901234567e19``).

The one invariant the rest of dshfuzz relies on::

    dumps(loads(t)) == JSON.stringify(JSON.parse(t))   for every t JSON.parse accepts

``dumps`` therefore writes numbers as a JS double would print (``1.0`` -> ``1``,
``1e21`` -> ``1e+21``, ``-0.0`` -> ``0``, integers beyond 2**53 rounded), escapes
lone surrogates as ``\\udXXX`` and emits array-index keys (``"0"``, ``"17"``) first
in ascending order, because that is the own-property order of every JS object.
orjson does the work; a slower exact encoder runs only when orjson's output
could differ from ``JSON.stringify`` (a float, a surrogate, a huge integer or an
index key is present).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import orjson

from dshfuzz.contracts import MAX_SAFE_INTEGER, number_to_string

__all__ = [
    "JsonDecodeError",
    "decode_utf8",
    "dumpb",
    "dumps",
    "js_number",
    "loads",
    "may_hold_lossy_number",
    "orjson_is_exact",
]


class JsonDecodeError(ValueError):
    """Text that ``JSON.parse`` would refuse."""


_SAFE = MAX_SAFE_INTEGER + 1  # 2**53: the last integer a double still holds exactly
_ARRAY_INDEX_MAX = 2**32 - 2


def decode_utf8(data: bytes | bytearray | memoryview) -> str:
    """Decode like Node's ``Buffer.toString("utf8")`` (U+FFFD per maximal invalid subpart)."""
    return bytes(data).decode("utf-8", errors="replace")


def _reject_constant(name: str) -> Any:
    raise JsonDecodeError(f"{name} is not valid JSON")


_SAFE_DIGITS = len(str(_SAFE)) + 1
"""Longer integer tokens (sign included) lie beyond 2**53, where JavaScript holds the
nearest double: ``float`` rounds the text correctly, and unlike ``int`` it takes any
number of digits (``int`` refuses more than 4300, and costs quadratic time)."""


def _parse_int(text: str) -> int | float:
    if text == "-0":
        return -0.0
    if len(text) > _SAFE_DIGITS:
        return float(text)
    value = int(text)
    return value if -_SAFE <= value <= _SAFE else float(text)


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


# orjson's value differs from JSON.parse's only for the token -0 (JS keeps the sign) and
# for integer tokens beyond 2**53 (JS rounds them to a double, which needs >= 16 digits).
_MINUS_ZERO = re.compile(rb"-0(?![0-9.eE])")
_DIGIT_MASK = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16


def orjson_is_exact(data: bytes) -> bool:
    """Whether orjson parses every JSON text inside ``data`` to JSON.parse's value.

    A necessary condition checked on raw bytes (two C-speed passes), so a whole
    block of lines can be vetted at once; ``False`` may be a false alarm (the
    pattern sat inside a string) and only means "use :func:`loads`".
    """
    return (b"-0" not in data or _MINUS_ZERO.search(data) is None) and _SIXTEEN_DIGITS not in data.translate(_DIGIT_MASK)


_LOSSY_NEGATIVE_ZERO = re.compile(rb"-0(?:\.0*)?(?:[eE][+-]?\d+)?\s*(?:[,\]}]|$)", re.MULTILINE)
_LOSSY_MASK = bytes.maketrans(b"123456789E", b"000000000e")
_LOSSY_DIGIT_RUN = b"0" * 309


def may_hold_lossy_number(data: bytes) -> bool:
    """Whether ``data`` may hold a number token that ``JSON.parse`` reads as non-finite
    or negative zero, the numbers ``JSON.stringify`` cannot write back.

    A necessary condition at memchr speed, for a whole block of lines: a negative zero
    by its literal; otherwise, once every digit reads 0 (and ``+`` is dropped), a
    three-digit exponent as ``e000`` or ``e-000`` (``1e400``, ``-1e-400``) that ends what
    reads as a number token (:func:`_exponent_ends_a_number`), or a run of 309 digits (an
    integer from about 1.8e308 overflows, a fraction with 323 zeros after ``-0.``
    underflows). ``True`` may be a false alarm (the pattern sat inside a string, such as
    ``"x:1e400"``); only then is a line parsed exactly.
    """
    return screen_numbers(data)[1]


_EXPONENT = re.compile(rb"e-?000")
_TOKEN_START = frozenset(b":,[ \t\n\r")
_EXPONENTS_VETTED = 64
"""Candidates vetted one by one in a block; past them the block is a suspect as a whole."""


def _exponent_ends_a_number(masked: bytes) -> bool:
    """Whether a three-digit exponent in ``masked`` (every digit 0, ``E`` as ``e``, no ``+``)
    follows a number's mantissa where a JSON value may start: digits, optionally a ``.``
    and more digits, an optional ``-``, and before them the start of the data, ``:``,
    ``,``, ``[`` or whitespace. A JSON number token outside a string always does; hex
    digits in an id (``"4e123"``) do not, and they are most candidates in a real log."""
    for n, found in enumerate(_EXPONENT.finditer(masked)):
        if n == _EXPONENTS_VETTED:
            return True
        i = found.start() - 1
        lo = max(i - 640, -1)  # a longer mantissa holds a 309-digit run, which flags the block anyway
        j = i
        while j > lo and masked[j] == 0x30:
            j -= 1
        if j == i:
            continue  # no digit before the e: a word, not a number
        if j > lo and masked[j] == 0x2E:
            k = j - 1
            while k > lo and masked[k] == 0x30:
                k -= 1
            if k == j - 1:
                continue  # a "." with no integer digits is no JSON number
            j = k
        if j > lo and masked[j] == 0x2D:
            j -= 1
        if j == lo or masked[j] in _TOKEN_START:  # the data's start, or the walk's bound: suspect
            return True
    return False


def screen_numbers(data: bytes) -> tuple[bool, bool]:
    """``(orjson_is_exact(data), may_hold_lossy_number(data))`` from one masking pass,
    for a reader that asks both of every block it reads."""
    # both negative-zero patterns start with the literal "-0", which a substring test finds at memchr speed
    minus_zero = b"-0" in data
    lossy = minus_zero and _LOSSY_NEGATIVE_ZERO.search(data) is not None
    masked = data.translate(_LOSSY_MASK, b"+")  # a digit run a '+' splits only adds a false alarm
    exact = _SIXTEEN_DIGITS not in masked and not (minus_zero and _MINUS_ZERO.search(data) is not None)
    return exact, (lossy or _LOSSY_DIGIT_RUN in masked
                   or ((b"e000" in masked or b"e-000" in masked) and _exponent_ends_a_number(masked)))


def loads(text: str | bytes | bytearray | memoryview) -> Any:
    """Parse one JSON text as ``JSON.parse`` would; raise :class:`JsonDecodeError` otherwise.

    Bytes are decoded as Node decodes a file read as ``utf8`` (invalid sequences
    become U+FFFD); a byte-order mark is data, which ``JSON.parse`` refuses. The
    number follows the value mapping in the module docstring.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if orjson_is_exact(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    if not isinstance(text, str):
        text = decode_utf8(text)
    start = _skip_ws(text, 0)
    try:
        value, end = _decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise JsonDecodeError(f"{exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise JsonDecodeError("nesting too deep for this parser") from None
    if _skip_ws(text, end) != len(text):
        raise JsonDecodeError(f"unexpected data after JSON at position {end}")
    return value


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, i: int) -> int:
    blanks = _WS.match(text, i)  # a regex, not a loop: a line may be megabytes of blanks
    return blanks.end() if blanks is not None else i  # starred blanks match at every position


# orjson's output can differ from JSON.stringify only at a float token (it contains
# '.', 'e' or 'E') or at an object key that is an array index (JS orders those first).
# The scan skips whole strings possessively, so it runs in linear time in C.
_INDEX_KEY = rb'"(?:0|[1-9][0-9]{0,9})":'
_NEEDS_EXACT = re.compile(
    rb'(?:[^"0-9]++|(?!' + _INDEX_KEY + rb')"(?:[^"\\]++|\\.)*+"|[0-9]++(?![.eE]))*+'
    rb"(?:[0-9]++[.eE]|" + _INDEX_KEY + rb")",
    re.DOTALL,
)


def dumpb(value: Any) -> bytes:
    """``JSON.stringify(value)`` as UTF-8 bytes (see :func:`dumps`)."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)
    except (TypeError, orjson.JSONEncodeError):
        return _encode_exact(value).encode("utf-8")
    if _NEEDS_EXACT.match(out) is None:
        return out
    return _encode_exact(value).encode("utf-8")


def dumps(value: Any) -> str:
    """Serialise exactly as ``JSON.stringify(value)`` would (compact, JS key order, raw UTF-8).

    ``value`` is JSON data: dict with ``str`` keys, list or tuple, str, int, float,
    bool, None. Anything else raises ``TypeError`` (``JSON.stringify`` has no
    equivalent to follow); nesting beyond Python's recursion limit raises
    ``ValueError``. Non-finite floats become ``null`` as in JavaScript.
    """
    try:
        out = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)
    except (TypeError, orjson.JSONEncodeError):
        return _encode_exact(value)
    if _NEEDS_EXACT.match(out) is None:
        return out.decode("utf-8")
    return _encode_exact(value)


def _encode_exact(value: Any) -> str:
    parts: list[str] = []
    try:
        _emit(value, parts.append)
    except RecursionError:
        raise ValueError("value nested too deeply to serialise") from None
    return "".join(parts)


def _emit(value: Any, out: Callable[[str], object]) -> None:
    if value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, str):
        out(_js_string(value))
    elif isinstance(value, int):
        out(str(value) if -_SAFE < value < _SAFE else _js_number_of_int(value))
    elif isinstance(value, float):
        out(number_to_string(value) if math.isfinite(value) else "null")  # js_number, without its call
    elif isinstance(value, dict):
        out("{")
        first = True
        for key, item in _js_key_order(value):
            if not first:
                out(",")
            first = False
            out(_js_string(key))
            out(":")
            _emit(item, out)
        out("}")
    elif isinstance(value, (list, tuple)):
        out("[")
        for i, item in enumerate(value):
            if i:
                out(",")
            _emit(item, out)
        out("]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON data")


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) <= _ARRAY_INDEX_MAX


def _js_key_order(obj: dict[Any, Any]) -> list[tuple[str, Any]]:
    for key in obj:
        if not isinstance(key, str):
            raise TypeError(f"object key {key!r} is not a string")
    items = list(obj.items())
    indexed = [(k, v) for k, v in items if _is_array_index(k)]
    if not indexed:
        return items
    indexed.sort(key=lambda kv: int(kv[0]))
    return indexed + [(k, v) for k, v in items if not _is_array_index(k)]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_string(text: str) -> str:
    # json.dumps escapes exactly as JSON.stringify does: short escapes for \b \f \n \r \t,
    # \u00xx (lowercase) for other C0 controls, everything else raw.
    quoted = json.dumps(text, ensure_ascii=False)
    if _LONE_SURROGATE.search(quoted) is None:
        return quoted
    # A high+low pair of code points is one JS character; only lone halves are escaped.
    joined = quoted.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined)


def _js_number_of_int(value: int) -> str:
    try:
        return js_number(float(value))
    except OverflowError:
        return "null"


def js_number(x: float) -> str:
    """ECMAScript ``Number::toString(x)`` as ``JSON.stringify`` applies it (non-finite -> ``null``)."""
    return number_to_string(x) if math.isfinite(x) else "null"
