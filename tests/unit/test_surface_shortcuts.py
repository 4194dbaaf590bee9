"""The surface folds' shortcuts are exact: the surface pass (S1-S8), the wire pass (W1-W5)
and the reference oracle's released walk give the findings of their general code on damaged
logs (G4, the checker's own reading of that walk, is held against the oracle's in
test_g4_differential.py).

Each shortcut decides a common case inline (a plain append, a one-seq citation, a
tool/result rewrite compared without its masked copies, four int coordinates, a message
serialised without a generator, a stream read without formatting unused reasons). The
general code is kept here as it was before the shortcuts, patched in, and the two reports
compared on generated logs damaged in the places the shortcuts read, packed and one event
per line. The released walk's crossings of orphan compactions, decided once the log is
read, are compared with the orphan scan run first in test_lifecycle_visit.py."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, TypeVar
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from checker_logs import explain

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.checker import _surface, _wire
from dshfuzz.checker._surface import SurfaceReplay, _seq_ok, _Violation
from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.model import MISSING, Event, encode_jsonl, parse_log
from dshfuzz.contracts import deep_equal_json
from dshfuzz.contracts import js as _js
from dshfuzz.contracts.layers import OfficialLayer
from dshfuzz.oracle import _lifecycle, check_lifecycle

_RULES = frozenset(RuleId(f"{p}{i}") for p, n in (("S", 9), ("W", 6)) for i in range(1, n)) | {RuleId.G4}
_ODD = st.sampled_from([None, 0, 1, 1.0, True, False, -1, "x", "", "appendix", "tool", [], {}, [1], {"a": 1}])


def _facts(report: Any) -> list[tuple[Any, ...]]:
    return [(str(f.rule), f.seq, f.line, f.message, tuple(map(str, f.refused_by)), repr(sorted(f.context.items())))
            for f in report.findings]


def _ref_js_equal(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is list or type(b) is list:
        return type(a) is list and type(b) is list and len(a) == len(b) and all(_ref_js_equal(x, y) for x, y in zip(a, b))
    if type(a) is dict and type(b) is dict:
        return len(a) == len(b) and all(k in b and _ref_js_equal(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and a == b


def _ref_masked(data: Any) -> Any:
    """``{...data, message: {...message, content: [{...content[0], content: null}]}}``, or ``None``
    where JavaScript throws reading ``data.message.content[0]``."""
    if type(data) is not dict:
        return None
    message = data.get("message", MISSING)
    if type(message) is not dict:
        return None
    content = message.get("content", MISSING)
    if content is None or content is MISSING:
        return None
    if type(content) is list:
        first = content[0] if content else MISSING
    elif type(content) is str:
        first = _js.utf16_units(content)[0] if content else MISSING
    elif type(content) is dict:
        first = content.get("0", MISSING)
    else:
        first = MISSING
    if type(first) is dict:
        first_rest = dict(first)
    elif type(first) is list:
        first_rest = {str(i): v for i, v in enumerate(first)}
    elif type(first) is str:
        first_rest = {str(i): c for i, c in enumerate(_js.utf16_units(first))}
    else:
        first_rest = {}
    return {**data, "message": {**message, "content": [{**first_rest, "content": None}]}}


def _message_parts(data: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A tool/result data's message and first block, when both are objects."""
    message = data.get("message") if type(data) is dict else None
    content = message.get("content") if type(message) is dict else None
    first = content[0] if type(content) is list and content else None
    return (message, first) if type(message) is dict and type(first) is dict else None


def _ref_provenance(raw: dict[str, Any], t: Any, seq: int, rule: Any, v3: bool) -> set[int]:
    src = raw.get("sourceEventSeqs", MISSING)
    if src is MISSING:
        return set()
    if v3 and t == "assistant/message":
        raise _Violation(rule, 'session event "assistant/message" cannot carry sourceEventSeqs in format v3')
    if type(src) is not list:
        raise _Violation(rule, f"sourceEventSeqs on event at seq {seq} must be an array when present", _surface._NOT_ARRAY)
    if not src and t != "assistant/message":
        also = (RuleId.S6,) if rule is not RuleId.S6 else ()
        refused = (*_surface._SURFACE_PATH, OfficialLayer.RELEASED) if rule is RuleId.S6 else _surface._SURFACE_PATH
        raise _Violation(rule, "sourceEventSeqs must not be empty except on assistant/message", refused, also=also)
    sources: set[int] = set()
    non_earlier = None
    for s in src:
        if not _seq_ok(s):
            raise _Violation(rule, f'session event "{_surface._name(t)}" sourceEventSeqs must densely contain non-negative safe integers',
                             _surface._with_released(rule, src, seq))
        sources.add(int(s))
        if non_earlier is None and s >= seq:
            non_earlier = int(s)
    if len(sources) != len(src):
        dups = sorted({int(s) for s in src if src.count(s) > 1})
        raise _Violation(rule, "sourceEventSeqs must not contain duplicates",
                         _surface._with_released(rule, src, seq, _surface._SURFACE_PATH), duplicates=dups)
    if non_earlier is not None:
        raise _Violation(rule, f"sourceEventSeqs must reference earlier events: {non_earlier} >= current seq {seq}",
                         _surface._with_released(rule, src, seq, _surface._SURFACE_PATH), source=non_earlier)
    return sources


def _ref_step(self: SurfaceReplay, raw: dict[str, Any], seq: int) -> None:
    t = raw.get("type", MISSING)
    try:
        op = self.op_of(raw, t)
    except _Violation as v:
        if v.rule is RuleId.S4:  # the meter reads a malformed op as a replace where its range is current
            self._read_as_replace(raw, seq)
        raise
    if op is None:
        return
    surface = self.surface
    if op == "append":
        if seq not in surface:
            surface.append(seq)
        _surface._provenance(raw, t, seq, RuleId.S3, self.v3)
        return
    start, end = op
    if start not in surface:
        raise _Violation(RuleId.S4, f"surface replace: start seq {start} not found in surface")
    if end not in surface:
        raise _Violation(RuleId.S4, f"surface replace: end seq {end} not found in surface")
    if not surface.ordered(start, end):
        raise _Violation(RuleId.S4, f"surface replace: start seq {start} is after end seq {end}")
    shadowed = surface.span(start, end)
    try:
        sources = _surface._provenance(raw, t, seq, RuleId.S6, self.v3)
        missing = [n for n in shadowed if n not in sources]
        if missing:
            raise _Violation(RuleId.S5, "surface replace: sourceEventSeqs must include every shadowed surface node; "
                             "missing " + ", ".join(map(str, missing)), missing=missing, shadowed=shadowed)
        if t == "tool/result":
            self._tool_result_rewrite(raw, shadowed)
    finally:  # the meter replaces the range whatever the fold's provenance and rewrite checks say
        if seq not in surface:
            self.shadow(shadowed, seq)


def _ref_rewrite(self: SurfaceReplay, raw: dict[str, Any], shadowed: list[int]) -> None:
    if len(shadowed) != 1:
        raise _Violation(RuleId.S7, "tool/result surface replacement must rewrite exactly one current node", shadowed=shadowed)
    original = self.by_seq.get(shadowed[0])
    if original is None or original.type != "tool/result":
        raise _Violation(RuleId.S7, "tool/result surface replacement must target a current tool/result", target=shadowed[0])
    before, after = _ref_masked(original.data), _ref_masked(raw.get("data", MISSING))
    if before is None or after is None or not _ref_js_equal(before, after):
        raise _Violation(RuleId.S7, "tool/result surface replacement may change only content", target=shadowed[0])


def _ref_fold_visit(self: Any, position: int, event: Event) -> None:
    raw = event.raw
    op = raw.get("surfaceOp", MISSING)
    key = _wire._seq_key(raw.get("seq", MISSING))
    if op == "append":
        if key not in self.index:
            self.counter += 1
            self.link(key, (position, event), self.counter, self.tail, None)
    elif type(op) is dict and op.get("op") == "replace":
        self.replace((position, event), key, _wire._seq_key(op.get(self.keys[0], MISSING)),
                     _wire._seq_key(op.get(self.keys[1], MISSING)))


def _ref_message_of(raw: dict[str, Any]) -> Any:
    event = Event(raw)
    data = event.data
    if event.type == "user/message":
        return data
    message = _wire._get(data, "message")
    if event.type == "assistant/message" and _wire._get(message, "content") == []:
        return None
    return message


def _ref_serialise_all(index: int | None, message: Any) -> Iterator[Any]:
    content = _wire._get(message, "content")
    if type(content) is not list:
        return
    blocks = [b for b in content if type(b) is dict]
    role = _wire._get(message, "role")
    if role == "system":
        yield _wire.WireMessage("system", index)
    elif role == "assistant":
        yield _wire.WireMessage("assistant", index, tuple(b.get("id", MISSING) for b in blocks if b.get("type") == "tool-call"))
    else:
        results = [b for b in blocks if b.get("type") == "tool-result"]
        texts = [b.get("text", MISSING) for b in blocks if b.get("type") == "text"]
        if any(_wire._prints_text(t) for t in texts) or not results:
            yield _wire.WireMessage("user", index)
        for result in results:
            yield _wire.WireMessage("tool", index, answers=result.get("toolCallId", MISSING))


def _ref_serialise(index: int | None, message: Any, out: list[Any]) -> None:
    out.extend(_ref_serialise_all(index, message))


def _ref_read(self: Any, stream: list[Any]) -> None:
    for message in stream:
        if message.role == "assistant":
            self.close(f"the next assistant message (seq {self.seq(message.index)})")
            self.pending.clear()
            for call_id in message.calls:
                self.pending.setdefault(_wire.call_key(call_id), _wire._Pending(call_id, message.index))
        elif message.role == "user":
            for item in self.pending.values():
                if item.interposed is None:
                    item.interposed = message.index
            self.close(f"the next user text (seq {self.seq(message.index)})")
        elif message.role == "tool":
            item = self.pending.pop(_wire.call_key(message.answers), None)
            if item is None:
                self.stray.append((message, [p.call_id for p in self.pending.values()]))
            elif item.interposed is not None:
                self.late.setdefault(item.interposed, []).append(item.call_id)
    self.close("the end of history")


_Rel = _lifecycle.RelationWalk
T = TypeVar("T")


def _ref_surface_append(self: Any, seq: Any) -> None:
    self.first.setdefault(_lifecycle._identity(seq), len(self.nodes))
    self.nodes.append(seq)


def _ref_require_open_step(self: Any, etype: str, data: dict[str, Any]) -> None:
    if (not _lifecycle._same(data.get("turn", MISSING), self.open_turn) or not _lifecycle._same(data.get("step", MISSING), self.open_step)
            or self.open_turn is None or self.open_step is None):
        raise _lifecycle._Fail("not-in-open-step", f"{etype} does not match an open turn and step")


def _ref_apply_surface(self: Any, event: dict[str, Any], etype: str, seq: Any) -> None:
    operation = event.get("surfaceOp", MISSING)
    if operation is MISSING:
        raise _lifecycle._Fail("surface-op-missing", f"{etype} requires a surfaceOp marker")
    if _lifecycle._same(operation, "append"):
        self.surface.append(seq)
        return
    start_seq, end_seq = _js.get(operation, "start"), _js.get(operation, "end")
    start, end = self.surface.index(start_seq), self.surface.index(end_seq)
    if start < 0 or end < start:
        raise _lifecycle._Fail("replace-range-off-surface", f"{etype} replacement range is not on the current surface")
    cited = event.get("sourceEventSeqs", MISSING)
    sources = {_js.number_key(s) for s in cited} if type(cited) is list else set()
    if any(_js.number_key(node) not in sources for node in self.surface.span(start, end)):
        raise _lifecycle._Fail("replace-missing-shadowed", f"{etype} replacement sourceEventSeqs omit a shadowed surface node")
    self.surface.replace(start, end, seq)


def _ref_assistant_message(self: Any, event: Any, data: dict[str, Any], seq: Any) -> None:
    self._require_open_step("assistant/message", data)
    message = _lifecycle._record(data.get("message", MISSING), "assistant/message {seq} message", seq)
    for block in _lifecycle._iterate(message.get("content", MISSING)):
        if not _lifecycle._same(_lifecycle._at(block, "type"), "tool-call"):
            continue
        call_id = _lifecycle._at(block, "id")
        key = _js.number_key(call_id)
        if key in self.tools:
            raise _lifecycle._Fail("duplicate-advertised-call", f"assistant/message repeats advertised tool call {_js.js_string(call_id)}")
        self.tools[key] = (call_id, {"name": _lifecycle._at(block, "name"), "arguments": _lifecycle._at(block, "arguments"),
                                     "state": "advertised"})


def _generally(run: Callable[[], T]) -> T:
    """``run()`` with the general code of every shortcut patched back in."""
    with ExitStack() as stack:
        for patch in _general():
            stack.enter_context(patch)
        return run()


def _general() -> list[Any]:
    """Patches restoring the general code of every shortcut."""
    handlers = {**_lifecycle._HANDLERS, "assistant/message": _ref_assistant_message}
    return [
        mock.patch.object(_surface.SurfaceWalk, "visit", _surface.SurfaceWalk.judge),
        mock.patch.object(SurfaceReplay, "step", _ref_step),
        mock.patch.object(SurfaceReplay, "_tool_result_rewrite", _ref_rewrite),
        mock.patch.object(_surface, "_provenance", _ref_provenance),
        mock.patch.object(_surface, "deep_equal_json", _ref_js_equal),
        mock.patch.object(_wire.SurfaceFold, "visit", _ref_fold_visit),
        mock.patch.object(_wire, "_message_of", _ref_message_of),
        mock.patch.object(_wire, "_serialise", _ref_serialise),
        mock.patch.object(_wire._Judge, "read", _ref_read),
        mock.patch.object(_lifecycle._Surface, "append", _ref_surface_append),
        mock.patch.object(_Rel, "_require_open_step", _ref_require_open_step),
        mock.patch.object(_Rel, "_apply_surface", _ref_apply_surface),
        mock.patch.object(_lifecycle, "_HANDLERS", handlers),
    ]


def _damage(events: list[Any], data: st.DataObject) -> None:
    """Edit what the shortcuts read: a surface event's surfaceOp, sourceEventSeqs, seq or type;
    a tool/result's masked and unmasked data; turn and step coordinates; a block's type."""
    surface = [e for e in events if type(e) is dict and "surfaceOp" in e]
    for _ in range(data.draw(st.integers(0, 4), label="edits")):
        if not events:
            return
        pool = surface if surface and data.draw(st.booleans(), label="surface event") else events
        event = data.draw(st.sampled_from(pool), label="event")
        if type(event) is not dict:
            continue
        edit = data.draw(st.sampled_from(["surfaceOp", "sourceEventSeqs", "seq", "type", "data", "turn", "block", "repeat",
                                          "unanswer", "advertise"]), label="edit")
        if edit == "repeat":  # the same seq appended twice, and every later seq off its position
            events.insert(events.index(event) + 1, copy.deepcopy(event))
        elif edit == "unanswer":  # a result answering no call leaves its call pending past the next user text
            answers = [e for e in events if type(e) is dict and e.get("type") == "tool/result"]
            if answers:
                answer = data.draw(st.sampled_from(answers), label="answer")
                _set_block(answer, "toolCallId", data.draw(st.sampled_from(["nope", 1, None]), label="id"))
        elif edit == "advertise":  # an assistant block typed like a call, or a call typed otherwise
            said = [e for e in events if type(e) is dict and e.get("type") == "assistant/message"]
            if said:
                _set_block(data.draw(st.sampled_from(said), label="message"), "type",
                           data.draw(st.sampled_from(["tool-call", "tool-result", "tool", "text", 1]), label="block type"))
        elif edit == "surfaceOp":
            event["surfaceOp"] = data.draw(st.one_of(_ODD, st.fixed_dictionaries(
                {"op": st.just("replace"), "start": st.integers(0, len(events)), "end": st.integers(0, len(events))})), label="op")
        elif edit == "sourceEventSeqs":
            seq = event.get("seq") if type(event.get("seq")) is int else 0
            event["sourceEventSeqs"] = data.draw(st.one_of(
                _ODD, st.lists(st.one_of(st.integers(-1, seq + 1), _ODD), max_size=3)), label="sources")
        elif edit == "seq":
            event["seq"] = data.draw(st.one_of(_ODD, st.integers(0, len(events))), label="seq")
        elif edit == "type":
            event["type"] = data.draw(st.sampled_from(["tool/result", "user/message", "assistant/message", "system/message",
                                                        "step/end", 3]), label="type")
        elif type(event.get("data")) is not dict:
            continue
        elif edit == "turn":
            event["data"][data.draw(st.sampled_from(["turn", "step"]), label="field")] = data.draw(_ODD, label="value")
        else:
            _damage_message(event["data"], edit, data)


def _set_block(event: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` of the event's last content block, where it has one."""
    message = event["data"].get("message") if type(event.get("data")) is dict else None
    content = message.get("content") if type(message) is dict else None
    if type(content) is list and content and type(content[-1]) is dict:
        content[-1][key] = value


def _damage_message(payload: dict[str, Any], edit: str, data: st.DataObject) -> None:
    message = payload.get("message")
    if edit == "data" or type(message) is not dict:
        key = data.draw(st.sampled_from(["message", "extra", "turn", "isError"]), label="data key")
        if data.draw(st.booleans(), label="drop"):
            payload.pop(key, None)
        else:
            payload[key] = data.draw(_ODD, label="data value")
        return
    content = message.get("content")
    if type(content) is not list or not content or data.draw(st.booleans(), label="message level"):
        key = data.draw(st.sampled_from(["content", "role", "id", "source"]), label="message key")
        message[key] = data.draw(st.one_of(_ODD, st.just([])), label="message value")
        return
    block = content[0]
    if type(block) is not dict:
        content[0] = data.draw(_ODD, label="block")
        return
    key = data.draw(st.sampled_from(["type", "isError", "content", "toolCallId", "text", "id"]), label="block key")
    if data.draw(st.booleans(), label="drop block key"):
        block.pop(key, None)
    else:
        block[key] = data.draw(st.one_of(_ODD, st.sampled_from(["tool-call", "tool-result", "text"])), label="block value")


def _rewrites(events: list[Any], data: st.DataObject) -> None:
    """Append tool/result replaces rewriting a current tool/result (the shape S7 compares),
    some changing only content and some more."""
    results = [e for e in events if type(e) is dict and e.get("type") == "tool/result" and e.get("surfaceOp") == "append"
               and type(e.get("seq")) is int]
    for _ in range(data.draw(st.integers(0, 2), label="rewrites") if results else 0):
        target = data.draw(st.sampled_from(results), label="target")
        rewrite = copy.deepcopy(target)
        rewrite["seq"] = len(events)
        rewrite["surfaceOp"] = {"op": "replace", "start": target["seq"], "end": target["seq"]}
        rewrite["sourceEventSeqs"] = [target["seq"]]
        message = rewrite.get("data", {}).get("message") if type(rewrite.get("data")) is dict else None
        if type(message) is dict and type(message.get("content")) is list and message["content"] \
                and type(message["content"][0]) is dict:
            message["content"][0]["content"] = [{"type": "text", "text": "[pruned]"}]
            if data.draw(st.booleans(), label="change more"):
                _damage_message(rewrite["data"], data.draw(st.sampled_from(["data", "block"]), label="how"), data)
        events.append(rewrite)
        if data.draw(st.booleans(), label="then pruned"):
            results.append(rewrite)


@settings(max_examples=300, deadline=None)
@given(session_logs(max_events=70, weights=FeatureWeights(prune=0.8, compaction=0.5, tool_calls=0.9)), st.data())
def test_the_surface_shortcuts_find_what_the_general_code_finds(generated: Any, data: st.DataObject) -> None:
    events = copy.deepcopy(generated.events)
    _rewrites(events, data)
    _damage(events, data)
    version = data.draw(st.sampled_from([None, 3]), label="format override")
    pack = data.draw(st.booleans(), label="packed")
    options = CheckOptions(strict=True, rules=_RULES, format_version=version)
    encoded = encode_jsonl(generated.header, [events], pack=pack)
    shortcut = check_log(parse_log(encoded), options)
    general = _generally(lambda: check_log(parse_log(encoded), options))
    assert _facts(shortcut) == _facts(general), explain(shortcut, generated.header, events)


@settings(max_examples=300, deadline=None)
@given(session_logs(max_events=70, weights=FeatureWeights(prune=0.8, compaction=0.8, tool_calls=0.9)), st.data())
def test_the_released_walk_shortcuts_reach_the_general_verdict(generated: Any, data: st.DataObject) -> None:
    """The oracle's walk over the damaged events as stored (G4 gives it the records only)."""
    events = copy.deepcopy(generated.events)
    _rewrites(events, data)
    _damage(events, data)
    shortcut = check_lifecycle(events, generated.header)
    assert shortcut == _generally(lambda: check_lifecycle(events, generated.header))


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan"), float("inf")]),
              st.sampled_from(["", "a", "1"]), st.just(MISSING)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "content"]), inner, max_size=3)),
    max_leaves=8,
)


def _seeded(crossing: bool) -> list[dict[str, Any]]:
    """A compaction left open, then a turn: a later seed boundary makes the open compaction
    an orphan the turn may cross (``crossing=True`` has no seed, so the turn crosses it)."""
    events: list[dict[str, Any]] = []

    def add(type_: str, data: Any) -> None:
        events.append({"type": type_, "seq": len(events), "time": 0, "data": data})

    add("compaction/start", {"compactionId": "k", "turn": None})
    add("turn/start", {"turn": 1})
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    if not crossing:  # the seed's whole prefix is inherited: its open compaction is an orphan from the start
        add("session/end-seed", {})
    return events


def test_orphan_compaction_starts_found_late_are_the_ones_found_first() -> None:
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "cwd": "/", "delegationDepth": 0}
    verdicts = []
    for crossing in (False, True):
        shortcut = check_lifecycle(_seeded(crossing), header)
        assert shortcut == _generally(lambda: check_lifecycle(_seeded(crossing), header))
        verdicts.append(shortcut)
    assert verdicts[0] != verdicts[1]


@given(_JSON, _JSON)
def test_deep_equality_answers_as_the_general_reading(a: Any, b: Any) -> None:
    assert deep_equal_json(a, b) == _ref_js_equal(a, b)
    assert deep_equal_json(a, a) == _ref_js_equal(a, a)
    assert deep_equal_json(a, copy.deepcopy(a)) == _ref_js_equal(a, copy.deepcopy(a))


def _tool_result_data(draw: Any) -> Any:
    """Mostly the shape a tool/result's data has, now and then anything at any level."""
    odd = st.integers(0, 7).map(lambda n: n == 0)
    block = draw(st.dictionaries(st.sampled_from(["type", "toolCallId", "content", "isError"]), _JSON, max_size=4))
    message = draw(st.dictionaries(st.sampled_from(["id", "role", "source"]), _JSON, max_size=3))
    message["content"] = draw(_JSON) if draw(odd) else [block, *draw(st.lists(_JSON, max_size=1))]
    data = draw(st.dictionaries(st.sampled_from(["turn", "step", "extra"]), _JSON, max_size=3))
    data["message"] = draw(_JSON) if draw(odd) else message
    return draw(_JSON) if draw(odd) else data


@given(st.data())
def test_the_masked_comparison_answers_as_comparing_the_masked_copies(data: st.DataObject) -> None:
    a = _tool_result_data(data.draw)
    b = data.draw(st.one_of(st.just(copy.deepcopy(a)), st.builds(lambda: _tool_result_data(data.draw))), label="other")
    if data.draw(st.booleans(), label="edit a copy"):
        b = copy.deepcopy(a)
        parts = _message_parts(b)
        if parts is not None:
            target = data.draw(st.sampled_from([b, parts[0], parts[1], parts[1]]), label="level")
            key = data.draw(st.sampled_from(["content", "message", "turn", "isError", "new"]), label="key")
            if data.draw(st.booleans(), label="drop"):
                target.pop(key, None)
            else:
                target[key] = data.draw(_JSON, label="value")
    before, after = _ref_masked(a), _ref_masked(b)
    assert _surface._masked_equal(a, b) == (before is not None and after is not None and _ref_js_equal(before, after))


@given(st.one_of(_ODD, st.lists(st.one_of(st.integers(-2, 12), _ODD), max_size=3)), st.integers(0, 10), st.booleans(),
       st.sampled_from(["tool/result", "assistant/message", "user/message"]))
def test_a_one_seq_citation_is_read_as_the_general_reading(src: Any, seq: int, v3: bool, kind: str) -> None:
    raw = {"sourceEventSeqs": src}

    assert _cited(_surface._provenance, raw, kind, seq, v3) == _cited(_ref_provenance, raw, kind, seq, v3)


def _cited(provenance: Any, raw: dict[str, Any], kind: str, seq: int, v3: bool) -> Any:
    """The seqs ``provenance`` finds cited (as a set), or the violation it raises."""
    try:
        return set(provenance(raw, kind, seq, RuleId.S6, v3))
    except _Violation as v:
        return (v.rule, str(v), v.refused_by, v.also, v.context)


_IN_A_RUN = st.one_of(_ODD, st.sampled_from([True, False, 2.0, 3.5, float("nan"), -2, 2**53]))


@given(st.integers(0, 6), st.integers(2, 6), st.integers(0, 14), st.booleans(), st.data())
def test_a_run_citation_is_read_as_the_general_reading(first: int, n: int, seq: int, v3: bool, data: st.DataObject) -> None:
    """A message citing consecutive earlier seqs (its chunks) is accepted at once; an element
    that is no such int, or a run reaching the citing seq, takes the general reading."""
    src: list[Any] = list(range(first, first + n))
    for _ in range(data.draw(st.integers(0, 2), label="edits")):
        at = data.draw(st.integers(0, n - 1), label="at")
        src[at] = data.draw(st.one_of(_IN_A_RUN, st.just(float(first + at)), st.integers(first - 1, first + n)), label="element")
    kind = data.draw(st.sampled_from(["tool/result", "assistant/message", "user/message"]), label="kind")
    raw = {"sourceEventSeqs": src}
    assert _cited(_surface._provenance, raw, kind, seq, v3) == _cited(_ref_provenance, raw, kind, seq, v3)


_MASKED_CASES = {
    "equal but content": ({"isError": False, "content": "a"}, {"isError": False, "content": "b"}, True),
    "first block value": ({"isError": False}, {"isError": True}, False),
    "first block bool and int": ({"isError": False}, {"isError": 0}, False),
    "first block key": ({"isError": False}, {"isFine": False}, False),
    "first block content absent": ({"content": "a"}, {}, True),
    "first block extra key": ({"content": "a"}, {"content": "a", "more": 1}, False),
}


def _tool_data(block: Any, **message: Any) -> dict[str, Any]:
    return {"turn": 1, "message": {"role": "user", "content": [block, {"type": "text"}], **message}}


def test_the_masked_comparison_reads_every_level() -> None:
    for name, (block_a, block_b, equal) in _MASKED_CASES.items():
        a, b = _tool_data(block_a), _tool_data(block_b)
        assert _surface._masked_equal(a, b) is equal, name
        assert _ref_js_equal(_ref_masked(a), _ref_masked(b)) is equal, name
    a = _tool_data({})
    for b in (_tool_data({}, id=1), {**_tool_data({}), "turn": 1.0}, {**_tool_data({}), "turn": True}, _tool_data(3),
              {"turn": 1, "message": {"role": "user", "content": []}}, {**_tool_data({}), "extra": None}):
        assert _surface._masked_equal(a, b) == _ref_js_equal(_ref_masked(a), _ref_masked(b)), b


_SPREAD_CASES = {
    # JavaScript spreads a string or an array first entry into index keys, so they are compared
    "string entries differ": (["ab"], ["cd"], False),
    "array entries differ": ([["a"]], [["b"]], False),
    "string entries alike": (["ab"], ["ab"], True),
    # a string content is indexed (its first character), any other non-null content reads as undefined
    "string contents share the first character": ("ab", "ac", True),
    "string contents differ at the first character": ("ab", "bc", False),
    "a number content and a bare content block": ([{"content": [{"type": "text", "text": "x"}]}], 5, True),
    "an object content's key 0": ({"0": {"isError": False}}, [{"isError": False, "content": "x"}], True),
    # null content throws reading its first entry
    "a null content": (None, [{}], False),
}


def test_the_masked_comparison_spreads_and_indexes_as_javascript_does() -> None:
    for name, (content_a, content_b, equal) in _SPREAD_CASES.items():
        a = {"turn": 1, "message": {"role": "user", "content": content_a}}
        b = {"turn": 1, "message": {"role": "user", "content": content_b}}
        assert _surface._masked_equal(a, b) is equal, name
        assert (_ref_masked(a) is not None and _ref_masked(b) is not None
                and _ref_js_equal(_ref_masked(a), _ref_masked(b))) is equal, name


class _Ctx:
    def __init__(self, n: int) -> None:
        self.events = [Event({"seq": i}) for i in range(n)]


_IDS = st.sampled_from(["a", "b", 1, 1.0, None])
_WIRE = st.one_of(
    st.builds(lambda i, calls: _wire.WireMessage("assistant", i, tuple(calls)), st.integers(0, 9), st.lists(_IDS, max_size=3)),
    st.builds(lambda i: _wire.WireMessage("user", i), st.integers(0, 9)),
    st.builds(lambda i: _wire.WireMessage("system", i), st.integers(0, 9)),
    st.builds(lambda i, answers: _wire.WireMessage("tool", i, answers=answers), st.one_of(st.none(), st.integers(0, 9)), _IDS),
)


def _judged(read: Any, stream: list[Any]) -> tuple[Any, ...]:
    judge = _wire._Judge(_Ctx(10))  # type: ignore[arg-type]
    read(judge, stream)
    return judge.unanswered, judge.closed_by, judge.late, [(m, p) for m, p in judge.stray]


@given(st.lists(_WIRE, max_size=12))
def test_the_judge_reads_a_stream_as_the_general_reading(stream: list[Any]) -> None:
    assert _judged(_wire._Judge.read, stream) == _judged(_ref_read, stream)


_BLOCKS = st.lists(st.one_of(_ODD, st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["text", "tool-call", "tool-result", "reasoning", 1, None]),
    "text": st.one_of(_ODD, st.lists(_ODD, max_size=2)), "id": _IDS, "toolCallId": _IDS})), max_size=4)


@given(st.fixed_dictionaries({}, optional={"role": st.sampled_from(["system", "assistant", "user", "tool", 1]),
                                           "content": st.one_of(_ODD, _BLOCKS)}),
       st.sampled_from(["user/message", "assistant/message", "tool/result", "system/message"]))
def test_a_message_is_serialised_as_the_general_reading(message: dict[str, Any], kind: str) -> None:
    raw = {"type": kind, "seq": 3, "data": message if kind == "user/message" else {"message": message}}
    shortcut: list[Any] = []
    general: list[Any] = []
    found = _wire._message_of(raw)
    assert found is _ref_message_of(raw)
    if found is not None:
        _wire._serialise(3, found, shortcut)
        _ref_serialise(3, found, general)
    assert shortcut == general


def _walk_outcome(method: Any, walk: Any, *args: Any) -> Any:
    try:
        method(walk, *args)
    except _lifecycle._Fail as exc:
        return exc.code, str(exc)
    except _js.JsTypeError as exc:
        return "type", str(exc)
    return walk.surface.nodes, walk.surface.first, walk.tools


_COORD = st.one_of(st.sampled_from([1, 2]), st.sampled_from([1.0, True, None, "1", MISSING]))


@given(st.lists(st.tuples(st.sampled_from(["append", "appendix", "Append", "", 0, None, {"op": "replace", "start": 1, "end": 1},
                                           {"op": "replace", "start": 0, "end": 2.0}, MISSING]),
                          st.one_of(st.integers(0, 4), st.sampled_from([1.0, "2", None, True]))), max_size=6),
)
def test_the_released_walk_reads_surface_ops_as_the_general_reading(ops: list[tuple[Any, Any]]) -> None:
    walks = [_Rel({}), _Rel({})]
    for op, seq in ops:
        event = {"type": "user/message", "seq": seq, "sourceEventSeqs": [0, 1, 2, 3, 4]}
        if op is not MISSING:
            event["surfaceOp"] = op
        with mock.patch.object(_lifecycle._Surface, "append", _ref_surface_append):
            general = _walk_outcome(_ref_apply_surface, walks[1], event, "user/message", seq)
        assert _walk_outcome(_Rel._apply_surface, walks[0], event, "user/message", seq) == general


@settings(max_examples=200)
@given(_COORD, _COORD, _COORD, _COORD)
@example(1, 2, 1, 1)
@example(2, 1, 1, 1)
def test_the_released_walk_reads_the_open_step_as_the_general_reading(turn: Any, step: Any, open_turn: Any, open_step: Any) -> None:
    walks = [_Rel({}), _Rel({})]
    for walk in walks:
        walk.open_turn, walk.open_step = open_turn, open_step
    data = {k: v for k, v in (("turn", turn), ("step", step)) if v is not MISSING}
    assert (_walk_outcome(_Rel._require_open_step, walks[0], "step/end", data)
            == _walk_outcome(_ref_require_open_step, walks[1], "step/end", data))


@given(st.one_of(_ODD, _BLOCKS))
def test_the_released_walk_reads_advertised_calls_as_the_general_reading(content: Any) -> None:
    data = {"turn": 1, "step": 1, "message": {"content": content}}
    walks = [_Rel({}), _Rel({})]
    for walk in walks:
        walk.open_turn, walk.open_step = 1, 1
    shortcut = _walk_outcome(_Rel._assistant_message, walks[0], {}, data, 3)
    assert shortcut == _walk_outcome(_ref_assistant_message, walks[1], {}, data, 3)
