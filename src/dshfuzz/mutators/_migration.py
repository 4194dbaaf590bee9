"""Migration refusals: what the released catalog rejects (the v0->v1 migration of a format-0
log, or the restore of a format-1 one) in a log that every rc.8 read layer accepts (unknown
historical types are ``unknown-type-ignorable``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L

from ._base import Level, LogShape, before_every_turn, mutator
from ._draft import EventDraft, Inapplicable, copy_json
from ._envelope import time_near
from ._select import choose, data_of, message_of

_RELEASED = (L.RELEASED,)


def _between_turns(draft: EventDraft) -> list[int]:
    """Insert positions outside every turn: the start, and right after each turn/end."""
    return [0, *(i + 1 for i in draft.of_type("turn/end"))]


@mutator(
    "descriptor-version",
    level=Level.EVENT,
    expects=("G1",),
    official=_RELEASED,
    formats=frozenset({0}),
    incident="""A format-v0 subagent session whose subagent/descriptor has data.version other
    than 3 (an older descriptor generation). The official v0->v1 migration refuses it: the
    session cannot be upgraded to the current format.""",
)
def descriptor_version(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a format-v0 log. Sets a drawn subagent/descriptor's version to a drawn
    value other than 3, or inserts such a descriptor outside every turn. Deterministic given
    its draws. Its twin inserts the same descriptor with version 3."""
    version = data.draw(st.sampled_from((2, 1, 4, 0)), label="descriptor version")
    existing = draft.of_type("subagent/descriptor")
    if existing and data.draw(st.booleans(), label="existing"):
        i = choose(data, existing, "subagent/descriptor")
        if defect:
            data_of(draft.events[i])["version"] = version
        return f"seq {i} subagent/descriptor version = {version}"
    at = choose(data, _between_turns(draft), "position between turns")
    draft.insert(at, {"type": "subagent/descriptor", "seq": at, "time": time_near(draft, at),
                      "data": {"mode": "one-shot", "version": version if defect else 3, "provider": "spawn"}})
    return f"subagent/descriptor version {version} inserted at seq {at}"


def _human_user_messages(draft: EventDraft, before: int) -> list[int]:
    return [
        i for i in draft.of_type("user/message")
        if i < before and (message_of(draft.events[i]).get("source") or {}).get("kind") == "user"
    ]


_TITLE_BREAKS = ("cites assistant/message", "cites non-human user/message", "cites later seq",
                 "user title cites messages", "provider title cites nothing", "messageSeqs not an array")


@mutator(
    "title-sources",
    level=Level.EVENT,
    expects=("G3",),
    official=_RELEASED,
    formats=frozenset({0, 1}),
    incident="""A session/title whose messageSeqs break the title relations: citing an assistant
    message, a plugin-sourced user message or a later seq, a user title that cites messages, or
    a generated title that cites none. The migration of a format-0 session refuses it, and so
    does the restore of a format-1 one.""",
)
def title_sources(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a format-0 or format-1 session/title (or session/title-llm-request) with
    object data. Breaks a drawn one's messageSeqs in a drawn way (a later seq on a format-1 log
    is never a human user/message: its restore accepts that). Deterministic given its draws."""
    i = choose(data, draft.of_type("session/title", "session/title-llm-request"), "title event")
    payload = data_of(draft.events[i] if defect else copy_json(draft.events[i]))  # a twin breaks a copy
    if not payload:
        raise Inapplicable("title without object data")
    ways = list(_TITLE_BREAKS if draft.events[i]["type"] == "session/title" else _TITLE_BREAKS[:3])
    assistants = [j for j in draft.of_type("assistant/message") if j < i]
    humans = set(_human_user_messages(draft, i))
    others = [j for j in draft.of_type("user/message") if j < i and j not in humans]
    if not assistants:
        ways.remove("cites assistant/message")
    if not others:
        ways.remove("cites non-human user/message")
    v0 = draft.format_version == 0
    every_human = set(_human_user_messages(draft, len(draft.events)))
    later = [j for j in range(i + 1, len(draft.events)) if v0 or j not in every_human]
    if not later:
        ways.remove("cites later seq")
    if not humans and "user title cites messages" in ways:
        ways.remove("user title cites messages")
    how = choose(data, ways, "title break")
    if how == "cites assistant/message":
        payload["messageSeqs"] = [choose(data, assistants, "assistant/message")]
    elif how == "cites non-human user/message":
        payload["messageSeqs"] = [choose(data, others, "non-human user/message")]
    elif how == "cites later seq":
        payload["messageSeqs"] = [choose(data, later, "later seq")]
    elif how == "user title cites messages":
        payload["source"] = {"kind": "user"}
        payload["messageSeqs"] = [choose(data, sorted(humans), "human user/message")]
    elif how == "provider title cites nothing":
        payload["messageSeqs"] = []
        if type(payload.get("source")) is not dict or payload["source"].get("kind") == "user":
            payload["source"] = {"kind": "fallback"}
    else:
        # a format-1 restore indexes events with a string's characters: "0" may cite a human message
        payload["messageSeqs"] = data.draw(st.sampled_from(("0", None, {"0": 0}) if v0 else (None, {"0": 0})), label="value")
    return f"seq {i} {draft.events[i]['type']}: {how}"


_RETRIED_AND_COMPACTED = LogShape(
    turns=(2, 3),
    weights=(("full_turns", 1.0), ("retry", 0.3), *before_every_turn("compaction")),
)
"""Logs with compaction and retry records: at least two turns drawn in full (before the first
turn the surface is empty, and only a failed compaction is written there), a compaction before
every turn and retried steps more often than in the incident logs."""

_RELATION_BREAKS = ("retry step", "retry provider", "retry-started unpaired", "compaction owner", "compaction turn")


@mutator(
    "retry-compaction-relations",
    level=Level.EVENT,
    expects=("G4",),
    official=_RELEASED,
    formats=frozenset({0, 1}),
    incident="""A retry or compaction record that no longer fits its relations: an llm/retry
    naming another step or provider than the open one, an llm/retry-started pairing no
    scheduled attempt, a compaction/end naming another compaction, or a compaction/start in
    another turn. Every rc.8 read layer loads it; the released relation walk refuses it, so the
    session cannot be upgraded (format 0) or restored (format 1).""",
    logs=_RETRIED_AND_COMPACTED,
)
def retry_compaction_relations(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an llm/retry, llm/retry-started, compaction/end or compaction/start with
    object data. Breaks a drawn relation of a drawn such record; every edited member keeps a
    payload the migration accepts (a count, a non-empty string). Deterministic given its draws."""
    targets: dict[str, tuple[str, str, Callable[[Any], object]]] = {
        "retry step": ("llm/retry", "step", lambda v: v + 1 if type(v) is int else 1),
        "retry provider": ("llm/retry", "provider", lambda v: f"{v}-elsewhere"),
        "retry-started unpaired": ("llm/retry-started", "retry", lambda v: v + 1 if type(v) is int else 1),
        "compaction owner": ("compaction/end", "compactionId", lambda v: f"{v}-elsewhere"),
        "compaction turn": ("compaction/start", "turn", lambda v: v + 1 if type(v) is int else 1),
    }
    how = choose(data, [w for w in _RELATION_BREAKS if draft.of_type(targets[w][0])], "relation break")
    kind, key, edit = targets[how]
    i = choose(data, [j for j in draft.of_type(kind) if data_of(draft.events[j])], kind)
    payload = data_of(draft.events[i])
    value = edit(payload.get(key))
    if defect:
        payload[key] = value
    return f"seq {i} {kind}: {how} ({key} = {value!r})"


_SCHEMA_TARGETS = frozenset({
    "turn/start", "step/start", "step/end", "tool/call", "approval/asked", "approval/decided", "approval/policy",
    "permission/preset", "plan/mode", "sandbox/mode", "todo/write", "command/run", "command/done",
    "compaction/start", "compaction/summary", "compaction/end", "compaction/prune", "llm/retry",
    "llm/retry-started", "hook/result", "session/title", "request/context", "feedback/record",
})
"""Types whose payload only the released migration reads member by member (no message, whose shape
the rc.8 layers check, and no turn/end, whose reading T5 follows)."""


@mutator(
    "released-payload-member",
    level=Level.EVENT,
    expects=("G5",),
    official=_RELEASED,
    formats=frozenset({0}),
    incident="""A format-0 event whose data carries a member its type does not admit (a field a
    newer or patched writer added, or a type confusion). Every rc.8 read layer passes over it; the
    released v0->v1 migration checks each type's members exactly ("turn/start 0 data has unexpected
    member") and refuses the session, so it cannot be upgraded.""",
)
def released_payload_member(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a format-0 log with an event of :data:`_SCHEMA_TARGETS` whose data is an
    object. Adds a drawn member no type admits to a drawn such event. Deterministic given its draws."""
    targets = [i for i in draft.of_type(*_SCHEMA_TARGETS) if type(data_of(draft.events[i])) is dict]
    i = choose(data, targets, "event of a released-schema type with object data")
    key = data.draw(st.sampled_from(("x-dshfuzz-unknown", "extra", "_note")), label="member")
    value = data.draw(st.sampled_from((1, "x", None, True)), label="value")
    if defect:
        data_of(draft.events[i])[key] = value
    return f"seq {i} {draft.events[i]['type']}: data member {key!r} added"
