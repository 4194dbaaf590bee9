"""How the token meter and the request serializer read a request/header's ``tools``.

Neither validates it. ``canonicalHeader`` (S:529-537) keeps ``tools`` only where
``tools.length > 0``, a JavaScript comparison that reads a ``length`` of anything: ``null``
throws there (the meter folding the event, the seed, the serializer), a non-empty string or
an object with a positive ``length`` member is kept, and ``true``, a number, ``{}`` or ``""``
is dropped as if absent. A kept non-array is sent to the provider, which fails the request
(the wire layer refuses); the meter trips on it only where its ``measure`` compares the
header in force at its usage anchor (the last assistant message) with the last one
(``headerEquals``, S:548-553): once configs, adapter defaults and system agree and the two
tools lengths are equal, it calls ``every`` on the anchor's tools, which a string or a plain
object has not. The released migration refuses every non-array (format 0 only; format 1's
restore reads no payload). Measured against the pinned packages, format 0 and 1.
"""

from __future__ import annotations

import math
from typing import Any

from dshfuzz.contracts.js import strict_equal
from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.model import MISSING

__all__ = ["ToolsReading", "meter_trips_on_tools", "tools_reading"]


def _js_number(value: Any) -> float:
    """JavaScript's ``Number(value)`` for JSON values (NaN where it is not a number)."""
    if value is None:
        return 0.0
    if type(value) is bool:
        return 1.0 if value else 0.0
    if type(value) in (int, float):
        return float(value)
    if type(value) is str:
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(text) if not text.lower().lstrip("+-").startswith(("inf", "nan")) else math.nan
        except ValueError:
            return math.nan
    return math.nan


def _js_length(value: Any) -> float:
    """``value.length`` in JavaScript (NaN where it is ``undefined``); ``value`` is not null."""
    if type(value) is str:
        return float(len(value.encode("utf-16-le", "surrogatepass")) // 2)
    if type(value) is list:
        return float(len(value))
    if type(value) is dict and "length" in value:
        return _js_number(value["length"])
    return math.nan


class ToolsReading:
    """What the readers make of one header's ``tools`` member (absent: :data:`MISSING`)."""

    __slots__ = ("kept", "throws")

    def __init__(self, tools: Any) -> None:
        self.throws = tools is None
        """``tools.length`` reads null: canonicalHeader throws wherever it runs."""
        self.kept: Any = MISSING if tools is MISSING or tools is None or not _js_length(tools) > 0 else tools
        """The canonical header's ``tools``, or :data:`MISSING` where it drops the member."""

    def layers(self, version: int | None) -> tuple[set[L], bool]:
        """The layers refusing a non-array ``tools``, and whether the meter refuses too depending on
        the log's usage anchor (:func:`meter_trips_on_tools`)."""
        layers = {L.RELEASED} if version == 0 else set()
        if self.throws:
            layers |= {L.METER, L.WIRE} | ({L.SEED} if version == 0 else set())
            return layers, False
        if self.kept is not MISSING:
            layers.add(L.WIRE)
            return layers, True
        return layers, False


def tools_reading(header: Any) -> ToolsReading:
    """The reading of ``header``'s tools (a header that is no object has none)."""
    return ToolsReading(header.get("tools", MISSING) if type(header) is dict else MISSING)


def _config_equal(a: Any, b: Any) -> bool:
    """dsh-llm's ``callConfigEquals`` (LLM:68-72) on two configs that are objects."""
    if not all(strict_equal(a.get(k, MISSING), b.get(k, MISSING))
               for k in ("provider", "model", "reasoningEffort", "temperature", "maxTokens")):
        return False
    stop_a, stop_b = a.get("stop", MISSING), b.get("stop", MISSING)
    if stop_a is MISSING or stop_b is MISSING:
        return stop_a is stop_b
    if type(stop_a) is not list or type(stop_b) is not list:
        return False  # a stop that is no array: the comparison's outcome is not ours to guess
    return len(stop_a) == len(stop_b) and all(strict_equal(x, stop_b[i]) for i, x in enumerate(stop_a))


def _canonical_system(header: dict[str, Any]) -> Any:
    system = header.get("system", MISSING)
    return system if system is not MISSING and system is not None and _js_length(system) > 0 else MISSING


def _defaults(header: dict[str, Any], key: str) -> Any:
    defaults = header.get("adapterDefaults", MISSING)
    if type(defaults) is not dict or not (defaults.get("reasoningEffort") is True or defaults.get("maxTokens") is True):
        return MISSING
    return defaults.get(key, MISSING)


def meter_trips_on_tools(anchor: Any, last: Any) -> bool:
    """Whether the meter's ``headerEquals(anchor, last)`` calls ``every`` on the anchor's kept tools
    that are no array: the two headers (objects with object configs) agree up to the tools, and
    the two tools lengths are equal. One header read twice (``anchor is last``) always agrees."""
    if type(anchor) is not dict or type(last) is not dict:
        return False
    if anchor is last:
        kept = tools_reading(anchor).kept
        return kept is not MISSING and type(kept) is not list
    a_config, b_config = anchor.get("config"), last.get("config")
    if type(a_config) is not dict or type(b_config) is not dict or not _config_equal(a_config, b_config):
        return False
    if not all(strict_equal(_defaults(anchor, k), _defaults(last, k)) for k in ("reasoningEffort", "maxTokens")):
        return False
    if not strict_equal(_canonical_system(anchor), _canonical_system(last)):
        return False
    at, bt = tools_reading(anchor).kept, tools_reading(last).kept
    if at is MISSING or type(at) is list:
        return False
    return _js_length(at) == _js_length([] if bt is MISSING else bt)
