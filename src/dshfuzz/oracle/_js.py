"""The few JavaScript value semantics the reference models must reproduce.

The official layers are JavaScript run over ``JSON.parse`` output. To agree with
them on *every* log, including malformed ones, the models need JavaScript's
answers to a handful of questions that Python answers differently: is ``true``
equal to ``1`` (no), what does ``String(x)`` print, what does ``a.b`` do when
``a`` is ``null`` (throw a ``TypeError``), what is ``{...x}`` for a string. Each
helper answers one of them for JSON values plus :data:`~dshfuzz.model.MISSING`,
which stands for ``undefined``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from dshfuzz.model import MISSING

__all__ = [
    "MAX_SAFE_INTEGER",
    "JsTypeError",
    "deep_equal_json",
    "get",
    "greater_or_equal",
    "is_array_index",
    "is_number",
    "is_safe_integer",
    "is_event_seq",
    "js_add",
    "js_string",
    "js_subtract",
    "less_or_equal",
    "number_key",
    "spread",
    "strict_equal",
    "to_integer_or_infinity",
    "to_number",
    "utf16_units",
]

MAX_SAFE_INTEGER = 2**53 - 1


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


def is_event_seq(value: Any) -> bool:
    """The official ``isEventSeq``: a non-negative safe integer number."""
    return is_safe_integer(value) and value >= 0


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


def _number_string(value: float | int) -> str:
    """ECMAScript ``Number::toString`` (radix 10)."""
    if type(value) is int:
        if abs(value) <= MAX_SAFE_INTEGER:
            return str(value)
        value = float(value)
    if value == 0:
        return "0"
    if math.isnan(value):  # arithmetic on what is not a number (a JSON value never is NaN)
        return "NaN"
    if math.isinf(value):  # JSON.parse("1e400") is Infinity
        return "Infinity" if value > 0 else "-Infinity"
    if value < 0:
        return "-" + _number_string(-value)
    sign, digits, exp = Decimal(repr(value)).normalize().as_tuple()
    s = "".join(map(str, digits))
    k = len(s)
    n = exp + k  # value = 0.s * 10**n
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s
    e = n - 1
    mantissa = s if k == 1 else s[0] + "." + s[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def js_string(value: Any) -> str:
    """``String(value)``, i.e. what a template literal ``${value}`` prints."""
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if type(value) is bool:
        return "true" if value else "false"
    if is_number(value):
        return _number_string(value)
    if type(value) is str:
        return value
    if type(value) is list:
        return ",".join("" if v is None or v is MISSING else js_string(v) for v in value)
    return "[object Object]"


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
    text = js_string(value).strip(" \t\n\r\v\f\u00a0\ufeff")
    if text == "":
        return 0.0
    try:
        if text[:2].lower() in ("0x", "0o", "0b"):
            return float(int(text, 0))
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
        return a - b
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
    if type(value) is list or type(value) is str:
        if key == "length":
            return (
                len(value)
                if type(value) is list or value.isascii()
                else len(value.encode("utf-16-le", "surrogatepass")) // 2
            )
        index = key if type(key) is int else (int(key) if type(key) is str and is_array_index(key) else -1)
        items = value if type(value) is list or value.isascii() else utf16_units(value)
        return items[index] if 0 <= index < len(items) else MISSING
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
    """The official ``isDeepEqualJson`` (S:352): structural equality over JSON values."""
    if strict_equal(a, b):
        return True
    if type(a) is list or type(b) is list:
        if type(a) is not list or type(b) is not list or len(a) != len(b):
            return False
        return all(deep_equal_json(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not dict or type(b) is not dict:
        return False
    if len(a) != len(b):
        return False
    return all(key in b and deep_equal_json(a[key], b[key]) for key in a)
