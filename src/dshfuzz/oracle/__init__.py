"""Pure-Python reference oracle: the official DSH checks, written to be believed.

Each model takes a list of raw events (JSON values, or ``dshfuzz.model.Event``)
and returns a :data:`Verdict`: :class:`Accepted` with its final state, or the
first :class:`Violation` (log position, reason code, official message).

- :func:`fold_surface` - the surface fold (official ``foldSurface``; catalog v3 variant).
- :func:`check_enclosure` - turn/step enclosure (the ``dsh-session/invariant`` companion).
- :func:`check_meter` - token-meter step pairing and cited chunks (catalog T1/T2).
- :func:`replay_inbox` - ``agent/inbox/spliced`` replay (catalog I1).
- :func:`check_lifecycle` - the released validator's turn/step, tool, compaction and title relations.
- :func:`wire_stream` / :func:`check_wire` - the DeepSeek wire messages and their tool-call pairing (W1/W2).

This package never imports :mod:`dshfuzz.oracle.official` (the Node bridge).
"""

from ._fold import Replacement, SurfaceFold, fold_surface
from ._verdict import Accepted, Verdict, Violation

__all__ = [
    "Accepted",
    "Replacement",
    "SurfaceFold",
    "Verdict",
    "Violation",
    "fold_surface",
]
