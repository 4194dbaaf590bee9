"""JavaScript's value semantics over ``JSON.parse`` output: the one place dshfuzz says them.

The official layers are JavaScript run over ``JSON.parse`` output. To agree with
them on *every* log, including malformed ones, the reader, the checker and the
reference models need JavaScript's answers to a handful of questions that Python
answers differently: is ``true`` equal to ``1`` (no), what does ``String(x)`` print,
what does ``a.b`` do when ``a`` is ``null`` (throw a ``TypeError``), what is
``{...x}`` for a string, which numbers are safe integers. Each helper answers one
of them for JSON values plus :data:`MISSING`, which stands for ``undefined``.

Invariant: a JSON value here is what :func:`dshfuzz.model.loads` returns (an
integer literal within +-2**53 is an ``int``, any other number the ``float``
JavaScript holds), so ``1.0`` and ``1`` are one JavaScript number and a ``bool``
is never one. A checker path too hot for a call may inline a test, but reads its
bound (:data:`MAX_SAFE_INTEGER`) from here.
"""

from __future__ import annotations

import enum
import math
from typing import Any, Final

__all__ = [
    "MAX_SAFE_INTEGER",
    "MISSING",
    "JsTypeError",
    "deep_equal_json",
    "get",
    "greater_or_equal",
    "is_array_index",
    "is_number",
    "is_safe_integer",
    "js_add",
    "js_string",
    "js_subtract",
    "less_or_equal",
    "number_key",
    "number_to_string",
    "spread",
    "strict_equal",
    "to_integer_or_infinity",
    "to_number",
    "utf16_units",
]


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing.MISSING
"""Sentinel for an absent JSON key, JavaScript's ``undefined`` (distinct from JSON ``null``,
which is ``None``)."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""``Number.MAX_SAFE_INTEGER``: every integer of at most this magnitude is exact in a double,
and the next one up (2**53) is the first that two integer literals can round to."""


class JsTypeError(Exception):
    """What a JavaScript property read on ``null``/``undefined`` (or a spread of a
    non-iterable) throws; ``str(exc)`` is V8's message."""


def is_number(value: Any) -> bool:
    """``typeof value === "number"`` for a JSON value (booleans are not numbers)."""
    return type(value) is int or type(value) is float


def is_safe_integer(value: Any) -> bool:
    """``Number.isSafeInteger(value)``."""
    if type(value) is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if type(value) is float:
        return math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER
    return False


def strict_equal(a: Any, b: Any) -> bool:
    """``a === b`` for JSON values: numbers by value, containers by identity."""
    if is_number(a):
        return is_number(b) and a == b
    if a is None or a is MISSING or type(a) is bool:
        return a is b
    if type(a) is str:
        return type(b) is str and a == b
    return a is b


def number_key(value: Any) -> Any:
    """A hashable key under which ``Set``/``Map`` (SameValueZero) identify ``value``;
    containers are identified by object identity, as in JavaScript."""
    if is_number(value):
        return ("n", float(value))
    if type(value) is str:
        return ("s", value)
    if type(value) is bool:
        return ("b", value)
    if value is None:
        return ("null",)
    if value is MISSING:
        return ("undefined",)
    return ("o", id(value))


def number_to_string(value: float | int) -> str:
    """ECMAScript ``Number::toString(value)`` (radix 10): what ``String()`` prints for a number.

    Finite numbers print as ``JSON.stringify`` writes them (the shortest digits that round-trip,
    ``1e+21``, ``1.5e-7``, ``-0`` as ``0``); ``NaN`` and the infinities print their names, which
    ``JSON.stringify`` replaces with ``null`` (:func:`dshfuzz.model.js_number`)."""
    if type(value) is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return str(value)
        value = float(value)
    if math.isnan(value):  # arithmetic on what is not a number (a JSON value never is NaN)
        return "NaN"
    if math.isinf(value):  # JSON.parse("1e400") is Infinity
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    text = repr(value)  # shortest round-tripping digits, as ECMAScript requires
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    # value = 0.DIGITS x 10**point
    point = len(whole) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * (-point) + digits
    else:
        exponent = point - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + ("e+" if exponent >= 0 else "e-") + str(abs(exponent))
    return sign + body


def js_string(value: Any) -> str:
    """``String(value)``, i.e. what a template literal ``${value}`` prints (an array nested past
    Python's recursion limit prints as ``[deeply nested array]``)."""
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if type(value) is bool:
        return "true" if value else "false"
    if is_number(value):
        return number_to_string(value)
    if type(value) is str:
        return value
    if type(value) is list:
        try:
            return ",".join("" if v is None or v is MISSING else js_string(v) for v in value)
        except RecursionError:  # V8 would throw a RangeError; a message needs text, not a crash
            return "[deeply nested array]"
    return "[object Object]"


_JS_WHITESPACE: Final = (" \t\n\r\v\f\u00a0\ufeff\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                         "\u200a\u2028\u2029\u202f\u205f\u3000")
"""What ``StringToNumber`` trims: ECMAScript's WhiteSpace (Unicode Zs, tab, VT, FF, BOM) and
LineTerminator code points (Python's ``str.strip()`` trims others too, e.g. U+001C-U+001F)."""


def to_number(value: Any) -> float:
    """``Number(value)`` for JSON values (``NaN`` where JavaScript gives ``NaN``)."""
    if is_number(value):
        return float(value)
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if value is MISSING or type(value) is dict:
        return math.nan
    text = js_string(value).strip(_JS_WHITESPACE)
    if text == "":
        return 0.0
    try:
        if text[:2].lower() in ("0x", "0o", "0b"):
            return math.nan if "_" in text else float(int(text, 0))  # Python's int reads 0x1_0, JavaScript does not
        if text.lstrip("+-") == "Infinity":
            return -math.inf if text.startswith("-") else math.inf
        if not all(c in "0123456789+-.eE" for c in text):
            return math.nan
        return float(text)
    except ValueError:
        return math.nan


def js_add(a: Any, b: Any) -> Any:
    """``a + b`` for JSON values: a string when either operand is one once objects and
    arrays are printed (``0 + "2"`` is ``"02"``), else the sum of their numbers."""
    pa = js_string(a) if type(a) in (list, dict) else a
    pb = js_string(b) if type(b) in (list, dict) else b
    if type(pa) is str or type(pb) is str:
        return js_string(pa) + js_string(pb)
    if is_number(pa) and is_number(pb):
        return pa + pb
    return to_number(pa) + to_number(pb)


def js_subtract(a: Any, b: Any) -> float | int:
    """``a - b`` for JSON values: always a number (``"02" - "2"`` is ``0``)."""
    if is_number(a) and is_number(b):
        difference: float | int = a - b
        return difference
    return to_number(a) - to_number(b)


def _relation(a: Any, b: Any) -> int | None:
    """The abstract relational comparison of two JSON values: -1, 0, 1, or None (``NaN``)."""
    pa = js_string(a) if type(a) in (list, dict) else a
    pb = js_string(b) if type(b) in (list, dict) else b
    if type(pa) is str and type(pb) is str:
        ua, ub = utf16_units(pa), utf16_units(pb)
        return (ua > ub) - (ua < ub)
    x, y = to_number(pa), to_number(pb)
    if math.isnan(x) or math.isnan(y):
        return None
    return (x > y) - (x < y)


def less_or_equal(a: Any, b: Any) -> bool:
    """``a <= b``."""
    relation = _relation(a, b)
    return relation is not None and relation <= 0


def greater_or_equal(a: Any, b: Any) -> bool:
    """``a >= b``."""
    relation = _relation(a, b)
    return relation is not None and relation >= 0


def to_integer_or_infinity(value: Any) -> float:
    """ECMAScript ``ToIntegerOrInfinity`` (used by ``Array.prototype.slice``)."""
    number = to_number(value)
    if math.isnan(number):
        return 0.0
    if math.isinf(number):
        return number
    return float(math.trunc(number))


def utf16_units(text: str) -> list[str]:
    """The UTF-16 code units of ``text`` (what JavaScript indexes strings by)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i : i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(data), 2)]


def is_array_index(key: str) -> bool:
    """Whether a property name is a canonical array index (``"0"``, ``"12"``, not ``"01"``)."""
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0")


def get(value: Any, key: str | int) -> Any:
    """``value[key]`` for a JSON value: own data properties plus ``length`` of
    strings and arrays; throws :class:`JsTypeError` on ``null``/``undefined``."""
    if value is None or value is MISSING:
        kind = "null" if value is None else "undefined"
        raise JsTypeError(f"Cannot read properties of {kind} (reading '{js_string(key)}')")
    if type(value) is dict:
        return value.get(key if type(key) is str else js_string(key), MISSING)
    if type(value) is list:
        if key == "length":
            return len(value)
        index = key if type(key) is int else (int(key) if type(key) is str and is_array_index(key) else -1)
        return value[index] if 0 <= index < len(value) else MISSING
    if type(value) is str:
        if key == "length":
            return len(value) if value.isascii() else len(value.encode("utf-16-le", "surrogatepass")) // 2
        index = key if type(key) is int else (int(key) if type(key) is str and is_array_index(key) else -1)
        units = value if value.isascii() else utf16_units(value)
        return units[index] if 0 <= index < len(units) else MISSING
    return MISSING


def spread(value: Any) -> dict[str, Any]:
    """The own enumerable properties ``{...value}`` copies."""
    if type(value) is dict:
        return dict(value)
    if type(value) is list:
        return {str(i): v for i, v in enumerate(value)}
    if type(value) is str:
        return {str(i): c for i, c in enumerate(utf16_units(value))}
    return {}


def deep_equal_json(a: Any, b: Any) -> bool:
    """The official ``isDeepEqualJson`` (S:352-362): structural equality over JSON values,
    numbers by value.

    A string, object, array, boolean or null on the left, or two ints, is decided by its own
    branch (the checker compares tool/result rewrites with it), which answers as the general
    comparison would; anything else goes there."""
    kind = a.__class__
    if kind is str:
        return b.__class__ is str and a == b
    if kind is dict:
        if b.__class__ is not dict or len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b or not deep_equal_json(v, b[k]):
                return False
        return True
    if kind is list:
        return b.__class__ is list and len(a) == len(b) and all(map(deep_equal_json, a, b))
    if kind is bool:
        return a is b
    if a is None:
        return b is None
    if kind is int and b.__class__ is int:
        same: bool = a == b
        return same
    return _scalar_deep_equal(a, b)


def _scalar_deep_equal(a: Any, b: Any) -> bool:
    """The general ``isDeepEqualJson``, every kind of value on either side."""
    if type(a) is bool or type(b) is bool:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):  # booleans went above
        return a == b
    if type(a) is list or type(b) is list:
        return type(a) is list and type(b) is list and len(a) == len(b) and all(map(deep_equal_json, a, b))
    if type(a) is dict and type(b) is dict:
        return len(a) == len(b) and all(k in b and deep_equal_json(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and a == b
