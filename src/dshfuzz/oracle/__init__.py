"""Pure-Python reference oracle: the official DSH checks, written to be believed.

Each model takes a list of raw events (JSON values, or ``dshfuzz.model.Event``)
plus an optional header dict, and returns a :data:`Verdict`: :class:`Accepted`
with its final state, or the first :class:`Violation` (log position, stable
reason code, official message). Nothing here raises on malformed input.

- :func:`fold_surface` - the surface fold (official ``foldSurface``; ``version=3``: catalog S8's v3 fold).
- :func:`check_enclosure` - turn/step enclosure (the ``dsh-session/invariant`` companion).
- :func:`check_meter` - token-meter step pairing and cited chunks (catalog T1/T2).
- :func:`replay_inbox` - ``agent/inbox/spliced`` replay (catalog I1).
- :func:`check_lifecycle` - the released validator's relationships: tool lifecycles,
  turn/step state machine, compaction and title relations.
- :func:`wire_stream` / :func:`check_wire` - the DeepSeek wire messages with their
  source seqs and pending call ids, and the pairing defects (W1/W2, unanswered calls).

The checker is judged against these models, so it imports none of them: the checker
and this package are two readings of the official code written apart (G4, released's
relation walk, is the checker's :mod:`dshfuzz.checker._relations` and this package's
:class:`~dshfuzz.oracle._lifecycle.RelationWalk`), and a differential between them can
disagree. What they share is a vocabulary, not a verdict: the JavaScript value
semantics of :mod:`dshfuzz.contracts.js`. This package never imports
:mod:`dshfuzz.oracle.official` (the Node bridge) nor the checker. Its models are
imported on first use (PEP 562), so a process that asks for one model does not pay
for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dshfuzz._lazy import lazy_attributes

if TYPE_CHECKING:  # the names the lazy __getattr__ binds, re-exported for the type checker
    from ._enclosure import EnclosureState as EnclosureState, check_enclosure as check_enclosure
    from ._fold import Replacement as Replacement, SurfaceFold as SurfaceFold, fold_surface as fold_surface
    from ._inbox import InboxState as InboxState, replay_inbox as replay_inbox
    from ._lifecycle import LifecycleState as LifecycleState, check_lifecycle as check_lifecycle
    from ._meter import MeterState as MeterState, check_meter as check_meter
    from ._verdict import Accepted as Accepted, Verdict as Verdict, Violation as Violation
    from ._wire import HiddenCall as HiddenCall, WireIssue as WireIssue, WireMessage as WireMessage
    from ._wire import WireStream as WireStream, check_wire as check_wire, wire_stream as wire_stream

_HOME = {
    "EnclosureState": "_enclosure", "check_enclosure": "_enclosure",
    "Replacement": "_fold", "SurfaceFold": "_fold", "fold_surface": "_fold",
    "InboxState": "_inbox", "replay_inbox": "_inbox",
    "LifecycleState": "_lifecycle", "check_lifecycle": "_lifecycle",
    "MeterState": "_meter", "check_meter": "_meter",
    "Accepted": "_verdict", "Verdict": "_verdict", "Violation": "_verdict",
    "HiddenCall": "_wire", "WireIssue": "_wire", "WireMessage": "_wire", "WireStream": "_wire",
    "check_wire": "_wire", "wire_stream": "_wire",
}

__all__ = sorted(_HOME, key=lambda name: (not name[0].isupper(), name))
__getattr__ = lazy_attributes(__name__, _HOME)
