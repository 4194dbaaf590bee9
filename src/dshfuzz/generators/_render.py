"""Render a :class:`SessionPlan` into events, deterministically, in the agent loop's write order.

Write order (reference §1.5, dsh-agent loop): follow-up ``agent/inbox/spliced``
insert -> ``turn/start`` -> the claim splice -> ``step/start`` -> ``user/message``
-> ``request/header`` + ``request/context`` (first, changed, resumed) ->
``assistant/chunk``* -> ``assistant/message`` citing its chunk seqs -> per call
``tool/call`` -> ``tool/result`` citing the call -> ``step/end`` ... ``turn/end``.
Chunk streams mimic dsh-llm-deepseek's ``translate``: block-start and deltas per
block, the block-ends, ``usage``, ``finish``.

Rendering owns every coordinate, so *any* plan renders to a log every official
layer accepts: seqs are dense, chunk citations and tool ids are recomputed,
surface replaces name exact current spans, the inbox never claims what is not
pending, titles cite human messages only, crash tails get exactly the official
``interruptedTurnClosers`` events. Plan features that cannot apply where they
stand (a prune with no tool result on the surface, a compaction of an empty
surface, steering in a turn's last step) render as nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from ..model import dumps
from ._structure import (
    CompactionPlan,
    FailedAttemptPlan,
    SessionPlan,
    SidePlan,
    StepPlan,
    ToolCallPlan,
    TurnPlan,
    Words,
)
from ._vocabulary import (
    COMMAND_NAMES,
    DIALECTS,
    FAILURE_CODES,
    FAILURE_EXTRAS,
    MODELS,
    NOT_STARTED_TEXT,
    OUTCOME_UNKNOWN_TEXT,
    PLUGIN_EVENT_TYPES,
    PROVIDER,
    TITLE_PLUGIN,
    TOOLS,
    WORDS,
    estimate_content,
)

__all__ = ["Rendered", "interrupted_turn_closers", "render"]

_CWD = "/home/dev/project"
_SYSTEM = "You are DeepSeek Harness, a coding agent working in the user's project. Use the tools; be brief."
_CREATED_AT = 1767000000000
_MIX = 0x9E3779B97F4A7C15F39CC0605CEDC835


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered plan: the physical header, unpacked events (seq == index) and batch ends."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    batches: list[int]


def render(plan: SessionPlan, *, max_events: int | None = None) -> Rendered:
    """Render ``plan``; with ``max_events``, whole trailing turns that would overflow are dropped
    (the first turn is always kept)."""
    return _Renderer(plan, max_events).run()


def _phrase(words: Words, salt: int) -> str:
    n = len(WORDS)
    return " ".join(WORDS[(words.offset + salt + 7 * i) % n] for i in range(max(1, words.length)))


def _split(text: str, pieces: int) -> list[str]:
    if not text:
        return [""]
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _uuid(salt: int, counter: int) -> uuid.UUID:
    """A UUID-shaped id for (salt, counter). Odd multiply mod 2**128 and xor-shift are bijections;
    only the six version/variant bits are overwritten, so distinct inputs collide with odds ~2**-122."""
    value = ((salt << 24) + counter + 1) * _MIX % (1 << 128)
    return uuid.UUID(int=value ^ (value >> 64), version=4)


def _failure(index: int) -> dict[str, Any]:
    """The LLM failure record of ``FAILURE_CODES[index]``, with that failure's optional members."""
    message, code = FAILURE_CODES[index]
    return {"message": message, "code": code, **FAILURE_EXTRAS[index]}


def _instant(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def interrupted_turn_closers(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """dsh-session ``interruptedTurnClosers`` (S:627-716): the synthetic events closing an open tail turn.

    Unmatched advertised calls get ``TOOL_NOT_STARTED`` (never started) or
    ``TOOL_OUTCOME_UNKNOWN`` (started) error results, then the open ``step/end``,
    then ``turn/end {interrupted}``; seqs continue, times reuse the last event's.
    """
    open_turn = open_step = None
    pending: dict[str, dict[str, Any]] = {}
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "turn/start":
            open_turn, open_step = data["turn"], None
            pending.clear()
        elif kind == "turn/end":
            open_turn = open_step = None
            pending.clear()
        elif kind == "step/start":
            open_step = data["step"]
        elif kind == "step/end":
            pending.clear()
            open_step = None
        elif kind == "assistant/message":
            for block in data["message"]["content"]:
                if block["type"] == "tool-call":
                    pending[block["id"]] = {"step": data["step"]}
        elif kind == "tool/call":
            if data["callId"] in pending:
                pending[data["callId"]]["callSeq"] = event["seq"]
        elif kind == "tool/result":
            pending.pop(data["message"]["source"]["callId"], None)
    if open_turn is None or not events:
        return []
    seq, time = events[-1]["seq"] + 1, events[-1]["time"]
    closers: list[dict[str, Any]] = []
    for call_id, entry in pending.items():
        started = "callSeq" in entry
        message = {
            "id": f"interrupted-tool-result-{call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "isError": True,
                    "content": [
                        {"type": "text", "text": OUTCOME_UNKNOWN_TEXT if started else NOT_STARTED_TEXT}
                    ],
                }
            ],
        }
        error = (
            {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
            if started
            else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
        )
        closer = {
            "type": "tool/result",
            "seq": seq,
            "time": time,
            "data": {"turn": open_turn, "step": entry["step"], "message": message, "error": error},
            "surfaceOp": "append",
        }
        if started:
            closer["sourceEventSeqs"] = [entry["callSeq"]]
        closers.append(closer)
        seq += 1
    if open_step is not None:
        closers.append(
            {"type": "step/end", "seq": seq, "time": time, "data": {"turn": open_turn, "step": open_step}}
        )
        seq += 1
    closers.append(
        {
            "type": "turn/end",
            "seq": seq,
            "time": time,
            "data": {"turn": open_turn, "reason": {"kind": "interrupted"}},
        }
    )
    return closers


class _Renderer:
    """Mutable rendering state; one instance renders one plan once."""

    def __init__(self, plan: SessionPlan, max_events: int | None) -> None:
        self.plan = plan
        self.max_events = max_events
        self.salt = plan.id_salt
        self.session_id = str(_uuid(plan.id_salt, 0))
        self.created_at = _CREATED_AT + plan.id_salt % 100_000_000
        self.events: list[dict[str, Any]] = []
        self.batches: list[int] = []
        self.time = self.created_at
        self.turn = 0
        self.step = 0
        self.open_turn: int | None = None
        self.surface: list[int] = []
        self.pending_turn: list[str] = []
        self.pending_step: list[str] = []
        self.queued: dict[str, Any] | None = None
        self.steered: dict[str, Any] | None = None
        self.counter = 0
        self.model = MODELS[0]
        self.header_logged = False
        self.resume = False
        self.titled = False
        self.goal: dict[str, Any] | None = None
        self.schedules: list[str] = []
        self.version = plan.format_version

    def _phrase(self, words: Words, salt: int = 0) -> str:
        """Deterministic text; the id counter varies it along the log."""
        return _phrase(words, self.salt + 3 * self.counter + salt)

    def _id(self, prefix: str = "") -> str:
        self.counter += 1
        return f"{prefix}{_uuid(self.salt, self.counter)}"

    def _push(self, type_: str, data: dict[str, Any], *, op: Literal["append"] | dict[str, Any] | None = None, sources: list[int] | None = None) -> dict[str, Any]:
        seq = len(self.events)
        self.time += 1 + (seq * 7919) % 37
        event: dict[str, Any] = {"type": type_, "seq": seq, "time": self.time, "data": data}
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if op is not None:
            event["surfaceOp"] = op
            if op == "append":
                self.surface.append(seq)
            else:
                start, end = self.surface.index(op["start"]), self.surface.index(op["end"])
                self.surface[start : end + 1] = [seq]
        self.events.append(event)
        return event

    def _cut(self) -> None:
        if self.events and (not self.batches or self.batches[-1] < len(self.events)):
            self.batches.append(len(self.events))

    def run(self) -> Rendered:
        plan = self.plan
        header: dict[str, Any] = {
            "type": "session",
            "version": self.version,
            "id": self.session_id,
            "createdAt": self.created_at,
        }
        if plan.cwd:
            header["cwd"] = _CWD
        depth = 0
        if plan.origin == "fork":
            header["parentSession"] = self._id()
            self._turns(plan.prefix, limit=None)
            header["seedLength"] = len(self.events)
            self._push("session/end-seed", {})
            self._cut()
            self.resume = self.header_logged
        elif plan.origin == "subagent":
            header["parentSession"] = self._id()
            header["origin"] = "subagent"
            depth = 1 + self.salt % 2
            self._descriptor()
            self._push("session/end-seed", {})
            self._push("approval/policy", {"policy": "never", "source": "delegation"})
            if self.salt % 2:
                self._push("sandbox/mode", {"mode": "read-only", "source": "delegation"})
            self._cut()
        header["delegationDepth"] = depth
        if plan.agent_preset:
            header["agentPreset"] = "reviewer"
        for side in plan.preamble:
            self._side(side)
        self._cut()
        self._turns(plan.turns, limit=self.max_events)
        self._cut()
        return Rendered(header=header, events=self.events, batches=self.batches)

    def _turns(self, turns: tuple[TurnPlan, ...], *, limit: int | None) -> None:
        for index, turn in enumerate(turns):
            following = turns[index + 1] if index + 1 < len(turns) else None
            mark = self._checkpoint()
            self._turn(turn, following if following is not None and following.queued else None)
            if limit is not None and len(self.events) > limit and index > 0:
                self._restore(mark)
                return

    def _checkpoint(self) -> tuple[Any, ...]:
        return (
            len(self.events),
            len(self.batches),
            self.time,
            self.turn,
            list(self.surface),
            list(self.pending_turn),
            self.queued,
            self.counter,
            self.model,
            self.header_logged,
            self.resume,
            self.titled,
            self.goal,
            list(self.schedules),
        )

    def _restore(self, mark: tuple[Any, ...]) -> None:
        (
            n_events,
            n_batches,
            self.time,
            self.turn,
            self.surface,
            self.pending_turn,
            self.queued,
            self.counter,
            self.model,
            self.header_logged,
            self.resume,
            self.titled,
            self.goal,
            self.schedules,
        ) = mark
        del self.events[n_events:]
        del self.batches[n_batches:]

    def _user_message(self, kind: str, words: Words) -> dict[str, Any]:
        text = self._phrase(words, self.salt)
        source = self._source(kind, self.counter + words.length)
        change = source.get("change")
        if change is not None:
            # A legacy goal message's text is its change's state, exactly (V01:688-713).
            fields = ("cleared", "clearedAt") if change["operation"] == "clear" else (
                "goal", "roundsStarted", "createdAt", "updatedAt")
            text = "<goal_state>" + dumps({k: change[k] for k in fields}) + "</goal_state>"
        return {
            "content": [{"type": "text", "text": text}],
            "source": source,
            "role": "user",
            "id": self._id(),
        }

    def _source(self, kind: str, variant: int) -> dict[str, Any]:
        sender = self._id()
        if kind == "user":
            source: dict[str, Any] = {"kind": "user"}
            if variant % 4 == 1:
                source["rpcId"] = f"rpc-{variant:04d}"
            if variant % 5 == 2:
                source["clientTimeZone"] = "Europe/Berlin"
            return source
        if kind == "plugin":
            # Every plugin form but snapshot (the runtime context's), and none (V01:843-866).
            form = ("instructions", "notice", None, "relay", "catalog", "recall")[variant % 6]
            if form == "notice":
                return {"kind": "plugin", "plugin": "@deepseek-ai/dsh-goal", "form": form, "summary": "goal round"}
            plugin = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-skills"}
            return plugin if form is None else {**plugin, "form": form}
        if kind == "coordinator" or kind == "subagent-report":
            return {"kind": kind, "form": "relay", "senderSessionId": sender}
        if kind == "subagent-settled":
            return {
                "kind": kind,
                "form": "notice",
                "summary": "Background subagent finished.",
                "senderSessionId": sender,
            }
        if kind == "agent-instructions":
            action = ("set", "replace", "remove")[variant % 3]
            change = {"action": action, "scope": "project", "path": f"{_CWD}/AGENTS.md"}
            if variant % 2 and action != "remove":
                change["digest"] = "sha256:" + sender[:8]
            source = {"kind": kind, "form": "instructions", "changes": [change]}
            if variant % 3 == 0:
                source["baseline"] = True
            elif variant % 3 == 1:
                source["baselineIdentity"] = "sha256:" + sender[-8:]
            return source
        if kind == "skill-invocation":
            return {"kind": kind, "name": "review", "form": "instructions"}
        if kind == "skill-catalog":
            catalog: dict[str, Any] = {
                "kind": kind,
                "form": "catalog",
                "entries": [{"name": "review", "description": "Review a diff."}],
            }
            if variant % 2:
                catalog["update"] = True
            return catalog
        if kind == "goal":
            goal_id = f"goal-{self.session_id[:8]}"
            if self.version == 0 and variant % 4 == 3:
                # The legacy goal message (round 0, carrying its change), which released v0 still reads.
                goal: dict[str, Any] = {"id": goal_id, "revision": 1, "objective": "Finish the task",
                                        "phase": "active", "maxGoalRounds": 3}
                goal_change: dict[str, Any] = {"kind": "goal/change", "version": 1, "operation": "create", "goal": goal,
                          "roundsStarted": 0, "createdAt": self.created_at, "updatedAt": self.created_at}
                return {"kind": kind, "goalId": goal_id, "revision": 1, "round": 0, "change": goal_change}
            return {"kind": kind, "goalId": goal_id, "revision": 1, "round": 1 + variant % 3}
        if kind == "team-message":
            return {
                "kind": kind,
                "teamId": "team-1",
                "messageId": sender,
                "senderId": "lead",
                "senderName": "Lead",
            }
        if kind == "session-reference":
            reference = {
                "sessionId": sender,
                "label": "earlier session",
                "capturedThroughSeq": 12,
                "compacted": False,
                "originalMessages": 4,
                "retainedMessages": 4,
                "omittedMessages": 0,
                "omittedBytes": 0,
                "truncated": False,
                "inputIndex": 0,
            }
            if self.version >= 1 and variant % 2:
                reference["capturedFormatVersion"] = 1  # a v1-only member (V01:895)
            references = [reference]
            if variant % 3 == 2:  # a second, truncated recall: counts consistent, ids unique, indices in order
                references.append({**reference, "sessionId": sender + "-2", "compacted": True,
                                   "originalMessages": 9, "retainedMessages": 5, "omittedMessages": 4,
                                   "omittedBytes": 2048, "truncated": True, "inputIndex": 1})
            return {"kind": kind, "form": "recall", "version": 1, "references": references}
        if kind == "webhook":
            return {
                "kind": kind,
                "provider": "github",
                "source": "deepseek/harness",
                "deliveryId": sender,
                "ruleId": "on-push",
                "form": "notice",
                "summary": "push to main",
            }
        raise ValueError(f"unknown user source kind {kind!r}")

    def _append_user(self, message: dict[str, Any]) -> dict[str, Any]:
        return self._push("user/message", message, op="append")

    def _insert(self, message: dict[str, Any], target: str = "next-turn") -> None:
        pending = self.pending_turn if target == "next-turn" else self.pending_step
        self._push("agent/inbox/spliced", {"target": target, "start": len(pending), "inserted": [message]})
        pending.append(message["id"])

    def _claim(self, target: str = "next-turn") -> None:
        pending = self.pending_turn if target == "next-turn" else self.pending_step
        self._push("agent/inbox/spliced", {"target": target, "start": 0, "removedCount": 1, "inserted": []})
        pending.pop(0)

    def _turn(self, plan: TurnPlan, queued_next: TurnPlan | None) -> None:
        for side in plan.before:
            self._side(side)
        if plan.compaction is not None:
            self._compaction(plan.compaction, turn=None)
        if self.queued is not None:
            message, self.queued = self.queued, None
        else:
            message = self._user_message(plan.source, plan.prompt)
            self._insert(message)
        self._cut()
        self.turn += 1
        self.open_turn = self.turn
        self.step = 0
        self._push("turn/start", {"turn": self.turn})
        self._claim()
        if queued_next is not None:
            self.queued = self._user_message(queued_next.source, queued_next.prompt)
            self._insert(self.queued)
        end = plan.end
        if plan.prompt_hook or end.kind == "blocked" or (end.kind == "aborted" and end.cause == "hook"):
            blocked = end.kind == "blocked" or end.cause == "hook"
            self._hook("UserPromptSubmit", None, block=blocked)
            if blocked:
                reason = (
                    {"kind": "blocked"}
                    if end.kind == "blocked"
                    else {
                        "kind": "aborted",
                        "reason": {"kind": "hook", "reason": "blocked by policy hook"},
                    }
                )
                self._end_turn(reason)
                return
        steps = plan.steps
        if not steps:
            if end.kind == "interrupted":
                self._close_crashed_turn()
            else:
                self._end_turn(self._reason(plan))
            return
        for index, step in enumerate(steps):
            last = index == len(steps) - 1
            crashed = self._step(plan, step, index, last, message)
            if crashed:
                self._close_crashed_turn()
                return
            if index == 0 and plan.prune and not last:
                self._prune()
        self._end_turn(self._reason(plan))

    def _turn_start(self) -> int:
        for index in range(len(self.events) - 1, -1, -1):
            if self.events[index]["type"] == "turn/start":
                return index
        return 0

    def _close_crashed_turn(self) -> None:
        """Append what the official loader's crash repair commits for the open tail turn."""
        for closer in interrupted_turn_closers(self.events[self._turn_start() :]):
            if closer["type"] == "tool/result":
                self.surface.append(closer["seq"])
            self.events.append(closer)
        self.time = self.events[-1]["time"]
        self.open_turn = None
        self.resume = self.header_logged
        self._cut()

    def _reason(self, plan: TurnPlan) -> dict[str, Any]:
        """The turn/end reason of a turn that ran to its end (blocked and crashed turns end elsewhere)."""
        end = plan.end
        if end.kind == "aborted":
            return {"kind": "aborted", "reason": {"kind": end.cause}}
        if end.kind == "error":
            return {"kind": "error", "error": _failure(end.failure)}
        return {"kind": end.kind}

    def _end_turn(self, reason: dict[str, Any]) -> None:
        self._push("turn/end", {"turn": self.turn, "reason": reason})
        self.open_turn = None
        self._cut()

    def _step(self, turn: TurnPlan, plan: StepPlan, index: int, last: bool, message: dict[str, Any]) -> bool:
        """Render one step; returns True when the turn crashed inside it (closers still to come)."""
        self.step += 1
        self._push("step/start", {"turn": self.turn, "step": self.step})
        if index == 0:
            user = self._append_user(message)
            if turn.runtime_context:
                self._runtime_context()
            if turn.title is not None and not self.titled and message["source"]["kind"] == "user":
                self._title(turn.title, user["seq"], message)
        elif self.steered is not None:
            self._claim("next-step")
            self._append_user(self.steered)
            self.steered = None
        self._request_header(plan.header_change)
        for failure in plan.failures:
            self._failed_attempt(failure)
        end = turn.end.kind if last else "completed"
        if end == "interrupted":
            return self._crash(turn, plan)
        if end == "aborted":
            self._interrupted_attempt(plan)
        elif end == "error":
            self._chunk({"type": "finish", "reason": {"kind": "error", "failure": _failure(turn.end.failure)}})
        else:
            calls = () if end == "max-tokens" else plan.calls
            seqs, blocks = self._attempt(plan, calls, finish="max-tokens" if end == "max-tokens" else None)
            self._assistant(blocks, seqs, usage=True)
            self._tool_round(plan, calls, blocks)
        if plan.todo:
            self._todo()
        if plan.steer and not last:
            steer = self._user_message("user", Words(plan.text.offset + 3, 5))
            self._insert(steer, "next-step")
            self.steered = steer
        self._push("step/end", {"turn": self.turn, "step": self.step})
        self._cut()
        return False

    def _chunk(self, chunk: dict[str, Any]) -> int:
        seq: int = self._push("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk})["seq"]
        return seq

    def _blocks(self, plan: StepPlan, calls: tuple[ToolCallPlan, ...]) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if plan.reasoning is not None:
            blocks.append({"type": "reasoning", "text": self._phrase(plan.reasoning, 11)})
        if plan.text.length or not calls:
            blocks.append({"type": "text", "text": self._phrase(plan.text, 5)})
        for call in calls:
            tool = TOOLS[call.tool]
            key = next(iter(tool["parameters"]["properties"]))
            arguments = dumps({key: self._phrase(call.args, call.tool)})
            blocks.append(
                {
                    "type": "tool-call",
                    "id": f"call_{self._id()[:18]}",
                    "name": tool["name"],
                    "arguments": arguments,
                }
            )
        return blocks

    def _stream(self, blocks: list[dict[str, Any]], pieces: int, calls: tuple[ToolCallPlan, ...]) -> list[int]:
        seqs: list[int] = []
        call_pieces = iter(call.pieces for call in calls)
        for index, block in enumerate(blocks):
            seqs.append(self._chunk({"type": "block-start", "index": index, "blockType": block["type"]}))
            if block["type"] == "tool-call":
                for n, part in enumerate(_split(block["arguments"], next(call_pieces, 1))):
                    delta = {"type": "tool-call-delta", "index": index, "id": block["id"]}
                    if n == 0 or self.salt % 2 == 0:  # the name is optional after the first delta
                        delta["name"] = block["name"]
                    delta["argumentsDelta"] = part
                    seqs.append(self._chunk(delta))
            else:
                kind = "text-delta" if block["type"] == "text" else "reasoning-delta"
                for part in _split(block["text"], pieces):
                    seqs.append(self._chunk({"type": kind, "index": index, "text": part}))
        for index, block in enumerate(blocks):
            seqs.append(self._chunk({"type": "block-end", "index": index, "block": block}))
        return seqs

    def _usage(self, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        usage = {"inputTokens": 200 + 3 * len(self.surface), "outputTokens": estimate_content(blocks)}
        shape = self.salt % 4  # which optional counters the provider reports (V01:380-388)
        if shape == 1:
            usage.update(cacheReadTokens=128, cacheWriteTokens=64)
        elif shape == 2:
            usage.update(reasoningTokens=usage["outputTokens"] // 2)
            usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        return usage

    def _attempt(
        self, plan: StepPlan, calls: tuple[ToolCallPlan, ...], *, finish: str | None = None
    ) -> tuple[list[int], list[dict[str, Any]]]:
        blocks = self._blocks(plan, calls)
        seqs = self._stream(blocks, plan.pieces, calls)
        usage = self._usage(blocks)
        seqs.append(self._chunk({"type": "usage", "usage": usage}))
        reason = finish or ("tool-calls" if calls else "stop")
        end: dict[str, Any] = {"type": "finish", "reason": {"kind": reason}}
        if self.salt % 5 == 1:
            end["replayState"] = self._replay_state()
        seqs.append(self._chunk(end))
        return seqs, blocks

    def _replay_state(self) -> dict[str, Any]:
        """The provider's opaque replay envelope (V01:1046-1049): a response, optionally blocks."""
        state: dict[str, Any] = {"response": {"id": f"resp-{self.turn}-{self.step}"}}
        if self.salt % 2:
            state["blocks"] = []
        return state

    def _assistant(
        self, blocks: list[dict[str, Any]], seqs: list[int], *, usage: bool, interrupted: bool = False
    ) -> None:
        data: dict[str, Any] = {
            "turn": self.turn,
            "step": self.step,
            "message": {
                "role": "assistant",
                "content": blocks,
                "source": {"kind": "model", "provider": PROVIDER, "model": self.model},
                "id": self._id(),
            },
        }
        if self.salt % 5 == 1 and not interrupted:
            data["message"]["source"]["replayState"] = self._replay_state()
        if usage:
            data["usage"] = self._usage(blocks)
        if interrupted:
            data["interrupted"] = True
        self._push("assistant/message", data, op="append", sources=seqs)

    def _interrupted_attempt(self, plan: StepPlan) -> None:
        """A user/parent abort mid-stream: the partial text is kept and flagged ``interrupted``
        (the acp ``cancel`` snapshot)."""
        text = self._phrase(plan.text, 5)
        partial = _split(text, max(2, plan.pieces))[:-1] or [text]
        seqs = [self._chunk({"type": "block-start", "index": 0, "blockType": "text"})]
        seqs += [self._chunk({"type": "text-delta", "index": 0, "text": part}) for part in partial]
        self._assistant([{"type": "text", "text": "".join(partial)}], seqs, usage=False, interrupted=True)

    def _failed_attempt(self, failure: FailedAttemptPlan) -> None:
        record = _failure(2 if failure.kind == "overflow" else failure.failure)
        if failure.partial:
            self._chunk({"type": "block-start", "index": 0, "blockType": "text"})
            for part in _split(self._phrase(Words(failure.failure, 2 * failure.partial), 1), failure.partial):
                self._chunk({"type": "text-delta", "index": 0, "text": part})
        self._chunk({"type": "finish", "reason": {"kind": "error", "failure": record}})
        if failure.kind == "overflow":
            self._compaction(CompactionPlan(keep=1), turn=self.turn)
            return
        chain = [
            e
            for e in self.events
            if e["type"] == "llm/retry" and e["data"]["turn"] == self.turn and e["data"]["step"] == self.step
        ]
        retry = len(chain) + 1
        retry_id = f"retry-{self.session_id[:8]}-{self.turn}-{self.step}"
        data = {
            "retryId": retry_id,
            "turn": self.turn,
            "step": self.step,
            "provider": PROVIDER,
            "mode": "normal" if failure.failure % 2 == 0 else "always",
            "policyKey": "transient",
            "retry": retry,
            "delayMs": 250 * retry,
            "failure": record,
        }
        if data["mode"] == "normal":
            data["maxRetries"] = max(3, retry)
        self._push("llm/retry", data)
        self._push(
            "llm/retry-started", {"retryId": retry_id, "turn": self.turn, "step": self.step, "retry": retry}
        )

    def _tool_round(self, plan: StepPlan, calls: tuple[ToolCallPlan, ...], blocks: list[dict[str, Any]]) -> None:
        call_blocks = [b for b in blocks if b["type"] == "tool-call"]
        pairs = list(zip(calls, call_blocks, strict=True))
        if plan.parallel:
            call_seqs = [self._tool_call(block) for _, block in pairs]
            for (call, block), seq in zip(pairs, call_seqs, strict=True):
                self._tool_effects(call, block)
                self._tool_result(call, block, seq)
        else:
            for call, block in pairs:
                seq = self._tool_call(block)
                self._tool_effects(call, block)
                self._tool_result(call, block, seq)

    def _tool_call(self, block: dict[str, Any]) -> int:
        data = {"turn": self.turn, "step": self.step, "callId": block["id"], "name": block["name"]}
        data["arguments"] = block["arguments"]
        seq: int = self._push("tool/call", data)["seq"]
        return seq

    def _tool_effects(self, call: ToolCallPlan, block: dict[str, Any]) -> None:
        if call.hook is not None:
            self._hook("PreToolUse", block["name"], block=call.hook == "block")
        if call.approval is not None:
            approval_id = self._id()
            asked = {"id": approval_id, "toolName": block["name"], "callId": block["id"]}
            if call.approval != "unavailable":
                asked["reason"] = "escalate sandbox to danger-full-access"
            self._push("approval/asked", asked)
            self._push("approval/decided", {"id": approval_id, "outcome": call.approval})
        for n in range(call.dispatches):
            # A later dispatch runs inside the first one's sub-call (a nested parent) and fails.
            sub = {
                "rootCallId": block["id"],
                "parentCallId": block["id"] if n == 0 else f"{block['id']}.1",
                "subCallId": f"{block['id']}.{n + 1}",
                "name": "read",
                "arguments": {"path": f"src/{WORDS[n]}.py"},
            }
            self._push("tool/code-dispatch-start", sub)
            text = "ok" if n == 0 else "Error: no such file"
            self._push("tool/code-dispatch", {**sub, "isError": n > 0, "content": [{"type": "text", "text": text}]})
        if call.web_search:
            body = {
                "model": self.model,
                "max_tokens": 1024,
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": self._phrase(call.args)}]}
                ],
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            }
            self._push(
                "web/deepseek-search-llm-request",
                {"endpoint": "/anthropic/v1/messages", "apiVersion": "2023-06-01", "body": body},
            )

    def _tool_result(self, call: ToolCallPlan, block: dict[str, Any], call_seq: int) -> None:
        refused = call.hook == "block" or call.approval not in (None, "allowed-once")
        is_error = call.error or refused
        text = "Error: the tool call was refused" if refused else self._phrase(call.result, 3)
        message = {
            "source": {"kind": "tool", "callId": block["id"]},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": block["id"],
                    "content": [{"type": "text", "text": text}],
                    "isError": is_error,
                }
            ],
            "role": "user",
            "id": self._id(),
        }
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if call.error and not refused:
            data["error"] = {"name": "ToolExecutionError", "code": "EXIT_NONZERO"}
        if call.result.length % 4 == 3:
            # Tool-owned metadata, opaque to every layer (released keeps it as lossless JSON).
            data["meta"] = {"durationMs": 12, "exitCode": 1 if call.error else 0, "truncated": False}
        self._push("tool/result", data, op="append", sources=[call_seq])

    def _crash(self, turn: TurnPlan, plan: StepPlan) -> bool:
        """Write the durable prefix of a step the process died in; the caller appends the closers."""
        end = turn.end
        calls = plan.calls
        blocks = self._blocks(plan, calls)
        if end.crash == "stream":
            self._stream(blocks, plan.pieces, calls)
            return True
        seqs, blocks = self._attempt(plan, calls)
        self._assistant(blocks, seqs, usage=True)
        if end.crash == "message":
            return True
        call_blocks = [b for b in blocks if b["type"] == "tool-call"]
        started = call_blocks[: end.started]
        call_seqs = [self._tool_call(block) for block in started]
        for block, seq, call in zip(started[: end.finished], call_seqs, calls, strict=False):
            self._tool_result(call, block, seq)
        return True

    def _request_header(self, change: bool) -> None:
        if self.header_logged and not self.resume and not change:
            return
        reason = "initial" if not self.header_logged else ("resume" if self.resume else "change")
        if change and self.header_logged and not self.resume:
            self.model = MODELS[(MODELS.index(self.model) + 1) % len(MODELS)]
        config: dict[str, Any] = {"provider": PROVIDER, "model": self.model}
        header: dict[str, Any] = {"config": config, "system": _SYSTEM, "tools": list(TOOLS[:3])}
        if self.model != MODELS[0]:
            config["reasoningEffort"] = "high"
            defaults = {"reasoningEffort": True}
            if self.salt % 3 == 1:  # the adapter's default output budget, marked as such
                config["maxTokens"] = 8192
                defaults["maxTokens"] = True
            elif self.salt % 3 == 2:
                config.update(temperature=0.7, stop=["</done>"])
            header = {
                "config": config,
                "adapterDefaults": defaults,
                "system": _SYSTEM,
                "tools": list(TOOLS),
            }
        record: dict[str, Any] = {"header": header, "reason": reason}
        if reason == "change" and self.salt % 3 == 2:
            record.update(reason="series", startsSeries=True)  # released's series reason (V01:436-443)
        self._push("request/header", record)
        context: dict[str, Any] = {"provider": PROVIDER, "model": self.model}
        if self.salt % 2:
            context["contextWindow"] = 128000
        self._push("request/context", context)
        self.header_logged = True
        self.resume = False

    def _runtime_context(self) -> None:
        text = "Current runtime context. Current DSH file policy: workspace-write."
        message = {
            "content": [{"type": "text", "text": text}],
            "source": {
                "kind": "plugin",
                "plugin": "@deepseek-ai/dsh-system-prompt",
                "form": "snapshot",
                "sections": [{"name": "sandbox:policy", "text": text}],
            },
            "role": "user",
            "id": self._id(),
        }
        self._append_user(message)

    def _title(self, kind: str, seq: int, message: dict[str, Any]) -> None:
        text = message["content"][0]["text"]
        title = " ".join(text.split()[:5])
        if kind == "fallback":
            source: dict[str, Any] = {"kind": "fallback"}
        else:
            source = {"kind": "provider", "provider": PROVIDER}
            if kind == "llm" or self.salt % 2 == 0:  # the route is optional (V01:2578)
                source["model"] = {"provider": PROVIDER, "model": self.model}
        if kind == "llm":
            framed = "Generate the session title from this JSON array of human messages:\n" + dumps(
                [{"seq": seq, "text": text}]
            )
            request = {
                "titleProvider": PROVIDER,
                "messageSeqs": [seq],
                "route": {"provider": PROVIDER, "model": self.model},
                "system": "Write a short title for this session.",
                "messages": [
                    {
                        "id": self._id(),
                        "role": "user",
                        "content": [{"type": "text", "text": framed}],
                        "source": {"kind": "plugin", "plugin": TITLE_PLUGIN},
                    }
                ],
                "maxTokens": 32,
            }
            self._push("session/title-llm-request", request)
        self._push("session/title", {"title": title, "messageSeqs": [seq], "source": source})
        self.titled = True

    def _hook(self, point: str, matcher: str | None, *, block: bool) -> None:
        dialect = DIALECTS[self.turn % 2]
        handler = f"{dialect}:{point}:1"
        invoked: dict[str, Any] = {"turn": self.turn, "point": point, "dialect": dialect, "handlerId": handler}
        if matcher is not None:
            invoked["matcher"] = matcher
        self._push("hook/invoked", invoked)
        result: dict[str, Any] = {
            "turn": self.turn,
            "point": point,
            "handlerId": handler,
            "decision": "block" if block else "allow",
        }
        if block or dialect == "claude-code":  # codex handlers report no exit code when they allow
            result["exitCode"] = 2 if block else 0
        if block:
            result["stderrSummary"] = "blocked by policy hook"
        result["durationMs"] = 3.5
        self._push("hook/result", result)

    def _todo(self) -> None:
        todos = [
            {"content": "read the code", "status": "completed"},
            {"content": "write the fix", "status": "in_progress"},
            {"content": "run the tests", "status": "pending"},
        ]
        self._push("todo/write", {"todos": todos[: 1 + self.step % 3]})

    def _compaction(self, plan: CompactionPlan, *, turn: int | None) -> None:
        """compaction/start -> summary -> checkpoint user/message replace -> end (TM:112-144 adjacency)."""
        end = len(self.surface) - 1 - plan.keep
        while (
            0 <= end < len(self.surface) - 1 and self.events[self.surface[end + 1]]["type"] == "tool/result"
        ):
            end -= 1
        if end < 0 and not plan.failed:
            return
        compaction_id = self._id()
        command_id = self._id("cmd-") if plan.manual else None
        if command_id is not None:
            self._push(
                "command/run", {"commandId": command_id, "name": "compact", "source": {"kind": "user"}}
            )
        owner: dict[str, Any] = {"compactionId": compaction_id}
        if command_id is not None:
            owner["sourceCommandId"] = command_id
        self._push("compaction/start", {**owner, "turn": turn})
        if plan.failed or end < 0:
            self._push("compaction/end", {**owner, "turn": turn, "error": "summary provider failed"})
        else:
            shadowed = self.surface[: end + 1]
            tokens = sum(estimate_content(self._message_of(self.events[s])["content"]) + 4 for s in shadowed)
            summary = [
                {"type": "text", "text": "The earlier conversation established the task and its results."}
            ]
            span = {"start": shadowed[0], "end": shadowed[-1]}
            data = {**owner, "summary": summary, "shadowedRange": span, "shadowedSeqs": list(shadowed)}
            data.update(shadowedTokenCount=tokens, provider=PROVIDER, model=self.model, maxTokens=4096)
            if not plan.manual:
                data.update(
                    usage={"inputTokens": tokens, "outputTokens": 16}, rawOutput=summary, llmStreamCall=True
                )
            self._push("compaction/summary", data)
            source: dict[str, Any] = {"kind": "plugin", "plugin": "compact", **owner}
            checkpoint = {"content": summary, "source": source, "role": "user", "id": self._id()}
            self._push("user/message", checkpoint, op={"op": "replace", **span}, sources=list(shadowed))
            self._push("compaction/end", {**owner, "turn": turn})
        if command_id is not None:
            self._push(
                "command/done", {"commandId": command_id, "kind": "error" if plan.failed else "success"}
            )

    def _prune(self) -> None:
        """compaction/prune of the newest tool/result on the surface, then its content-only replace."""
        target = next((s for s in reversed(self.surface) if self.events[s]["type"] == "tool/result"), None)
        if target is None:
            return
        original = self.events[target]["data"]
        tokens = estimate_content(original["message"]["content"]) + 4
        self._push(
            "compaction/prune",
            {
                "shadowedRange": {"start": target, "end": target},
                "shadowedSeqs": [target],
                "shadowedTokenCount": tokens,
            },
        )
        block = original["message"]["content"][0]
        pruned = {**block, "content": [{"type": "text", "text": "[output pruned]"}]}
        data = {**original, "message": {**original["message"], "content": [pruned]}}
        self._push(
            "tool/result", data, op={"op": "replace", "start": target, "end": target}, sources=[target]
        )

    @staticmethod
    def _message_of(event: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = event["data"] if event["type"] == "user/message" else event["data"]["message"]
        return message

    def _descriptor(self) -> None:
        shape = self.salt % 3  # which optional members this descriptor carries (V01:1294-1316)
        data: dict[str, Any] = {"mode": self.plan.descriptor, "version": 3, "provider": "spawn"}
        if self.plan.descriptor == "one-shot":
            if shape != 2:
                data["label"] = "Reply with CHILD_OK"
        else:
            data.update(label="Reply with CHILD_OK", agentProvider=PROVIDER, agentModel=MODELS[0])
            if shape == 1:
                data.update(agentReasoningEffort="high", persona="reviewer")
            elif shape == 2:
                data["toolFilter"] = {"allow": ["read", "bash"]} if self.salt % 2 else {"deny": ["write"]}
        self._push("subagent/descriptor", data)

    def _side(self, side: SidePlan) -> None:
        v = side.variant
        kind = side.kind
        if kind == "title-user":
            self._push(
                "session/title", {"title": "Renamed session", "messageSeqs": [], "source": {"kind": "user"}}
            )
        elif kind == "goal":
            self._goal(v)
        elif kind == "command":
            command_id = self._id("cmd-")
            run: dict[str, Any] = {
                "commandId": command_id,
                "name": COMMAND_NAMES[1 + v % 3],
                "source": {"kind": "user"},
            }
            if v % 2:
                run["args"] = "--verbose"
            self._push("command/run", run)
            done: dict[str, Any] = {"commandId": command_id, "kind": "success" if v % 3 or v == 3 else "error"}
            if v % 3 == 1:
                done["text"] = "done"
            if v == 3:
                # A successful /title names the event it wrote (dsh-commands' sourceEventSeq).
                title = {"title": "Renamed session", "messageSeqs": [], "source": {"kind": "user"}}
                done["sourceEventSeq"] = self._push("session/title", title)["seq"]
            self._push("command/done", done)
        elif kind == "plan-mode":
            self._push("plan/mode", {"active": v % 2 == 0})
        elif kind == "schedule":
            self._schedule(v)
        elif kind == "feedback":
            self._push("feedback/record", {"text": "The answer was helpful."})
        elif kind == "team":
            self._team(v)
        elif kind == "workflow":
            self._workflow(v)
        elif kind == "cancel":
            message = self._user_message("user", Words(v, 4))
            self._insert(message)
            start = len(self.pending_turn) - 1
            self._push(
                "agent/inbox/spliced",
                {
                    "target": "next-turn",
                    "start": start,
                    "removedCount": 1,
                    "inserted": [],
                    "outcome": "canceled",
                },
            )
            self.pending_turn.pop()
        elif kind == "sandbox":
            data = {"mode": ("workspace-write", "read-only", "danger-full-access")[v % 3]}
            self._push("sandbox/mode", data)
        elif kind == "permission":
            self._push("permission/preset", {"preset": ("default", "auto-edit", "full-access")[v % 3]})
        elif kind == "agent-preset":
            self._push("agent-preset/selected", {"agentPreset": ("coder", "reviewer")[v % 2]})
        elif kind == "approval-policy":
            self._push("approval/policy", {"policy": ("ask", "never")[v % 2]})
        elif kind == "ignorable":
            # Released v0 refuses unknown types even when ignorable (V01:1582); v1 admits them.
            if self.version >= 1:
                event = self._push(
                    PLUGIN_EVENT_TYPES[v % len(PLUGIN_EVENT_TYPES)], {"note": "plugin state", "n": v}
                )
                event["ignorable"] = True
        elif kind == "model-selection":
            selection = {"provider": PROVIDER, "model": self.model}
            if v % 2:
                selection["reasoningEffort"] = "high"
            self._released_extra("model/selection", selection)
        elif kind == "model-policy":
            routes = [{"provider": PROVIDER, "model": model} for model in MODELS[: 1 + v % len(MODELS)]]
            self._released_extra("subagent/model-selection-policy", {"allowedModels": routes})
        elif kind == "delivery":
            # The session-log plugin acknowledges what it shipped: this session, through its last event.
            if self.events:
                marker: dict[str, Any] = {"sessionId": self.session_id, "throughSeq": len(self.events) - 1}
                if self.version >= 1 and v % 2:
                    marker["sessionFormatVersion"] = self.version  # a v1-only member (V01:1589)
                self._released_extra("session-log-deepseek/delivery-accepted", marker)
        else:
            raise ValueError(f"unknown side event kind {kind!r}")

    def _released_extra(self, type_: str, data: dict[str, Any]) -> None:
        """An event of ``RELEASED_EXTRA_EVENT_TYPES``: marked ignorable, the one form every layer accepts."""
        self._push(type_, data)["ignorable"] = True

    def _goal(self, v: int) -> None:
        now = self.time
        if self.goal is None or self.goal["phase"] == "complete":
            goal: dict[str, Any] = {
                "id": self._id("goal-"),
                "revision": 1,
                "objective": "Finish the task",
                "phase": "active",
                "maxGoalRounds": 3,
            }
            self.goal = goal
            self._push(
                "goal/change",
                {
                    "kind": "goal/change",
                    "version": 1,
                    "operation": "create",
                    "goal": goal,
                    "roundsStarted": 0,
                    "createdAt": now,
                    "updatedAt": now,
                },
            )
            if v != 5:  # v == 5 clears what it created: a clear needs no earlier goal side
                return
        if v == 5:
            cleared = {"id": self.goal["id"], "revision": self.goal["revision"]}
            self._push(
                "goal/change",
                {
                    "kind": "goal/change",
                    "version": 1,
                    "operation": "clear",
                    "cleared": cleared,
                    "clearedAt": now,
                },
            )
            self.goal = None
            return
        operation, phase = (
            ("edit", "active"),
            ("pause", "paused"),
            ("resume", "active"),
            ("complete", "complete"),
            ("block", "blocked"),
        )[v % 5]
        goal = {**self.goal, "revision": self.goal["revision"] + 1, "phase": phase}
        goal.pop("blockedReason", None)
        if phase == "blocked":
            goal["blockedReason"] = {"code": "NEEDS_INPUT", "message": "waiting for the user"}
        self.goal = goal
        self._push(
            "goal/change",
            {
                "kind": "goal/change",
                "version": 1,
                "operation": operation,
                "goal": goal,
                "roundsStarted": 1,
                "createdAt": self.created_at,
                "updatedAt": now,
            },
        )

    def _schedule(self, v: int) -> None:
        """Create a schedule; an odd ``v`` then dispatches or deletes the oldest (creating one first
        when none is pending, so that these need no earlier schedule side)."""
        if not self.schedules or not v % 2:
            self._create_schedule(v)
        if v % 2:
            schedule_id = self.schedules.pop(0)
            data: dict[str, Any] = {"version": 1, "operation": "dispatch" if v % 3 else "delete", "id": schedule_id}
            if data["operation"] == "dispatch" and v != 5:
                data["acceptedAt"] = _instant(self.time)
            self._push("schedule/change", data)

    def _create_schedule(self, v: int) -> None:
        schedule_id = f"sched-{self.counter + 1}"
        self.counter += 1
        record: dict[str, Any] = {
            "id": schedule_id,
            "kind": ("after", "at", "every")[v % 3],
            "prompt": "check the build",
        }
        if record["kind"] == "after":
            record["afterSeconds"] = 600
        elif record["kind"] == "every":
            record["everySeconds"] = 3600
        record["scheduledAt"] = _instant(self.time + 600_000)
        self.schedules.append(schedule_id)
        self._push("schedule/change", {"version": 1, "operation": "create", "schedule": record})

    def _team(self, v: int) -> None:
        team = {"version": 1, "teamId": "team-1"}
        member: dict[str, Any] = {
            "id": f"member-{v}",
            "name": "Reviewer",
            "description": "Reviews diffs",
            "provider": PROVIDER,
            "context": ("fresh", "fork")[v % 2],
            "phase": ("active", "provisioning", "failed")[v % 3],
        }
        if member["phase"] == "failed":
            member["error"] = "member process exited"
        self._push("team/member", {**team, "member": member})
        task: dict[str, Any] = {
            "id": f"task-{v}",
            "revision": 1 + v // 4,
            "subject": "Review",
            "description": "Review the change",
            "status": ("pending", "in_progress", "completed", "deleted")[v % 4],
            "blockedBy": [] if v < 3 else [f"task-{v - 3}"],
            "writeScopes": ["src/"] if v % 2 == 0 else [],
        }
        if v != 1:  # an unassigned task has no owner
            task["ownerId"] = member["id"]
        self._push("team/task", {**team, "task": task})
        message_id = self._id()
        message = {
            "id": message_id,
            "senderId": "lead",
            "senderName": "Lead",
            "targetId": member["id"],
            "delivery": ("quiet", "wakeup")[v % 2],
            "content": [{"type": "text", "text": "please review"}],
        }
        self._push("team/message/queued", {**team, "message": message})
        self._push("team/message/delivered", {**team, "messageId": message_id, "targetId": member["id"]})

    def _workflow(self, v: int) -> None:
        run_id = self._id("run-")
        self._push("tool-workflow/run-start", {"runId": run_id, "name": "fan-out"})
        agent: dict[str, Any] = {"runId": run_id, "seq": 1, "label": "worker", "childId": self._id()}
        if v % 2:
            agent["phase"] = "map"
        self._push("tool-workflow/agent-start", agent)
        outcome = ("completed", "failed", "cancelled")[v % 3]
        self._push("tool-workflow/agent-end", {"runId": run_id, "seq": 1, "outcome": outcome})
        self._push(
            "tool-workflow/run-end",
            {"runId": run_id, "stopReason": ("completed", "error", "cancelled")[v % 3]},
        )
