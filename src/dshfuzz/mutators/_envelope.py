"""Header and event-envelope incidents: broken header fields, bad or duplicated seqs,
replayed tails, unknown and legacy vocabulary, extra keys, broken message shapes,
and request/header or system/message field rules."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L
from dshfuzz.contracts import MAX_SAFE_INTEGER
from dshfuzz.model import ENVELOPE_KEYS, JsonValue

from ._base import Level, mutator
from ._draft import EventDraft, Inapplicable, copy_json
from ._select import choose, data_of, message_of

_LOAD = (L.LOAD, L.LOAD_APP, L.RELEASED)
_EVERY_EVENT_LAYER = (L.FOLD, L.SEED, L.INVARIANTS, L.LOAD, L.LOAD_APP, L.RELEASED)
# every layer from Session.create on: the loads and released refuse what seed does
_SEED_TO_RELEASED = (L.SEED, L.INVARIANTS, L.LOAD, L.LOAD_APP, L.RELEASED)
_ABSENT = object()

_HEADER_BREAKS: dict[str, tuple[object, ...]] = {
    "version": (4, 99, -1, 0.5, "0", None),
    "id": (42, None, ["id"], _ABSENT),
    "createdAt": (-1, 1.5, "1767000000000", None, MAX_SAFE_INTEGER + 1, _ABSENT),
    "cwd": ("relative/dir", "./project", "~/project", 42),
    "origin": ("parent", "", None, "Subagent"),
    "delegationDepth": (-1, 1.5, "0", None, _ABSENT),
    "agentPreset": (42, None, ["default"]),
    "parentSession": (42, None, {"id": "p"}),
    "seedLength": (-1, 1.5, "3", None),
}
_CATALOG_HEADER_FIELDS = ("createdAt", "cwd", "id", "origin", "version")
"""The fields H2's catalog text constrains in every format; v0's official readers type all of them."""


def time_near(draft: EventDraft, index: int) -> int:
    """A plausible time for an event inserted at ``index``: its predecessor's time."""
    for event in reversed(draft.events[:index]):
        if type(event) is dict and type(time := event.get("time")) is int:
            return time
    created = draft.header.get("createdAt") if type(draft.header) is dict else None
    return created if type(created) is int else 0


@mutator(
    "header-field",
    level=Level.EVENT,
    expects=("H2",),
    official=_LOAD,
    incident="""A session header with one field outside the contract: an unknown format
    version, a non-string id, a createdAt or delegationDepth that is not a non-negative safe
    integer, a relative cwd, an origin other than "subagent", or a mistyped optional field
    (a header hand-edited or written by a foreign tool). The session cannot be restored.""",
)
def header_field(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: the header is an object. Sets (or removes) one drawn field to a drawn
    value outside its contract (any header field in v0, whose official readers type them
    all; the catalog's fields in other formats). Deterministic given its draws."""
    if type(draft.header) is not dict:
        raise Inapplicable("header is not an object")
    fields = sorted(_HEADER_BREAKS) if draft.format_version == 0 else _CATALOG_HEADER_FIELDS
    name = data.draw(st.sampled_from(fields), label="field")
    value = data.draw(st.sampled_from(_HEADER_BREAKS[name]), label="value")
    if value is _ABSENT:
        if defect:
            draft.header.pop(name, None)
        return f"header {name} removed"
    if defect:
        draft.header[name] = value
    return f"header {name} = {value!r}"


_BAD_SEQS: tuple[object, ...] = (-1, 1.5, "seq", None, MAX_SAFE_INTEGER + 1, True, _ABSENT)


def _before_last_turn_end(draft: EventDraft) -> list[int]:
    """Indices of the events some later turn/end follows, in order (one pass: logs may be long)."""
    return list(range(max(draft.of_type("turn/end"), default=0)))


@mutator(
    "invalid-seq",
    level=Level.EVENT,
    expects=("E1",),
    official=_EVERY_EVENT_LAYER,
    incident="""An event whose seq is not a non-negative safe integer (negative, fractional, a
    string, null, missing or past 2^53-1): a foreign writer or a hand edit broke the
    envelope. Nothing can order or cite the event.""",
)
def invalid_seq(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: one event. Replaces a drawn event's seq by a drawn invalid value (or
    removes it). Deterministic given its draws."""
    i = choose(data, draft.objects(), "event object")
    value = data.draw(st.sampled_from(_BAD_SEQS), label="seq")
    if value is _ABSENT:
        if defect:
            draft.events[i].pop("seq", None)  # a read log's event may already lack it
        return f"event {i} seq removed"
    if defect:
        draft.events[i]["seq"] = value
    return f"event {i} seq = {value!r}"


@mutator(
    "seq-gap",
    level=Level.EVENT,
    expects=("E2", "C1"),
    official=_EVERY_EVENT_LAYER,
    incident="""An event is missing from the middle of the log: a second host process shared
    the session directory and its appends raced this one's, or a batch was lost. Seqs are no
    longer contiguous and the committed region has a hole, so loading throws.""",
)
def seq_gap(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an event followed by a later turn/end (so the hole lies in the committed
    region, not in a torn tail). Deletes a drawn such event without renumbering.
    Deterministic given its draws."""
    i = choose(data, _before_last_turn_end(draft), "event before a turn/end")
    if defect:
        del draft.events[i]
        draft.cuts = sorted({c - 1 if c > i else c for c in draft.cuts} - {0})
    return f"seq {i} dropped"


@mutator(
    "duplicate-seq",
    level=Level.EVENT,
    expects=("E2", "S9"),
    official=_EVERY_EVENT_LAYER,
    incident="""The same seq is written twice in a row: a retried append whose first attempt had
    in fact reached the disk. Seqs are no longer strictly increasing.""",
)
def duplicate_seq(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an event followed by a later turn/end. Writes a copy of a drawn such
    event (same seq) right after it. Deterministic given its draws."""
    i = choose(data, _before_last_turn_end(draft), "event before a turn/end")
    if defect:
        draft.events.insert(i + 1, copy_json(draft.events[i]))
        draft.cuts = [c + 1 if c > i else c for c in draft.cuts]
    return f"seq {i} written twice"


@mutator(
    "stale-cursor-replay",
    level=Level.EVENT,
    expects=("E2", "S9"),
    official=_EVERY_EVENT_LAYER,
    incident="""A second writer with a stale cursor appended its own batch reusing seqs that
    were already committed: the tail of the log is replayed with later times after the
    original. Physical order regresses and seqs repeat, the signature of two writers.""",
)
def stale_cursor_replay(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a turn/end (the replayed tail must include one, so that the loader
    sees committed rows after the regression). Appends, as a new batch, copies of the last
    k events (k drawn, reaching back to a turn/end) with their seqs and later times.
    Deterministic given its draws."""
    ends = draft.of_type("turn/end")
    if not ends:
        raise Inapplicable("no turn/end")
    n = len(draft.events)
    k = data.draw(st.integers(n - ends[-1], n), label="events replayed")
    time = time_near(draft, n)
    replay = [copy_json(e) for e in draft.events[n - k :]]
    for j, event in enumerate(replay, start=1):
        if type(event) is dict:
            event["time"] = time + j
    if defect:
        draft.events.extend(replay)
        draft.cuts.append(len(draft.events))
    return f"seqs {n - k}..{n - 1} replayed by a stale writer"


_UNKNOWN_TYPES = st.from_regex(r"x-[a-z]{1,8}/[a-z]{1,8}(-[a-z]{1,6})?", fullmatch=True)


def _unknown_event(draft: EventDraft, data: Any, ignorable: bool, defect: bool) -> str:
    at = data.draw(st.integers(0, len(draft.events)), label="insert at")
    kind = data.draw(_UNKNOWN_TYPES, label="type")
    event: dict[str, JsonValue] = {"type": kind, "seq": at, "time": time_near(draft, at), "data": {}}
    if data.draw(st.booleans(), label="payload"):
        event["data"] = {"note": data.draw(st.text(max_size=12), label="note")}
    if ignorable:
        event["ignorable"] = True
    if defect:
        draft.insert(at, event)
    return f"{kind!r}{' (ignorable)' if ignorable else ''} inserted at seq {at}"


@mutator(
    "unknown-type",
    level=Level.EVENT,
    expects=("E3", "G2"),
    official=_LOAD,
    incident="""A newer harness (or a plugin) wrote an event type outside the v0 vocabulary
    without marking it ignorable. The official read path refuses to interpret the log:
    it was likely written by a newer harness.""",
)
def unknown_type(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: none. Inserts an event of a drawn unknown type (``x-…/…``) at a drawn
    position, renumbering later events and their references. Deterministic given its draws."""
    return _unknown_event(draft, data, ignorable=False, defect=defect)


@mutator(
    "unknown-type-ignorable",
    level=Level.EVENT,
    expects=("E7", "G2"),
    official=(L.RELEASED,),
    incident="""An unknown event type marked ignorable:true is accepted by the read path but
    nothing consumes it (silent garbage, 2026-09-09), and the v0->v1 migration refuses
    unknown historical events even when they are ignorable.""",
)
def unknown_type_ignorable(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: none. As ``unknown-type``, with the envelope's ``ignorable: true``.
    Deterministic given its draws."""
    return _unknown_event(draft, data, ignorable=True, defect=defect)


@mutator(
    "legacy-vocabulary",
    level=Level.EVENT,
    expects=("E5",),
    official=_SEED_TO_RELEASED,
    incident="""A log carrying the deleted legacy request vocabulary: a request/header-delta
    event, or a request/header with reason "fallback". The host's append does not look at
    the type, so the write succeeds and the next read fails.""",
)
def legacy_vocabulary(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a request/header. Either sets a drawn request/header's reason to
    "fallback", or renames it to the legacy type request/header-delta. Deterministic given
    its draws."""
    i = choose(data, draft.of_type("request/header"), "request/header")
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin edits a copy
    if data.draw(st.booleans(), label="delta type"):
        event["type"] = "request/header-delta"
        return f"seq {i} retyped request/header-delta"
    data_of(event)["reason"] = "fallback"
    return f"seq {i} request/header reason = 'fallback'"


_EXTRA_KEYS = st.sampled_from(("extra", "meta", "origin", "_id", "writer", "turn"))


@mutator(
    "extra-envelope-key",
    level=Level.EVENT,
    expects=("E8",),
    official=_SEED_TO_RELEASED,
    incident="""An event object with a top-level key outside the seven envelope keys (type,
    seq, time, data, surfaceOp, sourceEventSeqs, ignorable), added by a plugin or a
    rewriting tool. The host's seed/restore path refuses the envelope, and in rc.8 so does
    the load (measured).""",
)
def extra_envelope_key(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: one event. Adds a drawn non-envelope key with a drawn JSON value to a
    drawn event. Deterministic given its draws."""
    i = choose(data, draft.objects(), "event object")
    key = data.draw(_EXTRA_KEYS, label="key")
    assert key not in ENVELOPE_KEYS
    value = data.draw(st.sampled_from((1, None, "x", {"a": 1}, [])), label="value")
    if defect:
        draft.events[i][key] = value
    return f"seq {i} envelope key {key!r} added"


def _message_breaks(kind: str) -> tuple[str, ...]:
    common = ("id missing", "id empty", "id not a string", "role wrong", "source missing",
              "source kind empty", "content not an array")
    if kind == "assistant/message":
        return (*common, "source not model", "provider missing", "model missing")
    if kind == "tool/result":
        return (*common, "source not tool", "callId missing", "no result block", "two result blocks",
                "toolCallId mismatch")
    return common


_ROLES = {"user/message": "user", "assistant/message": "assistant", "tool/result": "user"}


@mutator(
    "message-shape",
    level=Level.EVENT,
    expects=("E6",),
    official=_SEED_TO_RELEASED,
    incident="""A message event whose message lost its contract shape: an empty or missing
    id, the wrong role, a missing or kind-less source, content that is not an array, an
    assistant message without a model source, or a tool result whose wrapper block or
    toolCallId no longer matches its tool source (hand edits and buggy plugins).""",
)
def message_shape(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a user/message, assistant/message or tool/result. Breaks one drawn
    field of a drawn message (see ``_message_breaks``). Deterministic given its draws."""
    i = choose(data, draft.of_type(*_ROLES), "message event")
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin breaks a copy
    message = message_of(event)
    if not message:
        raise Inapplicable("message is not an object")
    how = data.draw(st.sampled_from(_message_breaks(event["type"])), label="break")
    source = message.get("source")
    source = source if type(source) is dict else {}
    blocks = message.get("content")
    blocks = blocks if type(blocks) is list else []
    if how == "id missing":
        message.pop("id", None)
    elif how == "id empty":
        message["id"] = ""
    elif how == "id not a string":
        message["id"] = 7
    elif how == "role wrong":
        wrong = [r for r in ("system", "tool", "assistant", "user") if r != _ROLES[event["type"]]]
        message["role"] = data.draw(st.sampled_from(wrong), label="role")
    elif how == "source missing":
        message.pop("source", None)
    elif how == "source kind empty":
        source["kind"] = ""
    elif how == "content not an array":
        message["content"] = data.draw(st.sampled_from(("text", None, {"type": "text"})), label="content")
    elif how == "source not model":
        message["source"] = {"kind": "user"}
    elif how in ("provider missing", "model missing"):
        source.pop(how.split()[0], None)
    elif how == "source not tool":
        message["source"] = {"kind": "user"}
    elif how == "callId missing":
        source.pop("callId", None)
    elif how == "no result block":
        message["content"] = [b for b in blocks if type(b) is dict and b.get("type") != "tool-result"]
    elif how == "two result blocks":
        message["content"] = blocks + [copy_json(b) for b in blocks if type(b) is dict and b.get("type") == "tool-result"]
    else:
        for block in blocks:
            if type(block) is dict and block.get("type") == "tool-result":
                block["toolCallId"] = f"{block.get('toolCallId')}-other"
    return f"seq {i} {event['type']}: {how}"


@mutator(
    "system-message-source",
    level=Level.EVENT,
    expects=("E9",),
    formats=frozenset({3}),
    incident="""A format-v3 system/message whose source is not a plugin (a counter-example
    wrote source.kind "user"): the host refuses it while the older contract counted zero
    violations. The pinned rc.8 layers read only v0, so no official layer is named.""",
)
def system_message_source(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a format-v3 log. Breaks a drawn system/message -- or one appended at the
    end of the log -- by giving it a drawn non-plugin source, an empty plugin or the wrong
    role. Deterministic given its draws. Its twin appends the same system/message, unbroken."""
    existing = draft.of_type("system/message")
    if existing and data.draw(st.booleans(), label="existing"):
        i = choose(data, existing, "system/message")
    else:
        i = len(draft.events)
        message = {"id": f"msg-system-{i}", "role": "system", "content": [{"type": "text", "text": "Be brief."}],
                   "source": {"kind": "plugin", "plugin": "dshfuzz"}}
        draft.insert(i, {"type": "system/message", "seq": i, "time": time_near(draft, i),
                         "data": {"message": message}, "surfaceOp": "append"})
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin breaks a copy
    message = message_of(event) or data_of(event)
    how = data.draw(st.sampled_from(("user source", "empty plugin", "role")), label="break")
    if how == "user source":
        message["source"] = {"kind": "user"}
    elif how == "empty plugin":
        message["source"] = {"kind": "plugin", "plugin": ""}
    else:
        message["role"] = "user"
    return f"seq {i} system/message: {how}"


_V0_HEADER_BREAKS = ("provider missing", "model missing", "config missing", "reasoningEffort empty",
                     "reasoningEffort not a string", "adapterDefaults without config value")
_V3_HEADER_BREAKS = ("system present", "empty tools", "empty adapterDefaults")


@mutator(
    "request-header-field",
    level=Level.EVENT,
    expects=("E10",),
    official=_SEED_TO_RELEASED,
    incident="""A request/header whose data.header breaks the field rules: no provider or
    model in its config, an empty or non-string reasoningEffort, an adapterDefaults marker
    without its config value (v0); or, in v3, a header.system (the system prompt moved to
    system/message), an empty tools list or an empty adapterDefaults.""",
)
def request_header_field(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a request/header with an object header and config. Breaks one drawn
    rule of the file's format version. Deterministic given its draws."""
    i = choose(data, draft.of_type("request/header"), "request/header")
    header = data_of(draft.events[i] if defect else copy_json(draft.events[i])).get("header")  # a twin: a copy
    config = header.get("config") if type(header) is dict else None
    if type(header) is not dict or type(config) is not dict:
        raise Inapplicable("request/header without a config object")
    breaks = _V3_HEADER_BREAKS if draft.format_version == 3 else _V0_HEADER_BREAKS
    how = data.draw(st.sampled_from(breaks), label="break")
    if how in ("provider missing", "model missing"):
        config.pop(how.split()[0], None)
    elif how == "config missing":
        del header["config"]
    elif how == "reasoningEffort empty":
        config["reasoningEffort"] = ""
    elif how == "reasoningEffort not a string":
        config["reasoningEffort"] = 3
    elif how == "adapterDefaults without config value":
        config.pop("maxTokens", None)
        header["adapterDefaults"] = {"maxTokens": True}
    elif how == "system present":
        header["system"] = "You are a test agent."
    elif how == "empty tools":
        header["tools"] = []
    else:
        header["adapterDefaults"] = {}
    return f"seq {i} request/header: {how}"
