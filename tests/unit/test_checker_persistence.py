"""Persistence rules H1 H2 R1 R2 R3 E1-E10 S9 C1: each fires on a minimal log that
breaks it, and stays silent on a near-identical log that does not."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from dshfuzz.checker import CheckContext, CheckOptions, OfficialLayer, RuleId, check_log
from dshfuzz.checker._scan import RUNNING_SCAN
from dshfuzz.contracts.rules import RULES
from dshfuzz.model import MISSING, Event, Line, Row, SessionHeader, compress_frame, dumps, loads, parse_log

from checker_logs import DROP, check, explain, fired, header, minimal_events, session_log

Events = list[dict[str, Any]]


def _set(path: str, value: Any) -> Callable[[Events], None]:
    """Set ``value`` at ``index.key.key`` (``DROP`` removes the key)."""
    index, *keys = path.split(".")

    def mutate(events: Events) -> None:
        target: Any = events[int(index)]
        for k in keys[:-1]:
            target = target[int(k)] if type(target) is list else target[k]
        if value is DROP:
            del target[keys[-1]]
        else:
            target[keys[-1]] = copy.deepcopy(value)

    return mutate


def _insert(at: int, event: dict[str, Any]) -> Callable[[Events], None]:
    def mutate(events: Events) -> None:
        events.insert(at, copy.deepcopy(event))
        for i, e in enumerate(events):
            e["seq"] = i
            for key in ("sourceEventSeqs",):
                if key in e and i > at:
                    e[key] = [s + 1 if s >= at else s for s in e[key]]

    return mutate


# (rule, mutation that breaks it, near-identical mutation that does not)
EVENT_CASES: list[tuple[RuleId, Callable[[Events], None], Callable[[Events], None]]] = [
    (RuleId.E1, _set("3.seq", -3), _set("3.seq", 3)),
    (RuleId.E1, _set("3.time", 1.5), _set("3.time", -15)),
    (RuleId.E1, _set("3.ignorable", False), _set("3.ignorable", True)),
    (RuleId.E2, _set("16.seq", 17), _set("16.seq", 16)),
    (RuleId.C1, _set("16.seq", 18), _set("16.seq", 16)),
    (RuleId.E3, _set("0.type", "x-vendor/custom"), _set("0.type", "turn/start")),
    (RuleId.E5, _set("3.data.reason", "fallback"), _set("3.data.reason", "change")),
    (RuleId.E5, _set("0.type", "mode/set"), _set("0.type", "turn/start")),
    (RuleId.E6, _set("2.data.id", ""), _set("2.data.id", "m")),
    (RuleId.E6, _set("7.data.message.source.kind", "user"), _set("7.data.message.source.kind", "model")),
    (RuleId.E6, _set("9.data.message.content.0.toolCallId", "call_9"), _set("9.data.message.content.0.toolCallId", "call_1")),
    (RuleId.E7, _insert(17, {"type": "x-vendor/note", "seq": 17, "time": 1, "data": {}, "ignorable": True}),
     _insert(17, {"type": "retrace/marker", "seq": 17, "time": 1, "data": {}, "ignorable": True})),
    (RuleId.E8, _set("0.extra", 1), _set("0.ignorable", True)),
    (RuleId.E10, _set("3.data.header.config.reasoningEffort", ""), _set("3.data.header.config.reasoningEffort", "high")),
    (RuleId.E10, _set("3.data.header.adapterDefaults", {"maxTokens": True}), _set("3.data.header.adapterDefaults", {})),
]


@pytest.mark.parametrize(("rule", "breaks", "keeps"), EVENT_CASES, ids=lambda x: str(x) if isinstance(x, RuleId) else "")
def test_event_rule_fires_exactly_on_the_broken_log(rule: RuleId, breaks, keeps) -> None:
    head = header()
    bad, good = minimal_events(), minimal_events()
    breaks(bad)
    keeps(good)
    r_bad, r_good = check(head, bad), check(head, good)
    assert rule in fired(r_bad), explain(r_bad, head, bad)
    assert rule not in fired(r_good), explain(r_good, head, good)


def test_the_minimal_log_is_clean() -> None:
    head, events = header(), minimal_events()
    report = check(head, events)
    assert report.findings == [], explain(report, head, events)


HEADER_CASES = [
    (RuleId.H1, {"type": "sessions", "version": 0}, header()),
    (RuleId.H1, [1, 2], header()),
    (RuleId.H2, header(cwd="home/dev"), header(cwd="/srv")),
    (RuleId.H2, header(version=7), header(version=0)),
    (RuleId.H2, header(delegationDepth=DROP), header(delegationDepth=2)),
    (RuleId.H2, header(teamId="t"), header(agentPreset="t")),
    (RuleId.H2, header(createdAt=-1), header(createdAt=0)),
]


@pytest.mark.parametrize(("rule", "bad", "good"), HEADER_CASES, ids=lambda x: str(x) if isinstance(x, RuleId) else "")
def test_header_rule_fires_exactly_on_the_broken_header(rule: RuleId, bad: Any, good: Any) -> None:
    events = minimal_events()
    r_bad, r_good = check(bad, events), check(good, events)
    assert rule in fired(r_bad), explain(r_bad, bad, events)
    assert rule not in fired(r_good), explain(r_good, good, events)


def test_a_header_key_only_released_refuses_is_attributed_to_released_alone() -> None:
    (finding,) = [f for f in check(header(teamId="t"), minimal_events()).findings if f.rule is RuleId.H2]
    assert finding.refused_by == (OfficialLayer.RELEASED,)
    assert finding.context["keys"] == ["teamId"]


@pytest.mark.parametrize(("token", "lossy"), [("1e400", True), ("1E+400", True), ("-0", True), ("-0.0", True), ("-1e-400", True),
                                             ("9" * 309, True), ("1" * 310, True), ("-" + "9" * 5000, True), ("-0." + "0" * 323 + "1", True),
                                             ("1e300", False), ("0", False), ("-1", False), ("1e-400", False), ("-1e-300", False),
                                             ("1" * 309, False), ("-0." + "0" * 322 + "9", False)],
                         ids=lambda v: v if isinstance(v, str) and len(v) < 30 else f"{len(v)}-char" if isinstance(v, str) else None)
def test_e4_fires_on_numbers_json_parse_makes_non_finite_or_negative_zero(token: str, lossy: bool) -> None:
    events = minimal_events()
    log = session_log(header(), events)
    text = dumps(events[3]).replace('"reason":"initial"', f'"reason":"initial","n":{token}')
    log.lines[4] = Line(5, text, loads(text))
    log.events[3] = Event(loads(text), line=5, row=3)
    assert (RuleId.E4 in fired(check_log_strict(log))) is lossy


@pytest.mark.parametrize("kind", [{}, [], None, 7])
def test_e4_on_an_event_whose_type_is_not_a_string_names_released(kind: Any) -> None:
    """Found by atheris (checker-zstd): a lossy number in an event typed ``{}`` crashed the
    released attribution, which looked the type up in a table."""
    events = minimal_events()
    text = dumps({**events[3], "type": kind}).replace('"reason":"initial"', '"reason":"initial","n":-1e400')
    log = session_log(header(), events)
    log.lines[4] = Line(5, text, loads(text))
    log.events[3] = Event(loads(text), line=5, row=3)
    (e4,) = [f for f in check_log_strict(log).findings if f.rule is RuleId.E4]
    assert OfficialLayer.RELEASED in e4.refused_by


def test_e4_shows_a_long_token_by_its_head_and_length() -> None:
    events = minimal_events()
    text = dumps(events[3]).replace('"reason":"initial"', '"reason":"initial","n":' + "9" * 5000)
    log = session_log(header(), events)
    log.lines[4] = Line(5, text, loads(text))
    log.events[3] = Event(loads(text), line=5, row=3)
    (e4,) = [f for f in check_log_strict(log).findings if f.rule is RuleId.E4]
    assert "9" * 24 + "...(5000 characters)" in e4.message and len(e4.message) < 200


def test_unparsable_header_line_is_h1() -> None:
    log = session_log(header(), minimal_events())
    log.header = SessionHeader(MISSING, line=1)
    log.lines[0] = Line(1, "{not json", MISSING, error="Unexpected token")
    report = check_log_strict(log)
    assert [f.rule for f in report.findings] == [RuleId.H1]


def check_log_strict(log):
    from dshfuzz.checker import CheckOptions, check_log

    return check_log(log, CheckOptions(strict=True))


def test_s9_fires_on_a_step_back_in_file_order_while_e2_sees_a_contiguous_sorted_run() -> None:
    events = minimal_events()
    events[15], events[16] = events[16], events[15]
    report = check(header(), events)
    assert RuleId.S9 in fired(report) and RuleId.E2 not in fired(report), explain(report, header(), events)
    assert RuleId.S9 not in fired(check(header(), minimal_events()))


def test_e2_names_the_missing_seqs_and_drops_load_when_jsonl_has_no_later_turn_end() -> None:
    events = minimal_events()
    del events[16]
    del events[14]
    (gap,) = [f for f in check(header(), events).findings if f.rule is RuleId.E2]
    assert gap.context["missing"] == [14]
    assert OfficialLayer.LOAD not in gap.refused_by
    events = minimal_events()
    del events[10]
    (gap,) = [f for f in check(header(), events).findings if f.rule is RuleId.E2]
    assert OfficialLayer.LOAD in gap.refused_by


def test_legacy_user_message_is_refused_by_seed_but_not_by_load() -> None:
    events = minimal_events()
    events[2]["data"] = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
    (finding,) = [f for f in check(header(), events).findings if f.rule is RuleId.E6]
    assert OfficialLayer.SEED in finding.refused_by and OfficialLayer.LOAD not in finding.refused_by


def test_e9_checks_system_messages_in_format_3_only() -> None:
    sysmsg = {"type": "system/message", "seq": 17, "time": 1, "data": {"id": "s", "role": "system", "content": [], "source": {"kind": "user"}}, "surfaceOp": "append"}
    good = copy.deepcopy(sysmsg)
    good["data"]["source"] = {"kind": "plugin", "plugin": "p"}
    assert RuleId.E9 in fired(check(header(version=3), minimal_events() + [sysmsg]))
    assert RuleId.E9 not in fired(check(header(version=3), minimal_events() + [good]))


def test_e10_in_format_3_requires_omitting_system_and_empty_lists() -> None:
    events = minimal_events()
    events[3]["data"]["header"]["system"] = "be brief"
    assert RuleId.E10 in fired(check(header(version=3), events))
    assert RuleId.E10 not in fired(check(header(version=0), events))


def _with_rows(texts_and_values: list[tuple[str, Any, str]]):
    """A log whose event rows are given as (line text, parsed value, row kind); an "event" row
    holds its event, as the reader builds it."""
    log = session_log(header(), [])
    for text, value, kind in texts_and_values:
        n = len(log.lines) + 1
        log.lines.append(Line(n, text, value, error=None if kind != "not-json" else "bad JSON"))
        held = range(0)
        if kind == "event":
            held = range(len(log.events), len(log.events) + 1)
            log.events.append(Event(value, line=n, row=len(log.rows)))
        log.rows.append(Row(line=n, kind=kind, value=value, events=held))
    return log


def _turn_end_row() -> tuple[str, Any, str]:
    v = {"type": "turn/end", "seq": 9, "time": 1, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    return dumps(v), v, "event"


def test_r1_fires_on_an_unparsable_committed_line_and_names_load_only_before_a_turn_end() -> None:
    report = check_log_strict(_with_rows([("{oops", MISSING, "not-json"), _turn_end_row()]))
    (f,) = [f for f in report.findings if f.rule is RuleId.R1]
    assert OfficialLayer.LOAD in f.refused_by and f.line == 2
    report = check_log_strict(_with_rows([("{oops", MISSING, "not-json")]))
    (f,) = [f for f in report.findings if f.rule is RuleId.R1]
    assert OfficialLayer.LOAD not in f.refused_by


def test_r1_ignores_a_torn_final_line() -> None:
    log = _with_rows([("{oops", MISSING, "not-json")])
    log.lines[-1].terminated = False
    assert RuleId.R1 not in fired(check_log_strict(log))


def _packed(**changes: Any) -> dict[str, Any]:
    row = {"type": "text-chunks", "seq0": 0, "time0": 5, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}}
    row["data"].update(changes.pop("data", {}))
    row.update(changes)
    return row


@pytest.mark.parametrize(
    ("rule", "row"),
    [
        (RuleId.R2, _packed(data={"dt": [1]})),
        (RuleId.R2, _packed(extra=1)),
        (RuleId.R2, _packed(data={"texts": []})),
        (RuleId.R3, _packed(seq0=2**53 - 2)),
        (RuleId.R3, _packed(time0=2**53 - 2)),
    ],
)
def test_malformed_packed_rows_are_r2_and_overflowing_ones_r3(rule: RuleId, row: dict[str, Any]) -> None:
    report = check_log_strict(_with_rows([(dumps(row), row, "malformed-packed")]))
    assert {f.rule for f in report.findings if f.rule in (RuleId.R2, RuleId.R3)} == {rule}


_LOSSY = "\u2063lossy\u2063"


def _set(*path: Any) -> Callable[[Any], None]:
    """Set the value at ``path`` (creating dict members) to the lossy placeholder."""
    def edit(value: Any) -> None:
        for key in path[:-1]:
            value = value[key] if not (type(value) is dict and key not in value) else value.setdefault(key, {})
        value[path[-1]] = _LOSSY
    return edit


def _append(*path: Any, item: Any) -> Callable[[Any], None]:
    def edit(value: Any) -> None:
        for key in path:
            value = value[key]
        value.append(item)
    return edit


LOSSY_PLACES: list[tuple[str, int, Callable[[Any], None], bool, bool]] = [
    ("assistant/chunk index", 5, _set("data", "chunk", "index"), False, False),
    ("assistant/chunk extra member", 5, _set("data", "x"), False, False),
    ("unknown content block", 2, _append("data", "content", item={"type": "x-block", "n": _LOSSY}), False, False),
    ("unknown block nested in a tool result", 9,
     _append("data", "message", "content", 0, "content", item={"type": "x-block", "n": _LOSSY}), False, False),
    ("tool schema parameters", 3,
     lambda e: e["data"]["header"].update(tools=[{"name": "ls", "description": "d", "parameters": {"n": _LOSSY}}]), False, False),
    ("model source replayState", 7, _set("data", "message", "source", "replayState", "n"), False, False),
    ("user source of an unknown kind", 2, lambda e: e["data"].update(source={"kind": "x-src", "n": _LOSSY}), False, False),
    ("turn/end reason of an unknown kind", 16, lambda e: e["data"].update(reason={"kind": "x-why", "n": _LOSSY}), False, False),
    ("request/header unexpected member", 3, _set("data", "n"), True, False),
    ("tool/result opaque meta", 9, _set("data", "meta", "n"), True, False),
    ("assistant/message usage", 7, lambda e: e["data"].update(usage={"inputTokens": _LOSSY, "outputTokens": 1}), True, False),
    ("unknown block's type", 2, _append("data", "content", item={"type": _LOSSY}), True, False),
    ("event time", 10, _set("time"), True, True),
    ("sourceEventSeqs member", 9, lambda e: e.update(sourceEventSeqs=[_LOSSY]), True, True),
]
"""(where, event index, edit, released refuses it in format 0, ... in format 1): measured with
the official released layer (tests/conformance/test_checker_official_migration.py)."""


def lossy_log(version: int, index: int, edit: Callable[[Any], None], token: str) -> bytes:
    """``minimal_events`` under a format-``version`` header, event ``index`` edited to hold ``token``."""
    events = minimal_events()
    edit(events[index])
    text = "".join(dumps(x) + "\n" for x in [header(version=version), *events])
    return text.replace(dumps(_LOSSY), token).encode()


@pytest.mark.parametrize("token", ["-0", "1e400"])
@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize(("where", "index", "edit", "v0", "v1"), LOSSY_PLACES, ids=[p[0] for p in LOSSY_PLACES])
def test_e4_names_released_only_where_its_validator_reads_the_number(
        where: str, index: int, edit: Callable[[Any], None], v0: bool, v1: bool, version: int, token: str) -> None:
    report = check_log(parse_log(lossy_log(version, index, edit, token)), CheckOptions(strict=True))
    (e4,) = [f for f in report.findings if f.rule is RuleId.E4]
    named = OfficialLayer.RELEASED in e4.refused_by
    assert named is (v0 if version == 0 else v1), f"{where}: E4 says {list(map(str, e4.refused_by))}"
    assert {OfficialLayer.SEED, OfficialLayer.INVARIANTS} <= set(e4.refused_by)


def _frames(text: bytes, cuts: list[int]) -> bytes:
    """``text`` as a zstd log: the header line alone in the first frame, the rest cut at ``cuts``."""
    header_end = text.index(b"\n") + 1
    bounds = [0, header_end, *sorted(cuts), len(text)]
    return b"".join(compress_frame(text[a:b]) for a, b in zip(bounds, bounds[1:]))


@pytest.mark.parametrize("token", ["-0", "-0.0", "1e400", "1E+400", "-1E-400", "9" * 309, "-0." + "0" * 323 + "1"],
                         ids=lambda v: v if len(v) < 30 else f"{len(v)}-char")
@pytest.mark.parametrize("cut", ["one frame per line", "a frame boundary inside the number", "no cut"])
def test_e4_finds_a_lossy_number_in_a_zstd_log_wherever_the_frames_cut(token: str, cut: str) -> None:
    """The frame-wise screen sees a number an unaligned frame boundary splits."""
    where, index, edit, _, _ = LOSSY_PLACES[-2]
    text = lossy_log(0, index, edit, token)
    at = text.index(token.encode())
    cuts = {"one frame per line": [i + 1 for i in range(len(text) - 1) if text[i : i + 1] == b"\n"][1:],
            "a frame boundary inside the number": [at + 1, at + len(token) - 1],
            "no cut": []}[cut]
    lines = [f.line for f in check_log(parse_log(_frames(text, cuts)), CheckOptions(strict=True)).findings
             if f.rule is RuleId.E4]
    plain = [f.line for f in check_log(parse_log(text), CheckOptions(strict=True)).findings if f.rule is RuleId.E4]
    assert lines == plain == [index + 2], f"{where} holding {token}: E4 on lines {lines} (plain log: {plain})"


def test_e4_screens_the_suspect_lines_as_the_reader_reveals_them() -> None:
    """A streaming reader appends the ranges of suspect lines as it reads (those covering a line
    before that line's events are handed over): the envelope walk screens each range as the
    loop reaches it, and keeps only the lossy lines among those behind it."""
    from dshfuzz.checker._persistence import Envelope

    events = minimal_events()
    events[2]["data"]["n"] = _LOSSY
    events[5]["data"]["n"] = _LOSSY
    text = "".join(dumps(x) + "\n" for x in [header(), *events]).replace(dumps(_LOSSY), "-0").encode()
    log = parse_log(text)
    whole = [f.line for f in check_log_strict(parse_log(text)).findings if f.rule is RuleId.E4]
    assert whole == [4, 7]
    spans = list(log.lossy_suspects)
    assert spans
    log.lossy_suspects.clear()  # the same list the walk holds, revealed line by line below
    walk = Envelope(CheckContext(log))
    found = []
    for index, event in enumerate(log.events):
        log.lossy_suspects.extend(s for s in spans if s.start <= event.line and s not in log.lossy_suspects)
        found += [f.line for f in walk.visit(index, event) or () if f.rule is RuleId.E4]
        assert all(n <= event.line for n in walk.lossy_lines)
    assert found == whole and walk.lossy_lines == {4, 7}


# --- E2 S9 C1: the seq-order walk keeps its seqs as runs -----------------------------------


class _FrozenSeqOrder:
    """The seq-order walk as it was when it kept one ``(seq, position, line, frame)`` tuple an
    event and sorted them at the end: the oracle the compact walk must match finding for finding."""

    def __init__(self, ctx: CheckContext) -> None:
        from dshfuzz.checker._run import EVERY_EVENT
        from dshfuzz.checker._scan import running_scan

        self.ctx = ctx
        self.events = ctx.events
        self.runs = ctx.packed_runs[1]
        self.seqs: list[tuple[int, int, int | None, int | None]] | None = None
        self.prev: int | None = None
        self.backsteps: list[int] = []
        self.every = EVERY_EVENT
        scan = running_scan(ctx)
        if scan is not None:
            self.types: Any = ()
            scan.on_first_misplaced.append(self.wake)
        else:
            self.seqs = []
            self.types = EVERY_EVENT

    def wake(self, index: int) -> None:
        from dshfuzz.checker._run import resubscribe

        self.seqs = [(k, k, None, None) for k in range(index)]
        self.prev = index - 1 if index else None
        self.types = self.every
        resubscribe(self.ctx)

    def visit(self, index: int, event: Event) -> list[Any] | None:
        from dshfuzz.checker._context import is_nonneg_safe_int

        seqs = self.seqs
        assert seqs is not None
        found: list[Any] | None = None
        for i in range(index, self.runs.get(index, index + 1)):
            ev = self.events[i]
            s = ev.seq
            if not (type(s) is int and 0 <= s <= 9007199254740991) and not is_nonneg_safe_int(s):
                continue
            s = int(s)
            prev = self.prev
            if prev is not None and s <= prev:
                self.backsteps.append(s)
                found = found or []
                found.append(self.ctx.finding(
                    RuleId.S9,
                    f"seq {s} at line {ev.line} follows seq {prev} in file order: physical order must strictly increase",
                    event=ev, context={"previousSeq": prev}))
            self.prev = s if prev is None else max(prev, s)
            seqs.append((s, i, ev.line, ev.frame))
        return found

    def finish(self) -> Any:
        from dshfuzz.checker._scan import scanned

        L = OfficialLayer
        seqs = self.seqs
        if seqs is None:
            return
        ctx = self.ctx
        last_turn_end = scanned(ctx).last_turn_end
        seqs.sort()
        expected = 0
        gaps: list[int] = []
        zstd = ctx.log.compression == "zstd"
        # C1 names the layers its gaps, repeats and steps back break (E2's and S9's, as each finding says)
        noted = set(RULES[RuleId.S9].refused_by) if self.backsteps else set()
        for s, i, line, frame in seqs:
            if s == expected:
                expected += 1
                continue
            if s < expected:
                gaps.append(s)
                noted.update(RULES[RuleId.E2].refused_by)
                yield ctx.finding(RuleId.E2, f"seq {s} repeats: it was already used by an earlier event", seq=s, line=line,
                                  frame=frame, context={"duplicateSeq": s})
                continue
            missing = list(range(expected, min(s, expected + 50)))
            gaps.append(expected)
            refused = (L.FOLD, L.SEED, L.INVARIANTS, L.LOAD, L.RELEASED)
            if not zstd and i > last_turn_end:
                refused = (L.FOLD, L.SEED, L.INVARIANTS, L.RELEASED)
            noted.update(refused)
            yield ctx.finding(
                RuleId.E2,
                f"seq gap: expected {expected}, got {s} (missing {s - expected} seq{'s' if s - expected > 1 else ''})",
                seq=s, line=line, frame=frame, refused_by=refused,
                context={"expected": expected, "got": s, "missing": missing, "missingCount": s - expected})
            expected = s + 1
        if gaps or self.backsteps:
            yield ctx.finding(
                RuleId.C1,
                f"{len(gaps)} seq gap(s) or repeat(s) and {len(self.backsteps)} step(s) back in file order: "
                "the traces two writers sharing one session leave",
                context={"gaps": gaps[:20], "backsteps": self.backsteps[:20]}, refused_by=tuple(x for x in L if x in noted))


_Rows = list[tuple[list[Any], int, int | None]]
"""A log's rows as the seq-order walk sees them: each row's raws (several: a packed row), line and frame."""


def _seq_log(rows: _Rows, compression: str) -> tuple[Any, list[tuple[int, int]]]:
    from dshfuzz.model import SessionLog

    events: list[Event] = []
    heads = []
    for index, (raws, line, frame) in enumerate(rows):
        start = len(events)
        packed = len(raws) > 1
        events += [Event(raw, line, index, k if packed else None, frame) for k, raw in enumerate(raws)]
        heads.append((start, len(events)))
    return SessionLog(header=None, events=events, compression=compression), heads  # type: ignore[arg-type]


def _seq_order_findings(walk_class: type, rows: _Rows, compression: str, scan: bool = True) -> tuple[list[Finding], Any]:
    """Every finding ``walk_class`` gives on ``rows`` (the S9 ones as the loop passes, then its
    finish), handed the heads as a check's loop hands them, woken by the type scan when
    ``scan``; and the walk, its state as the loop left it."""
    from dshfuzz.checker._run import EVERY_EVENT
    from dshfuzz.checker._scan import TypeScan

    log, heads = _seq_log(rows, compression)
    ctx = CheckContext(log)
    runs: dict[int, int] = {}
    ctx._packed = ([], runs)
    scanner = TypeScan(ctx)
    walk = walk_class(ctx) if scan else None
    if not scan:  # a walk built before the loop's scan: it walks every head from the first
        del ctx._memo[RUNNING_SCAN]
        walk = walk_class(ctx)
        ctx._memo[RUNNING_SCAN] = scanner
    found: list[Finding] = []
    for head, stop in heads:
        runs.clear()
        if stop - head > 1:
            runs[head] = stop
        scanner.visit(head, log.events[head])
        if walk.types is EVERY_EVENT:
            found += walk.visit(head, log.events[head]) or []
    runs.clear()
    scanner.finish()
    kept = copy.deepcopy(getattr(walk, "kept", None))
    return found + list(walk.finish() or []), kept


def _seq_rows(draw: Any) -> tuple[_Rows, str]:
    from hypothesis import strategies as st

    odd = st.sampled_from(["3", 2.0, 2.5, -1, True, None, 2**53, 9007199254740991, [1]])
    seqs: list[Any] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["block", "block", "block", "odd", "swap"]))
        if kind == "block":  # consecutive seqs from near where the log stands: a gap, a repeat, a step back
            start = max(0, len(seqs) + draw(st.sampled_from([0, 0, 1, 2, -1, -3, -10, 7, 60])))
            seqs += range(start, start + draw(st.integers(1, 30)))
        elif kind == "odd":
            seqs.append(draw(odd))
        elif len(seqs) > 1:  # two displaced events
            k = draw(st.integers(0, len(seqs) - 2))
            seqs[k], seqs[k + 1] = seqs[k + 1], seqs[k]
    compression = draw(st.sampled_from(["none", "zstd"]))
    rows: _Rows = []
    line, frame, k = 1, 0, 0
    while k < len(seqs):
        size = draw(st.sampled_from([1, 1, 1, 2, 3, 5]))
        raws: list[Any] = []
        for s in seqs[k : k + size]:
            raw = {"type": draw(st.sampled_from(["user/message", "turn/end"]))}
            if s is not None:
                raw["seq"] = s
            raws.append(raw if s != [1] else [s])
        k += size
        line += draw(st.sampled_from([1, 1, 1, 2, 0]))
        if compression == "zstd":
            frame += draw(st.sampled_from([0, 0, 1, 2]))
        rows.append((raws, line, frame if compression == "zstd" else None))
    return rows, compression


def test_seq_order_matches_the_frozen_walk_finding_for_finding() -> None:
    """Gaps, repeats, repeated blocks, step backs, packed rows, odd seqs, line and frame jumps:
    the compact walk gives the findings the walk that kept a tuple an event gave, in order."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from dshfuzz.checker._persistence import SeqOrder

    @settings(max_examples=600, deadline=None)
    @given(st.data(), st.booleans())
    def compare(data: Any, scan: bool) -> None:
        rows, compression = _seq_rows(data.draw)
        expected, _ = _seq_order_findings(_FrozenSeqOrder, rows, compression, scan)
        assert _seq_order_findings(SeqOrder, rows, compression, scan)[0] == expected

    compare()


def _long_rows(seqs: list[int], packed: bool, frame_every: int = 0) -> _Rows:
    """Rows holding ``seqs`` in order: plain rows, or (``packed``) a packed row of three between
    plain rows; a new frame every ``frame_every`` lines when given (zstd)."""
    rows: _Rows = []
    k = 0
    while k < len(seqs):
        size = 3 if packed and len(rows) % 2 else 1
        line = len(rows) + 2
        frame = line // frame_every if frame_every else None
        rows.append(([{"type": "user/message", "seq": s} for s in seqs[k : k + size]], line, frame))
        k += size
    return rows


def _run_count(kept: Any) -> int:
    return len(kept.size) + (kept.open > 0)  # the closed runs and the open one


def test_seq_order_keeps_a_long_damaged_log_as_a_few_runs() -> None:
    """From the first misplaced seq on, the walk keeps runs of consecutive seqs at consecutive
    positions, one record each, the positional prefix one of them: a gap early in a long log
    costs two runs; packed rows between plain ones add a byte an event (how each event's line
    and frame follow the one before); a block a second writer repeated adds a run or two; only
    a jump at every event costs a run an event."""
    from dshfuzz.checker._persistence import SeqOrder

    n = 30_000
    gap = [*range(5), *range(6, n)]
    for packed, frame_every, compression in ((False, 0, "none"), (True, 0, "none"), (True, 7, "zstd")):
        found, kept = _seq_order_findings(SeqOrder, _long_rows(gap, packed, frame_every), compression)
        assert [f.rule for f in found] == [RuleId.E2, RuleId.C1]
        assert _run_count(kept) == 2  # the prefix 0..4, then 6.. at positions 5..
        assert len(kept.codes) == (len(gap) - 6 if packed else 0)
    repeated = [*range(n // 2), *range(n // 2 - 100, n)]
    found, kept = _seq_order_findings(SeqOrder, _long_rows(repeated, packed=False), "none")
    assert [f.rule for f in found] == [RuleId.S9] * 100 + [RuleId.E2] * 100 + [RuleId.C1]
    assert _run_count(kept) == 2 and len(kept.chunks) == 2 and not kept.codes
    scattered = [s ^ 1 for s in range(1000)]  # 1 0 3 2 ...: every event steps
    found, kept = _seq_order_findings(SeqOrder, _long_rows(scattered, packed=False), "none")
    assert _run_count(kept) == len(scattered) and kept.size.itemsize == 8
