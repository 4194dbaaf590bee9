"""How the token meter and the request serializer read a request/header's ``tools``.

Neither validates it. ``canonicalHeader`` (S:529-537) keeps ``tools`` only where
``tools.length > 0``, a JavaScript comparison that reads a ``length`` of anything through
``ToNumber``: ``null`` throws there (the meter folding the event, the seed, the serializer), a
non-empty string or an object with a positive ``length`` member (``"0x10"``, ``[1]``) is kept,
and ``true``, a number, ``{}`` or ``""`` is dropped as if absent. A kept non-array in the log's
last header is sent to the provider, which fails the request (the wire layer refuses; an
earlier header's tools are never sent); the meter trips on it only where its ``measure``
compares the header in force at its usage anchor (the last assistant message) with the last
one (``headerEquals``, S:548-553): once configs, adapter defaults and system agree and the two
tools lengths are strictly equal, it calls ``every`` on the anchor's tools, which a string or a
plain object has not. The same comparison throws on a config ``stop`` that is no array
(``callConfigEquals``, LLM:68-72). The released migration refuses every non-array (format 0
only; format 1's restore reads no payload). Measured against the pinned packages, format 0 and 1.
"""

from __future__ import annotations

from typing import Any

from dshfuzz.contracts.js import strict_equal, to_number, utf16_units
from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.model import MISSING

__all__ = ["ToolsReading", "header_comparison_throws", "tools_reading"]


def _js_length(value: Any) -> Any:
    """``value.length`` in JavaScript (:data:`MISSING` where it is ``undefined``); ``value`` is not null."""
    if type(value) is str:
        return len(value.encode("utf-16-le", "surrogatepass")) // 2
    if type(value) is list:
        return len(value)
    if type(value) is dict:
        return value.get("length", MISSING)
    return MISSING


def _positive_length(value: Any) -> bool:
    """``value.length > 0``: the relational comparison reads the length through ``ToNumber``
    (``"0x10"``, ``"Infinity"`` and ``[1]`` are positive, ``"1_0"`` and ``"infinity"`` are not)."""
    length = _js_length(value)
    return length is not MISSING and to_number(length) > 0


class ToolsReading:
    """What the readers make of one header's ``tools`` member (absent: :data:`MISSING`)."""

    __slots__ = ("kept", "throws")

    def __init__(self, tools: Any) -> None:
        self.throws = tools is None
        """``tools.length`` reads null: canonicalHeader throws wherever it runs."""
        self.kept: Any = MISSING if tools is MISSING or tools is None or not _positive_length(tools) else tools
        """The canonical header's ``tools``, or :data:`MISSING` where it drops the member."""

    def layers(self, version: int | None) -> tuple[set[L], bool]:
        """The layers refusing a non-array ``tools``, and whether the tools are kept: then the meter
        refuses too depending on the log's usage anchor (:func:`header_comparison_throws`), and the wire
        where the header is the log's last one (the request serializer folds the headers and sends
        the last one's tools, measured)."""
        layers = {L.RELEASED} if version == 0 else set()
        if self.throws:
            layers |= {L.METER, L.WIRE} | ({L.SEED} if version == 0 else set())
            return layers, False
        if self.kept is not MISSING:
            return layers, True  # the wire too where the header is the log's last (the walk knows which)
        return layers, False


def tools_reading(header: Any) -> ToolsReading:
    """The reading of ``header``'s tools (a header that is no object has none)."""
    return ToolsReading(header.get("tools", MISSING) if type(header) is dict else MISSING)


def _member(value: Any, key: str) -> Any:
    """``value[key]`` for a value that is not null (a member of anything but an object is undefined here)."""
    return value.get(key, MISSING) if type(value) is dict else MISSING


def _config_equal(a: Any, b: Any) -> bool | None:
    """dsh-llm's ``callConfigEquals`` (LLM:68-72) on two configs that are not null, or ``None``
    where it throws: two stops present, one null (``stop.length``), or the anchor's no array
    though the lengths agree (``stop.every``)."""
    if not all(strict_equal(_member(a, k), _member(b, k))
               for k in ("provider", "model", "reasoningEffort", "temperature", "maxTokens")):
        return False
    stop_a, stop_b = _member(a, "stop"), _member(b, "stop")
    if stop_a is MISSING or stop_b is MISSING:
        return stop_a is stop_b
    if stop_a is None or stop_b is None:
        return None
    if not strict_equal(_js_length(stop_a), _js_length(stop_b)):
        return False
    if type(stop_a) is not list:
        return None
    # ``s === b.stop?.[i]``: a string's character, an object's member (a number's is undefined)
    if type(stop_b) is str:
        units = utf16_units(stop_b)
        return all(strict_equal(x, units[i]) for i, x in enumerate(stop_a))
    return all(strict_equal(x, stop_b[i] if type(stop_b) is list else _member(stop_b, str(i)))
               for i, x in enumerate(stop_a))


def _canonical_system(header: dict[str, Any]) -> Any:
    system = header.get("system", MISSING)
    return system if system is not MISSING and system is not None and _positive_length(system) else MISSING


def _defaults(header: dict[str, Any], key: str) -> Any:
    defaults = header.get("adapterDefaults", MISSING)
    if type(defaults) is not dict or not (defaults.get("reasoningEffort") is True or defaults.get("maxTokens") is True):
        return MISSING
    return defaults.get(key, MISSING)


def header_comparison_throws(anchor: Any, last: Any) -> str | None:
    """What the meter's ``headerEquals(anchor, last)`` (S:548-553) throws on, if anything, for two
    headers whose configs are not null (a null or absent config throws earlier, on its own):
    ``"stop"`` where ``callConfigEquals`` reads a stop that is no array, ``"tools"`` where the
    headers agree up to the tools, the two tools lengths are strictly equal and the anchor's
    kept tools (:class:`ToolsReading`) are no array, so that it calls ``every`` on them. One
    header read twice (``anchor is last``) agrees with itself up to what throws."""
    if type(anchor) is not dict or type(last) is not dict:
        return None
    a_config, b_config = anchor.get("config"), last.get("config")
    if a_config is None or a_config is MISSING or b_config is None or b_config is MISSING:
        return None
    equal = _config_equal(a_config, b_config)
    if equal is None:
        return "stop"
    if not equal:
        return None
    if not all(strict_equal(_defaults(anchor, k), _defaults(last, k)) for k in ("reasoningEffort", "maxTokens")):
        return None
    if not strict_equal(_canonical_system(anchor), _canonical_system(last)):
        return None
    at, bt = tools_reading(anchor).kept, tools_reading(last).kept
    if at is MISSING or type(at) is list:
        return None
    # ``at.length === bt.length``: strict, so an object's length "2" is not a string's length 2
    return "tools" if strict_equal(_js_length(at), _js_length([] if bt is MISSING else bt)) else None
