"""Engine rules: turn/step structure (T1 T3 T4 M1), the token meter (T1 T2), turn/end
reasons (T5) and the inbox replay (I1).

Three official moments judge turn/step structure, each with its own state machine:
the invariant companion (SI:20-102), the token meter's ``_foldEvent`` (TM:510-572)
and the released validator's relationship walk (V01:2270). Each machine is a class of
``_turnstep`` (whose docstring says why they are a chain of classes);
:class:`TurnStepStructure` is the one walk that runs all three side by side over the raw
events. Each refusal becomes a finding (step numbering is T3; cited chunks, usage samples
and the context window the meter's projections sum are T2; every other enclosure or
pairing break is T1) whose ``refused_by`` lists exactly the moments that refuse that
event. After a refusal the walk applies the official transition anyway, so one broken
event does not hide the next. A step or message event whose turn is null or missing is
also T4 (and an append with a null turn or step M1), naming the same moments, or none
when no moment refuses it (the client renderer still loops on it).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from dshfuzz.contracts.js import (
    MAX_SAFE_INTEGER,
    is_safe_integer,
    number_key,
    strict_equal,
    to_integer_or_infinity,
)
from dshfuzz.contracts.rules import OfficialLayer, RuleId
from dshfuzz.model import MISSING, Event

from ._context import CheckContext
from ._finding import Finding
from ._lifecycle import show_value
from ._run import rule_walk
from ._turnstep import _STEP_SCOPED, _TURN_SCOPED, _get, _show, _TurnStepMachine

__all__: list[str] = []

_L = OfficialLayer
_WALKED = frozenset({"turn/start", "turn/end", "step/start", "tool/result"}) | _STEP_SCOPED | _TURN_SCOPED
# the step and message events whose turn and step must both be ints (else T4/M1 may hold)
_NULL_TURN_TYPES = frozenset({"step/start", "step/end", "assistant/message"})


@rule_walk(RuleId.T1, RuleId.T2, RuleId.T3, RuleId.T4, RuleId.M1,
           types={kind: "chunk" if kind == "assistant/chunk" else "visit" for kind in sorted(_WALKED)})
class TurnStepStructure(_TurnStepMachine):
    """T1 T2 T3 from the invariant companion, the token meter and the released walk, side
    by side; T4 and M1 on the events whose turn is null or missing, naming the moments that
    refuse those events. The machines and the ledger they refuse into are the classes this
    one extends (``_turnstep``); this class is the walk: it hands each event to them, in log
    order, with the common event of each type read inline.

    A refusal of several moments on one event is one hit naming them all, so hits wait
    until their event is behind the walk; the walk then hands them out (with the T4/M1
    verdicts of null-turn events, which name the same moments) and keeps only what is
    pending: memory stays bounded however many events a hostile log breaks. Only the
    end-of-log verdicts (usage totals, context window) name an earlier event, one of
    the at most three that :meth:`pinned` holds back.

    State: the machines' (see each part's docstring) and the position after the last head
    folded. Settling is decided at each head the walk is handed; an event of another type
    adds no hit and moves no machine, so the settled batches (and the order findings reach
    the cap in) are those of the pass that settled at every head, once :meth:`finish`
    settles first what that pass settled at the log's trailing heads."""

    __slots__ = ("events", "runs", "covered")

    def __init__(self, ctx: CheckContext) -> None:
        super().__init__(ctx)
        self.events = ctx.events
        self.runs = ctx.packed_runs[1]
        # the position after the last head folded (and its packed run)
        self.covered = 0

    def chunk(self, index: int, event: Event) -> list[Finding] | None:
        """An assistant/chunk head; returns the findings settled before it, when enough are
        pending. The common case inline: a chunk with exact ints naming the open step decides
        its packed run, whose members share its turn and step and move neither machine (they
        are delta chunks, never usage samples); otherwise the head and each member of its run
        (the run the loop is on) are folded in turn."""
        settled = self.settled(index) if self.due else None
        data = event.raw.get("data")
        if data.__class__ is dict and data.get("chunk") is None:  # data that is no object is T1's already
            settled = [*(settled or ()), self._unreadable_chunk(event, data)]
        turn, step = self.inv_turn, self.inv_step
        stop = self.runs.get(index)
        if data.__class__ is dict and turn.__class__ is int and step.__class__ is int:
            chunk_turn, chunk_step = data.get("turn"), data.get("step")
            if (chunk_turn.__class__ is int and chunk_turn == turn
                    and chunk_step.__class__ is int and chunk_step == step):
                chunk = data.get("chunk", MISSING)
                # kept as it is until a citation reads it or the step ends (:meth:`flush`)
                self.step_chunks[index] = chunk
                if stop is not None:
                    self.step_runs[index] = stop
                if chunk.__class__ is dict and chunk.get("type") == "usage":
                    self.usage_sample(index, event, chunk.get("usage", MISSING), released_reads=False)
                    self.covered = stop or index + 1
                return settled
        if self.step_chunks:
            self.flush()
        self.note_chunk(index, stop or index + 1, data if data.__class__ is dict else event.data)
        fold = self.fold
        fold(index, event)
        if stop is not None:
            events = self.events
            for member in range(index + 1, stop):
                fold(member, events[member])
        self.covered = stop or index + 1
        return settled

    def _unreadable_chunk(self, event: Event, data: Any) -> Finding:
        """T1 for an assistant/chunk whose chunk is null or missing: the token meter reads
        ``data.chunk.type`` of every chunk it folds and throws (a TypeError). No other layer reads it
        (the migration never checks a chunk's payload, the loader hands it on as it is), but a
        warning never answers for the meter's refusal: an error naming the meter."""
        shown = "null" if data.get("chunk", MISSING) is None else "missing"
        return self.ctx.finding(
            RuleId.T1, f"token meter: assistant/chunk data.chunk is {shown}, and the meter reads the chunk's type",
            event=event, refused_by=(OfficialLayer.METER,),
        )

    def visit(self, index: int, event: Event) -> list[Finding] | None:
        """Any other head the machines read (never a packed run: runs are chunks); returns the
        findings settled before it, when enough are pending."""
        settled = self.settled(index) if self.due else None
        # fold's reading of a non-chunk event, inline: one call less on every walked head
        raw = event.raw
        kind = raw["type"]
        data = raw.get("data", MISSING)
        if kind in _NULL_TURN_TYPES and not (
                type(data) is dict and type(data.get("turn")) is int and type(data.get("step")) is int):
            self.null_turn(index, event)
        self.structure(index, event, kind, data)
        self.meter(index, event, kind, data)
        self.covered = index + 1
        return settled

    def finish(self) -> Iterator[Finding]:
        """The verdicts of the citations still waiting (a position past the log names no
        event) and the batches their wait held back, what the pass settled at the first head
        after the last one the walk was handed (if any), the end-of-log verdicts, then every
        finding still pending. Pending findings are due only when no handed head followed the
        one that made them so."""
        total = len(self.events)
        if self.waiting:
            if self.step_chunks:
                self.flush()
            self.resume(total, total)
        settled = self.replay() if self.journal else []
        self.recount()
        if self.due and self.covered < total:
            settled.extend(self.settle(total, self.pinned()))
        self.context_window()
        self.usage_verdict()
        return chain(settled, self.settle(total, frozenset()))

    def settled(self, index: int) -> list[Finding] | None:
        """The findings handed out at the head ``index`` (when :attr:`due`). While a citation
        waits for a position, its message's verdict is unknown and so is the batch a
        settlement would hand out: the heads where one may be due are kept (:attr:`journal`,
        only while more than :data:`_SETTLE_AT` findings could be pending) and replayed once
        no citation waits, so the batches are those the whole-log reading hands out."""
        if self.waiting:
            if self.step_chunks:
                self.flush()
            self.resume(index, None)
            if self.waiting:
                if self.crowded(len(self.waiting)):
                    self.journal.append((index, self.pinned()))
                return None
        settled = self.replay() if self.journal else []
        if self.crowded():
            settled.extend(self.settle(index, self.pinned()))
        else:
            self.due = False
        return settled

    def fold(self, index: int, event: Event) -> None:
        """Fold one assistant/chunk into the three machines: a head :meth:`chunk` hands over, or a
        member of its packed run (a chunk too). :meth:`visit` folds every other head inline."""
        data = event.raw.get("data", MISSING)
        chunk = data.get("chunk") if type(data) is dict else None
        if type(chunk) is dict and chunk.get("type") == "usage":
            self.usage_sample(index, event, chunk.get("usage", MISSING), released_reads=False)
        self.structure(index, event, "assistant/chunk", data)
        self.meter(index, event, "assistant/chunk", data)


def _reason_problems_v0(data: Any) -> list[tuple[OfficialLayer, str]]:
    """Why the v0 loader (migrateLegacyTurnEndEvent, SP:579-659) and the released
    migration (normalizeLegacyTurnEnd + turnEndReasonValue, V01:1068/2096) refuse a turn/end."""
    out: list[tuple[OfficialLayer, str]] = []
    load = _load_turn_end_problem(data)
    if load is not None:
        out.append((_L.LOAD, load))
    released = _released_turn_end_problem(data)
    if released is not None:
        out.append((_L.RELEASED, released))
    return out


_PLAIN_END_KINDS = ("completed", "blocked", "max-tokens", "interrupted", "disposed")


def _plain_turn_end(data: Any) -> bool:
    """The common turn/end both v0 readers accept as it is: exactly ``{turn, reason}`` with a
    safe positive int turn and a reason that is only a plain ``kind``."""
    if type(data) is not dict or len(data) != 2:
        return False
    turn, reason = data.get("turn"), data.get("reason")
    return (type(turn) is int and 1 <= turn <= MAX_SAFE_INTEGER and type(reason) is dict and len(reason) == 1
            and reason.get("kind") in _PLAIN_END_KINDS)


def _only_keys(record: dict[str, Any], required: Iterable[str], optional: Iterable[str] = ()) -> bool:
    required = tuple(required)
    allowed = set(required) | set(optional)
    return all(k in allowed for k in record) and all(k in record for k in required)


def _load_turn_end_problem(data: Any) -> str | None:
    if type(data) is not dict:
        return None
    reason = data.get("reason", MISSING)
    turn = data.get("turn", MISSING)
    if not is_safe_integer(turn) or turn < 1 or not _only_keys(data, ("turn", "reason")):
        return "data must be exactly {turn, reason} with turn >= 1"
    if type(reason) is not dict or type(reason.get("kind")) is not str:
        return "data.reason.kind is missing"
    kind = reason["kind"]
    if kind in ("completed", "blocked", "max-tokens", "interrupted", "disposed"):
        return None if _only_keys(reason, ("kind",)) else f"reason {kind} carries extra members"
    if kind == "aborted":
        return None if "reason" in reason or _only_keys(reason, ("kind",)) else "reason aborted carries extra members"
    if kind == "error" and "error" not in reason:
        return _legacy_error_problem(reason, strict=False)
    return None


def _legacy_error_problem(reason: dict[str, Any], *, strict: bool) -> str | None:
    """The legacy ``error{step, failure|message}`` forms both migrations upgrade."""
    step = reason.get("step", MISSING)
    if not is_safe_integer(step) or step < 0:
        return "legacy error reason lacks a step"
    failure = reason.get("failure", MISSING)
    if type(failure) is dict and _only_keys(reason, ("kind", "step", "failure")):
        if not _only_keys(failure, ("message", "code"), ("status", "providerRetryAfterMs", "requestId")):
            return "legacy error failure has unexpected members"
        if type(failure.get("message")) is not str or type(failure.get("code")) is not str:
            return "legacy error failure lacks message or code"
        return _llm_failure_problem(failure) if strict else None
    if strict and failure is not MISSING:
        return "legacy error failure must be a JSON object"
    keys = ("kind", "step", "message", "code") if reason.get("code", MISSING) is not MISSING else ("kind", "step", "message")
    if not _only_keys(reason, keys) or type(reason.get("message")) is not str:
        return "legacy error reason lacks a message"
    code = reason.get("code", MISSING)
    if code is not MISSING and type(code) is not str:
        return "legacy error code must be a string"
    if strict:
        return _llm_failure_problem({"message": reason["message"], "code": code if type(code) is str else "UNKNOWN"})
    return None


def _released_turn_end_problem(data: Any) -> str | None:
    if type(data) is not dict:
        return "data must be a JSON object"
    if not _only_keys(data, ("turn", "reason")):
        return "data must be exactly {turn, reason}"
    turn = data["turn"]
    if not is_safe_integer(turn) or turn < 1:
        return "turn must be a positive safe integer"
    reason = data["reason"]
    if type(reason) is not dict:
        return "reason must be a JSON object"
    kind = reason.get("kind", MISSING)
    if type(kind) is not str:
        return "reason.kind must be a string"
    if kind in ("completed", "blocked", "max-tokens", "interrupted", "disposed"):
        return None if _only_keys(reason, ("kind",)) else f"reason {kind} has unexpected members"
    if kind == "aborted":
        if "reason" not in reason:
            return None if _only_keys(reason, ("kind",)) else "reason aborted has unexpected members"
        if not _only_keys(reason, ("kind", "reason")):
            return "reason aborted has unexpected members"
        cause = reason["reason"]
        if type(cause) is not dict:
            return "reason abort cause must be a JSON object"
        if cause.get("kind") == "hook":
            return None if _only_keys(cause, ("kind", "reason")) and type(cause.get("reason")) is str else "hook abort cause is malformed"
        ok = _only_keys(cause, ("kind",)) and cause.get("kind") in ("user", "parent", "disposed", "legacy")
        return None if ok else "abort cause kind must be one of user, parent, disposed, legacy"
    if kind == "error":
        if "error" not in reason:
            return _legacy_error_problem(reason, strict=True)
        if not _only_keys(reason, ("kind", "error")):
            return "reason error has unexpected members"
        return _llm_failure_problem(reason["error"])
    return None if kind else "reason.kind must be a non-empty string"


def _llm_failure_problem(failure: Any) -> str | None:
    """``llmFailureValue`` (V01:623-637)."""
    if type(failure) is not dict or not _only_keys(failure, ("message", "code"), ("status", "providerRetryAfterMs", "requestId")):
        return "error must be exactly {message, code, status?, providerRetryAfterMs?, requestId?}"
    for key in ("message", "code"):
        if type(failure[key]) is not str or not failure[key]:
            return f"error {key} must be a non-empty string"
    status = failure.get("status", MISSING)
    if status is not MISSING and (not is_safe_integer(status) or not 100 <= status <= 599):
        return "error status must be 100 through 599"
    retry = failure.get("providerRetryAfterMs", MISSING)
    if retry is not MISSING and (type(retry) not in (int, float) or not retry > 0):
        return "error providerRetryAfterMs must be positive"
    request_id = failure.get("requestId", MISSING)
    if request_id is not MISSING and (type(request_id) is not str or not request_id):
        return "error requestId must be a non-empty string"
    return None


@rule_walk(RuleId.T2, types={"compaction/summary": "arm", "compaction/prune": "arm", "user/message": "visit",
                              "assistant/message": "visit", "tool/result": "visit"})
class ShadowPriceClaims:
    """T2, the meter's other source reference (``contextPressure``, TM:112-144): a surface
    replace right after a ``compaction/summary`` or ``compaction/prune`` must replace
    exactly the range that event priced; any event in between disarms the claim.

    State: the armed claim (the position it arms and its range), and the refusals found,
    handed out in ``finish()`` so that they reach the cap after every T2 of
    :class:`TurnStepStructure`, as the pass's did (O(refusals) findings, at most one per
    pricing event)."""

    __slots__ = ("ctx", "armed_at", "claim", "refusals")

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.armed_at = -1
        self.claim: tuple[Any, Any] | None = None
        self.refusals: list[Finding] = []

    def arm(self, index: int, event: Event) -> None:
        # a claim arms only the event right after its pricing event
        previous = event.raw
        self.armed_at = index + 1
        self.claim = _claim(previous) if type(previous.get("data")) is dict else None

    def visit(self, index: int, event: Event) -> None:
        claim = self.claim
        if index != self.armed_at or claim is None:
            return
        raw = event.raw
        op = raw.get("surfaceOp", MISSING)
        if type(op) is not dict:
            return
        start, end = op.get("start", MISSING), op.get("end", MISSING)
        if not (strict_equal(claim[0], start) and strict_equal(claim[1], end)):
            self.refusals.append(self.ctx.finding(
                RuleId.T2,
                f"token surface: replace at seq {show_value(raw.get('seq', MISSING))} over range "
                f"{show_value(start)}-{show_value(end)} has no adjacent shadow price (armed claim covers "
                f"{show_value(claim[0])}-{show_value(claim[1])})",
                event=event,
                refused_by=(OfficialLayer.METER,),
                context={"claim": [show_value(claim[0]), show_value(claim[1])]},
            ))

    def finish(self) -> list[Finding]:
        return self.refusals


def _claim(summary: dict[str, Any]) -> tuple[Any, Any] | None:
    shadowed = summary["data"].get("shadowedRange", MISSING)
    if type(shadowed) is not dict:
        return None
    return shadowed.get("start", MISSING), shadowed.get("end", MISSING)


@rule_walk(RuleId.T5, types=("turn/end",))
class TurnEndReason:
    """T5: v0 follows both official turn/end readers; format 1 is read by no official layer that
    asks for a reason (the loader does not open it, and released restores it through its relation
    walk, which reads only the turn), so T5 is silent there; later formats need a non-empty
    data.reason.kind. State: none; each turn/end is judged as the walk passes it."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.v0 = ctx.version == 0
        self.v1 = ctx.version == 1

    def visit(self, index: int, event: Event) -> list[Finding] | None:
        if self.v1:
            return None
        data = event.data
        if self.v0:
            if _plain_turn_end(data):
                return None
            problems = _reason_problems_v0(data)
            if not problems:
                return None
            message = "; ".join(f"{layer}: {text}" for layer, text in problems)
            return [self.ctx.finding(RuleId.T5, f"turn/end is malformed ({message})", event=event,
                                     refused_by=tuple(layer for layer, _ in problems))]
        kind = _get(_get(data, "reason"), "kind")
        if type(kind) is not str or not kind:
            return [self.ctx.finding(RuleId.T5, "turn/end lacks data.reason.kind", event=event)]
        return None

    def finish(self) -> None:
        return None


@rule_walk(RuleId.I1, types=("agent/inbox/spliced",))
class InboxReplay:
    """I1: replay agent/inbox/spliced from header.seedLength exactly as ``Inbox`` does (AG:12-170).

    State: the two pending queues (what the inbox holds: pending messages, not the log).
    The replay starts at the seed boundary. A negative seedLength counts from the end of
    the log, whose length is known only in :meth:`finish`: the walk then keeps the splices
    (with their positions) of the last -seedLength positions read, at most -seedLength of
    them, and replays those past the boundary in :meth:`finish`, in log order, so I1's
    findings reach the cap in the same order."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        header = ctx.log.header
        seed_length = header.seedLength if header is not None else MISSING
        start = 0 if seed_length is None or seed_length is MISSING else to_integer_or_infinity(seed_length)
        # how many positions from the end the replay starts (0: it starts at ``self.start``)
        self.tail = int(-start) if -math.inf < start < 0 else 0
        # a position the log never reaches (inf) replays nothing, as the whole log's length would
        self.start = max(start, 0)
        self.kept: deque[tuple[int, Event]] = deque()
        self.queues: dict[str, list[Any]] = {"next-turn": [], "next-step": []}

    def visit(self, index: int, event: Event) -> list[Finding] | None:
        if self.tail:
            kept = self.kept
            kept.append((index, event))
            # the log holds at least the positions read so far: one this far from them is before the boundary
            boundary = len(self.ctx.events) - self.tail
            while kept and kept[0][0] < boundary:
                kept.popleft()
            return None
        if index < self.start:
            return None
        return self.replay(index, event)

    def replay(self, index: int, event: Event) -> list[Finding] | None:
        queues = self.queues
        problem = _splice(queues, event.data)
        if problem is None:
            return None
        return [self.ctx.finding(
            RuleId.I1,
            f"invalid persisted inbox splice at session seq {_show(event.seq)}: {problem}",
            event=event,
            context={"nextTurn": len(queues["next-turn"]), "nextStep": len(queues["next-step"])},
        )]

    def finish(self) -> list[Finding] | None:
        if not self.tail:
            return None
        start = len(self.ctx.events) - self.tail
        found: list[Finding] = []
        for index, event in self.kept:
            if index >= start:
                found.extend(self.replay(index, event) or ())
        return found


def _splice(queues: dict[str, list[Any]], splice: Any) -> str | None:
    """Validate and apply one splice (``Inbox.validate`` + ``apply``); on refusal leave the queues as they were."""
    if splice is None or splice is MISSING:
        return "the splice is missing"
    target = _get(splice, "target")
    queue = queues.get(target) if type(target) is str else None
    if queue is None:
        return f"target {_show(target)} is neither next-turn nor next-step"
    start = _get(splice, "start")
    removed = _get(splice, "removedCount")
    removed = 0 if removed is None or removed is MISSING else removed
    if (
        not is_safe_integer(start) or start < 0 or start > len(queue)
        or not is_safe_integer(removed) or removed < 0 or start + removed > len(queue)
    ):
        return (f"invalid inbox splice (start {_show(start)}, removedCount {_show(removed)}, "
                f"{target} holds {len(queue)})")
    inserted = _get(splice, "inserted")
    if type(inserted) is str:
        inserted = list(inserted)
    if type(inserted) is not list:
        return "inserted is not iterable"
    start, removed = int(start), int(removed)
    candidate = queue[:start] + inserted + queue[start + removed :]
    other = queues["next-step" if target == "next-turn" else "next-turn"]
    seen: set[Any] = set()
    for message in (candidate + other if target == "next-turn" else other + candidate):
        if message is None or message is MISSING:
            return "a pending message is null"
        ident = _get(message, "id") if type(message) is dict else MISSING
        key = number_key(ident)
        if key in seen:
            return f'message "{_show(ident)}" is already pending'
        seen.add(key)
    queue[start : start + removed] = inserted
    return None
