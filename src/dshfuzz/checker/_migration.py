"""Migration pre-checks (G1 G2 for format-0 files, G3 for format 0 and 1): what the
released catalog (``dsh-session-format-v0-to-v1``) refuses when a format-0 file is
upgraded, or when a format-1 file is restored through its relation walk, reported as
warnings because the file still loads today.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dshfuzz.model import MISSING, Event, dumps
from dshfuzz.oracle._js import is_event_seq, number_key, strict_equal

from ._context import CheckContext
from ._finding import Finding
from ._lifecycle import show_value
from ._run import rule_pass
from ._scan import positions, type_index
from .rules import RuleId

__all__ = ["RELEASED_V0_EVENT_TYPES", "LEGACY_SOURCE_TYPES"]

RELEASED_V0_EVENT_TYPES = frozenset({
    "agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided", "approval/policy",
    "assistant/chunk", "assistant/message", "command/done", "command/run", "compaction/end", "compaction/prune",
    "compaction/start", "compaction/summary", "feedback/record", "goal/change", "hook/invoked", "hook/result",
    "llm/retry", "llm/retry-started", "model/selection", "permission/preset", "plan/mode", "request/context",
    "request/header", "sandbox/mode", "schedule/change", "session-log-deepseek/delivery-accepted",
    "session/end-seed", "session/title", "session/title-llm-request", "step/end", "step/start",
    "subagent/descriptor", "subagent/model-selection-policy", "team/member", "team/message/delivered",
    "team/message/queued", "team/task", "todo/write", "tool-workflow/agent-end", "tool-workflow/agent-start",
    "tool-workflow/run-end", "tool-workflow/run-start", "tool/call", "tool/code-dispatch",
    "tool/code-dispatch-start", "tool/result", "turn/end", "turn/start", "user/message",
    "web/deepseek-search-llm-request",
})
"""The keys of ``RELEASED_V0_EVENT_DISPOSITIONS`` (V01:27-235)."""

LEGACY_SOURCE_TYPES = frozenset({
    "steering/message", "request/header-delta", "mode/set",
    "compact/start", "compact/summary", "compact/end", "compact/prune",
})
"""Legacy types the migration recognises (V01:1460): renamed, or refused as legacy (rule E5), never "unknown"."""

_TITLE_TYPES = ("session/title", "session/title-llm-request")


def _get(value: Any, key: str) -> Any:
    return value.get(key, MISSING) if type(value) is dict else MISSING


@rule_pass(RuleId.G1, RuleId.G2)
def released_inventory(ctx: CheckContext) -> Iterator[Finding]:
    """G1: v0 subagent/descriptor version is 3; G2: every v0 type is in the released inventory."""
    index = type_index(ctx)
    unknown = [i for kind, found in index.items() if kind not in RELEASED_V0_EVENT_TYPES
               and kind not in LEGACY_SOURCE_TYPES for i in found]
    for i in sorted(unknown + index.get("subagent/descriptor", [])):
        event = ctx.events[i]
        kind = event.type
        if kind not in RELEASED_V0_EVENT_TYPES and kind not in LEGACY_SOURCE_TYPES:
            note = " (even though it is marked ignorable)" if event.ignorable is True else ""
            yield ctx.finding(RuleId.G2, f"format v0 contains unknown historical event type {kind!r}{note}; "
                              "the v0->v1 migration refuses it", event=event)
        elif kind == "subagent/descriptor" and type(event.data) is dict:
            version = event.data.get("version", MISSING)
            if not strict_equal(version, 3):
                yield ctx.finding(RuleId.G1, f"subagent/descriptor uses unsupported descriptor version "
                                  f"{show_value(version)}; the v0->v1 migration accepts only 3", event=event)


@rule_pass(RuleId.G3)
def title_sources(ctx: CheckContext) -> Iterator[Finding]:
    """G3: title messageSeqs. Format 0 runs the migration's payload check first (V01:439-444:
    an array of unique earlier seqs, non-empty for a request); both formats run the relation
    walk's assertTitleSources (V01:2541-2568), which alone decides a format-1 file (measured:
    released restores a v1 title citing a later or a repeated human message)."""
    events = ctx.events
    payload_checked = ctx.version == 0
    for i in positions(ctx, _TITLE_TYPES):
        event = events[i]
        if type(event.data) is not dict:
            continue
        problem = _title_problem(events, event, payload_checked)
        if problem is not None:
            yield ctx.finding(RuleId.G3, f"{event.type} {show_value(event.seq)} {problem}", event=event,
                              context={"messageSeqs": event.data.get("messageSeqs")})


def _title_problem(events: list[Event], event: Event, payload_checked: bool) -> str | None:
    data = event.data
    seqs = data.get("messageSeqs", MISSING)
    if payload_checked:
        problem = _payload_problem(event, seqs)
        if problem is not None:
            return problem
    elif type(seqs) is str:
        seqs = list(seqs)  # the relation walk iterates a string by character and indexes events with each
    elif type(seqs) is not list:
        return "messageSeqs must be an array"
    if event.type == "session/title":
        kind = _get(data.get("source", MISSING), "kind")
        if (len(seqs) == 0) != (kind == "user"):
            return "messageSeqs must be empty exactly for a user title"
    selected = []
    for seq in seqs:
        cited = _cited(events, seq)
        if cited is None or cited.type != "user/message" or _get(_get(cited.data, "source"), "kind") != "user":
            return f"messageSeqs must cite earlier human user/message events (seq {show_value(seq)} is not one)"
        content = _get(cited.data, "content")
        texts = [b["text"] for b in content if type(b) is dict and b.get("type") == "text" and type(b.get("text")) is str] \
            if type(content) is list else []
        selected.append({"seq": seq, "text": "\n".join(texts)})
    if event.type == "session/title-llm-request" and not _represents(data.get("messages", MISSING), selected):
        return "messages do not represent messageSeqs"
    return None


def _payload_problem(event: Event, seqs: Any) -> str | None:
    """The migration's payload check of messageSeqs (V01:439-444, seqArray)."""
    if type(seqs) is not list:
        return "messageSeqs must be an array"
    seen: set[Any] = set()
    for seq in seqs:
        if not is_event_seq(seq) or not (type(event.seq) in (int, float) and seq < event.seq):
            return f"messageSeqs entry {show_value(seq)} must identify an earlier event"
        if number_key(seq) in seen:
            return f"messageSeqs repeats seq {show_value(seq)}"
        seen.add(number_key(seq))
    if event.type == "session/title-llm-request" and not seqs:
        return "messageSeqs must be non-empty"
    return None


def _cited(events: list[Event], seq: Any) -> Event | None:
    """``events[seq]`` as JavaScript reads it: an array index (a number or a canonical digit string)."""
    if type(seq) is str and seq.isascii() and seq.isdigit() and (seq == "0" or not seq.startswith("0")):
        seq = int(seq)
    return events[int(seq)] if is_event_seq(seq) and int(seq) < len(events) else None


_TITLE_FRAME = "Generate the session title from this JSON array of human messages:\n"


def _represents(messages: Any, selected: list[dict[str, Any]]) -> bool:
    """assertTitleSources (V01:2558-2568): one user message from the title plugin whose only
    block is the framing text over exactly the cited human messages."""
    if type(messages) is not list or len(messages) != 1:
        return False
    message = messages[0]
    content = _get(message, "content")
    source = _get(message, "source")
    if (_get(message, "role") != "user" or type(content) is not list or len(content) != 1
            or _get(source, "kind") != "plugin" or _get(source, "plugin") != "dsh-session-title-llm"):
        return False
    framed = content[0]
    return _get(framed, "type") == "text" and _get(framed, "text") == _TITLE_FRAME + dumps(selected)
