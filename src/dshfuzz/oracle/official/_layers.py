"""The official layers the bridge runs: their canonical order, and what each one reads.

The names are :class:`dshfuzz.contracts.layers.OfficialLayer`'s, kept here as the plain
strings the bridge's JSON protocol speaks.
"""

from __future__ import annotations

from dshfuzz.contracts.layers import SERVED_LAYERS as LAYERS
from dshfuzz.contracts.layers import OfficialLayer as L

__all__ = ["EVENT_LAYERS", "FILE_LAYERS", "LAYERS", "MANIFEST_LAYER_NAMES"]

#: Layers that judge a file's bytes; on a path they read the file itself.
FILE_LAYERS: frozenset[str] = frozenset(map(str, (L.LOAD, L.LOAD_APP, L.RELEASED)))

#: Layers that judge an event list (for a file: its rows, decoded, not upgraded).
#: ``released`` judges inline events too, when a header is given.
EVENT_LAYERS: frozenset[str] = frozenset(map(str, (L.FOLD, L.SEED, L.INVARIANTS, L.METER, L.INBOX, L.WIRE)))

#: Layer names used by ``real-sessions/manifest.json`` -> ours.
MANIFEST_LAYER_NAMES: dict[str, str] = {
    ("loadDirect" if layer is L.LOAD else str(layer)): str(layer)
    for layer in (L.FOLD, L.SEED, L.INVARIANTS, L.METER, L.INBOX, L.LOAD, L.LOAD_APP, L.RELEASED)
}
