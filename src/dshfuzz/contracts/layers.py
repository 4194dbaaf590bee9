"""The official layers: the one vocabulary for the moments of the official DSH code that
can refuse a log.

Every other name for them derives from :class:`OfficialLayer`: a rule's ``refused_by``,
a mutator's ``official`` claim, the layers the Node bridge runs
(:data:`SERVED_LAYERS`) and the layers a campaign consults (:data:`CAMPAIGN_LAYERS`).
The derived tuples hold the plain strings, since they travel in JSON (requests to the
bridge, reports, corpus entries) where a layer is a name.
"""

from __future__ import annotations

import enum

__all__ = ["CAMPAIGN_LAYERS", "SERVED_LAYERS", "OfficialLayer"]


class OfficialLayer(enum.StrEnum):
    """A moment that refuses a log: an official code path of the pinned rc.8 set, or the
    provider itself. Members are in the bridge's canonical order; each one's
    :attr:`meaning` says what that layer checks.

    ``load`` and ``loadApp`` are the two official load routes, which agree on every known
    input: a rule names ``load`` for both. ``wire`` is the official request serializer and
    ``provider`` a strict OpenAI-compatible endpoint receiving that request; the bridge runs
    neither a provider nor, in a campaign, the serializer.
    """

    meaning: str

    def __new__(cls, value: str, meaning: str) -> OfficialLayer:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    FOLD = (
        "fold",
        "foldSurface: seq == index, plus the surface metadata (surfaceOp, sourceEventSeqs, replace "
        "ranges, the tool/result rewrite rule)",
    )
    SEED = (
        "seed",
        "Session.create: lossless JSON, the exact envelope, message shapes, request/header, seq == index, "
        "the fold's surface plan and the header",
    )
    INVARIANTS = (
        "invariants",
        "the dsh-session/invariant companion in a store: turn/step enclosure, tool/result after its "
        "tool/call, request/* inside a turn",
    )
    LOAD = (
        "load",
        "JsonlSessionPersistence.readPrefix (loadDirect): bytes and framing, seq gaps and torn tails, format "
        "version, legacy upgrades, message shapes, known or ignorable types, crash closers, then restore",
    )
    LOAD_APP = ("loadApp", "the same load through PersistenceCoordinator.prepareCore in a Cordis app")
    METER = (
        "meter",
        "TokenMeter.measure and its projections: step/start, step/end and assistant/message pairing, "
        "cited chunks, shadow-price claims",
    )
    INBOX = ("inbox", "the agent Inbox: replay of agent/inbox/spliced from the seed length")
    RELEASED = (
        "released",
        "the released v0 codec, the v0->v1 migration with its exact per-type payloads, and the artifact "
        "relationships (tool lifecycles, compaction, title, retry relations): the strictest statement of v0",
    )
    WIRE = ("wire", "the DeepSeek request serializer: no image content on text paths, a known reasoning effort")
    PROVIDER = ("provider", "a strict OpenAI-compatible endpoint: tool calls and tool messages pair up, in order")


SERVED_LAYERS: tuple[str, ...] = tuple(str(layer) for layer in OfficialLayer if layer is not OfficialLayer.PROVIDER)
"""Every layer the Node bridge runs, in its canonical order (the server's ``LAYER_NAMES``)."""

CAMPAIGN_LAYERS: tuple[str, ...] = tuple(
    str(layer) for layer in OfficialLayer if layer not in (OfficialLayer.LOAD_APP, OfficialLayer.WIRE, OfficialLayer.PROVIDER)
)
"""The official layers a campaign consults. ``loadApp`` is left out: it agrees with ``load``
on every known input, only slower; ``wire`` refuses nothing the others accept (it is the
serialiser, not a validator); the provider is not run."""
