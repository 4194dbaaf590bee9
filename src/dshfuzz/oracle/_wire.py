"""The provider wire stream: the surface as the DeepSeek request carries it, and its pairing.

The messages come from the folded surface exactly as the official request is
built: ``Session.deriveMessages`` projects every surface node to its message
(an ``assistant/message`` with empty content contributes none), and the
text-only ``serializeMessages`` (LD:91-145) turns each into wire messages: an
assistant into one ``{role:"assistant", content, reasoning_content?,
tool_calls?}``; a user-role message into its joined text as one ``user``
message (when it has text, or no tool results) followed by one ``tool``
message per tool-result block. The newest ``request/header``'s non-empty
``system`` prompt leads the request.

The official serializer checks none of the pairing below; the provider does,
before the model runs. Walking the wire messages with the set of *pending* call
ids (advertised by the latest assistant message, not yet answered):

- ``wire-dangling-tool-message`` (catalog W1): a ``tool`` message whose id is not pending.
- ``wire-user-text-interleaved`` (catalog W2): ``user`` text while calls are pending;
  the calls stay pending, so a ``tool`` message after the text still answers one.
- ``unanswered-tool-call`` (seed 001): a call still unanswered at the next ``user``
  text, the next assistant message, or the end of history (reported once, where
  its window closes).
- ``wire-duplicate-tool-call-id``: one assistant message advertising an id twice.

Calls whose assistant message a replace (a compaction) has already taken off the
surface are *not* on the wire; :attr:`WireStream.hidden_unanswered` lists those
never answered anywhere in the log, so a checker can tell a provider-visible
defect from a gap the surface no longer shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal

from dshfuzz.contracts import js as _js
from dshfuzz.model import MISSING

from ._fold import FoldError, SurfaceFolder
from ._verdict import Accepted, Verdict, Violation, raw_events

__all__ = ["HiddenCall", "WireIssue", "WireMessage", "WireStream", "check_wire", "wire_stream"]

WireRole = Literal["system", "user", "assistant", "tool"]
Closer = Literal["user-text", "assistant", "end"]


@dataclass(frozen=True, slots=True)
class WireMessage:
    """One wire message: its exact JSON ``body``, the ``seq`` of the event it came
    from (the ``request/header`` for the system prompt), and the call ids still
    ``pending`` once it is on the wire."""

    role: WireRole
    body: dict[str, Any]
    seq: int
    pending: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class WireIssue:
    """One pairing defect. ``index`` is the wire position where it happens and
    ``seq`` that message's source seq (both ``None`` at the end of history);
    ``advertised_seq`` is the assistant message that advertised ``call_id``."""

    code: str
    message: str
    index: int | None
    seq: int | None
    call_id: Any = MISSING
    advertised_seq: int | None = None
    closer: Closer | None = None


@dataclass(frozen=True, slots=True)
class HiddenCall:
    """An advertised call that no tool/result ever answers, whose assistant message
    is no longer on the surface (so the provider never sees the gap)."""

    call_id: Any
    advertised_seq: int


@dataclass(frozen=True, slots=True)
class WireStream:
    """The request's wire messages, their pairing defects in wire order, and the hidden gaps."""

    messages: tuple[WireMessage, ...]
    issues: tuple[WireIssue, ...]
    hidden_unanswered: tuple[HiddenCall, ...]
    surface: tuple[int, ...]


class _Refused(Exception):
    """The adapter refuses to build the request because of the event at ``seq``."""

    def __init__(self, seq: int, code: str, message: str) -> None:
        super().__init__(message)
        self.seq, self.code = seq, code


class _Malformed(Exception):
    """A V8 ``TypeError`` while reading the event at ``seq``."""

    def __init__(self, seq: int, message: str) -> None:
        super().__init__(message)
        self.seq = seq


def wire_stream(events: Iterable[Any], header: Any = None) -> Verdict[WireStream]:
    """Build the wire stream of the whole log, as the request built after its last event.

    Refused (:class:`Violation`) where the official path throws: a log the surface
    fold refuses (``Session.create`` throws first), and, once a ``request/header``
    exists, image content (the default models are text-only) or an unsupported
    reasoning effort. Without any ``request/header`` the official path sends no
    request; the messages are still built here, for the pairing. Pairing defects do
    not make this a :class:`Violation`; see :func:`check_wire`."""
    del header
    log = raw_events(events)
    folder = SurfaceFolder(log)
    for index in range(len(log)):
        try:
            folder.apply(index)
        except FoldError as exc:
            return Violation(index, exc.code, str(exc))
    nodes = tuple(folder.nodes)
    request = _request_header(log)
    bodies: list[tuple[int, dict[str, Any]]] = []
    try:
        if request is not None:
            _assert_text_only(log, nodes, request)
            system = _system_prompt(log, request)
            if system is not None:
                bodies.append((request, system))
        for seq in nodes:
            bodies.extend((seq, body) for body in _serialize(log[seq]))
        if request is not None:
            _assert_reasoning_effort(log, request)
    except _Refused as exc:
        return Violation(exc.seq, exc.code, str(exc))
    except _Malformed as exc:
        return Violation(exc.seq, "malformed-event", str(exc))
    messages, issues = _pair(bodies)
    return Accepted(WireStream(messages, issues, _hidden_unanswered(log, set(nodes)), nodes))


def check_wire(events: Iterable[Any], header: Any = None) -> Verdict[WireStream]:
    """:func:`wire_stream`, refusing at the first pairing defect (its source seq)."""
    verdict = wire_stream(events, header)
    if isinstance(verdict, Violation) or not verdict.state.issues:
        return verdict
    first = verdict.state.issues[0]
    return Violation(first.seq, first.code, first.message)


def _request_header(log: list[Any]) -> int | None:
    """The seq of the newest ``request/header`` (``foldRequestHeader``), if any."""
    found = None
    for index, event in enumerate(log):
        if type(event) is dict and event.get("type") == "request/header":
            found = index
    return found


def _config(log: list[Any], request: int, key: str) -> Any:
    try:
        return _js.get(_js.get(_js.get(_js.get(log[request], "data"), "header"), "config"), key)
    except _js.JsTypeError as exc:
        raise _Malformed(request, str(exc)) from None


def _system_prompt(log: list[Any], request: int) -> dict[str, Any] | None:
    """The canonical header's system prompt message (absent when empty)."""
    try:
        system = _js.get(_js.get(_js.get(log[request], "data"), "header"), "system")
        if (
            system is MISSING
            or not _js.is_number(_js.get(system, "length"))
            or _js.get(system, "length") <= 0
        ):
            return None
    except _js.JsTypeError as exc:
        raise _Malformed(request, str(exc)) from None
    return {"role": "system", "content": system}


def _assert_text_only(log: list[Any], nodes: tuple[int, ...], request: int) -> None:
    """The adapter refuses any image for the default catalog's text-only models (LD:677-680)."""
    for seq in nodes:
        try:
            message = _derive(log[seq])
            has_image = message is not None and _has_image(_js.get(message, "content"))
        except _js.JsTypeError as exc:
            raise _Malformed(seq, str(exc)) from None
        if has_image:
            model = _js.js_string(_config(log, request, "model"))
            raise _Refused(
                seq, "wire-image-content", f'DeepSeek model "{model}" does not accept image input.'
            )


def _assert_reasoning_effort(log: list[Any], request: int) -> None:
    """``resolveThinking``: an effort the request names must be one DeepSeek supports (LD:20-35)."""
    effort = _config(log, request, "reasoningEffort")
    if effort is not MISSING and not (type(effort) is str and effort in ("off", "low", "high", "max")):
        raise _Refused(
            request,
            "wire-reasoning-effort",
            f'DeepSeek does not support reasoning effort "{_js.js_string(effort)}"',
        )


def _derive(event: dict[str, Any]) -> Any:
    """``deriveEventMessage``: the node's message, or ``None`` for an empty assistant message."""
    etype = event.get("type")
    data = event.get("data", MISSING)
    if etype == "user/message":
        return data
    message = _js.get(data, "message")
    if etype == "assistant/message" and _js.strict_equal(_js.get(_js.get(message, "content"), "length"), 0):
        return None
    return message


def _blocks(value: Any) -> list[Any]:
    if type(value) is not list:
        raise _js.JsTypeError(f"{_js.js_string(value)}.filter is not a function")
    return value


def _join(parts: Iterable[Any]) -> str:
    """``Array.prototype.join("")``."""
    return "".join("" if part is None or part is MISSING else _js.js_string(part) for part in parts)


def _flatten_text(blocks: Any) -> str:
    return _join(
        _js.get(block, "text")
        for block in _blocks(blocks)
        if _js.strict_equal(_js.get(block, "type"), "text")
    )


def _has_image(blocks: Any) -> bool:
    """``contentHasImage``."""
    for block in _blocks(blocks):
        btype = _js.get(block, "type")
        if _js.strict_equal(btype, "image"):
            return True
        if _js.strict_equal(btype, "tool-result") and _has_image(_js.get(block, "content")):
            return True
    return False


def _serialize(event: dict[str, Any]) -> list[dict[str, Any]]:
    """``serializeMessages`` for one surface node."""
    try:
        return _serialize_message(_derive(event))
    except _js.JsTypeError as exc:
        raise _Malformed(event["seq"], str(exc)) from None


def _serialize_message(message: Any) -> list[dict[str, Any]]:
    if message is None:
        return []
    content = _js.get(message, "content")
    role = _js.get(message, "role")
    if _js.strict_equal(role, "system"):
        return [{"role": "system", "content": _flatten_text(content)}]
    if _js.strict_equal(role, "assistant"):
        return [_serialize_assistant(content)]
    blocks = _blocks(content)
    results = [block for block in blocks if _js.strict_equal(_js.get(block, "type"), "tool-result")]
    text = _flatten_text(blocks)
    wire: list[dict[str, Any]] = []
    if text or not results:
        wire.append({"role": "user", "content": text})
    for result in results:
        body = _flatten_text(_js.get(result, "content")) or "(no output)"
        wire.append({"role": "tool", "tool_call_id": _js.get(result, "toolCallId"), "content": body})
    return wire


def _serialize_assistant(content: Any) -> dict[str, Any]:
    """``serializeAssistant``."""
    blocks = _blocks(content)
    reasoning = _join(_js.get(b, "text") for b in blocks if _js.strict_equal(_js.get(b, "type"), "reasoning"))
    calls = [
        {
            "id": _js.get(b, "id"),
            "type": "function",
            "function": {"name": _js.get(b, "name"), "arguments": _js.get(b, "arguments")},
        }
        for b in blocks
        if _js.strict_equal(_js.get(b, "type"), "tool-call")
    ]
    body: dict[str, Any] = {"role": "assistant", "content": _flatten_text(blocks)}
    if reasoning:
        body["reasoning_content"] = reasoning
    if calls:
        body["tool_calls"] = calls
    return body


def _pair(bodies: list[tuple[int, dict[str, Any]]]) -> tuple[tuple[WireMessage, ...], tuple[WireIssue, ...]]:
    """Walk the wire messages, tracking pending call ids, and record every pairing defect."""
    s = _js.js_string
    pending: dict[Any, tuple[Any, int, bool]] = {}  # key -> (call id, advertised seq, already reported)
    messages: list[WireMessage] = []
    issues: list[WireIssue] = []

    def close(index: int | None, seq: int | None, closer: Closer) -> None:
        where = {
            "user-text": "the next user text",
            "assistant": "the next assistant message",
            "end": "the end of history",
        }
        for key, (call_id, advertised, reported) in pending.items():
            if not reported:
                issues.append(
                    WireIssue(
                        "unanswered-tool-call",
                        f"assistant tool call {s(call_id)} (seq {advertised}) is not answered by a tool message "
                        f"before {where[closer]}",
                        index,
                        seq,
                        call_id,
                        advertised,
                        closer,
                    )
                )
                pending[key] = (call_id, advertised, True)

    for index, (seq, body) in enumerate(bodies):
        role = body["role"]
        if role == "assistant":
            close(index, seq, "assistant")
            pending.clear()
            for call in body.get("tool_calls", ()):
                call_id = call["id"]
                key = _js.number_key(call_id)
                if key in pending:
                    issues.append(
                        WireIssue(
                            "wire-duplicate-tool-call-id",
                            f"assistant message advertises tool call {s(call_id)} twice",
                            index,
                            seq,
                            call_id,
                            seq,
                        )
                    )
                pending[key] = (call_id, seq, False)
        elif role == "tool":
            call_id = body["tool_call_id"]
            if pending.pop(_js.number_key(call_id), None) is None:
                issues.append(
                    WireIssue(
                        "wire-dangling-tool-message",
                        f"tool message for {s(call_id)} does not answer a pending assistant tool call",
                        index,
                        seq,
                        call_id,
                    )
                )
        elif role == "user" and pending:
            waiting = ", ".join(s(call_id) for call_id, _, _ in pending.values())
            issues.append(
                WireIssue(
                    "wire-user-text-interleaved",
                    f"user text arrives while tool calls {waiting} await their tool messages",
                    index,
                    seq,
                )
            )
            close(index, seq, "user-text")
        messages.append(WireMessage(role, body, seq, tuple(call_id for call_id, _, _ in pending.values())))
    close(None, None, "end")
    return tuple(messages), tuple(issues)


def _hidden_unanswered(log: list[Any], on_surface: set[int]) -> tuple[HiddenCall, ...]:
    """Advertised calls off the surface that no appended tool/result ever answers."""
    answered: set[Any] = set()
    advertised: list[HiddenCall] = []
    for index, event in enumerate(log):
        if type(event) is not dict or type(event.get("data")) is not dict:
            continue
        message = event["data"].get("message")
        if type(message) is not dict:
            continue
        if event.get("type") == "tool/result":
            source = message.get("source")
            if type(source) is dict:
                answered.add(_js.number_key(source.get("callId", MISSING)))
        elif (
            event.get("type") == "assistant/message"
            and index not in on_surface
            and type(message.get("content")) is list
        ):
            advertised.extend(
                HiddenCall(block.get("id", MISSING), index)
                for block in message["content"]
                if type(block) is dict and block.get("type") == "tool-call"
            )
    return tuple(call for call in advertised if _js.number_key(call.call_id) not in answered)
