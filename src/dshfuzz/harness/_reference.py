"""The reference oracle as a judge: which official layer each failing model stands for.

Each pure-Python model of :mod:`dshfuzz.oracle` mirrors one official layer, so a
model's violation is evidence that layer refuses — independent evidence, written
to be believed, that a campaign can use with or without Node. The wire model
speaks for two moments: the request serialiser refusing to build the request
(``wire``) and the provider refusing the request it was sent (``provider``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MODEL_LAYERS", "reference_refusals"]

MODEL_LAYERS: dict[str, str] = {
    "fold_surface": "fold",
    "check_enclosure": "invariants",
    "check_meter": "meter",
    "replay_inbox": "inbox",
    "check_lifecycle": "released",
}
"""Reference model -> the official layer (registry name) it stands for."""


def reference_refusals(events: list[Any], header: Any, format_version: Any) -> frozenset[str]:
    """The layers whose reference model refuses ``events`` (format v0 logs only).

    The models judge logical events; framing and byte-level defects are the
    official loader's to judge, so a log whose header is not an object is left
    to the official layers.
    """
    if format_version != 0 or not isinstance(header, dict):
        return frozenset()
    from dshfuzz import oracle

    refusing = set()
    for name, layer in MODEL_LAYERS.items():
        model = getattr(oracle, name)
        verdict = model(events) if name == "fold_surface" else model(events, header)
        if isinstance(verdict, oracle.Violation):
            refusing.add(layer)
    if "fold" not in refusing:  # the request is built on the surface: a fold failure is the fold's alone
        wire = oracle.wire_stream(events, header)
        if isinstance(wire, oracle.Violation):
            refusing.add("wire")
        elif wire.state.issues:
            refusing.add("provider")
    return frozenset(refusing)
