"""The reference oracle as a judge: which official layer each failing model stands for.

Each pure-Python model of :mod:`dshfuzz.oracle` mirrors one official layer, so a
model's violation is evidence that layer refuses — independent evidence, written
to be believed, that a campaign can use with or without Node. The wire model
speaks for two moments: the request serialiser refusing to build the request
(``wire``) and the provider refusing the request it was sent (``provider``).
"""

from __future__ import annotations

from typing import Any

from dshfuzz.contracts.layers import OfficialLayer as L

__all__ = ["MODEL_LAYERS", "judges", "reference_refusals"]

MODEL_LAYERS: dict[str, str] = {
    "fold_surface": str(L.FOLD),
    "check_enclosure": str(L.INVARIANTS),
    "check_meter": str(L.METER),
    "replay_inbox": str(L.INBOX),
    "check_lifecycle": str(L.RELEASED),
}
"""Reference model -> the official layer (registry name) it stands for."""


def judges(header: Any, format_version: Any) -> bool:
    """Whether the reference models speak for this log: format v0, with an object header.

    The models judge logical v0 events; framing and byte-level defects, and logs of later
    formats, are the official layers' to judge."""
    return format_version == 0 and isinstance(header, dict)


def reference_refusals(events: list[Any], header: Any, format_version: Any) -> frozenset[str]:
    """The layers whose reference model refuses ``events`` (empty when :func:`judges` is false)."""
    if not judges(header, format_version):
        return frozenset()
    from dshfuzz import oracle

    refusing = set()
    for name, layer in MODEL_LAYERS.items():
        model = getattr(oracle, name)
        verdict = model(events) if name == "fold_surface" else model(events, header)
        if isinstance(verdict, oracle.Violation):
            refusing.add(layer)
    if L.FOLD not in refusing:  # the request is built on the surface: a fold failure is the fold's alone
        wire = oracle.wire_stream(events, header)
        if isinstance(wire, oracle.Violation):
            refusing.add(str(L.WIRE))
        elif wire.state.issues:
            refusing.add(str(L.PROVIDER))
    return frozenset(refusing)
