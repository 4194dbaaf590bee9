"""Which judges one judgement runs besides the checker under test (:class:`Scope`), and
which official layers judge a log of each format (:func:`official_layers_for`).

Minimising a finding judges hundreds of candidates, so the minimiser's predicate
(:meth:`Judge.still_fails`) runs only the judges the finding's signature depends on
(:func:`scope_of`): the checker always, a ``miss`` of one layer that layer's official
judge and the reference oracle only when a model stands for it, ``wrong-place`` the
reference checker, ``false-alarm`` everyone. The signature is a function of exactly
those verdicts, so the narrowed predicate agrees with a full judgement; the campaign
still judges the minimal log in full once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dshfuzz.contracts.layers import CAMPAIGN_LAYERS
from dshfuzz.contracts.layers import OfficialLayer as L

from ._classify import Disagreement
from ._reference import MODEL_LAYERS

__all__ = ["EVERY_JUDGE", "LATER_FORMAT_LAYERS", "Scope", "official_layers_for", "scope_of"]


LATER_FORMAT_LAYERS = tuple(layer for layer in CAMPAIGN_LAYERS if layer not in (L.SEED, L.LOAD))
"""The layers whose verdict on a format-1 log means something: the rc.8 ``seed`` and
``load`` refuse any version but 0 by the version alone; the released layer restores v1.
See :func:`official_layers_for` for formats 2 and 3."""


def official_layers_for(format_version: int | None) -> tuple[str, ...]:
    """The official layers whose verdict on a log of ``format_version`` means something.

    Released refuses formats 2 and 3 by the version alone (measured: "stored Session uses
    newer format v3; this build writes v1"). Format 3 changed what the rc.8 fold reads
    (catalog S-rules: ``system/message`` joins the surface, replaces name
    ``startSeq``/``endSeq``), so the fold, the invariant companion that folds, and the
    meter (it reads ``op.start``/``op.end``) refuse valid v3 logs; only the inbox still
    reads a v3 log as it is meant. The reference oracle judges every format.
    """
    if format_version in (0, None):
        return CAMPAIGN_LAYERS
    if format_version == 1:
        return LATER_FORMAT_LAYERS
    if format_version == 2:
        return tuple(layer for layer in LATER_FORMAT_LAYERS if layer != L.RELEASED)
    return (str(L.INBOX),)


_ORACLE_LAYERS = frozenset(MODEL_LAYERS.values()) | {str(L.WIRE), str(L.PROVIDER)}
"""The layers a reference model speaks for (the wire model for ``wire`` and ``provider``)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The judges one judgement runs besides the checker under test.

    ``layers`` are the official layers consulted (``None``: every campaign layer);
    ``oracle`` the reference models (without them the judgement's shape is empty);
    ``reference`` the reference checker (``wrong-place``); ``twin`` the untransformed
    twin of a metamorphic example.
    """

    layers: tuple[str, ...] | None = None
    oracle: bool = True
    reference: bool = True
    twin: bool = True


EVERY_JUDGE = Scope()
_CHECKER_ALONE = Scope(layers=(), oracle=False, reference=False, twin=False)


def scope_of(defect: Disagreement) -> Scope:
    """The judges ``defect``'s signature depends on (see the module docstring)."""
    if defect.kind in ("miss", "miss-model-only", "rule-id", "attribution", "not-implemented"):
        if defect.layer == "expected":  # the declaration travels with the example
            return _CHECKER_ALONE
        layer = str(defect.layer)
        # the reference checker reads a refusal as rules: one the checker does not claim is no miss
        return replace(
            _CHECKER_ALONE, layers=(layer,) if layer in CAMPAIGN_LAYERS else (), oracle=layer in _ORACLE_LAYERS,
            reference=True,
        )
    if defect.kind in ("crash", "timeout", "unparsable-output"):
        return _CHECKER_ALONE
    if defect.kind == "wrong-place":
        return replace(_CHECKER_ALONE, reference=True)
    if defect.kind == "wrong-layer":  # the claim is judged by the one layer it is wrong about
        layer = str(defect.layer).partition(":")[0]
        return replace(_CHECKER_ALONE, layers=(layer,) if layer in CAMPAIGN_LAYERS else ())
    if defect.kind == "silent-loss":  # the checker's count against the loader's
        return replace(_CHECKER_ALONE, layers=(str(L.LOAD),))
    if defect.kind == "metamorphic":
        return replace(_CHECKER_ALONE, twin=True)
    if defect.kind == "oracle-crash":
        return replace(_CHECKER_ALONE, oracle=True)
    return EVERY_JUDGE
