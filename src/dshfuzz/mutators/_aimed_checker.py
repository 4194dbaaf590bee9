"""Aimed families for the built-in checker's own branches (issue 32: the lines of its check path
no campaign ran): ``released``, ``turns``, ``storage``, ``meter`` and ``migration``.

Like the families of :mod:`._aimed` they write one event, a pair or a header member at a place
where the agent loop writes its kind, and declare no rule: the official layers judge each log.
Each entry names the checker branch it reaches. A few variants write a rare form every layer
accepts (a string tool-result content, a pre-react-loop turn/start trigger, a log cut after tool
calls, a compaction the migration completes), so a checker must accept them too; the conformance
test (``tests/conformance/test_aimed_perturbations_official.py``) pins which."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from dshfuzz.model import JsonValue

from ._aimed_places import (
    Aim, _at_gap, _at_step, _at_turn, _between, _DROP, _header, _hook, _in_step, _in_turn, _kind, _own_event,
    _put, _request_header_member, _retries, _schedule, _seed_end, _splice, _time, _turn_end_field, _user,
)
from ._draft import LOSSY_NUMBERS, EventDraft, Inapplicable, copy_json
from ._select import choose, data_of, surface_at

__all__ = ["CHECKER_AIMED_FAMILIES", "CHECKER_AIMS"]


# --- turns: cited chunks, step boundaries, surface provenance, legacy messages ---------------------


def _chunk_of(draft: EventDraft, seq: Any) -> dict[str, Any]:
    """The chunk object of the assistant/chunk at ``seq`` (``{}`` when there is none)."""
    if type(seq) is not int or not 0 <= seq < len(draft.events) or _kind(draft.events[seq]) != "assistant/chunk":
        return {}
    chunk = data_of(draft.events[seq]).get("chunk")
    return chunk if type(chunk) is dict else {}


def _citing(draft: EventDraft, data: Any, chunk_type: str) -> tuple[int, list[int], int]:
    """``(message, sources, chunk)``: an assistant/message of the log's own part whose sourceEventSeqs
    (ascending ints) cite a chunk of ``chunk_type`` of its step."""
    places: list[tuple[int, list[int], int]] = []
    for i in draft.of_type("assistant/message"):
        sources = draft.events[i].get("sourceEventSeqs")
        if i < _seed_end(draft) or type(sources) is not list or not all(type(s) is int for s in sources):
            continue
        places.extend((i, sources, s) for s in sources if s < i and _chunk_of(draft, s).get("type") == chunk_type)
    return choose(data, places, f"message citing a {chunk_type} chunk")


def _cited_end(block: dict[str, Any]) -> Aim:
    """A cited block-end chunk whose block is ``block``: the meter's estimate of the cited chunks
    reads it (TM:23-38) and throws."""
    def edit(draft: EventDraft, data: Any) -> str:
        i, _sources, s = _citing(draft, data, "block-end")
        _chunk_of(draft, s)["block"] = copy.deepcopy(block)
        return f"seq {s}: block-end block {block!r}, cited by seq {i}"
    return edit


def _finish_blocks_null(draft: EventDraft, data: Any, *, reverse: bool) -> str:
    """A cited finish chunk whose replayState.blocks is null (the assembler reads its length, DL:851);
    (``reverse``) cited in descending order, which the meter reads as it reads any order."""
    i, sources, s = _citing(draft, data, "finish")
    _chunk_of(draft, s)["replayState"] = {"blocks": None}
    if reverse:
        if len(sources) < 2:
            raise Inapplicable("one cited chunk")
        sources.reverse()
    return f"seq {s}: finish replayState.blocks null, cited by seq {i}" + (" in descending order" if reverse else "")


def _second_finish(draft: EventDraft, data: Any) -> str:
    """A second cited finish chunk after the message's own, its replayState.blocks null: the
    assembler keeps the last finish's replayState."""
    i, sources, s = _citing(draft, data, "finish")
    chunk = {"type": "finish", "reason": {"kind": "stop"}, "replayState": {"blocks": None}}
    j = s + 1
    _put(draft, j, ("assistant/chunk", {**{k: v for k, v in data_of(draft.events[s]).items() if k != "chunk"},
                                         "chunk": chunk}))
    cited = draft.events[i + 1].get("sourceEventSeqs")
    assert type(cited) is list
    cited.append(j)
    cited.sort()
    return f"seq {j}: a second finish chunk (replayState.blocks null), cited by seq {i + 1}"


def _incomplete_block(draft: EventDraft, data: Any) -> str:
    """A cited block-start of an unknown block type whose block-end the message does not cite: the
    assembler cannot assemble it from deltas (DL:831)."""
    i, sources, s = _citing(draft, data, "block-start")
    index = _chunk_of(draft, s).get("index")
    ends = [t for t in sources if _chunk_of(draft, t).get("type") == "block-end" and _chunk_of(draft, t).get("index") == index]
    _chunk_of(draft, s)["blockType"] = "image"
    sources[:] = [t for t in sources if t not in ends]
    return f"seq {s}: block-start blockType 'image', cited by seq {i} without its block-end"


def _cites_earlier_step(draft: EventDraft, data: Any) -> str:
    """Right after the next step/start, a copy of a message citing its own step's chunks: it cites
    chunks of another step before its own step has any (TM:590)."""
    places = []
    for i in draft.of_type("assistant/message"):
        sources = draft.events[i].get("sourceEventSeqs")
        if i < _seed_end(draft) or type(sources) is not list or not sources:
            continue
        nxt = next((j for j in draft.of_type("step/start") if j > i), None)
        if nxt is not None and type(data_of(draft.events[nxt]).get("step")) is int:
            places.append((i, nxt))
    i, j = choose(data, places, "message with a later step")
    message = copy_json(draft.events[i])
    assert type(message) is dict
    opened = data_of(draft.events[j])
    message["data"] = {**data_of(message), "turn": opened.get("turn"), "step": opened.get("step")}
    _put(draft, j + 1, message)
    return f"seq {j + 1}: a copy of seq {i} in turn {opened.get('turn')} step {opened.get('step')}, citing seq {i}'s chunks"


def _turn_start_over_chunk(draft: EventDraft, data: Any) -> str:
    """In an open step, an uncited delta chunk of the step and then the next turn's turn/start: the
    turn/start opens a turn while the last one (and its step) is still open (V01:2090, SI:38)."""
    i, turn, step = _in_step(draft, data)
    _put(draft, i, ("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}),
         ("turn/start", {"turn": turn + 1}))
    return f"seq {i}: an uncited text-delta chunk of turn {turn} step {step}, then turn/start {turn + 1}"


def _crowd(draft: EventDraft, data: Any, *, waiting: bool) -> str:
    """300 copies of a request/context between turns, each refused (V01:2374): more refusals pending
    than the checker's walk holds before handing them out; (``waiting``) before them, a message whose
    seq is past them and cites the last copy, so its citation waits while they are pending."""
    own = [j for j in draft.of_type("request/context") if j >= _seed_end(draft)]
    j = choose(data, own, "request/context")
    context = copy_json(draft.events[j])
    assert type(context) is dict
    context.pop("sourceEventSeqs", None)
    i = _between(draft, data)
    end = _put(draft, i, *(copy.deepcopy(context) for _ in range(300)))
    if not waiting:
        return f"seq {i}: 300 copies of seq {j} (request/context) between turns"
    m = choose(data, [m for m in draft.of_type("assistant/message") if _seed_end(draft) <= m < i
                      and type(draft.events[m].get("sourceEventSeqs")) is list], "message before the copies")
    draft.events[m]["seq"] = end
    draft.events[m]["sourceEventSeqs"] = [end - 1]
    return f"seq {i}: 300 copies of seq {j} (request/context); message {m} carries seq {end} and cites {end - 1}"


def _nodes(draft: EventDraft, end: int) -> list[int]:
    """The surface nodes before ``end`` whose seq names a position of the log (a damaged log's may not)."""
    return [n for n in surface_at(draft, end) if type(n) is int and 0 <= n < len(draft.events)]


def _own_append(draft: EventDraft, data: Any) -> int:
    return _own_event(draft, data, "user/message", lambda e: e.get("surfaceOp") == "append")


def _sources_own_then_negative(draft: EventDraft, data: Any) -> str:
    """A user/message append citing its own seq, then -1 (S:assertProvenance reads every entry)."""
    i = _own_append(draft, data)
    draft.events[i]["sourceEventSeqs"] = [i, -1]
    return f"seq {i}: sourceEventSeqs [{i}, -1]"


def _sources_off_surface(draft: EventDraft, data: Any) -> str:
    """A step/start (no surface type) carrying a sourceEventSeqs that is no array (S:305)."""
    i = _own_event(draft, data, "step/start")
    draft.events[i]["sourceEventSeqs"] = 0
    return f"seq {i}: step/start sourceEventSeqs 0"


def _replace_without_sources(draft: EventDraft, data: Any) -> str:
    """A user/message replacing a current user/message node with no sourceEventSeqs (S:assertProvenance)."""
    i, _turn = _in_turn(draft, data)
    users = [n for n in _nodes(draft, i) if _kind(draft.events[n]) == "user/message"]
    n = choose(data, users, "a user/message node")
    event = {"type": "user/message", "data": copy_json(data_of(draft.events[n])),
             "surfaceOp": {"op": "replace", "start": n, "end": n}}
    _put(draft, i, event)
    return f"seq {i}: user/message replacing seq {n} without sourceEventSeqs"


def _result_rewrite(message: Callable[[Any], Any], what: str) -> Aim:
    """A tool/result replacing one current tool/result node with a copy of its data whose message is
    ``message(copy)`` (S:369-396 reads ``data.message.content[0]`` of both)."""
    def edit(draft: EventDraft, data: Any) -> str:
        i, _turn = _in_turn(draft, data)
        nodes = [n for n in _nodes(draft, i) if _kind(draft.events[n]) == "tool/result"
                 and draft.events[n].get("surfaceOp") == "append"]
        n = choose(data, nodes, "a tool/result node")
        copied = copy_json(data_of(draft.events[n]))
        assert type(copied) is dict
        copied["message"] = message(copied.get("message"))
        _put(draft, i, {"type": "tool/result", "data": copied, "sourceEventSeqs": [n],
                        "surfaceOp": {"op": "replace", "start": n, "end": n}})
        return f"seq {i}: tool/result replacing seq {n}, its message {what}"
    return edit


def _type_number_off_seq(draft: EventDraft, data: Any) -> str:
    """An event of the log's own part whose type is a number and whose seq is the next one's: the
    fold reads the seq before the type (S:planSurfaceEvent), and ignores an event of no surface type."""
    i = choose(data, [i for i in draft.objects() if i >= _seed_end(draft)], "event")
    draft.events[i]["type"] = 7
    draft.events[i]["seq"] = i + 1
    return f"seq {i}: type = 7, seq = {i + 1}"


def _legacy_flat(kind: str) -> Aim:
    """An own ``kind`` append rewritten in the pre-identity flat shape the loader and the released
    migration upgrade (SP:665-722), with one member that still breaks the upgraded message: an
    assistant/message's content a string (with its provenance), a tool/result's callId a number
    (with its content and isError). (A flat message that upgrades cleanly is the checker's E6
    warning, which seed, invariants and the meter refuse: a campaign counts it a miss.)"""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _own_event(draft, data, kind, lambda e: e.get("surfaceOp") == "append" and type(data_of(e).get("message")) is dict)
        d = data_of(draft.events[i])
        message = d.pop("message")
        if kind == "assistant/message":
            source = message.get("source") if type(message.get("source")) is dict else {}
            d["content"] = "a flat text"
            d["provenance"] = {k: v for k, v in source.items() if k != "kind"}
            return f"seq {i}: assistant/message in the legacy flat shape, its content a string"
        content = message.get("content")
        block = content[0] if type(content) is list and content and type(content[0]) is dict else {}
        d["callId"] = 5
        d["content"] = block.get("content", [])
        d["isError"] = block.get("isError", False)
        return f"seq {i}: tool/result in the legacy flat shape, its callId 5"
    return edit


# --- the released family: the migration's rarer legacy forms and turn/end reasons --------------------


def _reason(reason: Any, what: str) -> Aim:
    """A turn/end of the log's own part whose data is ``{turn, reason}`` (the migration's turn/end reading)."""
    return _turn_end_field(lambda d: {"turn": d["turn"], "reason": copy.deepcopy(reason)}, what)


_ERROR = {"message": "simulated provider error (HTTP 503)", "code": "UNAVAILABLE"}


def _image_message(**dims: Any) -> dict[str, Any]:
    """A user message holding an image block whose attachment has every optional member."""
    attachment = {"attachmentId": "att-aimed", "mediaType": "image/png", "bytes": 1024, "width": 64, "height": 48,
                  "name": "shot.png", "originalDimensions": {"width": 640, "height": 480, **dims}}
    message = _user({"kind": "user"}, "look at this")
    message["content"].append({"type": "image", "attachment": attachment})
    return message


def _own_data(kind: str, make: Callable[[dict[str, Any]], Any], what: str) -> Aim:
    """The data of an event of the log's own part of type ``kind`` replaced by ``make(data)``."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _own_event(draft, data, kind, lambda e: type(e.get("data")) is dict)
        draft.events[i]["data"] = make(copy_json(data_of(draft.events[i])))
        return f"seq {i}: {kind} {what}"
    return edit


def _legacy_message(kind: str) -> Aim:
    """A message event of the log's own part written in its pre-identity form (SP:665-726, V01:2180), one that
    still fails once upgraded: a user/message as ``{content, source}`` with a kind-less source, an
    assistant/message as ``{turn, step, content, provenance}`` with an empty provenance (no provider, no
    model). (An upgradable one is a warning by design, issue 20: the loader and released upgrade it.)"""
    def edit(draft: EventDraft, data: Any) -> str:
        def plain(e: dict[str, Any]) -> bool:
            message = data_of(e) if kind == "user/message" else data_of(e).get("message")
            return type(message) is dict and type(message.get("source")) is dict and type(message.get("content")) is list \
                and (kind != "user/message" or message["source"].get("kind") == "user")
        i = _own_event(draft, data, kind, plain)
        d = data_of(draft.events[i])
        if kind == "user/message":
            draft.events[i]["data"] = {"content": d["content"], "source": {}}
        else:
            rest = {k: v for k, v in d.items() if k != "message"}
            draft.events[i]["data"] = {**rest, "content": d["message"]["content"], "provenance": {}}
        return f"seq {i}: {kind} in its pre-identity form, without " + ("a source kind" if kind == "user/message" else "a provenance")
    return edit


def _many_broken(count: int, *, trailing: bool, cite: bool) -> Aim:
    """``count`` step/end events whose turn and step are null (each refused by the meter and released,
    V01:2301) inserted right after a turn/end, so that more than the built-in checker's settling threshold
    (256 pending refusals; each of these is two, a T1 hit and a T4 verdict) pile up; ``trailing``: at the
    log's end, followed by a plan/mode (no head of the structure walk), with ``count`` 129 the threshold is
    crossed at the last one, so they are still pending when the log ends; ``cite``: an assistant/message
    before them holds a citation that waits (:func:`_cite_ahead`) while they pile up."""
    def edit(draft: EventDraft, data: Any) -> str:
        first = _seed_end(draft)
        ends = [i for i in draft.of_type("turn/end") if i >= first]
        if trailing:
            if not ends or ends[-1] != len(draft.events) - 1:
                raise Inapplicable("the log does not end with a turn/end")
            i = len(draft.events)
        else:
            i = choose(data, ends, "turn/end") + 1
        cited = -1
        if cite:
            cited = choose(data, [j for j in draft.of_type("assistant/message") if first <= j < i
                                  and type(draft.events[j].get("sourceEventSeqs")) is list], "assistant/message before the place")
        end = _put(draft, i, *[("step/end", {"turn": None, "step": None}) for _ in range(count)])
        if trailing:
            _put(draft, end, ("plan/mode", {"active": False}))
        said = f", then {_cite_ahead(draft, cited)}" if cite else ""
        return f"seq {i}: {count} step/end with a null turn and step" + (", then plan/mode" if trailing else "") + said
    return edit


def _cite_ahead(draft: EventDraft, j: int) -> str:
    """The assistant/message at ``j`` given a seq past the log's end and a citation of a seq between the two:
    earlier than the message by seq, but at a position the walk has not read (TM:_foldEvent looks the seq up
    in the whole log), so the citation waits until the end of the log, where it names no event."""
    n = len(draft.events)
    draft.events[j]["seq"] = n + 100
    draft.events[j]["sourceEventSeqs"] = [n + 50]
    return f"seq {j} renumbered {n + 100}, citing seq {n + 50}"


def _cite_past_end_open_step(draft: EventDraft, data: Any) -> str:
    """An assistant/message whose citation waits (:func:`_cite_ahead`), and the log cut right after a later
    chunk of an open step (a crash-torn tail): the citation still waits, and the chunk is pending, when the
    log ends."""
    first = _seed_end(draft)
    pairs = []
    for j in draft.of_type("assistant/message"):
        if j < first or type(draft.events[j].get("sourceEventSeqs")) is not list:
            continue
        later = [c for c in draft.of_type("assistant/chunk") if c > j]
        if later:
            pairs.append((j, later[0]))
    j, c = choose(data, pairs, "assistant/message with a later chunk")
    draft.check_truncate(c + 1)
    draft.truncate(c + 1)
    return f"the log cut after the chunk at seq {c}; {_cite_ahead(draft, j)}"


def _steering_append(draft: EventDraft, data: Any) -> str:
    """A legacy steering/message with an append marker, in an open turn between its steps."""
    i, turn = _in_turn(draft, data)
    _put(draft, i, {"type": "steering/message", "data": {"turn": turn, "content": [{"type": "text", "text": "steer"}],
                                                         "source": {"kind": "user"}}, "surfaceOp": "append"})
    return f"seq {i}: steering/message with surfaceOp append in turn {turn}"


def _negative_seed_splice(draft: EventDraft, data: Any) -> str:
    """header.seedLength negative (the inbox replays the last -seedLength events, AG:12) with an inbox splice
    among them that inserts a null message."""
    if type(draft.header) is not dict or "parentSession" in draft.header:
        raise Inapplicable("no header object, or an inherited seed")
    i = _between(draft, data)
    _put(draft, i, ("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [None]}))
    draft.header["seedLength"] = -(len(draft.events) - i)
    return f"seq {i}: a splice inserting null; header.seedLength {draft.header['seedLength']}"


def _nested(depth: int) -> JsonValue:
    """``depth`` arrays nested in one another (built without recursion)."""
    value: JsonValue = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _nested_header_member(draft: EventDraft, data: Any) -> str:
    """A header member nesting 600 arrays: past the reader's depth limit (512), on the header line."""
    if type(draft.header) is not dict:
        raise Inapplicable("no header object")
    draft.header["title"] = _nested(600)  # built here: a deep copy of it would recurse 600 levels deep
    return "header title = 600 nested arrays"


def _hook_invoked(dialect: str) -> Aim:
    """A hook/invoked of ``dialect`` with its hook/result, in an open turn (V01:360)."""
    return _at_turn(lambda turn: [
        ("hook/invoked", {"turn": turn, "point": "UserPromptSubmit", "dialect": dialect,
                          "handlerId": "claude:UserPromptSubmit:1"}),
        ("hook/result", _hook(turn, handlerId="claude:UserPromptSubmit:1", exitCode=0))])


def _legacy_stored_message(draft: EventDraft, data: Any, kind: str, broken: bool = True) -> str:
    """An own appended message event rewritten in the pre-identity shape the v0 loader upgrades on
    read (SP:665-726). ``broken``: with one member the upgraded message still fails on (a user
    message whose source has no kind, an assistant provenance without its model, a tool result
    whose callId is a number), which the loader and released refuse; otherwise it upgrades into a
    valid message, which the harness loads and migrates while the raw readers (seed, invariants,
    the meter for a flat assistant or tool message) refuse it: a checker warns of it, naming them."""
    def shaped(e: dict[str, Any]) -> bool:  # a current-shape message (a user/message's data is its message)
        return e.get("surfaceOp") == "append" and type(data_of(e).get("message", data_of(e))) is dict
    i = _own_event(draft, data, kind, shaped)
    d = data_of(draft.events[i])
    if kind == "user/message":
        if "id" not in d or "role" not in d or "content" not in d:
            raise Inapplicable("no identified user message")
        del d["id"], d["role"]
        if broken:
            d["source"] = {}
        return f"seq {i}: legacy user/message (no id, no role)" + (", its source without kind" if broken else "")
    message = d.pop("message")
    if kind == "assistant/message":
        source = message.get("source") if type(message.get("source")) is dict else {}
        dropped = ("kind", "model") if broken else ("kind",)
        d.update(content=message.get("content"), provenance={k: v for k, v in source.items() if k not in dropped})
        return f"seq {i}: legacy assistant/message (content and provenance)" + (", its provenance without model" if broken else "")
    blocks = message.get("content")
    block = blocks[0] if type(blocks) is list and blocks and type(blocks[0]) is dict else None
    if block is None:
        raise Inapplicable("no tool-result block")
    source = message.get("source") if type(message.get("source")) is dict else {}
    d.update(callId=7 if broken else source.get("callId", block.get("toolCallId")), content=block.get("content"),
             isError=block.get("isError", False))
    return f"seq {i}: legacy tool/result (callId, content, isError)" + (", its callId 7" if broken else "")


def _header_in_force(draft: EventDraft, data: Any) -> int:
    """The own request/header in force at the log's last assistant message (the meter's usage anchor)."""
    last = max(draft.of_type("assistant/message"), default=-1)
    headers = [i for i in draft.of_type("request/header") if _seed_end(draft) <= i < last
               and type(data_of(draft.events[i]).get("header")) is dict]
    if not headers:
        raise Inapplicable("no request/header before the last assistant message")
    return headers[-1]


def _header_tools(value: JsonValue) -> Aim:
    """The anchor's request/header ``header.tools`` set to ``value`` (TM measure, V01 tools array)."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _header_in_force(draft, data)
        data_of(draft.events[i])["header"]["tools"] = copy.deepcopy(value)
        return f"seq {i}: request/header header.tools = {value!r} (the header in force at the last assistant message)"
    return edit


def _request_header_data(value: JsonValue) -> Aim:
    """A request/header whose whole ``data`` is ``value`` (S:1215)."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _own_event(draft, data, "request/header")
        draft.events[i]["data"] = copy.deepcopy(value)
        return f"seq {i}: request/header data = {value!r}"
    return edit


def _unpriced_call(draft: EventDraft, data: Any) -> str:
    """An appended assistant/message whose source is no model's and whose tool-call block lacks its
    arguments: the loader refuses the source (V01:773), the meter's pricing the missing arguments (TM:23)."""
    def calls(e: dict[str, Any]) -> list[Any]:
        message = data_of(e).get("message")
        content = message.get("content") if type(message) is dict else None
        return [b for b in content if type(b) is dict and b.get("type") == "tool-call"] if type(content) is list else []
    i = _own_event(draft, data, "assistant/message", lambda e: e.get("surfaceOp") == "append" and bool(calls(e)))
    message = data_of(draft.events[i])["message"]
    block = calls(draft.events[i])[0]
    block.pop("arguments", None)
    message["source"] = {"kind": "user"}
    return f"seq {i}: assistant/message source kind user, tool call {block.get('id')!r} without arguments"


def _gap_after_last_turn(draft: EventDraft, data: Any) -> str:
    """An event appended after the log's closing turn/end with a seq one past its position: a gap
    after the last turn/end, which the jsonl loader keeps as a torn tail (SPJ:285-294) and every
    other reader refuses."""
    if not draft.events or _kind(draft.events[-1]) != "turn/end":
        raise Inapplicable("the log does not end on a turn/end")
    i = len(draft.events)
    event = {"type": "plan/mode", "seq": i, "time": _time(draft, i), "data": {"active": False}}
    draft.insert(i, event)
    event["seq"] = i + 1
    return f"seq {i + 1}: plan/mode after the last turn/end, seq {i} never written"


def _chunk_row(tag: str, **over: Any) -> Aim:
    """A packed chunk row (written as the writer packs a chunk run, S:922) inserted between turns, one
    member of it just outside ``validateRow``'s domain; the row never decodes."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _between(draft, data)
        body: dict[str, Any] = {"turn": 1, "step": 1, "index": 0, "dt": [1]}
        body.update({"id": "call_aimed", "name": "read", "args": ["{", "}"]} if tag == "tool-call-chunks"
                    else {"texts": ["a", "b"]})
        row: dict[str, Any] = {"type": tag, "seq0": i, "time0": _time(draft, i), "data": body}
        for key, value in over.items():
            (row if key in ("seq0", "time0", "data") else body)[key] = copy.deepcopy(value)
        draft.insert(i, row)
        row.pop("seq", None)
        return f"seq {i}: a {tag} row with {over}"
    return edit


_BIG_NUMBERS = {"type": "retrace/marker", "ignorable": True,
                "data": {"count": 100000000000000000000, "scale": 1e301, "ratio": 1.5}}
"""An ignorable event of a known consumer holding lossless numbers the reader's screen cannot clear
(an exponent of three digits) beside an integer of more than 17 digits."""


# --- meter: request-header tools, config stops, legacy content, tool-result outputs, loader closers ---


_KEPT_TOOLS: tuple[JsonValue, ...] = ("read_file", {"length": 1}, {"length": "2"}, {"length": True}, {"length": " 3 "})
"""Non-array tools that canonicalHeader keeps (``tools.length > 0``, S:535)."""

_DROPPED_TOOLS: tuple[JsonValue, ...] = (True, 5, {}, "", {"length": None}, {"length": 0}, {"length": " "},
                                         {"length": "x"}, {"length": {"n": 1}})
"""Non-array tools that canonicalHeader drops as if absent."""

_COERCED_TOOLS: tuple[JsonValue, ...] = ({"length": "Infinity"}, {"length": [1]}, {"length": "0x10"},
                                         {"length": "1_0"}, {"length": "\u0661"}, {"length": "\x1c3"},
                                         {"length": "\ufeff4"}, {"length": "infinity"})
"""Object tools whose ``length`` ``>`` reads through JavaScript's ToNumber (hex, Infinity, an
array's printed text) and Python's ``float`` reads otherwise."""


def _tools(values: tuple[JsonValue, ...]) -> Aim:
    """The tools of the request/header in force at the log's last assistant/message set to one of ``values``."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _anchor_header(draft)
        value = copy.deepcopy(choose(data, values, "tools value"))
        data_of(draft.events[i])["header"]["tools"] = value
        return f"seq {i}: request/header header.tools = {json.dumps(value)}"
    return edit


def _anchor_header(draft: EventDraft) -> int:
    """The log's own request/header in force at its last assistant/message (the meter's usage anchor)."""
    messages = [i for i in draft.of_type("assistant/message") if i >= _seed_end(draft)]
    if not messages:
        raise Inapplicable("no assistant/message")
    headers = [i for i in draft.of_type("request/header") if i < messages[-1]]
    if not headers or headers[-1] < _seed_end(draft) or type(data_of(draft.events[headers[-1]]).get("header")) is not dict:
        raise Inapplicable("no own request/header before the last assistant/message")
    return headers[-1]


_LAST_HEADER_EDITS = ("same", "model", "stop-same", "stop-other", "stop-longer", "stop-string", "stop-array-string",
                      "config-missing", "header-not-object", "adapter-defaults", "system", "tools-dropped", "tools-shorter", "tools-same-length", "tools-length-string", "anchor-array")
"""How the header written after the anchor differs from the anchor's (``same``: not at all)."""


def _tools_after_anchor(draft: EventDraft, data: Any) -> str:
    """The anchor's request/header with kept non-array tools, and a copy of it (one member changed) written
    after the last assistant/message, before its turn/end: the meter's headerEquals(anchor, last) (S:548)."""
    a = _anchor_header(draft)
    last_message = max(draft.of_type("assistant/message"))
    ends = [i for i in draft.of_type("turn/end") if i > last_message]
    if not ends or ends[0] != max(draft.of_type("turn/end")):
        raise Inapplicable("no turn/end after the last assistant/message")
    anchor = data_of(draft.events[a])["header"]
    if type(anchor.get("config")) is not dict:
        raise Inapplicable("the anchor header has no config")
    edit = choose(data, _LAST_HEADER_EDITS, "last header edit")
    anchor["tools"] = {"length": 2} if edit == "tools-length-string" else "ab"
    last = copy.deepcopy(anchor)
    config = last["config"]
    if edit == "stop-array-string":  # ``s === b.stop?.[i]`` reads the string's characters: the configs agree
        anchor["config"]["stop"], config["stop"] = ["a", "b"], "ab"
    elif edit == "model":
        config["model"] = str(config.get("model")) + "-other"
    elif edit.startswith("stop-"):
        anchor["config"]["stop"] = "ab" if edit == "stop-string" else ["END"]
        config["stop"] = {"stop-same": ["END"], "stop-other": ["DONE"], "stop-longer": ["END", "DONE"],
                          "stop-string": "ab"}[edit]
    elif edit == "adapter-defaults":
        last["adapterDefaults"] = {"maxTokens": True}
        config.setdefault("maxTokens", 4096)
        anchor["config"].setdefault("maxTokens", 4096)
    elif edit == "system":
        last["system"] = str(last.get("system", "")) + " Be brief."
    elif edit == "tools-dropped":
        last["tools"] = {}
    elif edit == "tools-shorter":
        last["tools"] = "a"
    elif edit == "tools-same-length":
        last["tools"] = "cd"
    elif edit == "tools-length-string":
        last["tools"] = {"length": "2"}
    elif edit == "anchor-array":
        anchor["tools"] = []
        last["tools"] = "ab"
    if edit == "config-missing":  # the meter reads the last header's config.provider and throws
        del last["config"]
    copied = copy.deepcopy(data_of(draft.events[a]))
    copied["header"] = "no header" if edit == "header-not-object" else last
    i = _put(draft, ends[0], ("request/header", copied))
    return (f"seq {a}: request/header tools {json.dumps(anchor['tools'])}; "
            f"seq {i - 1}: its copy ({edit}) after the last assistant/message")


_STOPS: tuple[JsonValue, ...] = (None, "ab", 5, {"length": 1})
"""Config stops that are no array: callConfigEquals reads their length (null throws) and calls every."""


def _stop(draft: EventDraft, data: Any) -> str:
    """The config stop of the request/header in force at the last assistant/message made no array: the
    meter compares that header with the last one (itself, where no header follows) and throws (LLM:68-72)."""
    i = _anchor_header(draft)
    config = data_of(draft.events[i])["header"].get("config")
    if type(config) is not dict:
        raise Inapplicable("the anchor header has no config")
    config["stop"] = copy.deepcopy(choose(data, _STOPS, "stop value"))
    return f"seq {i}: request/header header.config.stop = {json.dumps(config['stop'])}"


def _legacy_content_message(bad_text: bool) -> Aim:
    """An own user/message or assistant/message written in its pre-identity shape (SP:665-722), which
    the loader and the released migration upgrade; ``bad_text``: with a text element whose text is a
    number (V01 contentBlocksValue). Without it the checker warns of the legacy shape (E6, the harness
    can use it), naming the seed and invariant layers, which read it raw and refuse it."""
    def edit(draft: EventDraft, data: Any) -> str:
        kind = choose(data, ("user/message", "assistant/message"), "message type")
        def fits(e: dict[str, Any]) -> bool:
            d = data_of(e)
            m = d if kind == "user/message" else d.get("message")
            return type(m) is dict and type(m.get("content")) is list and bool(m["content"]) and type(m.get("source")) is dict
        i = _own_event(draft, data, kind, fits)
        d = data_of(draft.events[i])
        if kind == "user/message":
            d.pop("id", None)
            d.pop("role", None)
            content = d["content"]
        else:
            message = d.pop("message")
            source = {k: v for k, v in message["source"].items() if k != "kind"}
            d["content"], d["provenance"] = message["content"], source
            content = d["content"]
        if bad_text:
            content.insert(0, {"type": "text", "text": 5})
        return f"seq {i}: {kind} in its legacy shape" + (" with a text element whose text is 5" if bad_text else "")
    return edit


def _result_output(draft: EventDraft, data: Any) -> str:
    """A tool/result of the final surface whose output holds an image block and a tool-call block (P4; the
    released codec's contentBlocksValue, V01:647-700, reads each block's exact keys; the DeepSeek adapter
    refuses image input, LD:680)."""
    visible = set(n for n in surface_at(draft) if type(n) is int)

    def fits(e: dict[str, Any]) -> bool:
        m = data_of(e).get("message")
        c = m.get("content") if type(m) is dict else None
        return (e.get("surfaceOp") == "append" and e.get("seq") in visible and type(c) is list and len(c) == 1
                and type(c[0]) is dict)
    i = _own_event(draft, data, "tool/result", fits)
    exact = data.draw(st.booleans(), label="exact image block")
    image: dict[str, Any] = {"type": "image", "attachment": {"attachmentId": "att-aimed", "mediaType": "image/png",
                                                              "bytes": 1024, "width": 32, "height": 32}}
    if not exact:
        image["alt"] = "a picture"
    # arguments an object: the released codec and the meter (a NaN price) refuse it wherever the result is
    call: dict[str, Any] = {"type": "tool-call", "id": "call_inner", "name": "read", "arguments": {}}
    data_of(draft.events[i])["message"]["content"][0]["content"] = [image, call]
    return f"seq {i}: tool/result output [image, tool-call] ({'exact' if exact else 'inexact'} image block)"


_RESULT_TEXTS: tuple[JsonValue, ...] = (["a"], ["a", "b"], [[""]], [], None, 5)
"""A text block's text beside a tool-result block, no string (the released codec refuses each): what
``flattenText`` prints of it (a one-member array its member, more members with commas, null nothing)."""


def _result_beside_text(draft: EventDraft, data: Any) -> str:
    """An own user/message whose content is a text block and a tool-result block answering no call:
    the request serializer sends the text as a user message only where it prints some (LD:117-145),
    then a tool message no call awaits (the provider refuses)."""
    def human(e: dict[str, Any]) -> bool:
        return e.get("surfaceOp") == "append" and type(data_of(e).get("content")) is list
    i = _own_event(draft, data, "user/message", human)
    text = copy.deepcopy(choose(data, _RESULT_TEXTS, "text"))
    data_of(draft.events[i])["content"] = [
        {"type": "text", "text": text},
        {"type": "tool-result", "toolCallId": "call_aimed", "content": [{"type": "text", "text": "ok"}]}]
    return f"seq {i}: user/message content [text {json.dumps(text)}, tool-result for call_aimed]"


def _crash_after_call(twice: bool) -> Aim:
    """The log cut right after an own assistant/message advertising tool calls (its turn and step left
    open): the loader closes each advertised call with a synthetic result (interruptedTurnClosers, S:626);
    ``twice``: a second assistant/message in the same step advertises another call first."""
    def edit(draft: EventDraft, data: Any) -> str:
        def calls(e: dict[str, Any]) -> bool:
            m = data_of(e).get("message")
            c = m.get("content") if type(m) is dict else None
            return type(c) is list and any(type(b) is dict and b.get("type") == "tool-call" for b in c)
        i = _own_event(draft, data, "assistant/message", calls)
        draft.check_truncate(i + 1)
        draft.truncate(i + 1)
        if twice:
            second = copy_json(draft.events[i])
            second.pop("sourceEventSeqs", None)
            message = data_of(second)["message"]
            message["id"] = "4c1f7a9e-2b1d-4c55-9a0e-aimed0000002"
            message["content"] = [{"type": "tool-call", "id": "call_aimed_2", "name": "read", "arguments": "{}"}]
            data_of(second).pop("usage", None)
            _put(draft, i + 1, second)
        return f"seq {i}: the log cut after this assistant/message" + (", a second one advertising call_aimed_2" if twice else "")
    return edit


# --- migration: the checker's model of the migration, its relation walk, lossy numbers ---------


def _humans(draft: EventDraft) -> list[int]:
    """Indices of the log's own human user/messages on the surface (the messages a title may cite)."""
    def human(e: dict[str, Any]) -> bool:
        source = data_of(e).get("source")
        return e.get("surfaceOp") == "append" and type(source) is dict and source.get("kind") == "user"
    return [i for i in draft.of_type("user/message") if i >= _seed_end(draft) and human(draft.events[i])]


def _title(seqs: JsonValue, source: JsonValue) -> tuple[str, dict[str, Any]]:
    return ("session/title", {"title": "t", "messageSeqs": seqs, "source": source})


_FALLBACK = {"kind": "fallback"}


def _title_between(make: Callable[[EventDraft, Any, int], tuple[str, dict[str, Any]]]) -> Aim:
    """A title made for the place ``i`` between turns (``make`` may raise :class:`Inapplicable`)."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _between(draft, data)
        event = make(draft, data, i)
        _put(draft, i, event)
        return f"seq {i}: session/title messageSeqs {event[1]['messageSeqs']!r} source {event[1]['source']!r}"
    return edit


def _cites_later(draft: EventDraft, data: Any, i: int) -> tuple[str, dict[str, Any]]:
    """Cites a later human user/message, then a later position that holds none (both past the title)."""
    later = [h for h in _humans(draft) if h >= i]
    others = [j for j in range(i, len(draft.events)) if j not in later]
    h = choose(data, later, "later human message")
    j = choose(data, [j for j in others if j > h], "later non-human position")
    return _title([h + 1, j + 1], dict(_FALLBACK))  # +1: the title itself is inserted at i


def _orphan_compaction(draft: EventDraft, data: Any) -> str:
    """A compaction/start left open by a seed boundary (session/end-seed) right after it, between turns."""
    i = _between(draft, data)
    _put(draft, i, ("compaction/start", {"compactionId": "compaction-aimed", "turn": None}), ("session/end-seed", {}))
    return f"seq {i}: compaction/start left open by the session/end-seed after it"


def _legacy_compaction(draft: EventDraft, data: Any, *, legacy_types: bool, checkpoint: bool) -> str:
    """A compaction between turns whose records carry no compactionId (the migration fills it in,
    V01:1975-2018), under their legacy compact/* names (V01:1923) when ``legacy_types``; with
    ``checkpoint``, the compact plugin's appended checkpoint message inside it."""
    i = _between(draft, data)
    nodes = [n for n in surface_at(draft, i) if type(n) is int]
    if not nodes:
        raise Inapplicable("an empty surface")
    n = choose(data, nodes, "summarised node")
    prefix = "compact/" if legacy_types else "compaction/"
    events: list[tuple[str, dict[str, Any]]] = [
        (prefix + "start", {"turn": None}),
        (prefix + "summary", {"summary": [{"type": "text", "text": "The earlier conversation."}],
                              "shadowedRange": {"start": n, "end": n}, "shadowedSeqs": [n], "shadowedTokenCount": 12,
                              "provider": "deepseek-official", "model": "deepseek-v4-flash"})]
    if checkpoint:
        events.append(("user/message", _user({"kind": "plugin", "plugin": "compact"}, "The earlier conversation.")))
    events.append((prefix + "end", {"turn": None}))
    end = _put(draft, i, *events)
    if checkpoint:
        draft.events[end - 2]["surfaceOp"] = "append"
    return f"seq {i}: {', '.join(t for t, _ in events)} without compactionIds between turns"


def _call_without_id(draft: EventDraft, data: Any) -> str:
    """An advertised tool call without an id, its tool/call and tool/result gone with it: the
    unresolved-call check throws only for a first open lifecycle whose id is not undefined (V01:2513-2515)."""
    def calls(e: dict[str, Any]) -> list[Any]:
        content = data_of(e).get("message", {}).get("content") if type(data_of(e).get("message")) is dict else None
        return [b for b in content if type(b) is dict and b.get("type") == "tool-call"] if type(content) is list else []
    i = _own_event(draft, data, "assistant/message", lambda e: bool(calls(e)))
    block = calls(draft.events[i])[0]
    call_id = block.pop("id", None)
    for j in reversed(range(i + 1, len(draft.events))):
        d = data_of(draft.events[j])
        kind = _kind(draft.events[j])
        source = d.get("message", {}).get("source") if type(d.get("message")) is dict else None
        if (kind == "tool/call" and d.get("callId") == call_id) or (
                kind == "tool/result" and type(source) is dict and source.get("callId") == call_id):
            draft.remove(j)
    return f"seq {i}: tool call {call_id!r} advertised without its id, its lifecycle removed"


def _tool_result_error(draft: EventDraft, data: Any) -> str:
    """An appended tool/result whose error is a string (V01:2362 reads it as a record)."""
    i = _own_event(draft, data, "tool/result", lambda e: e.get("surfaceOp") == "append"
                   and type(data_of(e).get("message")) is dict and type(data_of(e)["message"].get("source")) is dict)
    data_of(draft.events[i])["error"] = "the tool failed"
    return f"seq {i}: tool/result error = 'the tool failed'"


def _lossy(data: Any) -> str:
    """A drawn marker :meth:`~._draft.RowDraft.lower` writes as ``-0``, ``1e400`` or ``-1e400``."""
    return str(data.draw(st.sampled_from(sorted(LOSSY_NUMBERS)), label="lossy number"))


def _shown(marker: str) -> str:
    return LOSSY_NUMBERS[marker].decode()


def _lossy_where(kind: str, where: Callable[[dict[str, Any]], Any], what: str,
                 wrap: Callable[[str], JsonValue] = lambda marker: marker) -> Aim:
    """A lossy number put into the log's own ``kind`` event at the place ``where(event)`` returns (it
    edits nothing): a ``(container, key)`` pair, set to ``wrap(number)``, or appended to the list
    ``container`` as an unknown block when ``key`` is ``None``; ``None`` where the event has none."""
    def edit(draft: EventDraft, data: Any) -> str:
        i = _own_event(draft, data, kind, lambda e: where(e) is not None)
        container, key = where(draft.events[i])
        marker = _lossy(data)
        if key is None:
            container.append({"type": "x-aimed-note", "weight": marker})
        else:
            container[key] = wrap(marker)
        return f"seq {i}: {kind} {what} holds {_shown(marker)}"
    return edit


def _message_content(e: dict[str, Any]) -> Any:
    message = data_of(e).get("message")
    content = message.get("content") if type(message) is dict else None
    return content if type(content) is list else None


def _tool_parameters(e: dict[str, Any]) -> tuple[Any, str] | None:
    header = data_of(e).get("header")
    tools = header.get("tools") if type(header) is dict else None
    if type(tools) is not list or not tools or type(tools[0]) is not dict or type(tools[0].get("parameters")) is not dict:
        return None
    return tools[0]["parameters"], "minProperties"


def _unknown_block(e: dict[str, Any]) -> tuple[Any, None] | None:
    content = _message_content(e)
    return None if content is None else (content, None)


def _nested_block(e: dict[str, Any]) -> tuple[Any, None] | None:
    content = _message_content(e)
    if e.get("surfaceOp") != "append" or not content or type(content[0]) is not dict \
            or content[0].get("type") != "tool-result" or type(content[0].get("content")) is not list:
        return None
    return content[0]["content"], None


def _replay_state(e: dict[str, Any]) -> tuple[Any, str] | None:
    message = data_of(e).get("message")
    source = message.get("source") if type(message) is dict else None
    if type(source) is not dict or source.get("kind") != "model":
        return None
    return source, "replayState"


def _lossy_reason(draft: EventDraft, data: Any) -> str:
    """A turn/end whose reason is of a kind the migration does not know, holding a lossy number."""
    ends = [i for i in draft.of_type("turn/end") if i >= _seed_end(draft) and type(data_of(draft.events[i]).get("turn")) is int]
    i = choose(data, ends, "turn/end")
    marker = _lossy(data)
    draft.events[i]["data"] = {"turn": data_of(draft.events[i])["turn"], "reason": {"kind": "x-aimed-pause", "after": marker}}
    return f"seq {i}: turn/end reason of kind x-aimed-pause holds {_shown(marker)}"


def _lossy_source(draft: EventDraft, data: Any) -> str:
    """An inbox splice between turns whose user message has a source of an unknown kind holding a lossy number."""
    marker = _lossy(data)
    i = _between(draft, data)
    _put(draft, i, _splice(_user({"kind": "x-aimed-relay", "hops": marker})))
    return f"seq {i}: agent/inbox/spliced message source of kind x-aimed-relay holds {_shown(marker)}"


CHECKER_AIMS: dict[str, dict[str, Aim]] = {
    "released": {
        # checker _legacy_error_problem: a legacy error reason without a step (SP:620, V01:2101)
        "error-no-step": _reason({"kind": "error", "message": "m"}, "legacy error reason without a step"),
        # checker _legacy_error_problem: a legacy failure with a member llmFailureValue does not admit
        "error-failure-extra": _reason({"kind": "error", "step": 1, "failure": {**_ERROR, "retryable": True}},
                                       "legacy error failure with an extra member"),
        # checker _legacy_error_problem (strict) -> _llm_failure_problem: a legacy failure with an empty message
        "error-failure-empty": _reason({"kind": "error", "step": 1, "failure": {**_ERROR, "message": ""}},
                                       "legacy error failure with an empty message"),
        # checker _legacy_error_problem (strict): a legacy failure that is no object
        "error-failure-string": _reason({"kind": "error", "step": 1, "failure": "boom"}, "legacy error failure a string"),
        # checker _legacy_error_problem: a legacy error reason with neither failure nor message
        "error-no-message": _reason({"kind": "error", "step": 1}, "legacy error reason with a step only"),
        # checker _legacy_error_problem (strict, message form) -> _llm_failure_problem: an empty message
        "error-message-empty": _reason({"kind": "error", "step": 1, "message": "", "code": "E"},
                                       "legacy error reason with an empty message"),
        # checker _released_turn_end_problem: a reason that is no object
        "reason-string": _reason("completed", "reason a string"),
        # checker _released_turn_end_problem: aborted with a member besides kind
        "aborted-extra": _reason({"kind": "aborted", "note": "x"}, "aborted reason with an extra member"),
        # checker _released_turn_end_problem: aborted with a cause and another member
        "aborted-cause-extra": _reason({"kind": "aborted", "reason": {"kind": "user"}, "note": "x"},
                                       "aborted reason with a cause and an extra member"),
        # checker _released_turn_end_problem: an abort cause that is no object
        "aborted-cause-string": _reason({"kind": "aborted", "reason": "user"}, "abort cause a string"),
        # checker _released_turn_end_problem: an error reason with a member besides kind and error
        "error-extra": _reason({"kind": "error", "error": dict(_ERROR), "step": 1}, "error reason with a step"),
        # checker _llm_failure_problem: an error without its code
        "error-no-code": _reason({"kind": "error", "error": {"message": "m"}}, "error without a code"),
        # checker _llm_failure_problem: an error status below 100
        "error-status": _reason({"kind": "error", "error": {**_ERROR, "status": 99}}, "error status 99"),
        # checker _llm_failure_problem: an error providerRetryAfterMs of 0
        "error-retry-after": _reason({"kind": "error", "error": {**_ERROR, "providerRetryAfterMs": 0}},
                                     "error providerRetryAfterMs 0"),
        # checker _llm_failure_problem: an empty error requestId
        "error-request-id": _reason({"kind": "error", "error": {**_ERROR, "requestId": ""}}, "error requestId empty"),
        # checker ShadowPriceClaims._claim: a compaction/prune whose shadowedRange is no object (V01:1141)
        "prune-range-array": _at_step(lambda turn, step, provider: [
            ("compaction/prune", {"shadowedRange": [0, 0], "shadowedSeqs": [0], "shadowedTokenCount": 1})]),
        # checker _splice: an inbox splice inserting null (AG Inbox.validate)
        "splice-null": _at_gap(("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [None]})),
        # checker InboxReplay.finish: a negative seedLength keeps the last splices for the end of the log
        "negative-seed": _negative_seed_splice,
        # checker _safe_integer: a hook/result exitCode that is no integer (V01:373)
        "exit-code-fraction": _at_turn(lambda turn: [("hook/result", _hook(turn, exitCode=1.5))]),
        # checker _block/_image: an image block with every attachment member, its original height 0 (V01:700)
        "image-original-height": _at_gap(_splice(_image_message(height=0))),
        # checker _instant: a scheduledAt on a day its month does not have
        "instant-day-overflow": _at_gap(("schedule/change", _schedule(scheduledAt="2025-02-30T17:01:34.624Z"))),
        # checker _payload_agent_inbox_spliced: an outcome other than canceled
        "splice-outcome": _at_gap(("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [],
                                                            "outcome": "cancelled"})),
        # checker _payload_tool_call: tool/call arguments an object (V01:471)
        "call-arguments-object": _at_step(lambda turn, step, provider: [
            ("tool/call", {"turn": turn, "step": step, "callId": "call_aimed", "name": "read", "arguments": {}})]),
        # checker ReleasedSchema._finding: a turn/start whose data is null (the loader reads its turn)
        "turn-start-null": _own_data("turn/start", lambda d: None, "data null"),
        # checker _normalise: a legacy steering/message carrying a message (SP:543, V01:1924)
        "steering-message": _at_turn(lambda turn: [("steering/message", {"turn": turn, "message": _user({"kind": "user"})})]),
        # checker _normalise: a legacy steering/message carrying content and source (SP:554, V01:1930)
        "steering-content": _at_turn(lambda turn: [("steering/message", {
            "turn": turn, "content": [{"type": "text", "text": "steer"}], "source": {"kind": "user"}})]),
        # checker _normalise, surface S2: a legacy steering/message with an append marker (the fold refuses it, SP:540 upgrades it)
        "steering-append": _steering_append,
        # checker _normalise: a pre-react-loop turn/start with a trigger (SP:572, V01:2090)
        "turn-start-trigger": _own_data("turn/start", lambda d: {**d, "trigger": {"kind": "user"}}, "with a trigger"),
        # checker _normalise: request/header.messagePrefix an array, dropped by the migration (V01:2037)
        "message-prefix-array": _request_header_member("messagePrefix", []),
        # checker _normalise: an llm/retry without retryId (V01:1960), its retry over maxRetries
        "retry-without-id": _retries({"retryId": _DROP, "retry": 4}),
        # checker _normalise: compaction/start and compaction/end without compactionId (V01:1985)
        "compaction-without-ids": _at_gap(("compaction/start", {"turn": None}), ("compaction/end", {"turn": None})),
        # checker _normalise: a compact-plugin user message without compactionId inside a compaction (V01:2008)
        "compact-message-without-id": _at_gap(
            ("compaction/start", {"compactionId": "compaction-aimed", "turn": None}),
            {"type": "user/message", "data": _user({"kind": "plugin", "plugin": "compact"}, "summary"),
             "surfaceOp": "append"},
            ("compaction/end", {"compactionId": "compaction-aimed", "turn": None})),
        # checker _normalise/_with_legacy_id: a pre-identity user/message (SP:665)
        "legacy-user-message": _legacy_message("user/message"),
        # checker _normalise/_with_legacy_id: a pre-identity assistant/message (SP:690)
        "legacy-assistant-message": _legacy_message("assistant/message"),
        # checker _owned_elsewhere: a hook/invoked of the retired claude dialect (E5)
        "hook-claude-dialect": _at_turn(lambda turn: [("hook/invoked", {
            "turn": turn, "point": "UserPromptSubmit", "dialect": "claude", "handlerId": "claude:UserPromptSubmit:1"})]),
        # checker TurnStepStructure.settled: more than 256 refusals pending at a head
        "many-null-steps": _many_broken(300, trailing=False, cite=False),
        # checker TurnStepStructure.finish: more than 256 refusals still pending at the log's end
        "many-null-steps-last": _many_broken(129, trailing=True, cite=False),
        # checker TurnStepStructure.settled: more than 256 refusals pending while a citation waits (journal)
        "many-null-steps-waiting": _many_broken(300, trailing=False, cite=True),
        # checker TurnStepStructure.finish: a citation still waiting and an open step's chunks at the log's end
        "cite-past-end": _cite_past_end_open_step,
    },
    "turns": {
        # checker _estimate_problem (TM:23-38): a cited block-end's block the meter's estimate cannot price
        "end-text-missing": _cited_end({"type": "text"}),
        "end-call-unnamed": _cited_end({"type": "tool-call", "id": "call_aimed", "arguments": "{}"}),
        "end-result-not-list": _cited_end({"type": "tool-result", "toolCallId": "call_aimed", "content": 5, "isError": False}),
        # checker _estimate_problem: a string content is iterable (its characters), which every layer accepts
        "end-result-text": _cited_end({"type": "tool-result", "toolCallId": "call_aimed", "content": "ok", "isError": False}),
        "end-result-null-block": _cited_end({"type": "tool-result", "toolCallId": "call_aimed", "content": [None], "isError": False}),
        "end-result-nested": _cited_end({"type": "tool-result", "toolCallId": "call_aimed", "content": [{"type": "text"}],
                                         "isError": False}),
        # checker _assembly_problem (DL:851): the last cited finish's replayState.blocks is null
        "finish-blocks-null": lambda d, x: _finish_blocks_null(d, x, reverse=False),
        # checker read_citation's general reading (a descending citation) ending in an assembly problem
        "finish-blocks-null-descending": lambda d, x: _finish_blocks_null(d, x, reverse=True),
        # checker ascending_citation: two finish skeletons cited, the last one decides the replay
        "second-finish-blocks-null": _second_finish,
        # checker _assembly_problem (DL:831): an incomplete block of an unknown type
        "incomplete-block": _incomplete_block,
        # checker ascending_citation: the last chunks read are another step's (TM:590)
        "cites-earlier-step": _cites_earlier_step,
        # checker _TurnStepMachine.structure, turn/start: buffered chunks of the open step flushed (V01:2090)
        "turn-start-over-chunk": _turn_start_over_chunk,
        # checker _Refusals settling past _SETTLE_AT pending (pinned), and with a citation waiting (replay)
        "crowded-refusals": lambda d, x: _crowd(d, x, waiting=False),
        "crowded-waiting-citation": lambda d, x: _crowd(d, x, waiting=True),
        # checker _provenance: an entry not earlier, then one no safe integer (S:assertProvenance)
        "sources-own-then-negative": _sources_own_then_negative,
        # checker released_decodes_sources: a non-surface event's sourceEventSeqs is no array (S:305)
        "sources-off-surface": _sources_off_surface,
        # checker _provenance without sourceEventSeqs: a replace citing nothing (S5)
        "replace-without-sources": _replace_without_sources,
        # checker _masked: a tool/result rewrite whose message, or its content, JavaScript cannot index
        "rewrite-message-text": _result_rewrite(lambda m: "ok", "a string"),
        "rewrite-content-null": _result_rewrite(lambda m: {**m, "content": None} if type(m) is dict else m, "content null"),
        # checker SurfaceReplay.op_of: an event of no type string read off its position (surfaceOpOf finds none)
        "type-number-off-seq": _type_number_off_seq,
        # checker _upgrade (SP:665-722): legacy flat messages, upgraded before every check, still broken once upgraded
        "legacy-flat-content": _legacy_flat("assistant/message"),
        "legacy-flat-call-id": _legacy_flat("tool/result"),
    },
    "storage": {
        # checker _header_fields: a v0 physical header's unexpected member (V01:1596-1609)
        "header-extra-member": _header("title", "fix the build", "'fix the build'"),
        # checker header_rules: the reader's depth limit (L3) stops the read at the header; released refuses the member
        "header-nested-past-limit": _nested_header_member,
        # checker _retired_dialect: a v0 hook/invoked of the retired dialect "claude" (V01:360)
        "retired-hook-dialect": _hook_invoked("claude"),
        # checker _legacy_upgrade (user) and _message_shape: upgraded (SP:665-726), its source still has no kind
        "legacy-user-message": lambda d, x: _legacy_stored_message(d, x, "user/message"),
        # checker _legacy_upgrade (assistant) and _message_shape: upgraded, its source still has no model
        "legacy-assistant-message": lambda d, x: _legacy_stored_message(d, x, "assistant/message"),
        # checker _legacy_upgrade (tool result) and _message_shape: upgraded, its callId still no string
        "legacy-tool-result": lambda d, x: _legacy_stored_message(d, x, "tool/result"),
        # checker _message_shape (issue 20 severity): a legacy message that upgrades into a valid
        # one, an E6 warning naming the raw readers that refuse it (the loader and released accept)
        "legacy-upgraded-message": lambda d, x: _legacy_stored_message(
            d, x, choose(x, ("user/message", "assistant/message", "tool/result"), "message type"), broken=False),
        # checker meter_price_throws: a malformed assistant message's tool call without arguments (TM:23)
        "unpriced-tool-call": _unpriced_call,
        # checker _request_header: header.system null, a problem in _METER_READS (S:529)
        "header-system-null": _request_header_member("system", None),
        # checker _request_header/PayloadShape.finish: tools a string at the meter's usage anchor (_meter_header)
        "header-tools-string": _header_tools("read"),
        # checker _header_unreadable, _meter_throws_on_header: a request/header whose data is null (S:1215)
        "request-header-data-null": _request_header_data(None),
        # checker SeqOrder.finish: a jsonl seq gap after the last turn/end, a torn tail to the loader (SPJ:285-294)
        "gap-after-last-turn": _gap_after_last_turn,
        # checker _packed_row_error: validateRow's seq0 (S:929)
        "row-seq0-negative": _chunk_row("text-chunks", seq0=-1),
        # checker _packed_row_error: validateRow's isRecord(data) (S:932)
        "row-data-not-object": _chunk_row("text-chunks", data=None),
        # checker _packed_row_error: an array passes isRecord and fails hasExactKeys (S:932, 961)
        "row-data-array": _chunk_row("text-chunks", data=["a"]),
        # checker _packed_row_error: validateRow's id and name strings (S:952)
        "row-id-not-string": _chunk_row("tool-call-chunks", id=7),
        # checker _packed_row_error: validateRunData's numbers (S:913)
        "row-turn-not-number": _chunk_row("reasoning-chunks", turn="1"),
        # checker _packed_row_error: validateRunData's dt (S:917)
        "row-dt-not-integers": _chunk_row("text-chunks", dt=[1.5]),
        # checker _lossy_token (_raise_lossy_int past 17 digits): lossless numbers on a line the screen flags; the
        # v0 migration refuses the ignorable type (no v0 payload takes free numbers)
        "big-lossless-numbers": _at_gap(_BIG_NUMBERS),
    },
    "meter": {
        # checker _meter_header ToolsReading: a null tools throws in every reader of the header
        "tools-null": _tools((None,)),
        # checker _meter_header ToolsReading: tools kept though no array (string, object with positive length)
        "tools-kept": _tools(_KEPT_TOOLS),
        # checker _meter_header _positive_length: tools canonicalHeader drops, released alone refuses
        "tools-dropped": _tools(_DROPPED_TOOLS),
        # checker _meter_header _positive_length: a length ToNumber reads otherwise than Python's float
        "tools-length-coerced": _tools(_COERCED_TOOLS),
        # checker _meter_header header_comparison_throws: a header after the anchor (TM measure's headerEquals)
        "tools-after-anchor": _tools_after_anchor,
        # checker _meter_header _config_equal: a config stop that is no array (LLM:68-72 callConfigEquals)
        "stop-not-array": _stop,
        # checker _content ContentElements: a legacy pre-identity message (SP:665-722) the loader upgrades
        "legacy-message": _legacy_content_message(bad_text=False),
        # checker _content ContentElements: a legacy message with a text element whose text is a number
        "legacy-message-bad-text": _legacy_content_message(bad_text=True),
        # checker _plugin _released_content_problem: image and tool-call blocks in a tool/result's output
        "result-output-blocks": _result_output,
        # checker _wire _prints_text: a user/message with a text block beside a tool-result block
        "result-beside-text": _result_beside_text,
        # checker _wire wire_messages: a log cut after an assistant/message with tool calls (loader closers)
        "crash-after-call": _crash_after_call(twice=False),
        # checker _wire _w5: the loader's synthetic result for a call an assistant/message after it closed
        "crash-after-two-calls": _crash_after_call(twice=True),
    },
    "migration": {
        # checker ReleasedRelations.delivery_accepted: a generation-1 marker naming another session (V01:2444)
        "v1-marker-foreign": _at_gap({"type": "session-log-deepseek/delivery-accepted",
                                       "data": {"sessionId": "7b95d36a-9f8e-47ab-8f66-7a71e6637f9e", "throughSeq": 0,
                                                "sessionFormatVersion": 1}, "ignorable": True}),
        # checker _RelationMigration.normalise: compaction records without compactionIds (V01:1975-2018)
        "compaction-without-ids": lambda d, x: _legacy_compaction(d, x, legacy_types=False, checkpoint=False),
        # checker _RelationMigration.normalise: a compact plugin checkpoint inside an id-less compaction (V01:2003)
        "checkpoint-without-id": lambda d, x: _legacy_compaction(d, x, legacy_types=False, checkpoint=True),
        # checker _RelationMigration.normalise: legacy compact/* types renamed (V01:1923)
        "legacy-compact-types": lambda d, x: _legacy_compaction(d, x, legacy_types=True, checkpoint=False),
        # checker _RelationMigration.normalise: llm/retry without retryId, twice in one chain (V01:1951)
        "retry-without-id": _retries({"retryId": _DROP}, {"retryId": _DROP, "retry": 2}),
        # checker ReleasedRelations._keep: a seed boundary leaving a compaction open (inheritedOrphanCompactionStarts)
        "seed-leaves-compaction-open": _orphan_compaction,
        # checker _title_problem, _relations._utf16: messageSeqs a non-ASCII string (V01:2545 reads its length, 2548 iterates it)
        "title-seqs-string": _title_between(lambda d, x, i: _title("\u00e9", dict(_FALLBACK))),
        # checker _cited_position: a messageSeqs entry that is an object (events["[object Object]"])
        "title-seq-object": _title_between(lambda d, x, i: _title([{}], dict(_FALLBACK))),
        # checker _title_problem: a session/title source that is no object (V01:2544)
        "title-source-string": _title_between(lambda d, x, i: _title([], "user")),
        # checker TitleSources._release: a title waiting on a later message, then on a later non-message
        "title-cites-later": _title_between(_cites_later),
        # checker ReleasedRelations._unresolved: an advertised call without an id, never answered (V01:2513-2515)
        "call-without-id": _call_without_id,
        # checker ReleasedRelations.tool_result: an appended tool/result whose error is no object (V01:2362)
        "tool-result-error-string": _tool_result_error,
        # checker ReleasedRelations._hold: a command/run whose commandId is an array, which no later one is (V01:2434)
        "command-id-array": _at_gap(("command/run", {"commandId": ["cmd-aimed"], "name": "model", "source": {"kind": "user"}}),
                                    ("command/done", {"commandId": ["cmd-aimed"], "kind": "success"})),
        # checker _unread_by_v0 (E4's released attribution): a lossy number in a tool schema's parameters (V01:1139)
        "lossy-tool-parameters": _lossy_where("request/header", _tool_parameters, "tools[0].parameters.minProperties"),
        # checker _unread_block: a lossy number in a content block of an unknown type (V01:685)
        "lossy-unknown-block": _lossy_where("assistant/message", _unknown_block, "an unknown content block"),
        # checker _unread_block: a lossy number in an unknown block inside a tool-result block (V01:685)
        "lossy-nested-block": _lossy_where("tool/result", _nested_block, "an unknown block inside its tool-result"),
        # checker _unread_by_v0: a lossy number in a model source's replayState (V01:789 never reads it)
        "lossy-replay-state": _lossy_where("assistant/message", _replay_state, "message.source.replayState.cursor",
                                           lambda marker: {"cursor": marker}),
        # checker _unread_by_v0: a lossy number in a turn/end reason of an unknown kind (V01:1068, no default)
        "lossy-turn-end-reason": _lossy_reason,
        # checker _unread_by_v0: a lossy number in a message source of an unknown kind (V01:914)
        "lossy-unknown-source": _lossy_source,
        # checker _unread_by_v0: a lossy number that is the whole data (V01:1588 reads it as a record)
        "lossy-data": lambda d, x: _at_gap(("plan/mode", _lossy(x)))(d, x),  # type: ignore[arg-type]
        # checker _unread_block: a lossy number that is a content element itself (V01:651 reads it as a block)
        "lossy-content-element": lambda d, x: _at_gap(_splice({**_user({"kind": "user"}), "content": [
            {"type": "text", "text": "plan the fix"}, _lossy(x)]}))(d, x),
    },
}
"""The families aimed at the built-in checker's own branches, and their variants."""

CHECKER_AIMED_FAMILIES: dict[str, tuple[int, ...]] = {
    "released": (0,), "turns": (0,), "storage": (0,), "meter": (0,), "migration": (0, 1),
}
"""Their format versions: the migration family draws both, since its checks (the relation walk,
title sources, where released reads a lossy number) differ by format."""
