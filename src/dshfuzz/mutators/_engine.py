"""Client-engine incidents: token-meter step pairing and cross-step sources, reused step
keys, null turns, append markers, malformed turn/end, and orphan inbox splices."""

from __future__ import annotations

from typing import Any, TypeGuard

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L

from ._base import Level, mutator
from ._draft import EventDraft, Inapplicable, copy_json
from ._envelope import time_near
from ._select import choose, data_of, replace_guard, steps

_ENGINE = (L.INVARIANTS, L.METER, L.RELEASED)


def _int(value: object) -> TypeGuard[int]:
    return type(value) is int


def _appended_assistants(draft: EventDraft) -> list[int]:
    return [
        i for i in draft.of_type("assistant/message")
        if draft.events[i].get("surfaceOp") == "append"
        and _int(data_of(draft.events[i]).get("turn")) and _int(data_of(draft.events[i]).get("step"))
    ]


@mutator(
    "assistant-outside-step",
    level=Level.EVENT,
    expects=("T1",),
    official=_ENGINE,
    incident="""An assistant/message whose turn/step no longer matches the open step/start (a
    block renumbered by an editor, or a message moved between steps). The token meter's fold
    cannot pair it, so /compact and pressure measurement fail for good.""",
)
def assistant_outside_step(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an appended assistant/message with integer turn and step. Shifts a drawn
    one's step (or turn) by a drawn non-zero amount. Deterministic given its draws."""
    i = choose(data, _appended_assistants(draft), "appended assistant/message")
    key = data.draw(st.sampled_from(("step", "turn")), label="coordinate")
    delta = data.draw(st.sampled_from((1, 2, -1)), label="shift")
    payload = data_of(draft.events[i])
    if payload[key] + delta < 0:
        delta = 1
    if defect:
        payload[key] += delta
    return f"seq {i} assistant/message {key} shifted by {delta}"


@mutator(
    "cross-step-source",
    level=Level.EVENT,
    expects=("T2",),
    official=(L.METER,),
    incident="""2026-08-30: an assistant/message cited assistant/chunk events from other steps
    (7/8/9) in its sourceEventSeqs. The token meter re-assembles the cited chunks, throws
    "belongs to another step" on every append, and the host floods.""",
)
def cross_step_source(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an appended assistant/message with usage after a request/header, and an
    earlier assistant/chunk of another step. Adds a drawn such chunk's seq to its
    sourceEventSeqs (kept sorted). Deterministic given its draws."""
    headers = draft.of_type("request/header")
    chunks = draft.of_type("assistant/chunk")
    candidates = []
    for i in _appended_assistants(draft):
        payload = data_of(draft.events[i])
        if "usage" not in payload or not headers or headers[0] > i:
            continue
        foreign = [
            c for c in chunks if c < i
            and (data_of(draft.events[c]).get("turn"), data_of(draft.events[c]).get("step"))
            != (payload["turn"], payload["step"])
        ]
        if foreign:
            candidates.append((i, foreign))
    i, foreign = choose(data, candidates, "assistant/message with a foreign earlier chunk")
    chunk = choose(data, foreign, "foreign chunk")
    seqs = draft.events[i].get("sourceEventSeqs")
    if defect:
        draft.events[i]["sourceEventSeqs"] = sorted({*(seqs if type(seqs) is list else []), chunk})
    return f"seq {i} assistant/message cites chunk {chunk} of another step"


@mutator(
    "step-key-reuse",
    level=Level.EVENT,
    expects=("T3",),
    official=(L.INVARIANTS, L.RELEASED),
    incident="""2026-09-02: an edit block reused step numbers inside a turn (two step/start with
    step 95/1). The client keys its render nodes by turn:step; the collision sends React into
    an endless render loop and the session shows a white screen.""",
)
def step_key_reuse(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a turn with two complete steps. Renumbers every event of a drawn later
    step (its step/start .. step/end) to the step number of a drawn earlier step of the same
    turn. Deterministic given its draws."""
    closed = [s for s in steps(draft) if s.end is not None and _int(s.turn) and _int(s.step)]
    pairs = [(a, b) for b in closed for a in closed if a.turn == b.turn and a.start < b.start and a.step != b.step]
    earlier, later = choose(data, pairs, "two steps of one turn")
    assert later.end is not None  # drawn from the closed steps
    for i in range(later.start, later.end + 1):
        payload = data_of(draft.events[i])
        if defect and payload.get("turn") == later.turn and payload.get("step") == later.step:
            payload["step"] = earlier.step
    return f"turn {later.turn} step {later.step} (seq {later.start}) renumbered to step {earlier.step}"


@mutator(
    "null-turn",
    level=Level.EVENT,
    expects=("T4",),
    official=_ENGINE,
    incident="""2026-09-01 (D8): retrace 0.4.17 wrote edit blocks whose step/start, marker and
    step/end had turn null. The client's render state machine cannot attach them to any turn
    and loops forever on "loading history".""",
)
def null_turn(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a step/start, step/end or appended assistant/message with a turn. Sets a
    drawn one's turn to null (or removes it). Deterministic given its draws."""
    candidates = [i for i in draft.of_type("step/start", "step/end") if _int(data_of(draft.events[i]).get("turn"))]
    i = choose(data, candidates + _appended_assistants(draft), "step event or assistant/message")
    payload = data_of(draft.events[i])
    if data.draw(st.booleans(), label="remove"):
        if defect:
            del payload["turn"]
        return f"seq {i} {draft.events[i]['type']} turn removed"
    if defect:
        payload["turn"] = None
    return f"seq {i} {draft.events[i]['type']} turn = null"


@mutator(
    "null-turn-append-marker",
    level=Level.EVENT,
    expects=("M1", "T4"),
    official=(L.METER, L.RELEASED),
    incident="""Second repair attempt (rt.js:6816): a plugin marker -- an assistant/message with
    turn and step null -- was written as an append. It lands in the core assistant-step
    definition, publishes location data for turn null and crashes the client engine.""",
)
def null_turn_append_marker(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a turn/end that no later replace spans. Inserts, right after a drawn
    such turn/end, an empty assistant/message append with turn and step null and a retrace
    marker id, renumbering later events. Deterministic given its draws. Its twin inserts
    nothing: the null-turn append is the defect itself."""
    inside = replace_guard(draft)
    end = choose(data, [i for i in draft.of_type("turn/end") if not inside(i + 1)], "turn/end")
    at = end + 1
    source = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}
    if not defect:
        return f"null-turn marker appended at seq {at}"
    draft.insert(at, {
        "type": "assistant/message",
        "seq": at,
        "time": time_near(draft, at),
        "data": {"turn": None, "step": None,
                 "message": {"id": f"retrace-marker-{at}", "role": "assistant", "content": [], "source": source}},
        "surfaceOp": "append",
        "sourceEventSeqs": [],
    })
    return f"null-turn marker appended at seq {at}"


@mutator(
    "turn-end-without-reason",
    level=Level.EVENT,
    expects=("T5",),
    official=(L.LOAD, L.LOAD_APP, L.RELEASED),
    formats=frozenset({0, 2, 3}),  # no official layer reads a format-1 turn/end's reason
    incident="""2026-09-02: retrace case 3 wrote a turn/end envelope without data.reason (or a
    reason without kind). The official validation treats it as a malformed pre-react-loop
    turn/end and the session fails to load after every edit.""",
)
def turn_end_without_reason(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a turn/end. Removes a drawn turn/end's reason, or replaces it by a drawn
    kind-less object. Deterministic given its draws."""
    i = choose(data, draft.of_type("turn/end"), "turn/end")
    payload = data_of(draft.events[i] if defect else copy_json(draft.events[i]))  # a twin edits a copy
    how = data.draw(st.sampled_from(("removed", "{}", "no kind")), label="reason")
    if how == "removed":
        payload.pop("reason", None)
    elif how == "{}":
        payload["reason"] = {}
    else:
        payload["reason"] = {"message": "stopped"}
    return f"seq {i} turn/end reason {how}"


def _replay_start(draft: EventDraft) -> int | None:
    """First event index the inbox replays: ``events.slice(header.seedLength)`` (AG:12-170).

    None when seedLength is present but not an integer (its slice position is not modelled here)."""
    seed = draft.header.get("seedLength") if type(draft.header) is dict else None
    if seed is None:
        return 0
    if not _int(seed):
        return None
    count = len(draft.events)
    return max(count + seed, 0) if seed < 0 else min(seed, count)


def _pending(draft: EventDraft, until: int) -> dict[str, int]:
    """Inbox queue lengths after replaying the splices from ``header.seedLength`` to ``until``."""
    first = _replay_start(draft) or 0
    queues: dict[str, list[object]] = {"next-turn": [], "next-step": []}
    for i in draft.of_type("agent/inbox/spliced"):
        if i >= until or i < first:
            continue
        payload = data_of(draft.events[i])
        target = payload.get("target")
        queue = queues.get(target) if type(target) is str else None
        start, removed = payload.get("start"), payload.get("removedCount", 0)
        inserted = payload.get("inserted")
        inserted = inserted if type(inserted) is list else []
        if queue is not None and _int(start) and _int(removed) and start + removed <= len(queue):
            queue[start : start + removed] = inserted
    return {k: len(v) for k, v in queues.items()}


@mutator(
    "inbox-orphan-splice",
    level=Level.EVENT,
    expects=("I1",),
    official=(L.INBOX,),
    incident="""2026-08-28: a fork copied the parent's claim of a pending prompt (an
    agent/inbox/spliced with removedCount 1) past the child's seed boundary. Replayed from
    header.seedLength against the child's empty inbox, the splice removes more than is
    pending and resume is refused: "invalid persisted inbox splice".""",
)
def inbox_orphan_splice(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: an agent/inbox/spliced (one with removedCount >= 1 for the fork story).
    Either moves header.seedLength to a drawn claim (the fork boundary), or raises the
    removedCount of a drawn replayed splice (at or after header.seedLength) past its queue.
    Deterministic given its draws."""
    splices = draft.of_type("agent/inbox/spliced")
    claims = [i for i in splices if _int(data_of(draft.events[i]).get("removedCount"))
              and data_of(draft.events[i])["removedCount"] >= 1]
    if type(draft.header) is not dict:
        raise Inapplicable("header is not an object")
    if claims and data.draw(st.booleans(), label="fork boundary"):
        i = choose(data, claims, "inbox claim")
        if defect:
            draft.header["seedLength"] = i
        return f"seedLength moved to the claim at seq {i}"
    first = _replay_start(draft)
    if first is None:
        raise Inapplicable("header.seedLength is not an integer")
    # Splices a fork inherited (before seedLength) are never replayed, so no excess there is refused.
    i = choose(data, [j for j in splices if j >= first], "replayed inbox splice")
    payload = data_of(draft.events[i])
    target = payload.get("target")
    queue = _pending(draft, i).get(target) if type(target) is str else None
    start = payload.get("start")
    if queue is None or not _int(start):
        raise Inapplicable("splice with an unknown target or start")
    removed = max(queue - start, 0) + data.draw(st.integers(1, 3), label="excess")
    if defect:
        payload["removedCount"] = removed
    return f"seq {i} splice removes {removed} from a queue of {queue}"
