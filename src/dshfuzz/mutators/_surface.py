"""Surface incidents: surfaceOp and sourceEventSeqs breakage, replace ranges and coverage,
tool/result rewrites beyond content, and broken plugin markers."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L
from dshfuzz.model import SURFACE_TYPES

from ._base import Level, LogShape, before_every_turn, mutator
from ._draft import EventDraft, Inapplicable, copy_json, type_of
from ._envelope import time_near
from ._select import choose, data_of, message_of, surface_at

_SURFACE_LAYERS = (L.FOLD, L.SEED, L.INVARIANTS, L.LOAD, L.LOAD_APP)
_ALL_SURFACE_LAYERS = (*_SURFACE_LAYERS, L.RELEASED)

_COMPACTED = LogShape(
    turns=(2, 3),
    weights=(("full_turns", 1.0), ("working_step", 1.0), *before_every_turn("compaction")),
)
"""Logs whose later turns compact what the earlier ones wrote: at least two turns drawn in full,
each leading with a working step, and a compaction before every turn (it keeps a drawn number
of nodes)."""

_PRUNED = LogShape(
    turns=(2, 3),
    weights=(("full_turns", 1.0), ("working_step", 1.0), ("tool_calls", 1.0), *before_every_turn("prune")),
)
"""Logs whose later turns prune the tool results the earlier ones got: at least two turns drawn
in full, each leading with a working step that calls tools, and a prune before every turn (and
no compaction, which would shadow the results a prune rewrites)."""
_MARKER_PREFIXES = ("retrace-", "message-editor-")


def _surface_events(draft: EventDraft, *, op: str | None = None) -> list[int]:
    out = []
    for i in draft.of_type(*SURFACE_TYPES):
        surface_op = draft.events[i].get("surfaceOp")
        if op is None and "surfaceOp" in draft.events[i]:
            out.append(i)
        elif op == "append" and surface_op == "append":
            out.append(i)
        elif op == "replace" and type(surface_op) is dict:
            out.append(i)
    return out


def shadowed_by(draft: EventDraft, index: int) -> list[int]:
    """The surface nodes the replace at ``index`` shadows (empty if its range is invalid)."""
    op = draft.events[index].get("surfaceOp")
    nodes = surface_at(draft, index)
    if type(op) is not dict or op.get("start") not in nodes or op.get("end") not in nodes:
        return []
    lo, hi = nodes.index(op["start"]), nodes.index(op["end"])
    return nodes[lo : hi + 1]


@mutator(
    "missing-surfaceOp",
    level=Level.EVENT,
    expects=("S1",),
    official=_ALL_SURFACE_LAYERS,
    incident="""A surface-eligible event (user/message, assistant/message, tool/result) written
    without its surfaceOp by a plugin that built the event by hand. The fold cannot place the
    message on the surface and the log cannot be replayed.""",
)
def missing_surface_op(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a surface event. Removes a drawn surface event's surfaceOp.
    Deterministic given its draws."""
    i = choose(data, _surface_events(draft), "surface event")
    if defect:
        del draft.events[i]["surfaceOp"]
    return f"seq {i} {draft.events[i]['type']} surfaceOp removed"


@mutator(
    "surface-metadata-on-non-surface",
    level=Level.EVENT,
    expects=("S2",),
    official=_SURFACE_LAYERS,
    incident="""A non-surface event (turn/start, tool/call, request/header ...) carrying a
    surfaceOp or sourceEventSeqs, copied over by a tool that treated every event alike. The
    surface plan rejects surface metadata outside the three surface types.""",
)
def surface_metadata_on_non_surface(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a non-surface event after seq 0. Adds a drawn surfaceOp ("append" or a
    replace of the first surface node) or ``sourceEventSeqs: [0]`` to a drawn such event.
    Deterministic given its draws."""
    candidates = [i for i in draft.objects() if i > 0 and type_of(draft.events[i]) not in SURFACE_TYPES]
    i = choose(data, candidates, "non-surface event")
    how = data.draw(st.sampled_from(("append", "replace", "sourceEventSeqs")), label="metadata")
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin edits a copy
    if how == "append":
        event["surfaceOp"] = "append"
    elif how == "replace":
        nodes = surface_at(draft, i) or [0]
        event["surfaceOp"] = {"op": "replace", "start": nodes[0], "end": nodes[0]}
    else:
        event["sourceEventSeqs"] = [0]
    return f"seq {i} {event.get('type')} given {how}"


@mutator(
    "append-provenance",
    level=Level.EVENT,
    expects=("S3",),
    official=_SURFACE_LAYERS,
    incident="""A surface append whose sourceEventSeqs break provenance: a repeated seq, its own
    or a later seq, a non-array value or a non-integer member (a plugin computing sources
    after the fact). The append is validated against an empty shadowed set and refused.""",
)
def append_provenance(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a surface append. Sets a drawn append's sourceEventSeqs to a drawn
    invalid value (duplicate member, self (not on an assistant/message: P2's), later seq, not an
    array, non-integer member).
    Deterministic given its draws."""
    i = choose(data, _surface_events(draft, op="append"), "surface append")
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin edits a copy
    seqs = event.get("sourceEventSeqs") if type(event.get("sourceEventSeqs")) is list else []
    # an assistant/message citing itself is P2's defect first (a marker's own seq in its shadowed set), not S3's
    ways = ["not an array", "non-integer member"] if type_of(event) == "assistant/message" else \
        ["self", "not an array", "non-integer member"]
    if seqs:
        ways.append("duplicate member")
    if i + 1 < len(draft.events):
        ways.append("later seq")
    how = data.draw(st.sampled_from(ways), label="break")
    if how == "duplicate member":
        event["sourceEventSeqs"] = [*seqs, seqs[0]]
    elif how == "self":
        event["sourceEventSeqs"] = [*seqs, i]
    elif how == "later seq":
        event["sourceEventSeqs"] = [*seqs, data.draw(st.integers(i + 1, len(draft.events) - 1), label="later")]
    elif how == "not an array":
        event["sourceEventSeqs"] = data.draw(st.sampled_from((str(i - 1), i - 1, {"0": 0})), label="value")
    else:
        event["sourceEventSeqs"] = [*seqs, data.draw(st.sampled_from(("0", 0.5, None)), label="member")]
    return f"seq {i} {event['type']} append sourceEventSeqs: {how}"


@mutator(
    "replace-range",
    level=Level.EVENT,
    expects=("S4",),
    official=_ALL_SURFACE_LAYERS,
    incident="""A surface replace whose operand is not exactly {op: "replace", start, end} over
    current surface nodes: an unknown op, an extra key, an endpoint that is not (or no
    longer) a surface node, or start after end. The fold cannot locate the range.""",
)
def replace_range(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a surface event. Gives a drawn surface event a drawn invalid surfaceOp.
    Deterministic given its draws."""
    i = choose(data, _surface_events(draft), "surface event")
    nodes = surface_at(draft, i)
    ways = ["unknown op string", "unknown op", "extra key", "missing end", "endpoint not a node"]
    if len(nodes) >= 2:
        ways.append("start after end")
    how = data.draw(st.sampled_from(ways), label="break")
    first = nodes[0] if nodes else 0
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin edits a copy
    if how == "unknown op string":
        event["surfaceOp"] = data.draw(st.sampled_from(("prepend", "replace", "Append", "")), label="op")
    elif how == "unknown op":
        event["surfaceOp"] = {"op": "splice", "start": first, "end": first}
    elif how == "extra key":
        event["surfaceOp"] = {"op": "replace", "start": first, "end": first, "count": 1}
    elif how == "missing end":
        event["surfaceOp"] = {"op": "replace", "start": first}
    elif how == "endpoint not a node":
        off = [s for s in range(i) if s not in nodes] + [i]
        bad = data.draw(st.sampled_from(off), label="endpoint")
        event["surfaceOp"] = {"op": "replace", "start": bad, "end": bad}
    else:
        # "after" is surface order, not seq order: a replace takes the place of the first node it shadows
        lo, hi = sorted(data.draw(st.lists(st.integers(0, len(nodes) - 1), min_size=2, max_size=2, unique=True), label="ends"))
        event["surfaceOp"] = {"op": "replace", "start": nodes[hi], "end": nodes[lo]}
    return f"seq {i} {event['type']} surfaceOp: {how} ({event['surfaceOp']!r})"


@mutator(
    "emptied-source-seqs",
    level=Level.EVENT,
    expects=("S6",),
    official=_SURFACE_LAYERS,
    incident="""2026-08-25, first repair attempt: a tool cleared sourceEventSeqs to [] on a
    surface event other than assistant/message. Only assistant/message may carry an empty
    provenance list; the session stopped loading.""",
)
def emptied_source_seqs(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a user/message or tool/result with sourceEventSeqs. Empties a drawn
    one's sourceEventSeqs. Deterministic given its draws."""
    candidates = [
        i for i in draft.of_type("user/message", "tool/result")
        if type(draft.events[i].get("sourceEventSeqs")) is list and draft.events[i]["sourceEventSeqs"]
    ]
    i = choose(data, candidates, "event with sourceEventSeqs")
    if defect:
        draft.events[i]["sourceEventSeqs"] = []
    return f"seq {i} {draft.events[i]['type']} sourceEventSeqs emptied"


@mutator(
    "partial-coverage",
    level=Level.EVENT,
    expects=("S5", "S8"),
    official=_ALL_SURFACE_LAYERS,
    incident="""A surface replace whose sourceEventSeqs omit one of the nodes it shadows (a
    compaction or marker written with a stale node list). Every shadowed node must be cited;
    missing one makes the whole-log fold, and so the load, fail.""",
    logs=_COMPACTED,
)
def partial_coverage(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a surface replace over a valid range. Drops a drawn shadowed node from
    its sourceEventSeqs; when that would empty the list, cites an earlier non-shadowed seq
    instead. Deterministic given its draws."""
    candidates = [i for i in _surface_events(draft, op="replace") if shadowed_by(draft, i)]
    i = choose(data, candidates, "surface replace")
    shadowed = shadowed_by(draft, i)
    drop = choose(data, shadowed, "shadowed node")
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin edits a copy
    seqs = event.get("sourceEventSeqs") if type(event.get("sourceEventSeqs")) is list else []
    kept = [s for s in seqs if s != drop]
    if not kept:
        kept = [next((s for s in range(i) if s not in shadowed), None)]
        if kept == [None]:
            raise Inapplicable("no earlier non-shadowed seq to cite")
    event["sourceEventSeqs"] = kept
    return f"seq {i} replace no longer cites shadowed node {drop}"


@mutator(
    "tool-result-rewrite",
    level=Level.EVENT,
    expects=("S7",),
    official=_SURFACE_LAYERS,
    incident="""A tool/result replace (a prune or a redaction) that changes more than the
    result's content: it flips isError, renames the message, re-targets the call id or adds
    metadata. Only message.content may change in a tool/result rewrite.""",
    logs=_PRUNED,
)
def tool_result_rewrite(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a tool/result replace. Changes one drawn field other than the content
    of a drawn one. Deterministic given its draws."""
    i = choose(data, [j for j in _surface_events(draft, op="replace") if draft.events[j]["type"] == "tool/result"],
               "tool/result replace")
    event = draft.events[i] if defect else copy_json(draft.events[i])  # a twin edits a copy
    message = message_of(event)
    content = message.get("content")
    blocks = [b for b in content if type(b) is dict and b.get("type") == "tool-result"] if type(content) is list else []
    if not blocks:
        raise Inapplicable("tool/result replace without a result block")
    how = data.draw(st.sampled_from(("isError", "message id", "call id", "meta")), label="change")
    if how == "isError":
        blocks[0]["isError"] = not blocks[0].get("isError", False)
    elif how == "message id":
        message["id"] = f"{message.get('id')}-rewritten"
    elif how == "call id":
        new = f"{blocks[0].get('toolCallId')}-rewritten"
        blocks[0]["toolCallId"] = new
        if type(message.get("source")) is dict:
            message["source"]["callId"] = new
    else:
        data_of(event)["meta"] = {"rewrittenBy": "dshfuzz"}
    return f"seq {i} tool/result rewrite also changes {how}"


def _model_source(draft: EventDraft) -> dict[str, Any]:
    for i in draft.of_type("assistant/message"):
        source = message_of(draft.events[i]).get("source")
        if type(source) is dict and source.get("kind") == "model":
            return {"kind": "model", "provider": source.get("provider"), "model": source.get("model")}
    return {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}


def marker(draft: EventDraft, data: Any) -> int:
    """The index of a plugin marker (an assistant/message replace): a drawn existing one, or
    one inserted at the end of the log shadowing a drawn span of the final surface. An inserted
    marker is a valid retrace edit block: a turn of its own after the last (closed) turn, whose
    one step holds the marker, with integer turn and step (a null turn is ``null-turn``'s incident,
    which the token meter and the released migration refuse on its own)."""
    existing = [i for i in _surface_events(draft, op="replace") if draft.events[i]["type"] == "assistant/message"]
    if existing and data.draw(st.booleans(), label="existing marker"):
        return choose(data, existing, "marker")
    nodes = surface_at(draft)
    if not nodes:
        raise Inapplicable("empty surface: nothing for a marker to shadow")
    starts, ends = draft.of_type("turn/start"), draft.of_type("turn/end")
    last = data_of(draft.events[starts[-1]]).get("turn") if starts else None
    if type(last) is not int or not ends or ends[-1] < starts[-1]:
        raise Inapplicable("no closed last turn for a marker's edit block to follow")
    lo = data.draw(st.integers(0, len(nodes) - 1), label="span start")
    hi = data.draw(st.integers(lo, len(nodes) - 1), label="span end")
    at, turn = len(draft.events), last + 1
    time = time_near(draft, at)
    coordinates = {"turn": turn, "step": 1}
    message = {"id": f"retrace-marker-{at + 2}", "role": "assistant", "content": [], "source": _model_source(draft)}
    draft.insert(at, {"type": "turn/start", "seq": at, "time": time, "data": {"turn": turn}})
    draft.insert(at + 1, {"type": "step/start", "seq": at + 1, "time": time, "data": dict(coordinates)})
    draft.insert(at + 2, {
        "type": "assistant/message",
        "seq": at + 2,
        "time": time,
        "data": {**coordinates, "message": message},
        "surfaceOp": {"op": "replace", "start": nodes[lo], "end": nodes[hi]},
        "sourceEventSeqs": nodes[lo : hi + 1],
    })
    draft.insert(at + 3, {"type": "step/end", "seq": at + 3, "time": time, "data": dict(coordinates)})
    draft.insert(at + 4, {"type": "turn/end", "seq": at + 4, "time": time,
                          "data": {"turn": turn, "reason": {"kind": "completed"}}})
    return at + 2


@mutator(
    "unknown-marker-prefix",
    level=Level.EVENT,
    expects=("P1",),
    incident="""The retrace plugin renamed its marker ids without registering the old prefix:
    an assistant/message replace whose message id starts with neither "retrace-" nor
    "message-editor-". The old markers' hiding semantics silently break.""",
)
def unknown_marker_prefix(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a marker, or a non-empty surface and a closed last turn (for an inserted
    marker's edit block). Gives a drawn (or inserted) marker a message id with a drawn
    unregistered prefix. Deterministic given its draws. Its twin inserts the same marker with
    its registered id."""
    i = marker(draft, data)
    message = message_of(draft.events[i] if defect else copy_json(draft.events[i]))  # a twin: a copy
    old = str(message.get("id", ""))
    rest = next((old[len(p):] for p in _MARKER_PREFIXES if old.startswith(p)), old)
    prefix = data.draw(st.sampled_from(("retrace_", "Retrace-", "rt-", "message-edit-", "editor-")), label="prefix")
    message["id"] = prefix + rest
    return f"seq {i} marker id {message['id']!r}"


@mutator(
    "self-shadowing-marker",
    level=Level.EVENT,
    expects=("P2",),
    # not released: it checks that a replace cites every node it shadows, not that it cites no
    # more (measured once the inserted marker lost its null turn, which released refused alone)
    official=_SURFACE_LAYERS,
    incident="""A retrace marker whose shadowed set (sourceEventSeqs) contains the marker's own
    seq. A marker is an event and never a surface node, so self-reference is a semantic error
    and also cites a seq that is not earlier than the event.""",
)
def self_shadowing_marker(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a marker, or a non-empty surface and a closed last turn (for an inserted
    marker's edit block). Adds a drawn (or inserted) marker's own seq to its sourceEventSeqs.
    Deterministic given its draws. Its twin inserts the same marker, shadowing only the span."""
    i = marker(draft, data)
    seqs = draft.events[i].get("sourceEventSeqs")
    if defect:
        draft.events[i]["sourceEventSeqs"] = [*(seqs if type(seqs) is list else []), i]
    return f"seq {i} marker shadows itself"
