"""The official layers: names, canonical order, and what each one judges."""

from __future__ import annotations

__all__ = ["EVENT_LAYERS", "FILE_LAYERS", "LAYERS", "MANIFEST_LAYER_NAMES"]

#: Every layer, in canonical order (the server's ``LAYER_NAMES``).
LAYERS: tuple[str, ...] = ("fold", "seed", "invariants", "load", "loadApp", "meter", "inbox", "released", "wire")

#: Layers that judge a file's bytes; on a path they read the file itself.
FILE_LAYERS: frozenset[str] = frozenset({"load", "loadApp", "released"})

#: Layers that judge an event list (for a file: its rows, decoded, not upgraded).
#: ``released`` judges inline events too, when a header is given.
EVENT_LAYERS: frozenset[str] = frozenset({"fold", "seed", "invariants", "meter", "inbox", "wire"})

#: Layer names used by ``real-sessions/manifest.json`` -> ours.
MANIFEST_LAYER_NAMES: dict[str, str] = {
    "fold": "fold",
    "seed": "seed",
    "invariants": "invariants",
    "meter": "meter",
    "inbox": "inbox",
    "loadDirect": "load",
    "loadApp": "loadApp",
    "released": "released",
}
