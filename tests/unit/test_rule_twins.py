"""Every rule of the registry can fire, on a file as ``dshfuzz check`` reads it.

Each rule has at least one pair of files: a minimal one that breaks it, and a
near-identical twin that does not. Both go through :func:`check_stream`, the
streamed read the CLI runs, so the pairs prove the rule fires through the real
reader (bytes, frames, packed rows, limits), not only on a hand-built model.

The event-level pairs are the checker unit tests' own tables (persistence,
surface, engine, plugin, wire, migration), encoded as the official writer would
write them; the physical rules (lossy numbers, unreadable and packed rows, zstd
framing, the reader's limits) and the few rules those tables test by hand have
their byte-level pairs here. The last test pins that together they cover the
registry: a new rule without a pair fails it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from dshfuzz.checker import RULES, CheckOptions, Report, RuleId, check_stream
from dshfuzz.model import DEFAULT_LIMITS, Compression, Limits, batch_text, compress_frame, dumpb, encode_jsonl, encode_zstd

import test_checker_engine
import test_checker_migration
import test_checker_persistence
import test_checker_plugin
import test_checker_surface
import test_checker_wire
from checker_logs import header, minimal_events


@dataclass(frozen=True)
class File:
    """A log file's bytes, how it is read, and under which limits."""

    data: bytes
    compression: Compression = "none"
    limits: Limits = DEFAULT_LIMITS

    def check(self) -> Report:
        return check_stream(self.data, compression=self.compression, options=CheckOptions(strict=True), limits=self.limits)

    def shown(self) -> str:
        if self.compression == "zstd":
            return f"<{len(self.data)} zstd bytes>"
        text = self.data.decode("utf-8", "replace")
        return text if len(text) < 6000 else text[:6000] + f"... ({len(text)} characters)"


def jsonl(events: list[Any], head: Any = None) -> File:
    return File(encode_jsonl(header() if head is None else head, [events]))


def zstd_frames(*plaintexts: bytes) -> File:
    return File(b"".join(compress_frame(p) for p in plaintexts), "zstd")


def _with_number(token: str) -> File:
    """The minimal log with ``"n": token`` in the request/header's data (a JSON token the
    writer cannot produce, so it is spliced into the text)."""
    text = encode_jsonl(header(), [minimal_events()])
    return File(text.replace(b'"reason":"initial"', b'"reason":"initial","n":' + token.encode(), 1))


def _system_message(source: dict[str, Any]) -> File:
    msg = {"type": "system/message", "seq": 17, "time": 1, "surfaceOp": "append",
           "data": {"id": "s", "role": "system", "content": [], "source": source}}
    return jsonl([*minimal_events(), msg], header(version=3))


def _swapped(i: int, j: int) -> File:
    events = minimal_events()
    events[i], events[j] = events[j], events[i]
    return jsonl(events)


def _text_deltas() -> list[dict[str, Any]]:
    """The minimal log whose second step streams its text as three deltas: the writer packs
    them into one ``text-chunks`` row (line 14)."""
    events = minimal_events()
    deltas = [{"type": "assistant/chunk", "seq": 0, "time": events[12]["time"] + k, "data": {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": t}}}
              for k, t in enumerate(("d", "o", "ne"))]
    events[12:12] = deltas
    renumber = {e["seq"]: i for i, e in enumerate(events) if e not in deltas}
    for i, e in enumerate(events):
        e["seq"] = i
        if "sourceEventSeqs" in e:
            e["sourceEventSeqs"] = [renumber[s] for s in e["sourceEventSeqs"]]
    events[-3]["sourceEventSeqs"] = [12, 13, 14, 15, 16]
    return events


def _packed(edit: Callable[[dict[str, Any]], None] | None = None) -> File:
    events = _text_deltas()
    lines = encode_jsonl(header(), [events]).split(b"\n")
    row = next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"text-chunks"'))
    if edit is not None:
        from dshfuzz.model import loads

        value = loads(lines[row])
        edit(value)
        lines[row] = dumpb(value)
    return File(b"\n".join(lines))


def _long_line(extra: int, limit: int) -> File:
    """A log whose request/header line is ``limit + extra`` bytes long, read under a line limit of ``limit``."""
    events = minimal_events()
    events[3]["data"]["pad"] = ""
    short = len(dumpb(events[3]))
    events[3]["data"]["pad"] = "x" * (limit + extra - short)
    return File(encode_jsonl(header(), [events]), limits=Limits(line_bytes=limit))


def _nested(depth: int, limit: int) -> File:
    """A log whose request/header nests ``depth`` levels (the envelope and ``data`` are two)."""
    events = minimal_events()
    value: Any = 0
    for _ in range(depth - 2):
        value = [value]
    events[3]["data"]["deep"] = value
    return File(encode_jsonl(header(), [events]), limits=Limits(depth=limit))


def _unreadable(count: int, limit: int) -> File:
    events = minimal_events()
    text = encode_jsonl(header(), [events[:16]]) + b"{oops\n" * count + batch_text([events[16]])
    return File(text, limits=Limits(unreadable_lines=limit))


def _frame_bytes(extra: int) -> File:
    """The minimal log in two frames, under a frame limit the events' frame meets exactly
    (``extra = 0``) or exceeds by ``extra`` bytes."""
    events = minimal_events()
    batch = batch_text(events)
    events[2]["data"]["content"][0]["text"] += "x" * extra
    return File(encode_zstd(header(), [events]), "zstd", Limits(frame_bytes=len(batch)))


def _line_ratio(lines: int) -> File:
    """``lines`` empty lines in one zstd frame after the minimal log: the line floor is 64."""
    events = minimal_events()
    frames = encode_zstd(header(), [events]) + compress_frame(b"\n" * lines)
    return File(frames, "zstd", Limits(line_floor=64, unreadable_lines=10**6))


def _zstd(*, skippable_before: tuple[int, ...] = (), cut: int = 0) -> File:
    data = encode_zstd(header(), [minimal_events()[:9], minimal_events()[9:]], skippable_before=skippable_before)
    return File(data[: len(data) - cut] if cut else data, "zstd")


_EVENTS = minimal_events()


def _header_frames(*, empty_first: bool = False) -> File:
    """The minimal log in the official frame shape, optionally after an empty first frame."""
    plain = [batch_text([header()]), batch_text(_EVENTS[:9]), batch_text(_EVENTS[9:])]
    return zstd_frames(*([b""] if empty_first else []), *plain)


def _header_moved(moved: int) -> File:
    """The first ``moved`` bytes of the first batch moved into the header frame."""
    batch = batch_text(_EVENTS[:9])
    plain = [batch_text([header()]) + batch[:moved], batch[moved:], batch_text(_EVENTS[9:])]
    return zstd_frames(*plain)


def _header_without_newline() -> File:
    text = batch_text([header()])
    return zstd_frames(text[:-1], b"\n" + batch_text(_EVENTS[:9]), batch_text(_EVENTS[9:]))


# every way the first frame fails the loader's "exactly one header line" (issue 20): the twin of each is the official shape
HEADER_FRAME_SHAPES: dict[str, Callable[[], File]] = {
    "the header line without its newline": _header_without_newline,
    "the header and a whole event line": lambda: _header_moved(len(batch_text(_EVENTS[:1]))),
    "the header and part of an event line": lambda: _header_moved(20),
    "an empty frame before the header": lambda: _header_frames(empty_first=True),
}

# (rule, why, broken, twin): what the event-level tables test by hand, and every physical rule
PHYSICAL: list[tuple[RuleId, str, Callable[[], File], Callable[[], File]]] = [
    (RuleId.E4, "a number JSON.parse makes Infinity", lambda: _with_number("1e400"), lambda: _with_number("1e300")),
    (RuleId.E4, "a number JSON.parse makes -0", lambda: _with_number("-0"), lambda: _with_number("0")),
    (RuleId.E9, "a v3 system message from the user", lambda: _system_message({"kind": "user"}),
     lambda: _system_message({"kind": "plugin", "plugin": "p"})),
    (RuleId.S9, "step/end and turn/end swapped in file order", lambda: _swapped(15, 16), lambda: _swapped(15, 15)),
    (RuleId.R1, "an unparsable committed line", lambda: File(encode_jsonl(header(), [_EVENTS]) + b"{oops\n"),
     lambda: File(encode_jsonl(header(), [_EVENTS]) + b"{oops")),
    (RuleId.R2, "a text-chunks row with a dt too short", lambda: _packed(lambda r: r["data"]["dt"].pop()), lambda: _packed()),
    (RuleId.R3, "a text-chunks row whose seqs pass 2^53", lambda: _packed(lambda r: r.update(seq0=2**53 - 2)),
     lambda: _packed(lambda r: r.update(seq0=12))),
    (RuleId.Z1, "a torn final frame", lambda: _zstd(cut=5), lambda: _zstd()),
    (RuleId.Z2, "a skippable frame between batches", lambda: _zstd(skippable_before=(2,)), lambda: _zstd()),
    (RuleId.Z3, "a header and no event", lambda: zstd_frames(batch_text([header()])),
     lambda: zstd_frames(batch_text([header()]), batch_text(_EVENTS[:1]))),
    (RuleId.Z4, "the header frame holds events", lambda: zstd_frames(batch_text([header(), *_EVENTS[:9]]), batch_text(_EVENTS[9:])),
     lambda: zstd_frames(batch_text([header()]), batch_text(_EVENTS[:9]), batch_text(_EVENTS[9:]))),
    (RuleId.Z5, "the whole log in one frame", lambda: zstd_frames(batch_text([header(), *_EVENTS])),
     lambda: zstd_frames(batch_text([header()]), batch_text(_EVENTS))),
    (RuleId.L1, "a frame one byte over the frame limit", lambda: _frame_bytes(1), lambda: _frame_bytes(0)),
    (RuleId.L2, "a line one byte over the line limit", lambda: _long_line(1, 4096), lambda: _long_line(0, 4096)),
    (RuleId.L3, "a line one level deeper than the depth limit", lambda: _nested(17, 16), lambda: _nested(16, 16)),
    (RuleId.L4, "one unreadable line more than the limit", lambda: _unreadable(3, 2), lambda: _unreadable(2, 2)),
    (RuleId.L4, "a zstd frame of more lines than compressed bytes allow", lambda: _line_ratio(5000), lambda: _line_ratio(40)),
]


def _content_with(index: int, element: Any) -> File:
    """The minimal log with ``element`` appended to the content of the message event at ``index``."""
    events = minimal_events()
    data = events[index]["data"]
    (data if events[index]["type"] == "user/message" else data["message"])["content"].append(element)
    return jsonl(events)


def _legacy_user(unusable: bool) -> File:
    """The minimal log whose user/message has the pre-identity shape ``{content, source}``; when
    ``unusable``, its source has no kind, which the upgraded message still lacks."""
    events = minimal_events()
    events[2]["data"] = {"content": [{"type": "text", "text": "list the files"}], "source": {} if unusable else {"kind": "user"}}
    return jsonl(events)


def _advertised_as(call_id: str) -> File:
    """The minimal log whose assistant message advertises (in its tool-call block, and in the
    chunk that streamed it) ``call_id``, while the tool/call and the tool result keep ``call_1``."""
    events = minimal_events()
    events[5]["data"]["chunk"]["block"]["id"] = call_id
    events[7]["data"]["message"]["content"][0]["id"] = call_id
    return jsonl(events)


def _edited(edit: Callable[[list[dict[str, Any]]], None], version: int = 0) -> File:
    """The minimal log (under a header of ``version``) after ``edit``."""
    events = minimal_events()
    edit(events)
    return jsonl(events, header(version=version))


def _appended(event_type: str, data: Any, version: int = 0) -> File:
    """The minimal log with one more event, of ``event_type`` with ``data``, at its end."""
    return _edited(lambda e: e.append({"type": event_type, "seq": 17, "time": 18, "data": data}), version)


def _text_of(index: int, text: Any) -> Callable[[list[dict[str, Any]]], None]:
    """An edit setting the first content block's ``text`` of the message event at ``index`` (``...``: dropping it)."""

    def edit(events: list[dict[str, Any]]) -> None:
        data = events[index]["data"]
        block = (data if events[index]["type"] == "user/message" else data["message"])["content"][0]
        if text is ...:
            del block["text"]
        else:
            block["text"] = text

    return edit


def _marker(session_id: str) -> dict[str, Any]:
    """A generation-1 delivery marker after the minimal log's last event."""
    return {"type": "session-log-deepseek/delivery-accepted", "seq": 17, "time": 18, "ignorable": True,
            "data": {"sessionId": session_id, "throughSeq": 16, "sessionFormatVersion": 1}}


def _set(index: int, key: str, value: Any, under: str | None = None) -> Callable[[list[dict[str, Any]]], None]:
    def edit(events: list[dict[str, Any]]) -> None:
        data = events[index]["data"]
        (data[under] if under else data)[key] = value

    return edit


ISSUE_20_PAIRS: list[tuple[RuleId, str, Callable[[], File], Callable[[], File]]] = [
    *[(RuleId.Z4, f"the header frame: {shape}", broken, _header_frames) for shape, broken in HEADER_FRAME_SHAPES.items()],
    (RuleId.E6, "a null element in a user/message's content", lambda: _content_with(2, None), lambda: jsonl(minimal_events())),
    (RuleId.E6, "a null element in an assistant/message's content", lambda: _content_with(14, None), lambda: jsonl(minimal_events())),
    (RuleId.E6, "an untyped element in a user/message's content", lambda: _content_with(2, {"text": "x"}),
     lambda: _content_with(2, {"type": "text", "text": "x"})),
    (RuleId.E6, "a legacy pre-identity user/message, which the loader and the released migration upgrade (a warning)",
     lambda: _legacy_user(False), lambda: jsonl(minimal_events())),
    (RuleId.E6, "a legacy pre-identity user/message the loader upgrades into a message it refuses (an error)",
     lambda: _legacy_user(True), lambda: jsonl(minimal_events())),
    (RuleId.W1, "the assistant advertises another id than the tool/call and the result", lambda: _advertised_as("call_X"),
     lambda: _advertised_as("call_1")),
    (RuleId.G5, "a v0 approval/policy whose data is null", lambda: _appended("approval/policy", None),
     lambda: _appended("approval/policy", {"policy": "ask"})),
    (RuleId.G5, "a v0 turn/start with a member its type does not admit", lambda: _edited(_set(0, "x-dshfuzz-unknown", 1)),
     lambda: jsonl(minimal_events())),
    (RuleId.G5, "a v0 tool/call whose arguments are not a string", lambda: _edited(_set(8, "arguments", {"path": "."})),
     lambda: jsonl(minimal_events())),
    (RuleId.G5, "a v1 approval/policy whose data is null", lambda: _appended("approval/policy", None, 1),
     lambda: _appended("approval/policy", {"policy": "ask"}, 1)),
    (RuleId.G5, "a v1 subagent/descriptor whose data is null", lambda: _appended("subagent/descriptor", None, 1),
     lambda: _appended("subagent/descriptor", {"mode": "one-shot", "version": 3, "provider": "deepseek-official"}, 1)),
    (RuleId.E6, "a v0 user/message text block whose text is null", lambda: _edited(_text_of(2, None)),
     lambda: jsonl(minimal_events())),
    (RuleId.E6, "a v1 user/message text block without its text", lambda: _edited(_text_of(2, ...), 1),
     lambda: _edited(_text_of(2, "list the files"), 1)),
    (RuleId.E6, "a v0 assistant/message text block whose text is an object", lambda: _edited(_text_of(14, {})),
     lambda: jsonl(minimal_events())),
    (RuleId.E6, "a v1 tool/result whose content is [null] (the meter prices its blocks, and refuses it)",
     lambda: _edited(_set(9, "message", {**minimal_events()[9]["data"]["message"], "content": [None]}), 1),
     lambda: _edited(lambda e: None, 1)),
    (RuleId.E6, "a v1 user/message without its data (the meter prices its content, and refuses it)",
     lambda: _edited(lambda e: e[2].pop("data"), 1), lambda: _edited(lambda e: None, 1)),
    (RuleId.E10, "a v0 request/header without config in force at an assistant message (the meter compares it there)",
     lambda: _edited(lambda e: e[3]["data"]["header"].pop("config")), lambda: jsonl(minimal_events())),
    (RuleId.E10, "a v1 request/header without config in force at an assistant message (the meter compares it there)",
     lambda: _edited(lambda e: e[3]["data"]["header"].pop("config"), 1), lambda: _edited(lambda e: None, 1)),
    (RuleId.E10, "a v0 request/header whose tools is a string", lambda: _edited(_set(3, "tools", "ls", "header")),
     lambda: _edited(_set(3, "tools", [], "header"))),
    (RuleId.E10, "a v0 request/header whose tools is null (canonicalHeader reads its length: seed, meter, serializer)",
     lambda: _edited(_set(3, "tools", None, "header")), lambda: _edited(_set(3, "tools", [], "header"))),
    (RuleId.E10, "a v0 request/header whose tools is true (the canonical header drops it: released alone refuses)",
     lambda: _edited(_set(3, "tools", True, "header")), lambda: _edited(_set(3, "tools", [], "header"))),
    (RuleId.E10, "a v0 request/header whose tools is {} (dropped as true is: released alone refuses)",
     lambda: _edited(_set(3, "tools", {}, "header")), lambda: _edited(_set(3, "tools", [], "header"))),
    (RuleId.E10, "a v0 request/header whose tools has a positive length member (kept, sent, compared at the anchor)",
     lambda: _edited(_set(3, "tools", {"length": 2}, "header")), lambda: _edited(_set(3, "tools", [], "header"))),
    (RuleId.E10, "a v1 request/header whose tools is a string in force at an assistant message (meter, serializer)",
     lambda: _edited(_set(3, "tools", "ls", "header"), 1), lambda: _edited(_set(3, "tools", [], "header"), 1)),
    (RuleId.E10, "a v1 request/header whose tools is null (the meter and the serializer read its length)",
     lambda: _edited(_set(3, "tools", None, "header"), 1), lambda: _edited(_set(3, "tools", [], "header"), 1)),
    (RuleId.E6, "a v1 user/message whose data is null (the meter prices a null message as nothing)",
     lambda: _edited(lambda e: e[2].update(data=None), 1), lambda: _edited(lambda e: None, 1)),
    (RuleId.G4, "a v1 delivery marker of generation 1 naming another session (released's relation walk)",
     lambda: _edited(lambda e: e.append(_marker("another-session")), 1),
     lambda: _edited(lambda e: e.append(_marker(header()["id"])), 1)),
    (RuleId.E10, "a v0 request/header whose system is null", lambda: _edited(_set(3, "system", None, "header")),
     lambda: _edited(_set(3, "system", "", "header"))),
    (RuleId.E10, "a v1 request/header whose system is null (only the meter reads it, and refuses it: an error)",
     lambda: _edited(_set(3, "system", None, "header"), 1), lambda: _edited(_set(3, "system", "", "header"), 1)),
    (RuleId.T1, "a v0 assistant/chunk without its chunk (the meter reads its type, and refuses it: an error)",
     lambda: _edited(lambda e: e[12]["data"].pop("chunk")), lambda: jsonl(minimal_events())),
    (RuleId.T1, "a v1 assistant/chunk whose chunk is null (the meter reads its type, and refuses it: an error)",
     lambda: _edited(_set(12, "chunk", None), 1), lambda: _edited(lambda e: None, 1)),
    (RuleId.G5, "a v0 compaction/prune whose data is a string (released and the meter refuse)",
     lambda: _appended("compaction/prune", "x"), lambda: jsonl(minimal_events())),
    (RuleId.G5, "a v0 request/header whose system is a number (released alone reads it)",
     lambda: _edited(_set(3, "system", 5, "header")), lambda: _edited(_set(3, "system", "", "header"))),
    (RuleId.R2, "a text-chunks row whose index is -1 (the session's row check takes any number, released a count)",
     lambda: _packed(lambda r: r["data"].update(index=-1)), lambda: _packed()),
    (RuleId.R2, "a text-chunks row whose turn is 1.5 (released counts it)",
     lambda: _packed(lambda r: r["data"].update(turn=1.5)), lambda: _packed()),
    (RuleId.H2, "a header id that is an array (seed's detached copy of the header is another array)",
     lambda: jsonl(minimal_events(), header(id=["id"])), lambda: jsonl(minimal_events(), header(id="id"))),
    (RuleId.H2, "a header id that is a number (seed compares it with itself, and accepts)",
     lambda: jsonl(minimal_events(), header(id=7)), lambda: jsonl(minimal_events(), header(id="7"))),
]
"""Issue 20's shapes, each a pair whose verdicts ``tests/conformance/test_rule_twins_official.py``
also holds against the official layers."""


MIGRATION_PRECHECK_PAIRS: list[tuple[RuleId, str, Callable[[], File], Callable[[], File]]] = [
    (RuleId.G3, "a v1 session/title whose source is null (the relation walk reads its kind)",
     lambda: _appended("session/title", {"title": "t", "messageSeqs": [2], "source": None}, 1),
     lambda: _appended("session/title", {"title": "t", "messageSeqs": [2], "source": {"kind": "fallback"}}, 1)),
]
"""Pairs of a rule the catalog makes a warning although released refuses its broken file (the
migration pre-checks G1-G3): held against the official layers like :data:`ISSUE_20_PAIRS`. Their
findings are errors, not the catalog's warnings: the harness cannot migrate such a log."""


ISSUE_20_SILENT: list[tuple[RuleId, str, Callable[[], File]]] = [
    (RuleId.E6, "a v1 assistant/message content element that is a number (no layer reads it)",
     lambda: _edited(lambda e: e[14]["data"]["message"]["content"].insert(0, 0), 1)),
    (RuleId.E6, "a v1 user/message content element without a type", lambda: _edited(lambda e: e[2]["data"]["content"].append({"text": "x"}), 1)),
    (RuleId.T5, "a v1 turn/end whose reason is an empty object (released reads only its turn)",
     lambda: _edited(_set(16, "reason", {}), 1)),
    (RuleId.G5, "a v1 request/header whose system is a number", lambda: _edited(_set(3, "system", 5, "header"), 1)),
    (RuleId.G5, "a v1 turn/start with a member the v0 schema does not admit (released restores v1 payloads as they are)",
     lambda: _edited(_set(0, "x-dshfuzz-unknown", 1), 1)),
]
"""Issue 20's false alarms: a rule that once fired where no official layer refuses the log; each
file is accepted by every layer (held in ``tests/conformance/test_rule_twins_official.py``)."""


def _event_level() -> list[tuple[RuleId, str, File, File]]:
    """The unit tests' event-level pairs, as the files the official writer would leave."""
    out: list[tuple[RuleId, str, File, File]] = []
    for n, (rule, breaks, keeps) in enumerate(test_checker_persistence.EVENT_CASES + test_checker_surface.CASES):
        bad, good = minimal_events(), minimal_events()
        breaks(bad)
        keeps(good)
        out.append((rule, f"event case {n}", jsonl(test_checker_surface._clean(bad)), jsonl(test_checker_surface._clean(good))))
    for n, (rule, bad_head, good_head) in enumerate(test_checker_persistence.HEADER_CASES):
        out.append((rule, f"header case {n}", jsonl(minimal_events(), bad_head), jsonl(minimal_events(), good_head)))
    for module in (test_checker_engine, test_checker_plugin, test_checker_wire, test_checker_migration):
        for rule, why, broken, twin in module.twins():
            out.append((rule, why, jsonl(copy.deepcopy(broken.events), broken.header), jsonl(copy.deepcopy(twin.events), twin.header)))
    return out


EVENT_LEVEL = _event_level()


def _explain(report: Report, file: File) -> str:
    found = "\n".join(f"  {f.rule} seq={f.seq} line={f.line} frame={f.frame}: {f.message}" for f in report.findings) or "  (none)"
    return f"findings:\n{found}\nfile:\n{file.shown()}"


def _assert_twins(rule: RuleId, why: str, broken: File, twin: File) -> None:
    report = broken.check()
    assert rule in {f.rule for f in report.findings}, f"{why}: {rule} did not fire\n" + _explain(report, broken)
    report = twin.check()
    assert rule not in {f.rule for f in report.findings}, f"{why}: {rule} fired on the twin\n" + _explain(report, twin)


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), PHYSICAL, ids=[f"{c[0]}-{c[1]}" for c in PHYSICAL])
def test_a_physical_rule_fires_on_the_broken_file_and_not_on_its_twin(rule: RuleId, why: str, broken, twin) -> None:
    _assert_twins(rule, why, broken(), twin())


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), ISSUE_20_PAIRS, ids=[f"{c[0]}-{c[1]}" for c in ISSUE_20_PAIRS])
def test_an_issue_20_shape_fires_on_the_broken_file_and_not_on_its_twin(rule: RuleId, why: str, broken, twin) -> None:
    _assert_twins(rule, why, broken(), twin())


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), EVENT_LEVEL, ids=[f"{c[0]}-{i}" for i, c in enumerate(EVENT_LEVEL)])
def test_an_event_rule_fires_on_the_written_file_and_not_on_its_twin(rule: RuleId, why: str, broken: File, twin: File) -> None:
    _assert_twins(rule, why, broken, twin)


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), MIGRATION_PRECHECK_PAIRS,
                         ids=[f"{c[0]}-{c[1]}" for c in MIGRATION_PRECHECK_PAIRS])
def test_a_migration_precheck_fires_on_the_broken_file_and_not_on_its_twin(rule: RuleId, why: str, broken, twin) -> None:
    _assert_twins(rule, why, broken(), twin())


@pytest.mark.parametrize(("rule", "why", "file"), ISSUE_20_SILENT, ids=[f"{c[0]}-{c[1]}" for c in ISSUE_20_SILENT])
def test_an_issue_20_false_alarm_stays_silent(rule: RuleId, why: str, file) -> None:
    report = file().check()
    assert rule not in {f.rule for f in report.findings}, f"{why}: {rule} fired\n" + _explain(report, file())
    assert report.errors == 0, f"{why}: no official layer refuses it\n" + _explain(report, file())


def test_the_physical_twins_differ_from_their_broken_files_by_little() -> None:
    """A twin is near-identical: its bytes are within a few hundred of the broken file's, or
    it reads the same bytes under the same limits but for the one that decides the rule."""
    for rule, why, broken, twin in PHYSICAL + ISSUE_20_PAIRS:
        a, b = broken(), twin()
        assert a.limits == b.limits, f"{rule} {why}: the pair must be read under the same limits"
        assert abs(len(a.data) - len(b.data)) <= 6000, f"{rule} {why}: {len(a.data)} vs {len(b.data)} bytes"


def test_the_packed_twin_is_a_clean_log_with_a_text_chunks_row() -> None:
    file = _packed()
    assert b'{"type":"text-chunks"' in file.data
    report = file.check()
    assert report.findings == [], _explain(report, file)


def test_every_rule_of_the_registry_has_a_pair() -> None:
    covered = {c[0] for c in PHYSICAL} | {c[0] for c in EVENT_LEVEL} | {c[0] for c in ISSUE_20_PAIRS + MIGRATION_PRECHECK_PAIRS}
    missing = sorted(map(str, set(RULES) - covered))
    assert not missing, f"rules with no fire/no-fire pair: {missing}"


def _packed_negative_zero(*paths: tuple[str, ...]) -> File:
    """The packed text-chunks row with ``-0`` at each of ``paths`` (``dumpb`` writes ``-0.0`` as ``0``)."""

    def edit(row: dict[str, Any]) -> None:
        for path in paths:
            holder: Any = row
            for key in path[:-1]:
                holder = holder[key]
            holder[int(path[-1]) if path[-1].lstrip("-").isdigit() else path[-1]] = "dshfuzz-negative-zero"

    return File(_packed(edit).data.replace(b'"dshfuzz-negative-zero"', b"-0"))


@pytest.mark.parametrize(("paths", "seeded"), [
    ((("data", "dt", "0"),), (False, False, False)),
    ((("time0",),), (True, False, False)),
    ((("time0",), ("data", "dt", "0")), (True, True, False)),
    ((("data", "index"),), (True, True, True)),
])
def test_a_negative_zero_in_a_packed_row_reaches_the_events_expandRow_copies_it_into(paths, seeded) -> None:
    """Measured: seed and the invariants judge the expanded events, where ``time0`` is the first member's time,
    a gap adds to the time before it (-0 + -0 is -0, any other sum is not) and turn, step and index are copied;
    released's codec refuses the row's -0 wherever it is."""
    e4 = [f for f in _packed_negative_zero(*paths).check().findings if f.rule is RuleId.E4]
    assert [("seed" in {str(x) for x in f.refused_by}) for f in e4] == list(seeded), e4
    assert all("released" in {str(x) for x in f.refused_by} for f in e4)
