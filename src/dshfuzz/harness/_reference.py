"""The reference oracle as a judge: which official layer each failing model stands for.

Each pure-Python model of :mod:`dshfuzz.oracle` mirrors one official layer, so a
model's violation is evidence that layer refuses — independent evidence, written
to be believed, that a campaign can use with or without Node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MODEL_LAYERS", "reference_refusals"]

MODEL_LAYERS: dict[str, str] = {
    "fold_surface": "fold",
    "check_enclosure": "invariants",
    "check_meter": "meter",
    "replay_inbox": "inbox",
    "check_lifecycle": "released",
    "check_wire": "provider",
}
"""Reference model -> the official layer (registry name) it stands for."""


def _models() -> dict[str, Callable[..., Any]]:
    from dshfuzz import oracle

    return {name: getattr(oracle, name) for name in MODEL_LAYERS}


def reference_refusals(events: list[Any], header: Any, format_version: Any) -> frozenset[str]:
    """The layers whose reference model refuses ``events`` (format v0 logs only).

    The models judge logical events; framing and byte-level defects are the
    official loader's to judge, so a log whose header is not an object is left
    to the official layers.
    """
    if format_version != 0 or not isinstance(header, dict):
        return frozenset()
    from dshfuzz.oracle import Violation

    refusing = set()
    for name, model in _models().items():
        if name == "check_wire" and "fold" in refusing:
            continue  # the wire stream is built on the surface: a fold failure is the fold's, not the provider's
        verdict = model(events) if name == "fold_surface" else model(events, header)
        if isinstance(verdict, Violation):
            refusing.add(MODEL_LAYERS[name])
    return frozenset(refusing)
