"""G5: the released v0->v1 migration's per-type payload schema (V01:27-235, 236-1466, 1576-1593,
1914-2257), the checks that released makes on a format-0 log and no rc.8 layer makes.

The migration normalises each v0 event (``normalizeReleasedV0Event``: ``compact/*`` renamed
``compaction/*``, ``steering/message`` made a user message, the pre-react-loop ``turn/start``
trigger dropped, a missing retryId or compactionId filled in, ``request/header.messagePrefix``
dropped, pre-identity messages given an id) and then requires of every type but
``assistant/chunk`` an object ``data`` with exactly the disposition's members (required and
optional) and the member types and relations of ``assertReleasedPayloadSemantics``. Released
stops at its first refusal; G5 judges each event alone and reports the first refusal of each, so
a log with several bad events is refused at each of them. A format-1 log is restored without the
payload validation, but the relation walk still asks every inventory event for an object ``data``
(V01:2287) and an appended tool/result for an object ``error`` when it has one (V01:2362), and that
is all G5 asks of it.

Checks another rule already reports are left to it, so that one defect gives one finding:
``turn/end`` (T5 follows the migration's turn/end reading), a subagent/descriptor version other
than 3 (G1), unknown types (G2), the retired vocabulary (E5: ``request/header-delta``,
``mode/set``, reason ``fallback``, the ``claude`` hook dialect), a message the shape check or the
content-element check refuses (E6), a tool result's output blocks (P4), a request/header E10 refuses, title ``messageSeqs`` (G3), and
a number that is not lossless (E4). The map from each of released's checks to its rule is
:data:`dshfuzz.contracts.rules.RELEASED_CHECKS`.

State: the migration's own (the open compaction's id, the retryId per retry chain), nothing else;
each event is decided as the walk passes it, and the validators do work only in proportion to the
event's payload.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from dshfuzz.contracts import MAX_SAFE_INTEGER, js_string
from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.contracts.rules import RuleId as R
from dshfuzz.model import MISSING, Event

from ._content import content_element_defect
from ._context import CheckContext
from ._finding import Finding
from ._migration import RELEASED_V0_EVENT_TYPES, released_refuses_lossy
from ._persistence import _legacy_upgrade, _nonempty_str, message_shape_error, request_header_problems
from ._plugin import _released_content_problem, reports_fragments
from ._run import rule_walk

__all__ = ["DISPOSITIONS", "ReleasedSchema", "released_payload_refusal"]

def _d(required: Sequence[str], optional: Sequence[str] = ()) -> tuple[tuple[str, ...], frozenset[str]]:
    return tuple(required), frozenset((*required, *optional))


DISPOSITIONS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "agent-preset/selected": _d(["agentPreset"]),
    "agent/inbox/spliced": _d(["target", "start", "inserted"], ["removedCount", "outcome"]),
    "approval/asked": _d(["id", "toolName"], ["callId", "reason"]),
    "approval/decided": _d(["id", "outcome"]),
    "approval/policy": _d(["policy"], ["source"]),
    "assistant/chunk": _d(["turn", "step", "chunk"]),
    "assistant/message": _d(["turn", "step", "message"], ["usage", "interrupted"]),
    "command/done": _d(["commandId", "kind"], ["text", "sourceEventSeq"]),
    "command/run": _d(["commandId", "name", "source"], ["args"]),
    "compaction/end": _d(["compactionId", "turn"], ["sourceCommandId", "error"]),
    "compaction/prune": _d(["shadowedRange", "shadowedSeqs", "shadowedTokenCount"]),
    "compaction/start": _d(["compactionId", "turn"], ["sourceCommandId"]),
    "compaction/summary": _d(
        ["compactionId", "summary", "shadowedRange", "shadowedSeqs", "shadowedTokenCount", "provider", "model"],
        ["sourceCommandId", "maxTokens", "usage", "rawOutput", "llmStreamCall"],
    ),
    "feedback/record": _d(["text"]),
    "goal/change": _d(["kind", "version", "operation"],
                      ["goal", "roundsStarted", "createdAt", "updatedAt", "cleared", "clearedAt"]),
    "hook/invoked": _d(["turn", "point", "dialect", "handlerId"], ["matcher"]),
    "hook/result": _d(["turn", "point", "handlerId", "decision", "durationMs"], ["exitCode", "stderrSummary"]),
    "llm/retry": _d(["retryId", "turn", "step", "provider", "mode", "policyKey", "retry", "delayMs", "failure"],
                    ["maxRetries"]),
    "llm/retry-started": _d(["retryId", "turn", "step", "retry"]),
    "model/selection": _d(["provider", "model"], ["reasoningEffort"]),
    "permission/preset": _d(["preset"]),
    "plan/mode": _d(["active"]),
    "request/context": _d(["provider", "model"], ["contextWindow"]),
    "request/header": _d(["header", "reason"], ["startsSeries"]),
    "sandbox/mode": _d(["mode"], ["source"]),
    "schedule/change": _d(["version", "operation"], ["schedule", "id", "acceptedAt"]),
    "session-log-deepseek/delivery-accepted": _d(["sessionId", "throughSeq"]),
    "session/end-seed": _d([]),
    "session/title": _d(["title", "messageSeqs", "source"]),
    "session/title-llm-request": _d(["titleProvider", "messageSeqs", "route", "system", "messages", "maxTokens"]),
    "step/end": _d(["turn", "step"]),
    "step/start": _d(["turn", "step"]),
    "subagent/descriptor": _d(["mode", "version", "provider"],
                              ["label", "agentProvider", "agentModel", "agentReasoningEffort", "persona", "toolFilter"]),
    "subagent/model-selection-policy": _d(["allowedModels"]),
    "team/member": _d(["version", "teamId", "member"]),
    "team/message/delivered": _d(["version", "teamId", "messageId", "targetId"]),
    "team/message/queued": _d(["version", "teamId", "message"]),
    "team/task": _d(["version", "teamId", "task"]),
    "todo/write": _d(["todos"]),
    "tool-workflow/agent-end": _d(["runId", "seq", "outcome"]),
    "tool-workflow/agent-start": _d(["runId", "seq", "label", "childId"], ["phase"]),
    "tool-workflow/run-end": _d(["runId", "stopReason"]),
    "tool-workflow/run-start": _d(["runId", "name"]),
    "tool/call": _d(["turn", "step", "callId", "name", "arguments"]),
    "tool/code-dispatch": _d(["rootCallId", "parentCallId", "subCallId", "name", "arguments", "isError", "content"]),
    "tool/code-dispatch-start": _d(["rootCallId", "parentCallId", "subCallId", "name", "arguments"]),
    "tool/result": _d(["turn", "step", "message"], ["error", "meta"]),
    "turn/end": _d(["turn", "reason"]),
    "turn/start": _d(["turn"]),
    "user/message": _d(["role", "id", "content", "source"]),
    "web/deepseek-search-llm-request": _d(["endpoint", "apiVersion", "body"]),
}
"""``RELEASED_V0_EVENT_DISPOSITIONS`` (V01:27-235): each type's required data members, in the
order released names the first one missing, and every member it admits. (The ``opaque`` members'
losslessness is E4's.)"""

assert frozenset(DISPOSITIONS) == RELEASED_V0_EVENT_TYPES


class _Refused(Exception):
    """One refusal of the payload validator, with released's own wording."""


# --- the value validators (V01:565-640), each raising released's message ------------------------------


def _record(value: Any, label: str) -> dict[str, Any]:
    if value.__class__ is not dict:
        raise _Refused(f"{label} must be a JSON object")
    return value


def _keys(record: dict[str, Any], required: Sequence[str], optional: Sequence[str], label: str) -> None:
    for key in record:
        if key not in required and key not in optional:
            raise _Refused(f'{label} has unexpected member "{key}"')
    for key in required:
        if key not in record:
            raise _Refused(f'{label} lacks required member "{key}"')


def _exact(value: Any, label: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    record = _record(value, label)
    _keys(record, required, optional, label)
    return record


def _string(value: Any, label: str) -> None:
    if value.__class__ is not str:
        raise _Refused(f"{label} must be a string")


def _nonempty(value: Any, label: str) -> None:
    if value.__class__ is not str or not value:
        raise _Refused(f"{label} must be a non-empty string")


def _boolean(value: Any, label: str) -> None:
    if value.__class__ is not bool:
        raise _Refused(f"{label} must be a boolean")


def _integral(value: Any) -> int | None:
    """``value`` as an int when JavaScript's ``Number.isSafeInteger`` holds of it (not -0)."""
    if value.__class__ is int:
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    if value.__class__ is float and math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        if value == 0 and math.copysign(1.0, value) < 0:
            return None
        return int(value)
    return None


def _safe_integer(value: Any, label: str) -> int:
    n = _integral(value)
    if n is None:
        raise _Refused(f"{label} must be a safe integer")
    return n


def _count(value: Any, label: str) -> int:
    n = _integral(value)
    if n is None or n < 0:
        raise _Refused(f"{label} must be a non-negative safe integer")
    return n


def _positive(value: Any, label: str) -> int:
    n = _count(value, label)
    if n == 0:
        raise _Refused(f"{label} must be positive")
    return n


def _finite(value: Any, label: str) -> float:
    if value.__class__ not in (int, float) or not math.isfinite(value) or (
        value == 0 and math.copysign(1.0, value) < 0
    ):
        raise _Refused(f"{label} must be a finite number")
    return value


def _literal(value: Any, allowed: Sequence[Any], label: str) -> None:
    for candidate in allowed:
        if value.__class__ is candidate.__class__ and value == candidate:
            return
        if candidate.__class__ is int and value.__class__ is float and value == candidate:
            return
    raise _Refused(f"{label} must be one of {', '.join(js_string(a) for a in allowed)}")


def _array(value: Any, label: str, each: Callable[[Any, str], Any] | None = None) -> list[Any]:
    if value.__class__ is not list:
        raise _Refused(f"{label} must be an array")
    if each is not None:
        for k, member in enumerate(value):
            each(member, f"{label}[{k}]")
    return value


def _pair(data: dict[str, Any], label: str) -> None:
    _count(data.get("turn", MISSING), f"{label} turn")
    _count(data.get("step", MISSING), f"{label} step")


def _earlier(value: Any, seq: int, label: str) -> int:
    n = _count(value, label)
    if n >= seq:
        raise _Refused(f"{label} must identify an earlier event")
    return n


def _seqs(value: Any, seq: int, label: str, non_empty: bool) -> list[int]:
    if value.__class__ is list and (value or not non_empty):  # the common case, without a label per member
        if all(n.__class__ is int and 0 <= n < seq for n in value) and len(set(value)) == len(value):
            return value
    seen: set[int] = set()
    out: list[int] = []

    def each(member: Any, member_label: str) -> None:
        n = _earlier(member, seq, member_label)
        if n in seen:
            raise _Refused(f"{label} repeats seq {n}")
        seen.add(n)
        out.append(n)

    _array(value, label, each)
    if non_empty and not out:
        raise _Refused(f"{label} must be non-empty")
    return out


def _failure(value: Any, label: str) -> None:
    failure = _exact(value, label, ("message", "code"), ("status", "providerRetryAfterMs", "requestId"))
    _nonempty(failure["message"], f"{label} message")
    _nonempty(failure["code"], f"{label} code")
    if "status" in failure:
        status = _safe_integer(failure["status"], f"{label} status")
        if not 100 <= status <= 599:
            raise _Refused(f"{label} status must be 100 through 599")
    if "providerRetryAfterMs" in failure and _finite(failure["providerRetryAfterMs"], f"{label} providerRetryAfterMs") <= 0:
        raise _Refused(f"{label} providerRetryAfterMs must be positive")
    if "requestId" in failure:
        _nonempty(failure["requestId"], f"{label} requestId")


_USAGE_OPTIONAL = ("totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


def _usage(value: Any, label: str) -> None:
    usage = _exact(value, label, ("inputTokens", "outputTokens"), _USAGE_OPTIONAL)
    for key, member in usage.items():
        _count(member, f"{label} {key}")


def _blocks(value: Any, label: str) -> None:
    _array(value, label, _block)


def _block(value: Any, label: str) -> None:
    block = _record(value, label)
    kind = block.get("type", MISSING)
    if kind == "text" or kind == "reasoning":
        _keys(block, ("type", "text"), (), label)
        _string(block["text"], f"{label} text")
    elif kind == "image":
        _keys(block, ("type", "attachment"), (), label)
        _image(block["attachment"], f"{label} attachment")
    elif kind == "tool-call":
        _keys(block, ("type", "id", "name", "arguments"), (), label)
        _nonempty(block["id"], f"{label} id")
        _nonempty(block["name"], f"{label} name")
        _string(block["arguments"], f"{label} arguments")
    elif kind == "tool-result":
        _keys(block, ("type", "toolCallId", "content"), ("isError",), label)
        _nonempty(block["toolCallId"], f"{label} toolCallId")
        _blocks(block["content"], f"{label} content")
        if "isError" in block:
            _boolean(block["isError"], f"{label} isError")
    else:
        _nonempty(kind, f"{label} type")


_MEDIA = ("image/png", "image/jpeg", "image/webp", "image/gif")


def _image(value: Any, label: str) -> None:
    a = _exact(value, label, ("attachmentId", "mediaType", "bytes", "width", "height"), ("name", "originalDimensions"))
    _nonempty(a["attachmentId"], f"{label} attachmentId")
    _literal(a["mediaType"], _MEDIA, f"{label} mediaType")
    _count(a["bytes"], f"{label} bytes")
    _positive(a["width"], f"{label} width")
    _positive(a["height"], f"{label} height")
    if "name" in a:
        _string(a["name"], f"{label} name")
    if "originalDimensions" in a:
        dims = _exact(a["originalDimensions"], f"{label} originalDimensions", ("width", "height"))
        _positive(dims["width"], f"{label} original width")
        _positive(dims["height"], f"{label} original height")


# The shortcuts read exact member sets as a count and a read of each member: a missing member
# reads None, which no check here accepts (cheaper than comparing key views).


def _plain_blocks(content: list[Any]) -> bool:
    """Text, reasoning and tool-call blocks with exactly their members."""
    for block in content:
        if block.__class__ is not dict:
            return False
        kind = block.get("type")
        if kind == "text" or kind == "reasoning":
            if len(block) != 2 or block.get("text").__class__ is not str:
                return False
        elif kind == "tool-call":
            if len(block) != 4 or not _nonempty_str(block.get("id")) or not _nonempty_str(block.get("name")) \
                    or block.get("arguments").__class__ is not str:
                return False
        else:
            return False
    return True


def _plain_message(m: Any, expected: str | None) -> bool:
    """Whether ``m`` is a message of the most common shape that :func:`_message` accepts: text,
    reasoning and tool-call blocks, a user, model or tool source with exactly its members. A
    ``False`` decides nothing (the full check follows)."""
    if m.__class__ is not dict or len(m) != 4:
        return False
    role, content, source = m.get("role"), m.get("content"), m.get("source")
    if not _nonempty_str(m.get("id")) or content.__class__ is not list or source.__class__ is not dict:
        return False
    if expected == "assistant":
        return (role == "assistant" and len(source) == 3 and source.get("kind") == "model"
                and _nonempty_str(source.get("provider")) and _nonempty_str(source.get("model"))
                and _plain_blocks(content))
    if expected == "user":
        return role == "user" and len(source) == 1 and source.get("kind") == "user" and _plain_blocks(content)
    if expected != "tool" or role != "user" or len(source) != 2 or source.get("kind") != "tool" or len(content) != 1:
        return False
    call, block = source.get("callId"), content[0]
    if not _nonempty_str(call) or block.__class__ is not dict or len(block) != 4:
        return False
    inner = block.get("content")
    if block.get("type") != "tool-result" or block.get("toolCallId") != call \
            or block.get("isError").__class__ is not bool or inner.__class__ is not list:
        return False
    for b in inner:
        if b.__class__ is not dict or len(b) != 2 or b.get("type") != "text" or b.get("text").__class__ is not str:
            return False
    return True


def _message(value: Any, label: str, expected: str | None) -> None:
    """``messageValue`` (V01:722-740): exact members, id, role, content blocks, source."""
    if _plain_message(value, expected):
        return
    message = _exact(value, label, ("id", "role", "content", "source"))
    _nonempty(message["id"], f"{label} id")
    if expected is None:
        _literal(message["role"], ("system", "user", "assistant"), f"{label} role")
    else:
        _literal(message["role"], ("assistant",) if expected == "assistant" else ("user",), f"{label} role")
    _blocks(message["content"], f"{label} content")
    source = _record(message["source"], f"{label} source")
    if expected == "user" and source.get("kind") == "goal" and "change" in source:
        _legacy_goal(message, source, label)
    else:
        _source(source, f"{label} source", expected)
    if expected == "tool":
        content = message["content"]
        block = _record(content[0], f"{label} tool result") if len(content) == 1 else None
        if block is None or block.get("type") != "tool-result" or not _same(block.get("toolCallId", MISSING), source.get("callId", MISSING)):
            raise _Refused(f"{label} must contain exactly one tool-result block")


def _same(a: Any, b: Any) -> bool:
    return a is not MISSING and a.__class__ is b.__class__ and a == b


def _legacy_goal(message: dict[str, Any], source: dict[str, Any], label: str) -> None:
    _keys(source, ("kind", "goalId", "revision", "round", "change"), (), f"{label} source")
    _nonempty(source["goalId"], f"{label} source goalId")
    _positive(source["revision"], f"{label} source revision")
    if _integral(source["round"]) != 0:
        raise _Refused(f"{label} legacy goal source round must be 0")
    change = _record(source["change"], f"{label} source change")
    _goal_change(change, f"{label} source change")
    ref = _record(change["cleared"] if change.get("operation") == "clear" else change["goal"], f"{label} source change ref")
    if not (_same(source["goalId"], ref.get("id", MISSING)) and _same(source["revision"], ref.get("revision", MISSING))):
        raise _Refused(f"{label} legacy goal source does not match its change")
    keys = ("cleared", "clearedAt") if change.get("operation") == "clear" else (
        "goal", "roundsStarted", "createdAt", "updatedAt")
    payload = json.dumps({k: change[k] for k in keys if k in change}, separators=(",", ":"), ensure_ascii=False)
    if message["content"] != [{"type": "text", "text": f"<goal_state>{payload}</goal_state>"}]:
        raise _Refused(f"{label} legacy goal content does not match its change")


_PLUGIN_FORMS = ("instructions", "catalog", "snapshot", "notice", "relay", "recall")


def _source(value: Any, label: str, expected: str | None) -> None:
    """``messageSourceValue`` (V01:771-944)."""
    source = _record(value, label)
    kind = source.get("kind", MISSING)
    if expected == "assistant" and kind != "model":
        raise _Refused(f"{label} must be model source")
    if expected == "tool" and kind != "tool":
        raise _Refused(f"{label} must be tool source")
    if kind == "user":
        _keys(source, ("kind",), ("rpcId", "clientTimeZone"), label)
        for key in ("rpcId", "clientTimeZone"):
            if key in source:
                _nonempty(source[key], f"{label} {key}")
    elif kind == "plugin":
        _plugin_source(source, label)
    elif kind == "model":
        _keys(source, ("kind", "provider", "model"), ("replayState",), label)
        _nonempty(source["provider"], f"{label} provider")
        _nonempty(source["model"], f"{label} model")
    elif kind == "tool":
        _keys(source, ("kind", "callId"), (), label)
        _nonempty(source["callId"], f"{label} callId")
    elif kind == "agent-instructions":
        _keys(source, ("kind", "form", "changes"), ("baseline", "baselineIdentity"), label)
        _literal(source["form"], ("instructions",), f"{label} form")
        if "baseline" in source:
            _literal(source["baseline"], (True,), f"{label} baseline")
        if "baselineIdentity" in source:
            _nonempty(source["baselineIdentity"], f"{label} baselineIdentity")

        def change(member: Any, member_label: str) -> None:
            c = _exact(member, member_label, ("action", "scope", "path"), ("digest",))
            _literal(c["action"], ("set", "replace", "remove"), f"{member_label} action")
            _string(c["scope"], f"{member_label} scope")
            _string(c["path"], f"{member_label} path")
            if "digest" in c:
                _string(c["digest"], f"{member_label} digest")

        _array(source["changes"], f"{label} changes", change)
    elif kind == "session-reference":
        _session_reference(source, label)
    elif kind == "team-message":
        _keys(source, ("kind", "teamId", "messageId", "senderId", "senderName"), (), label)
        for key in ("teamId", "messageId", "senderId"):
            _nonempty(source[key], f"{label} {key}")
        _string(source["senderName"], f"{label} senderName")
    elif kind == "goal":
        _keys(source, ("kind", "goalId", "revision", "round"), (), label)
        _nonempty(source["goalId"], f"{label} goalId")
        _positive(source["revision"], f"{label} revision")
        _positive(source["round"], f"{label} round")
    elif kind == "skill-invocation":
        _keys(source, ("kind", "name", "form"), (), label)
        _nonempty(source["name"], f"{label} name")
        _literal(source["form"], ("instructions",), f"{label} form")
    elif kind == "skill-catalog":
        _keys(source, ("kind", "form", "entries"), ("update",), label)
        _literal(source["form"], ("catalog",), f"{label} form")
        if "update" in source:
            _literal(source["update"], (True,), f"{label} update")

        def entry(member: Any, member_label: str) -> None:
            e = _exact(member, member_label, ("name", "description"))
            _nonempty(e["name"], f"{member_label} name")
            _string(e["description"], f"{member_label} description")

        _array(source["entries"], f"{label} entries", entry)
    elif kind == "coordinator" or kind == "subagent-report":
        _keys(source, ("kind", "form", "senderSessionId"), (), label)
        _literal(source["form"], ("relay",), f"{label} form")
        _nonempty(source["senderSessionId"], f"{label} senderSessionId")
    elif kind == "subagent-settled":
        _keys(source, ("kind", "form", "summary", "senderSessionId"), (), label)
        _literal(source["form"], ("notice",), f"{label} form")
        _string(source["summary"], f"{label} summary")
        _nonempty(source["senderSessionId"], f"{label} senderSessionId")
    elif kind == "webhook":
        _keys(source, ("kind", "provider", "source", "deliveryId", "ruleId", "form", "summary"), (), label)
        for key in ("provider", "source", "deliveryId", "ruleId"):
            _nonempty(source[key], f"{label} {key}")
        _literal(source["form"], ("notice",), f"{label} form")
        _string(source["summary"], f"{label} summary")
    else:
        _nonempty(kind, f"{label} kind")


def _plugin_source(source: dict[str, Any], label: str) -> None:
    compact = source.get("plugin") == "compact"
    optional = ("form", "sections", "summary", *(("compactionId", "sourceCommandId") if compact else ()))
    _keys(source, ("kind", "plugin"), optional, label)
    _nonempty(source["plugin"], f"{label} plugin")
    if compact:
        _nonempty(source.get("compactionId", MISSING), f"{label} compactionId")
        if "sourceCommandId" in source:
            _nonempty(source["sourceCommandId"], f"{label} sourceCommandId")
    if "form" not in source:
        return
    form = source["form"]
    _literal(form, _PLUGIN_FORMS, f"{label} form")
    if form == "snapshot":
        def section(member: Any, member_label: str) -> None:
            s = _exact(member, member_label, ("name", "text"))
            _nonempty(s["name"], f"{member_label} name")
            _string(s["text"], f"{member_label} text")

        _array(source.get("sections", MISSING), f"{label} sections", section)
    elif "sections" in source:
        raise _Refused(f"{label} sections require snapshot form")
    if form == "notice":
        _string(source.get("summary", MISSING), f"{label} summary")
    elif "summary" in source:
        raise _Refused(f"{label} summary requires notice form")


_REFERENCE = ("sessionId", "label", "capturedThroughSeq", "compacted", "originalMessages", "retainedMessages",
              "omittedMessages", "omittedBytes", "truncated", "inputIndex")


def _session_reference(source: dict[str, Any], label: str) -> None:
    _keys(source, ("kind", "form", "version", "references"), (), label)
    _literal(source["form"], ("recall",), f"{label} form")
    _literal(source["version"], (1,), f"{label} version")
    seen: set[str] = set()
    position = [0]

    def reference(member: Any, member_label: str) -> None:
        r = _exact(member, member_label, _REFERENCE)  # format 0 admits no capturedFormatVersion
        _nonempty(r["sessionId"], f"{member_label} sessionId")
        _string(r["label"], f"{member_label} label")
        if r["capturedThroughSeq"] is not None:
            _count(r["capturedThroughSeq"], f"{member_label} capturedThroughSeq")
        _boolean(r["compacted"], f"{member_label} compacted")
        original = _count(r["originalMessages"], f"{member_label} originalMessages")
        retained = _count(r["retainedMessages"], f"{member_label} retainedMessages")
        omitted = _count(r["omittedMessages"], f"{member_label} omittedMessages")
        omitted_bytes = _count(r["omittedBytes"], f"{member_label} omittedBytes")
        index = _count(r["inputIndex"], f"{member_label} inputIndex")
        _boolean(r["truncated"], f"{member_label} truncated")
        if retained > original or omitted != original - retained:
            raise _Refused(f"{member_label} message counts are inconsistent")
        if r["truncated"] != (omitted > 0 or omitted_bytes > 0):
            raise _Refused(f"{member_label} truncated disagrees with omitted content")
        if index != position[0]:
            raise _Refused(f"{label} inputIndex must match reference position")
        position[0] += 1
        if r["sessionId"] in seen:
            raise _Refused(f"{label} repeats sessionId {r['sessionId']}")
        seen.add(r["sessionId"])

    if not _array(source["references"], f"{label} references", reference):
        raise _Refused(f"{label} references must be non-empty")


def _request_header(value: Any, label: str) -> None:
    """``requestHeaderValue`` (V01:1087-1119)."""
    header = _exact(value, label, ("config",), ("adapterDefaults", "system", "tools"))
    config = _exact(header["config"], f"{label} config", ("provider", "model"),
                    ("reasoningEffort", "temperature", "maxTokens", "stop"))
    _nonempty(config["provider"], f"{label} provider")
    _nonempty(config["model"], f"{label} model")
    if "reasoningEffort" in config:
        _nonempty(config["reasoningEffort"], f"{label} reasoningEffort")
    if "temperature" in config:
        _finite(config["temperature"], f"{label} temperature")
    if "maxTokens" in config:
        _positive(config["maxTokens"], f"{label} maxTokens")
    if "stop" in config:
        _array(config["stop"], f"{label} stop", _string)
    if "adapterDefaults" in header:
        defaults = _exact(header["adapterDefaults"], f"{label} adapterDefaults", (), ("reasoningEffort", "maxTokens"))
        for key, marker in defaults.items():
            _literal(marker, (True,), f"{label} adapterDefaults {key}")
            if key not in config:
                raise _Refused(f"{label} adapter default {key} lacks config value")
    if "system" in header:
        _string(header["system"], f"{label} system")
    if "tools" in header:
        _array(header["tools"], f"{label} tools", _tool_schema)


def _tool_schema(value: Any, label: str) -> None:
    schema = _exact(value, label, ("name", "description", "parameters"))
    _nonempty(schema["name"], f"{label} name")
    _string(schema["description"], f"{label} description")
    _record(schema["parameters"], f"{label} parameters")


def _shadowed(data: dict[str, Any], seq: int, label: str) -> None:
    r = _exact(data["shadowedRange"], f"{label} shadowedRange", ("start", "end"))
    start = _earlier(r["start"], seq, f"{label} shadowedRange start")
    end = _earlier(r["end"], seq, f"{label} shadowedRange end")
    seqs = _seqs(data["shadowedSeqs"], seq, f"{label} shadowedSeqs", True)
    if seqs[0] != start or seqs[-1] != end:
        raise _Refused(f"{label} shadowedRange must match shadowedSeqs endpoints")
    _count(data["shadowedTokenCount"], f"{label} shadowedTokenCount")


_GOAL_OPERATIONS = ("create", "edit", "pause", "resume", "complete", "block")


def _goal_change(data: dict[str, Any], label: str) -> None:
    _literal(data.get("kind", MISSING), ("goal/change",), f"{label} kind")
    _literal(data.get("version", MISSING), (1,), f"{label} version")
    if data.get("operation") == "clear":
        _keys(data, ("kind", "version", "operation", "cleared", "clearedAt"), (), f"{label} data")
        ref = _exact(data["cleared"], f"{label} cleared", ("id", "revision"))
        _nonempty(ref["id"], f"{label} cleared id")
        _positive(ref["revision"], f"{label} cleared revision")
        _count(data["clearedAt"], f"{label} clearedAt")
        return
    _keys(data, ("kind", "version", "operation", "goal", "roundsStarted", "createdAt", "updatedAt"), (), f"{label} data")
    _literal(data["operation"], _GOAL_OPERATIONS, f"{label} operation")
    goal = _exact(data["goal"], f"{label} goal", ("id", "revision", "objective", "phase", "maxGoalRounds"), ("blockedReason",))
    g = f"{label} goal"
    _nonempty(goal["id"], f"{g} id")
    _positive(goal["revision"], f"{g} revision")
    _nonempty(goal["objective"], f"{g} objective")
    _literal(goal["phase"], ("active", "paused", "blocked", "complete"), f"{g} phase")
    _positive(goal["maxGoalRounds"], f"{g} maxGoalRounds")
    if goal["phase"] == "blocked":
        reason = _exact(goal.get("blockedReason", MISSING), f"{g} blockedReason", ("code", "message"))
        _nonempty(reason["code"], f"{g} blocked code")
        _nonempty(reason["message"], f"{g} blocked message")
    elif "blockedReason" in goal:
        raise _Refused(f"{g} blockedReason requires blocked phase")
    for key in ("roundsStarted", "createdAt", "updatedAt"):
        _count(data[key], f"{label} {key}")


_INSTANT = re.compile(
    r"(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z"
)


def _instant(value: Any, label: str) -> None:
    ok = value.__class__ is str and _INSTANT.fullmatch(value) is not None
    if ok:
        try:
            date(int(value[:4]), int(value[5:7]), int(value[8:10]))
        except ValueError:  # a day the month does not have: Date.parse rolls it over, toISOString differs
            ok = False
    if not ok:
        raise _Refused(f"{label} must be a canonical UTC instant")


def _schedule_id(value: Any, label: str) -> None:
    _nonempty(value, label)
    if value.strip() != value:
        raise _Refused(f"{label} must not have surrounding whitespace")


def _schedule_change(data: dict[str, Any], label: str) -> None:
    _literal(data.get("version", MISSING), (1,), f"{label} version")
    if data.get("operation") == "create":
        _keys(data, ("version", "operation", "schedule"), (), f"{label} data")
        s = _record(data["schedule"], f"{label} schedule")
        sl = f"{label} schedule"
        kind = s.get("kind")
        if kind == "after":
            _keys(s, ("id", "kind", "prompt", "afterSeconds", "scheduledAt"), (), sl)
            _positive(s["afterSeconds"], f"{sl} afterSeconds")
        elif kind == "at":
            _keys(s, ("id", "kind", "prompt", "scheduledAt"), (), sl)
        elif kind == "every":
            _keys(s, ("id", "kind", "prompt", "everySeconds", "scheduledAt"), (), sl)
            if _positive(s["everySeconds"], f"{sl} everySeconds") < 300:
                raise _Refused(f"{sl} everySeconds must be at least 300")
        else:
            raise _Refused(f"{sl} has unknown schedule kind")
        _schedule_id(s["id"], f"{sl} id")
        _nonempty(s["prompt"], f"{sl} prompt")
        _instant(s["scheduledAt"], f"{sl} scheduledAt")
        return
    _keys(data, ("version", "operation", "id"), ("acceptedAt",) if data.get("operation") == "dispatch" else (),
          f"{label} data")
    _literal(data["operation"], ("delete", "dispatch"), f"{label} operation")
    _schedule_id(data["id"], f"{label} id")
    if "acceptedAt" in data:
        _instant(data["acceptedAt"], f"{label} acceptedAt")


def _route(value: Any, label: str) -> None:
    route = _exact(value, label, ("provider", "model"))
    _nonempty(route["provider"], f"{label} provider")
    _nonempty(route["model"], f"{label} model")


def _title_source(value: Any, label: str) -> None:
    source = _record(value, label)
    if source.get("kind") == "provider":
        _keys(source, ("kind", "provider"), ("model",), label)
        _nonempty(source["provider"], f"{label} provider")
        if "model" in source:
            _route(source["model"], f"{label} model")
        return
    _keys(source, ("kind",), (), label)
    _literal(source["kind"], ("fallback", "user"), f"{label} kind")


def _descriptor(data: dict[str, Any], label: str) -> None:
    _literal(data["version"], (3,), f"{label} version")
    _nonempty(data["provider"], f"{label} provider")
    if data["mode"] == "one-shot":
        _keys(data, ("mode", "version", "provider"), ("label",), f"{label} data")
        if "label" in data:
            _string(data["label"], f"{label} label")
        return
    _literal(data["mode"], ("continuable",), f"{label} mode")
    _nonempty(data.get("label", MISSING), f"{label} label")
    for key in ("agentProvider", "agentModel", "agentReasoningEffort", "persona"):
        if key in data:
            _nonempty(data[key], f"{label} {key}")
    if ("agentProvider" in data) != ("agentModel" in data):
        raise _Refused(f"{label} agentProvider and agentModel must be paired")
    if "toolFilter" in data:
        f = _exact(data["toolFilter"], f"{label} toolFilter", (), ("allow", "deny"))
        if "allow" not in f and "deny" not in f:
            raise _Refused(f"{label} toolFilter requires allow or deny")
        for key in ("allow", "deny"):
            if key in f:
                _array(f[key], f"{label} {key}", _nonempty)


def _allowed_models(value: Any, label: str) -> None:
    seen: set[tuple[str, str]] = set()

    def route(member: Any, member_label: str) -> None:
        r = _exact(member, member_label, ("provider", "model"))
        _nonempty(r["provider"], f"{member_label} provider")
        _nonempty(r["model"], f"{member_label} model")
        key = (r["provider"], r["model"])
        if key in seen:
            raise _Refused(f"{label} repeats route {key[0]}\0{key[1]}")
        seen.add(key)

    if not _array(value, label, route):
        raise _Refused(f"{label} must be non-empty")


def _team(data: dict[str, Any], label: str) -> None:
    _literal(data["version"], (1,), f"{label} version")
    _nonempty(data["teamId"], f"{label} teamId")


def _team_member(value: Any, label: str) -> None:
    m = _exact(value, label, ("id", "name", "description", "provider", "context", "phase"), ("error",))
    _nonempty(m["id"], f"{label} id")
    for key in ("name", "description", "provider"):
        _string(m[key], f"{label} {key}")
    _literal(m["context"], ("fresh", "fork"), f"{label} context")
    _literal(m["phase"], ("provisioning", "active", "failed"), f"{label} phase")
    if "error" in m:
        _string(m["error"], f"{label} error")


def _team_task(value: Any, label: str) -> None:
    t = _exact(value, label, ("id", "revision", "subject", "description", "status", "blockedBy", "writeScopes"),
               ("ownerId",))
    _nonempty(t["id"], f"{label} id")
    _positive(t["revision"], f"{label} revision")
    _string(t["subject"], f"{label} subject")
    _string(t["description"], f"{label} description")
    _literal(t["status"], ("pending", "in_progress", "completed", "deleted"), f"{label} status")
    if "ownerId" in t:
        _nonempty(t["ownerId"], f"{label} ownerId")
    _array(t["blockedBy"], f"{label} blockedBy", _nonempty)
    _array(t["writeScopes"], f"{label} writeScopes", _string)


def _team_message(value: Any, label: str) -> None:
    m = _exact(value, label, ("id", "senderId", "senderName", "targetId", "delivery", "content"))
    for key in ("id", "senderId", "targetId"):
        _nonempty(m[key], f"{label} {key}")
    _string(m["senderName"], f"{label} senderName")
    _literal(m["delivery"], ("quiet", "wakeup"), f"{label} delivery")
    _blocks(m["content"], f"{label} content")


def _search_body(value: Any, label: str) -> None:
    body = _exact(value, label, ("model", "max_tokens", "messages", "tools"))
    _nonempty(body["model"], f"{label} model")
    _positive(body["max_tokens"], f"{label} max_tokens")

    def text(block: Any, block_label: str) -> None:
        t = _exact(block, block_label, ("type", "text"))
        _literal(t["type"], ("text",), f"{block_label} type")
        _string(t["text"], f"{block_label} text")

    def message(member: Any, member_label: str) -> None:
        m = _exact(member, member_label, ("role", "content"))
        _literal(m["role"], ("user",), f"{member_label} role")
        if len(_array(m["content"], f"{member_label} content", text)) != 1:
            raise _Refused(f"{member_label} content must contain one text block")

    def tool(member: Any, member_label: str) -> None:
        t = _exact(member, member_label, ("type", "name", "max_uses"))
        _literal(t["type"], ("web_search_20250305",), f"{member_label} type")
        _literal(t["name"], ("web_search",), f"{member_label} name")
        _positive(t["max_uses"], f"{member_label} max_uses")

    if len(_array(body["messages"], f"{label} messages", message)) != 1:
        raise _Refused(f"{label} messages must contain one user message")
    if len(_array(body["tools"], f"{label} tools", tool)) != 1:
        raise _Refused(f"{label} tools must contain one web search tool")


def _todo(value: Any, label: str) -> None:
    item = _exact(value, label, ("content", "status"))
    _string(item["content"], f"{label} content")
    _literal(item["status"], ("pending", "in_progress", "completed"), f"{label} status")


def _workflow(data: dict[str, Any], label: str) -> None:
    _nonempty(data["runId"], f"{label} runId")
    _positive(data["seq"], f"{label} seq")


# --- each type's semantics (assertReleasedPayloadSemantics, V01:269-559): ``data`` holds exactly its
# disposition's members already; ``kind`` tells apart the types that share a check


def _payload_agent_preset_selected(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _string(data["agentPreset"], f"{label} agentPreset")


def _payload_agent_inbox_spliced(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _literal(data["target"], ("next-turn", "next-step"), f"{label} target")
    _count(data["start"], f"{label} start")
    if "removedCount" in data:
        _count(data["removedCount"], f"{label} removedCount")
    _array(data["inserted"], f"{label} inserted",
           lambda v, _l: _message(v, f"{label} inserted message", "user"))
    if "outcome" in data:
        _literal(data["outcome"], ("canceled",), f"{label} outcome")


def _payload_approval_asked(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["id"], f"{label} id")
    _nonempty(data["toolName"], f"{label} toolName")
    if "callId" in data:
        _nonempty(data["callId"], f"{label} callId")
    if "reason" in data:
        _string(data["reason"], f"{label} reason")


def _payload_approval_decided(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["id"], f"{label} id")
    _literal(data["outcome"], ("allowed-once", "rejected", "cancelled", "unavailable"), f"{label} outcome")


def _payload_approval_policy(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _literal(data["policy"], ("ask", "never"), f"{label} policy")
    if "source" in data:
        _literal(data["source"], ("delegation",), f"{label} source")


def _payload_assistant_message(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _pair(data, label)
    _message(data["message"], f"{label} message", "assistant")
    if "usage" in data:
        _usage(data["usage"], f"{label} usage")
    if "interrupted" in data:
        _literal(data["interrupted"], (True,), f"{label} interrupted")


def _payload_command_done(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["commandId"], f"{label} commandId")
    _literal(data["kind"], ("success", "error"), f"{label} kind")
    if "text" in data:
        _string(data["text"], f"{label} text")
    if "sourceEventSeq" in data:
        _earlier(data["sourceEventSeq"], seq, f"{label} sourceEventSeq")


def _payload_command_run(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["commandId"], f"{label} commandId")
    _nonempty(data["name"], f"{label} name")
    if "args" in data:
        _string(data["args"], f"{label} args")
    _literal(_exact(data["source"], f"{label} source", ("kind",))["kind"], ("user",), f"{label} source kind")


def _payload_compaction_start(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["compactionId"], f"{label} compactionId")
    if "sourceCommandId" in data:
        _nonempty(data["sourceCommandId"], f"{label} sourceCommandId")
    if data["turn"] is not None:
        _count(data["turn"], f"{label} turn")
    if "error" in data:
        _string(data["error"], f"{label} error")


def _payload_compaction_prune(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _shadowed(data, seq, label)


def _payload_compaction_summary(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    g = data.get
    if g("llmStreamCall") is True and "rawOutput" not in data:
        raise _Refused(f"{label} llmStreamCall requires rawOutput")
    _nonempty(data["compactionId"], f"{label} compactionId")
    if "sourceCommandId" in data:
        _nonempty(data["sourceCommandId"], f"{label} sourceCommandId")
    _blocks(data["summary"], f"{label} summary")
    _shadowed(data, seq, label)
    _nonempty(data["provider"], f"{label} provider")
    _nonempty(data["model"], f"{label} model")
    if "maxTokens" in data:
        _count(data["maxTokens"], f"{label} maxTokens")
    if "usage" in data:
        _usage(data["usage"], f"{label} usage")
    if "rawOutput" in data:
        _blocks(data["rawOutput"], f"{label} rawOutput")
    if "llmStreamCall" in data:
        _literal(data["llmStreamCall"], (True,), f"{label} llmStreamCall")


def _payload_feedback_record(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["text"], f"{label} text")


def _payload_goal_change(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _goal_change(data, label)


def _payload_hook_invoked(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _count(data["turn"], f"{label} turn")
    _nonempty(data["point"], f"{label} point")
    _literal(data["dialect"], ("claude-code", "codex"), f"{label} dialect")
    if "matcher" in data:
        _string(data["matcher"], f"{label} matcher")
    _nonempty(data["handlerId"], f"{label} handlerId")


def _payload_hook_result(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _count(data["turn"], f"{label} turn")
    for key in ("point", "handlerId", "decision"):
        _nonempty(data[key], f"{label} {key}")
    if "exitCode" in data:
        _safe_integer(data["exitCode"], f"{label} exitCode")
    if "stderrSummary" in data:
        _string(data["stderrSummary"], f"{label} stderrSummary")
    if _finite(data["durationMs"], f"{label} durationMs") < 0:
        raise _Refused(f"{label} durationMs must be non-negative")


def _payload_llm_retry(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    g = data.get
    _nonempty(data["retryId"], f"{label} retryId")
    _pair(data, label)
    _nonempty(data["provider"], f"{label} provider")
    _literal(data["mode"], ("normal", "always"), f"{label} mode")
    _nonempty(data["policyKey"], f"{label} policyKey")
    retry = _positive(data["retry"], f"{label} retry")
    if data["mode"] == "normal":
        if retry > _positive(g("maxRetries", MISSING), f"{label} maxRetries"):
            raise _Refused(f"{label} retry exceeds maxRetries")
    elif "maxRetries" in data:
        raise _Refused(f"{label} always mode must omit maxRetries")
    delay = _finite(data["delayMs"], f"{label} delayMs")
    if delay < 0:
        raise _Refused(f"{label} delayMs must be non-negative")
    if delay > 2147483647:
        raise _Refused(f"{label} delayMs exceeds the timer range")
    _failure(data["failure"], f"{label} failure")


def _payload_llm_retry_started(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["retryId"], f"{label} retryId")
    _pair(data, label)
    _positive(data["retry"], f"{label} retry")


def _payload_model_selection(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["provider"], f"{label} provider")
    _nonempty(data["model"], f"{label} model")
    if "reasoningEffort" in data:
        _nonempty(data["reasoningEffort"], f"{label} reasoningEffort")
    if "contextWindow" in data:
        _positive(data["contextWindow"], f"{label} contextWindow")


def _payload_permission_preset(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["preset"], f"{label} preset")


def _payload_plan_mode(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _boolean(data["active"], f"{label} active")


def _payload_request_header(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _request_header(data["header"], f"{label} header")
    _literal(data["reason"], ("initial", "resume", "change", "series"), f"{label} reason")
    if "startsSeries" in data:
        _literal(data["startsSeries"], (True,), f"{label} startsSeries")


def _payload_sandbox_mode(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _literal(data["mode"], ("read-only", "workspace-write", "danger-full-access"), f"{label} mode")
    if "source" in data:
        _literal(data["source"], ("delegation",), f"{label} source")


def _payload_schedule_change(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _schedule_change(data, label)


def _payload_session_log_deepseek_delivery_accepted(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["sessionId"], f"{label} sessionId")
    _earlier(data["throughSeq"], seq, f"{label} throughSeq")


def _payload_session_title(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["title"], f"{label} title")
    _seqs(data["messageSeqs"], seq, f"{label} messageSeqs", False)
    _title_source(data["source"], f"{label} source")


def _payload_session_title_llm_request(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["titleProvider"], f"{label} titleProvider")
    _seqs(data["messageSeqs"], seq, f"{label} messageSeqs", True)
    _route(data["route"], f"{label} route")
    _string(data["system"], f"{label} system")
    _array(data["messages"], f"{label} messages", lambda v, _l: _message(v, f"{label} message", None))
    _positive(data["maxTokens"], f"{label} maxTokens")


def _payload_step_end(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _pair(data, label)


def _payload_subagent_descriptor(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _descriptor(data, label)


def _payload_subagent_model_selection_policy(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _allowed_models(data["allowedModels"], f"{label} allowedModels")


def _payload_team_member(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _team(data, label)
    _team_member(data["member"], f"{label} member")


def _payload_team_message_delivered(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _team(data, label)
    _nonempty(data["messageId"], f"{label} messageId")
    _nonempty(data["targetId"], f"{label} targetId")


def _payload_team_message_queued(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _team(data, label)
    _team_message(data["message"], f"{label} message")


def _payload_team_task(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _team(data, label)
    _team_task(data["task"], f"{label} task")


def _payload_todo_write(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _array(data["todos"], f"{label} todos", _todo)


def _payload_tool_workflow_agent_end(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _workflow(data, label)
    _literal(data["outcome"], ("completed", "failed", "cancelled"), f"{label} outcome")


def _payload_tool_workflow_agent_start(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _workflow(data, label)
    _string(data["label"], f"{label} label")
    if "phase" in data:
        _string(data["phase"], f"{label} phase")
    _nonempty(data["childId"], f"{label} childId")


def _payload_tool_workflow_run_end(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["runId"], f"{label} runId")
    _literal(data["stopReason"], ("completed", "cancelled", "error"), f"{label} stopReason")


def _payload_tool_workflow_run_start(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["runId"], f"{label} runId")
    _nonempty(data["name"], f"{label} name")


def _payload_tool_call(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _pair(data, label)
    _nonempty(data["callId"], f"{label} callId")
    _nonempty(data["name"], f"{label} name")
    _string(data["arguments"], f"{label} arguments")


def _payload_tool_code_dispatch(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    for key in ("rootCallId", "parentCallId", "subCallId", "name"):
        _nonempty(data[key], f"{label} {key}")
    if kind == "tool/code-dispatch":
        _boolean(data["isError"], f"{label} isError")
        _blocks(data["content"], f"{label} content")


def _payload_tool_result(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _pair(data, label)
    _message(data["message"], f"{label} message", "tool")
    if "error" in data:
        error = _exact(data["error"], f"{label} error", ("name", "code"))
        _nonempty(error["name"], f"{label} error name")
        _nonempty(error["code"], f"{label} error code")


def _payload_turn_start(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _count(data["turn"], f"{label} turn")


def _payload_user_message(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _message(data, label, "user")


def _payload_web_deepseek_search_llm_request(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    _nonempty(data["endpoint"], f"{label} endpoint")
    _nonempty(data["apiVersion"], f"{label} apiVersion")
    _search_body(data["body"], f"{label} body")

_SEMANTICS: dict[str, Callable[[str, dict[str, Any], int, str], None]] = {
    "agent-preset/selected": _payload_agent_preset_selected,
    "agent/inbox/spliced": _payload_agent_inbox_spliced,
    "approval/asked": _payload_approval_asked,
    "approval/decided": _payload_approval_decided,
    "approval/policy": _payload_approval_policy,
    "assistant/message": _payload_assistant_message,
    "command/done": _payload_command_done,
    "command/run": _payload_command_run,
    "compaction/start": _payload_compaction_start,
    "compaction/end": _payload_compaction_start,
    "compaction/prune": _payload_compaction_prune,
    "compaction/summary": _payload_compaction_summary,
    "feedback/record": _payload_feedback_record,
    "goal/change": _payload_goal_change,
    "hook/invoked": _payload_hook_invoked,
    "hook/result": _payload_hook_result,
    "llm/retry": _payload_llm_retry,
    "llm/retry-started": _payload_llm_retry_started,
    "model/selection": _payload_model_selection,
    "request/context": _payload_model_selection,
    "permission/preset": _payload_permission_preset,
    "plan/mode": _payload_plan_mode,
    "request/header": _payload_request_header,
    "sandbox/mode": _payload_sandbox_mode,
    "schedule/change": _payload_schedule_change,
    "session-log-deepseek/delivery-accepted": _payload_session_log_deepseek_delivery_accepted,
    "session/title": _payload_session_title,
    "session/title-llm-request": _payload_session_title_llm_request,
    "step/end": _payload_step_end,
    "step/start": _payload_step_end,
    "subagent/descriptor": _payload_subagent_descriptor,
    "subagent/model-selection-policy": _payload_subagent_model_selection_policy,
    "team/member": _payload_team_member,
    "team/message/delivered": _payload_team_message_delivered,
    "team/message/queued": _payload_team_message_queued,
    "team/task": _payload_team_task,
    "todo/write": _payload_todo_write,
    "tool-workflow/agent-end": _payload_tool_workflow_agent_end,
    "tool-workflow/agent-start": _payload_tool_workflow_agent_start,
    "tool-workflow/run-end": _payload_tool_workflow_run_end,
    "tool-workflow/run-start": _payload_tool_workflow_run_start,
    "tool/call": _payload_tool_call,
    "tool/code-dispatch": _payload_tool_code_dispatch,
    "tool/code-dispatch-start": _payload_tool_code_dispatch,
    "tool/result": _payload_tool_result,
    "turn/start": _payload_turn_start,
    "user/message": _payload_user_message,
    "web/deepseek-search-llm-request": _payload_web_deepseek_search_llm_request,
}
"""Each type's check of its members' types and relations: every type of the inventory but
session/end-seed (nothing to check), assistant/chunk (never payload-checked) and turn/end (T5's)."""

assert frozenset(_SEMANTICS) == frozenset(DISPOSITIONS) - {"session/end-seed", "assistant/chunk", "turn/end"}


def _semantics(kind: str, data: dict[str, Any], seq: int, label: str) -> None:
    """``assertReleasedPayloadSemantics`` (V01:269-559) for format 0, ``data`` holding exactly its
    disposition's members already."""
    check = _SEMANTICS.get(kind)
    if check is not None:
        check(kind, data, seq, label)


def released_payload_refusal(kind: str, data: Any, seq: int) -> str | None:
    """Released's refusal of a normalised format-0 event's payload (``assertReleasedEventPayload``,
    V01:1576-1593), in its own words, or ``None``. ``kind`` is in the inventory."""
    label = f"{kind} {seq}"
    try:
        record = _record(data, f"{label} data")
        required, admitted = DISPOSITIONS[kind]
        if kind == "subagent/descriptor" and not _same(record.get("version", MISSING), 3):
            return None  # a version other than 3 is G1's
        for key in record:
            if key not in admitted:
                raise _Refused(f'{label} data has unexpected member "{key}"')
        for key in required:
            if key not in record:
                raise _Refused(f'{label} data lacks required member "{key}"')
        _semantics(kind, record, seq, label)
    except _Refused as refusal:
        return str(refusal)
    except (KeyError, IndexError, TypeError, AttributeError):  # a shape released refuses one check earlier
        return f"{label} data is malformed"
    return None


_SKIPPED = frozenset({"assistant/chunk", "turn/end"})
"""Types G5 does not judge: chunks are never payload-checked by the migration, turn/end is T5's."""

_MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_COMPACT_RENAMES = {"compact/start": "compaction/start", "compact/summary": "compaction/summary",
                    "compact/end": "compaction/end", "compact/prune": "compaction/prune"}


_METER_VALIDATES = frozenset({"assistant/chunk", "compaction/prune", "compaction/summary"})
"""Types whose data the token meter refuses whenever it is not an object (measured)."""
_METER_READS = frozenset({"request/context"})
"""Types whose null data the token meter reads a member of, and throws (measured)."""
_LOAD_READS = frozenset({"turn/start", "step/start", "tool/call"})
"""Types whose null data the format-0 loader reads a member of, and refuses (measured)."""

def _count_of(value: Any) -> bool:
    return value.__class__ is int and 0 <= value <= MAX_SAFE_INTEGER


# --- the shortcut: the most frequent records in a shape the validator accepts ---------------------
# Each ``_plain_*`` answers whether ``data`` (a dict), the data of ``event``, is such a record; a
# ``False`` decides nothing (the full check follows), a ``True`` is exact: the migration's
# normalisation leaves the record as it is and the validator accepts it
# (tests/unit/test_released_shortcuts.py holds the two together).

def _plain_pair(data: dict[str, Any], event: dict[str, Any]) -> bool:
    turn, step = data.get("turn"), data.get("step")
    return (len(data) == 2 and turn.__class__ is int and step.__class__ is int
            and 0 <= turn <= MAX_SAFE_INTEGER and 0 <= step <= MAX_SAFE_INTEGER)


def _plain_turn_start(data: dict[str, Any], event: dict[str, Any]) -> bool:
    turn = data.get("turn")
    return len(data) == 1 and turn.__class__ is int and 0 <= turn <= MAX_SAFE_INTEGER


def _plain_tool_call(data: dict[str, Any], event: dict[str, Any]) -> bool:
    turn, step, call, name = data.get("turn"), data.get("step"), data.get("callId"), data.get("name")
    return (len(data) == 5 and turn.__class__ is int and step.__class__ is int
            and 0 <= turn <= MAX_SAFE_INTEGER and 0 <= step <= MAX_SAFE_INTEGER
            and call.__class__ is str and call != "" and name.__class__ is str and name != ""
            and data.get("arguments").__class__ is str)


_USAGE_MEMBERS = frozenset({"inputTokens", "outputTokens", *_USAGE_OPTIONAL})


def _plain_usage(usage: Any) -> bool:
    """A usage of counts, its two required members and any of the optional ones."""
    if usage.__class__ is not dict or "inputTokens" not in usage or "outputTokens" not in usage:
        return False
    for key, member in usage.items():
        if not _count_of(member) or key not in _USAGE_MEMBERS:
            return False
    return True


def _plain_assistant_message(data: dict[str, Any], event: dict[str, Any]) -> bool:
    n = len(data)
    if not (n == 3 or (n == 4 and _plain_usage(data.get("usage")))):
        return False
    return _count_of(data.get("turn")) and _count_of(data.get("step")) and _plain_message(data.get("message"), "assistant")


def _plain_tool_result(data: dict[str, Any], event: dict[str, Any]) -> bool:
    n = len(data)
    if not (n == 3 or (n == 4 and "meta" in data)):
        return False
    return _count_of(data.get("turn")) and _count_of(data.get("step")) and _plain_message(data.get("message"), "tool")


def _plain_user_message(data: dict[str, Any], event: dict[str, Any]) -> bool:
    return _plain_message(data, "user")


def _plain_prune(data: dict[str, Any], event: dict[str, Any]) -> bool:
    """A prune of distinct seqs before the event's own, its range naming the first and the last."""
    shadowed, seqs, seq = data.get("shadowedRange"), data.get("shadowedSeqs"), event.get("seq")
    if len(data) != 3 or shadowed.__class__ is not dict or len(shadowed) != 2 or seqs.__class__ is not list \
            or not seqs or seq.__class__ is not int or not _count_of(data.get("shadowedTokenCount")):
        return False
    start, end = shadowed.get("start"), shadowed.get("end")
    return (start.__class__ is int and end.__class__ is int and start == seqs[0] and end == seqs[-1]
            and all(n.__class__ is int and 0 <= n < seq for n in seqs) and len(set(seqs)) == len(seqs))


def _plain_inbox(data: dict[str, Any], event: dict[str, Any]) -> bool:
    n = len(data)
    if n != 3:  # the optional members, when present, hold their one plain value
        if n > 5 or n - ("removedCount" in data) - ("outcome" in data) != 3 \
                or not _count_of(data.get("removedCount", 0)) or data.get("outcome", "canceled") != "canceled":
            return False
    target, inserted = data.get("target"), data.get("inserted")
    if not (target == "next-turn" or target == "next-step") or not _count_of(data.get("start")) \
            or inserted.__class__ is not list:
        return False
    for message in inserted:
        if not _plain_message(message, "user"):
            return False
    return True


_PLAIN: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    "step/start": _plain_pair,
    "step/end": _plain_pair,
    "turn/start": _plain_turn_start,
    "tool/call": _plain_tool_call,
    "assistant/message": _plain_assistant_message,
    "tool/result": _plain_tool_result,
    "user/message": _plain_user_message,
    "agent/inbox/spliced": _plain_inbox,
    "compaction/prune": _plain_prune,
}
"""The format-0 types frequent enough for a shortcut, each with its test of a plain record (a prune
is one for each replaced tool result)."""


_SUBSCRIBED = tuple(sorted((RELEASED_V0_EVENT_TYPES | {"steering/message", *_COMPACT_RENAMES}) - _SKIPPED))
"""Every type G5 reads (for format 1, only the inventory's are judged): no chunk reaches the walk."""


@rule_walk(R.G5, types={**{kind: "plain" if kind in _PLAIN else "visit" for kind in _SUBSCRIBED},
                         "assistant/chunk": "chunk"})
class ReleasedSchema:
    """G5 (see the module docstring). State: the migration's open compaction id and a retryId per
    retry chain (pending state, O(retry chains)); every event is judged as the walk passes it."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.v0 = ctx.version == 0
        assert ctx.log.header is not None, "a released walk runs on a log with a versioned header"
        header = ctx.log.header.raw
        sid = header.get("id") if header.__class__ is dict else None
        self.sid = sid if sid.__class__ is str else str(sid)
        self.compaction: str | None = None
        self.retry_ids: dict[str, str] = {}

    def plain(self, index: int, ev: Event) -> list[Finding] | None:
        """A head of a type with a shortcut (:data:`_PLAIN`): the common well-formed records are
        decided without the validator; the rest go to :meth:`visit`. The loop routes a head by its
        type, so ``raw`` is an object with that string type."""
        raw = ev.raw
        data = raw.get("data")
        plain = _PLAIN.get(raw["type"])
        if plain is not None and data.__class__ is dict and self.v0 and plain(data, raw):
            return None
        return self.visit(index, ev)

    def visit(self, index: int, ev: Event) -> list[Finding] | None:
        raw = ev.raw
        if raw.__class__ is not dict:
            return None
        kind = raw.get("type")
        if kind.__class__ is not str:
            return None
        data = raw.get("data", MISSING)
        seq = ev.seq if ev.seq.__class__ is int else index
        if not self.v0:  # the relation walk of a format-1 restore reads only this much of a payload
            if kind in RELEASED_V0_EVENT_TYPES and data is not MISSING and data.__class__ is not dict:
                return [self._finding(ev, f"{kind} {seq} data must be a JSON object", "format 1", data)]
            if kind == "tool/result" and data.__class__ is dict:
                return self._v1_result_error(ev, raw, data, seq)
            return None
        kind = _COMPACT_RENAMES.get(kind, kind)
        if kind in _SKIPPED or (kind not in RELEASED_V0_EVENT_TYPES and kind != "steering/message"):
            return None  # chunks, turn/end (T5), unknown types (G2) and retired ones (E5)
        if data is MISSING:
            return None  # E8's missing data member
        if data.__class__ is not dict:
            return [self._finding(ev, f"{kind} {seq} data must be a JSON object", data=data)]
        try:
            kind, data = self._normalise(kind, data, seq, raw)
        except _Refused as refusal:
            return [self._finding(ev, str(refusal))]
        if kind is None:
            return None
        why = released_payload_refusal(kind, data, seq)
        if why is not None and self._owned_elsewhere(kind, data):
            return None
        if why is None and kind == "session-log-deepseek/delivery-accepted":
            why = self._delivery_marker(data, seq)
        if why is None:
            return None
        if kind.startswith("session/title") and "messageSeqs" in why:
            return None  # G3 reports title messageSeqs
        if released_refuses_lossy(0, raw):
            return None  # E4's
        return [self._finding(ev, why)]

    def _v1_result_error(self, ev: Event, raw: dict[str, Any], data: dict[str, Any], seq: int) -> list[Finding] | None:
        """The relation walk reads an appended tool/result's message, its source and its error as
        records (V01:2359-2362); a message or source that is no object is a message-shape defect
        (E6), an error that is no object only released refuses."""
        if raw.get("surfaceOp") != "append" or "error" not in data or data["error"].__class__ is dict:
            return None
        message = data.get("message")
        if message.__class__ is not dict or message.get("source").__class__ is not dict:
            return None
        return [self._finding(ev, f"tool/result {seq} error must be a JSON object", "format 1")]

    def chunk(self, index: int, ev: Event) -> list[Finding] | None:
        """An assistant/chunk head: the migration and the relation walk read only that its data is an
        object (a packed run's members are built with one)."""
        data = ev.raw.get("data", MISSING)
        if data.__class__ is dict or data is MISSING:
            return None
        seq = ev.seq if ev.seq.__class__ is int else index
        return [self._finding(ev, f"assistant/chunk {seq} data must be a JSON object",
                              "format 0" if self.v0 else "format 1", data)]

    def finish(self) -> None:
        return None

    def _finding(self, ev: Event, why: str, fmt: str = "format 0", data: Any = MISSING) -> Finding:
        """A G5 finding; for a ``data`` that is not an object, also the other layers that refuse it."""
        layers = {L.RELEASED}
        if data is not MISSING:
            kind = ev.raw.get("type")
            if kind in _METER_VALIDATES or (data is None and kind in _METER_READS):
                layers.add(L.METER)
            if data is None and self.v0 and kind in _LOAD_READS:
                layers.add(L.LOAD)
        return self.ctx.finding(R.G5, f"released migration refuses this {fmt} event: {why}", event=ev,
                                refused_by=tuple(x for x in L if x in layers))

    def _delivery_marker(self, data: dict[str, Any], seq: int) -> str | None:
        """``assertSourceDeliveryMarker`` (V01:1944-1950): a current-generation delivery marker
        (sessionFormatVersion absent, null or 0) outside the inherited prefix names this session;
        a generation-1 marker is the relation walk's (G4, V01:2442-2444)."""
        assert self.ctx.log.header is not None, "a released walk runs on a log with a versioned header"
        header = self.ctx.log.header.raw
        header = header if header.__class__ is dict else {}
        seed_length = header.get("seedLength", 0)
        inherited = "parentSession" in header and seed_length.__class__ is int and seq < seed_length
        accepted = data.get("sessionFormatVersion")  # ``?? 0``: absent and null are generation 0
        if not _same(0 if accepted is None else accepted, 0) or inherited \
                or _same(data.get("sessionId", MISSING), header.get("id")):
            return None
        return "current-generation delivery marker names the wrong Session"

    def _normalise(self, kind: str, data: dict[str, Any], seq: int, raw: dict[str, Any]) -> tuple[Any, Any]:
        """``normalizeReleasedV0Event`` (V01:1914-2247) for one event: the type and data the payload
        validator sees, or ``(None, None)`` where another rule owns the legacy shape."""
        if kind == "steering/message":
            if "message" in data:
                _keys(data, ("turn", "message"), (), f"steering/message {seq} data")
                _count(data["turn"], f"steering/message {seq} turn")
                return "user/message", data["message"]
            _keys(data, ("turn", "content", "source"), (), f"steering/message {seq} data")
            _count(data["turn"], f"steering/message {seq} turn")
            rest = {k: v for k, v in data.items() if k != "turn"}
            return "user/message", {**rest, "id": f"legacy-message:{self.sid}:{seq}", "role": "user"}
        if kind == "turn/start" and "trigger" in data:
            _keys(data, ("turn", "trigger"), (), f"turn/start {seq} data")
            turn = _count(data["turn"], f"turn/start {seq} turn")
            trigger = _record(data["trigger"], f"turn/start {seq} trigger")
            k = trigger.get("kind")
            if turn < 1 or k.__class__ is not str or not k:
                raise _Refused(f'session "{self.sid}" contains malformed pre-react-loop turn/start at seq {seq}')
            return kind, {"turn": turn}
        if kind == "request/header":
            if data.get("reason") == "fallback" or request_header_problems(0, data):
                return None, None  # E5's retired reason, E10's header
            header = _record(data.get("header", MISSING), f"request/header {seq} header")
            if "messagePrefix" in header:
                if header["messagePrefix"].__class__ is not list:
                    raise _Refused(f'session "{self.sid}" contains malformed request/header messagePrefix at seq {seq}')
                data = {**data, "header": {k: v for k, v in header.items() if k != "messagePrefix"}}
        elif kind == "llm/retry":
            chain = "\0".join(repr(data.get(k, MISSING)) for k in ("turn", "step", "provider", "policyKey"))
            rid = data.get("retryId", MISSING)
            if rid.__class__ is str and rid:
                self.retry_ids[chain] = rid
            elif rid is MISSING:
                rid = self.retry_ids.setdefault(chain, f"legacy-retry:{self.sid}:{seq}")
                data = {**data, "retryId": rid}
        if kind == "session/end-seed":
            self.compaction = None
        elif kind == "compaction/start":
            cid = data.get("compactionId", MISSING)
            if cid.__class__ is str and cid:
                self.compaction = cid
            elif cid is MISSING:
                self.compaction = f"legacy-compaction:{self.sid}:{seq}"
                data = {**data, "compactionId": self.compaction}
        elif self.compaction is not None and kind in ("compaction/summary", "compaction/end"):
            if "compactionId" not in data:
                data = {**data, "compactionId": self.compaction}
            if kind == "compaction/end":
                self.compaction = None
        elif self.compaction is not None and kind == "user/message":
            source = data.get("source")
            if source.__class__ is dict and source.get("kind") == "plugin" and source.get("plugin") == "compact" \
                    and "compactionId" not in source:
                data = {**data, "source": {**source, "compactionId": self.compaction}}
        if kind in _MESSAGE_TYPES:
            upgraded = _legacy_upgrade(kind, data)
            if upgraded is not None:
                data = _with_legacy_id(kind, upgraded, f"legacy-message:{self.sid}:{seq}")
        return kind, data

    def _owned_elsewhere(self, kind: str, data: dict[str, Any]) -> bool:
        """Whether another rule reports what released would refuse here first (module docstring)."""
        if kind in _MESSAGE_TYPES:
            if message_shape_error(kind, data) is not None:
                return True  # E6's shape check
            message = data if kind == "user/message" else data["message"]  # the shape check found it
            if kind == "tool/result":  # the fragments inside the tool-result block are P4's, when P4 reports them
                content = message.get("content")
                return _released_content_problem(content) and reports_fragments(content)
            return content_element_defect(message.get("content")) is not None
        if kind == "request/header":
            return bool(request_header_problems(0, data))
        if kind == "hook/invoked":
            return data.get("dialect") == "claude"  # E5's retired dialect
        return False


def _with_legacy_id(kind: str, data: dict[str, Any], mid: str) -> dict[str, Any]:
    """The loader's upgrade names the message "legacy"; the migration names it by session and seq."""
    if kind == "user/message":
        return {**data, "id": mid}
    return {**data, "message": {**data["message"], "id": mid}}
