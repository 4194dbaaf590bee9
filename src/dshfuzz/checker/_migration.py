"""Migration pre-checks (G1 G2 for format-0 files, G3 for format 0 and 1): what the
released catalog (``dsh-session-format-v0-to-v1``) refuses when a format-0 file is
upgraded, or when a format-1 file is restored through its relation walk, reported as
warnings because the file still loads today. G4, the rest of that relation walk, is
:mod:`._relations`. :func:`released_refuses_lossy` models where released's payload
validator reads a number, for E4's attribution.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from dshfuzz.contracts import is_event_seq
from dshfuzz.contracts.js import is_array_index, js_string, number_key, strict_equal
from dshfuzz.contracts.rules import RuleId
from dshfuzz.model import MISSING, Event, dumps

from ._context import CheckContext
from ._finding import Finding
from ._lifecycle import show_value
from ._run import EveryEventBut, rule_walk

__all__ = ["LEGACY_SOURCE_TYPES", "RELEASED_V0_EVENT_TYPES", "released_refuses_lossy"]

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


_INVENTORY = RELEASED_V0_EVENT_TYPES | LEGACY_SOURCE_TYPES
_UNREMARKABLE = _INVENTORY - {"subagent/descriptor"}
"""The types G1 and G2 pass over at once."""


@rule_walk(RuleId.G1, RuleId.G2, types=EveryEventBut(_UNREMARKABLE))
class ReleasedInventory:
    """G1: v0 subagent/descriptor version is 3; G2: every v0 type is in the released inventory.

    Each event is decided alone, so the walk keeps no state. It sees every head but those of
    the inventory's unremarkable types: the members of a packed run are chunks, which the
    inventory holds."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx

    def visit(self, index: int, event: Event) -> Iterator[Finding] | None:
        raw = event.raw
        kind = raw.get("type") if raw.__class__ is dict else None  # no object, no type: not G1's or G2's
        return self._judge(event, kind) if kind.__class__ is str and kind not in _UNREMARKABLE else None

    def _judge(self, event: Event, kind: str) -> Iterator[Finding]:
        if kind not in _INVENTORY:
            note = " (even though it is marked ignorable)" if event.ignorable is True else ""
            yield self.ctx.finding(RuleId.G2, f"format v0 contains unknown historical event type {kind!r}{note}; "
                                   "the v0->v1 migration refuses it", event=event)
        elif type(event.data) is dict:
            version = event.data.get("version", MISSING)
            if not strict_equal(version, 3):
                yield self.ctx.finding(RuleId.G1, f"subagent/descriptor uses unsupported descriptor version "
                                       f"{show_value(version)}; the v0->v1 migration accepts only 3", event=event)

    def finish(self) -> None:
        return None


_LATER: Any = object()
"""What a title's check reads for a cited position the loop has not handed yet."""


@rule_walk(RuleId.G3, types={"user/message": "message", **{kind: "title" for kind in _TITLE_TYPES}})
class TitleSources:
    """G3: title messageSeqs. Format 0 runs the migration's payload check first (V01:439-444:
    an array of unique earlier seqs, non-empty for a request); both formats run the relation
    walk's assertTitleSources (V01:2541-2568), which alone decides a format-1 file (measured:
    released restores a v1 title citing a later or a repeated human message).

    A citation reads ``events[seq]`` as JavaScript does, by position, earlier or later. The
    walk keeps the joined text of each human user/message by position (``human_texts``,
    O(human user messages): all a citation reads, and a position absent from it is not a human
    user/message). A title citing a position the loop has not handed yet waits in ``pending``
    until it has (or until ``finish``, where a position past the log is no message); titles
    decided after a waiting one queue behind it as findings, so G3 reports in log order. A
    waiting title keeps its event: pending state, as many as the titles from the first one
    that cites a later position."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.payload_checked = ctx.version == 0
        self.human_texts: dict[int, str] = {}
        self.pending: deque[Event | Finding] = deque()
        self.awaited = -1  # the position the first waiting title reads next
        self.handed: float = -1  # the last position handed to the walk

    def message(self, index: int, event: Event) -> list[Finding] | None:
        data = event.raw.get("data")
        source = data.get("source") if data.__class__ is dict else None
        if source.__class__ is dict and source.get("kind") == "user":
            content = data.get("content")
            texts = [b["text"] for b in content if type(b) is dict and b.get("type") == "text"
                     and type(b.get("text")) is str] if type(content) is list else []
            self.human_texts[index] = "\n".join(texts)
        if self.pending and index >= self.awaited:
            self.handed = index
            return self._release()
        return None

    def title(self, index: int, event: Event) -> list[Finding] | None:
        if type(event.data) is not dict:
            return None
        self.handed = index
        if self.pending:
            awaited = self.awaited  # the first waiting title's, which a later one's judgement must not move
            judged = self._judge(event)
            self.awaited = awaited
            if judged is not None:
                self.pending.append(judged)
            return self._release() if index >= awaited else None
        judged = self._judge(event)
        if judged is None:
            return None
        if isinstance(judged, Finding):
            return [judged]
        self.pending.append(judged)
        return None

    def finish(self) -> list[Finding] | None:
        self.handed = math.inf  # every position has been handed: one past the log holds no message
        return self._release() if self.pending else None

    def _release(self) -> list[Finding]:
        """The findings of the waiting titles now decided, in log order, up to the first still waiting."""
        out: list[Finding] = []
        pending = self.pending
        while pending:
            head = pending[0]
            decided = self._judge(head) if isinstance(head, Event) else head
            if isinstance(decided, Event):
                break
            pending.popleft()
            if decided is not None:
                out.append(decided)
        return out

    def _judge(self, event: Event) -> Finding | Event | None:
        """The title's finding, ``None`` when it passes, or the event itself while it waits."""
        problem = _title_problem(self._cited_text, event, self.payload_checked)
        if problem is None:
            return None
        if problem is _LATER:
            return event
        return self.ctx.finding(RuleId.G3, f"{event.type} {show_value(event.seq)} {problem}", event=event,
                                context={"messageSeqs": event.data.get("messageSeqs")})

    def _cited_text(self, seq: Any) -> Any:
        """The text of the human user/message at the position ``seq`` reads, ``None`` when there is
        none, or :data:`_LATER` when the loop has not handed that position yet."""
        position = _cited_position(seq)
        if position is None:
            return None
        if position > self.handed:
            self.awaited = position
            return _LATER
        return self.human_texts.get(position)


def _title_problem(cited_text: Callable[[Any], Any], event: Event, payload_checked: bool) -> Any:
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
        source = data.get("source", MISSING)
        if not payload_checked and source.__class__ is not dict:
            return "source must be a JSON object"  # format 0: the payload check's (G5)
        kind = _get(source, "kind")
        if (len(seqs) == 0) != (kind == "user"):
            return "messageSeqs must be empty exactly for a user title"
    selected = []
    for seq in seqs:
        text = cited_text(seq)
        if text is _LATER:
            return _LATER
        if text is None:
            return f"messageSeqs must cite earlier human user/message events (seq {show_value(seq)} is not one)"
        selected.append({"seq": seq, "text": text})
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


def _cited_position(seq: Any) -> int | None:
    """The array index JavaScript reads for ``events[seq]``: its property key, ``String(seq)``, when
    that is a canonical index (a number, ``-0`` too, a digit string, and an array such as ``[5]``,
    whose key is ``"5"``)."""
    if type(seq) is int and seq >= 0:  # the common seq, decided without building its key
        return seq
    if seq.__class__ is dict:
        return None  # "[object Object]"
    key = js_string(seq)
    return int(key) if is_array_index(key) else None


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
    frames: bool = _get(framed, "type") == "text" and _get(framed, "text") == _TITLE_FRAME + dumps(selected)
    return frames


_BLOCK_TYPES = frozenset({"text", "reasoning", "image", "tool-call", "tool-result"})
_SOURCE_KINDS = frozenset({
    "user", "plugin", "model", "tool", "agent-instructions", "session-reference", "team-message", "goal",
    "skill-invocation", "skill-catalog", "coordinator", "subagent-report", "subagent-settled", "webhook",
})
_TURN_END_KINDS = frozenset({"completed", "blocked", "max-tokens", "interrupted", "aborted", "error"})
_Path = tuple[str | int, ...]
_Pattern = tuple[str | None, ...]

_CONTENT_ARRAYS: dict[str, tuple[_Pattern, ...]] = {
    "user/message": (("content",),),
    "assistant/message": (("message", "content"),),
    "tool/result": (("message", "content"),),
    "agent/inbox/spliced": (("inserted", None, "content"),),
    "session/title-llm-request": (("messages", None, "content"),),
    "compaction/summary": (("summary",), ("rawOutput",)),
    "tool/code-dispatch": (("content",),),
    "team/message/queued": (("message", "content"),),
}
"""Where released validates content blocks (contentBlocksValue), per type; ``None`` is any index."""

_SOURCES: dict[str, tuple[_Pattern, ...]] = {
    "user/message": (("source",),),
    "assistant/message": (("message", "source"),),
    "tool/result": (("message", "source"),),
    "agent/inbox/spliced": (("inserted", None, "source"),),
    "session/title-llm-request": (("messages", None, "source"),),
}
"""Where released validates a message source (messageSourceValue), per type."""


def released_refuses_lossy(version: int | None, raw: Any) -> bool:
    """Whether the released catalog refuses ``raw`` for one of its non-lossless numbers
    (non-finite, or negative zero; V01:1591 and the count/number validators, which all
    refuse both). Format 0 validates every payload member except where it never looks
    (``_unread_by_v0``); format 1 validates only the envelope (restoreReleasedV1Artifact).
    A negative-zero seq equals index 0 under ``!==`` and passes (measured)."""
    if version not in (0, 1) or type(raw) is not dict:
        return False
    for path, value in _lossy_paths(raw, ()):
        if path[0] != "data":
            if not (path == ("seq",) and value == 0):
                return True
        elif version == 0 and not _unread_by_v0(raw.get("type"), raw["data"], path[1:]):
            return True
    return False


def _lossy_paths(value: Any, path: _Path) -> Iterator[tuple[_Path, float]]:
    if type(value) is float:
        if value in (math.inf, -math.inf) or (value == 0 and math.copysign(1.0, value) < 0):
            yield path, value
    elif type(value) is dict:
        for key, member in value.items():
            yield from _lossy_paths(member, (*path, key))
    elif type(value) is list:
        for index, member in enumerate(value):
            yield from _lossy_paths(member, (*path, index))


def _unread_by_v0(kind: Any, data: Any, path: _Path) -> bool:
    """Whether released's v0 payload validation never reads ``data`` at ``path``: an
    assistant/chunk payload (V01:1918), a tool schema's parameters (V01:1139), a content
    block of an unknown type or a source of an unknown kind beyond its discriminant
    (V01:685, 914), a model source's replayState, a turn/end reason of an unknown kind.
    An event whose type is not a string has no such place: released reads it whole."""
    if not path or type(kind) is not str:
        return False
    if kind == "assistant/chunk":
        return True
    if kind == "request/header" and len(path) >= 5 and path[:2] == ("header", "tools") and path[3] == "parameters":
        return True
    if kind == "turn/end" and len(path) >= 2 and path[0] == "reason" and path[1] != "kind":
        reason = _get(data, "reason")
        return type(_get(reason, "kind")) is str and _get(reason, "kind") not in _TURN_END_KINDS
    for pattern in _CONTENT_ARRAYS.get(kind, ()):
        rest = _after(pattern, path)
        if rest is not None:
            return _unread_block(_at(data, path[: len(path) - len(rest)]), rest)
    for pattern in _SOURCES.get(kind, ()):
        rest = _after(pattern, path)
        if rest:
            source_kind = _get(_at(data, path[: len(path) - len(rest)]), "kind")
            if source_kind == "model":
                return rest[0] == "replayState"
            return type(source_kind) is str and source_kind != "" and source_kind not in _SOURCE_KINDS and rest[0] != "kind"
    return False


def _unread_block(blocks: Any, rest: _Path) -> bool:
    """Within a content-block array: past an unknown block's type, or in a tool-result's nested blocks."""
    if len(rest) < 2 or type(blocks) is not list or type(rest[0]) is not int:
        return False
    block = blocks[rest[0]]
    kind = _get(block, "type")
    if kind == "tool-result" and rest[1] == "content":
        return _unread_block(_get(block, "content"), rest[2:])
    return type(kind) is str and kind != "" and kind not in _BLOCK_TYPES and rest[1] != "type"


def _after(pattern: _Pattern, path: _Path) -> _Path | None:
    """The rest of ``path`` past ``pattern`` (``None`` matching any list index), or ``None``."""
    if len(path) < len(pattern):
        return None
    for want, key in zip(pattern, path):
        if (want is None and type(key) is not int) or (want is not None and want != key):
            return None
    return path[len(pattern):]


def _at(value: Any, path: _Path) -> Any:
    for key in path:
        value = value[key]
    return value
