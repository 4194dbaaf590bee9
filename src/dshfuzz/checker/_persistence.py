"""Persistence-layer rules: the header, the stored rows, and each event's envelope.

H1 H2 read the header; R1 R2 R3 the physical rows; E1 E3 E4 E5 E6 E7 E8 E9 E10
one event at a time; E2 S9 C1 the seq order; L1-L4 report the reader limit
that stopped the read, if any. For format v0 every check and
message follows the official rc.8 code (dsh-session S:1137-1282, persistence
SP:499-750, persistence-jsonl SPJ:55-80); a finding narrows ``refused_by`` to
the layers that refuse that particular instance (e.g. a legacy message shape the
loader upgrades is refused by seed, not by load).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import math
import re
from operator import itemgetter
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from heapq import heapify, heappop, heappush
from typing import Any, TypeGuard

from dshfuzz.contracts import MAX_SAFE_INTEGER
from dshfuzz.contracts.rules import RULES
from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.contracts.rules import RuleId as R
from dshfuzz.contracts.rules import Severity
from dshfuzz.model import MISSING, Event, Line, Row, may_hold_lossy_number

from ._context import CheckContext, is_nonneg_safe_int, is_safe_int
from ._finding import Finding
from ._meter_header import header_comparison_throws, tools_reading
from ._migration import LEGACY_SOURCE_TYPES, released_refuses_lossy
from ._run import EVERY_EVENT, FindingRun, Subscriptions, resubscribe, rule_pass, rule_walk
from ._scan import RUNNING_SCAN, SCAN, running_scan, scanned

KNOWN_TYPES_V0 = frozenset(
    """agent-preset/selected agent/inbox/spliced approval/asked approval/decided approval/policy
    assistant/chunk assistant/message command/done command/run compaction/end compaction/prune
    compaction/start compaction/summary feedback/record goal/change hook/invoked hook/result llm/retry
    llm/retry-started permission/preset plan/mode request/context request/header sandbox/mode
    schedule/change session/end-seed session/title session/title-llm-request step/end step/start
    subagent/descriptor team/member team/message/delivered team/message/queued team/task todo/write
    tool-workflow/agent-end tool-workflow/agent-start tool-workflow/run-end tool-workflow/run-start
    tool/call tool/code-dispatch tool/code-dispatch-start tool/result turn/end turn/start user/message
    web/deepseek-search-llm-request""".split()
)
"""``KNOWN_SESSION_EVENT_TYPES`` of dsh-session rc.8 (S:1054), 48 types."""

_LEGACY_COMPACTION = frozenset(kind for kind in LEGACY_SOURCE_TYPES if kind.startswith("compact/"))
"""The legacy compaction types released's v0 migration renames (and the rc.8 loader does not know)."""

_RELEASED_EXTRA = frozenset({"model/selection", "session-log-deepseek/delivery-accepted", "subagent/model-selection-policy"})
KNOWN_TYPES: dict[int, frozenset[str]] = {
    # the v0 loader upgrades steering/message to user/message before its vocabulary check (SP:540)
    0: KNOWN_TYPES_V0 | {"steering/message"},
    1: KNOWN_TYPES_V0 | _RELEASED_EXTRA,
    2: KNOWN_TYPES_V0 | _RELEASED_EXTRA | {"assistant/attempt"},
    3: KNOWN_TYPES_V0 | _RELEASED_EXTRA | {"assistant/attempt", "system/message"},
}
RETIRED_TYPES = frozenset({"request/header-delta", "mode/set"})
IGNORABLE_CONSUMERS = ("retrace/marker", "retrace/goal-marker")
IGNORABLE_CONSUMER_PREFIXES = ("message-editor/",)
ENVELOPE = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})
MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

HEADER_REQUIRED_V0 = ("type", "version", "id", "createdAt", "delegationDepth")
HEADER_OPTIONAL_V0 = ("cwd", "parentSession", "seedLength", "origin", "agentPreset")
"""The released v0 physical header's exact key set (V01:1596-1609)."""

_ALL_LOAD = (L.SEED, L.LOAD, L.RELEASED)
# the invariants layer validates the header fields Session.create reads (measured: cwd, createdAt)
_WITH_INVARIANTS = (L.SEED, L.INVARIANTS, L.LOAD, L.RELEASED)


def _s(v: Any) -> str:
    """``String(v)`` for the values messages quote."""
    if v is MISSING:
        return "undefined"
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False)


def _is_record(v: Any) -> TypeGuard[dict[str, Any]]:
    return type(v) is dict


def _nonempty_str(v: Any) -> bool:
    return type(v) is str and v != ""


def _negative_zero(v: Any) -> bool:
    return type(v) is float and v == 0 and math.copysign(1.0, v) < 0


def _negative_zero_paths(value: Any) -> Iterator[tuple[str | int, ...]]:
    """The paths in a JSON value that hold ``-0`` (an explicit stack: a header may nest deeply)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if _negative_zero(item):
            yield path
        elif type(item) is dict:
            stack.extend(((*path, k), v) for k, v in item.items())
        elif type(item) is list:
            stack.extend(((*path, j), v) for j, v in enumerate(item))


def _is_absolute(path: str) -> bool:
    return path.startswith("/")


@rule_pass(R.H1, R.H2)
def header_rules(ctx: CheckContext) -> Iterator[Finding]:
    """H1: the first line is a JSON object with type "session". H2: its fields.

    A pass, not a walk: it reads only the physical layer (the header line), which a
    streaming reader still provides."""
    log = ctx.log
    h = log.header
    if h is None and log.limit is not None:
        return  # a limit stopped the read before the header: L1-L4 report it
    if h is None or h.raw is MISSING:
        first = log.lines[0] if log.lines else None
        if first is not None:
            why = f"header line is not valid JSON ({first.error or 'unparsable'})"
        elif len(log.frames):  # bytes, but no frame decoded: "empty" would mislead (Z1/Z2 say why)
            why = f"no line could be read: none of its {len(log.frames)} zstd frame(s) decodes"
        else:
            why = "the file is empty"
        yield ctx.finding(R.H1, f"corrupt session log: {why}", line=1, frame=None if first is None else first.frame)
        return
    if log.compression == "none" and len(log.lines) == 1 and not log.lines[0].terminated:
        # the reader splits off the header at its newline: with none, the file holds no complete line (SPJ:312)
        yield ctx.finding(R.H1, "corrupt session log: the header line has no newline (the file holds no complete line)",
                          line=1, refused_by=(L.LOAD, L.RELEASED))
        return
    if log.compression == "zstd" and log.frames and log.frames[0].status == "torn":
        # the reader keeps complete frames only: with the header frame torn, the file holds none (SPJ:879, SPJ:959)
        yield ctx.finding(R.H1, "corrupt Zstandard session log: the header frame is incomplete (the file holds no "
                          "complete frame)", line=1, frame=0, refused_by=(L.LOAD, L.RELEASED))
        return
    raw = h.raw
    if not _is_record(raw) or raw.get("type") != "session":
        got = "not a JSON object" if not _is_record(raw) else f"type is {_s(raw.get('type', MISSING))}"
        # Session.create's header has no type (validateSessionHeader reads none): a record whose
        # type is wrong is the loader's and the released codec's refusal, and the other layers'
        # only where its other fields break what they read
        refused = None
        if _is_record(raw):
            also = {x for f in _header_fields(ctx, raw, h.line, h.frame) for x in f.refused_by}
            refused = tuple(x for x in L if x in also or x in (L.LOAD, L.RELEASED))
        yield ctx.finding(R.H1, f"corrupt session log: first line is not a session header ({got})", line=h.line,
                          frame=h.frame, refused_by=refused)
        return
    yield from _header_fields(ctx, raw, h.line, h.frame)


def _header_fields(ctx: CheckContext, raw: dict[str, Any], line: int, frame: int | None) -> Iterator[Finding]:
    def bad(message: str, refused: tuple[L, ...] = _ALL_LOAD, **context: Any) -> Finding:
        return ctx.finding(R.H2, message, line=line, frame=frame, refused_by=refused, context=context)

    version = raw.get("version", MISSING)
    if type(version) not in (int, float) or type(version) is bool:
        yield bad(f"session header version must be a number, got {_s(version)}")
    elif not (is_safe_int(version) and int(version) in (0, 1, 2, 3)):
        yield bad(f"session header version {_s(version)} is not a known format version (0, 1, 2, 3)")
    v0 = ctx.version in (0, 1)
    if type(raw.get("id")) is not str:
        # Session.create checks only that the header's id is the id it is given, which its callers
        # take from the header: the loader and the released codec refuse a non-string id
        # seed compares the id it is given with the snapshot's copy (``!==``, S:1118): a copied object or
        # array never matches; a number, boolean or null matches (measured)
        seeded = type(raw.get("id", MISSING)) in (dict, list)
        yield bad(f"session header id must be a string, got {_s(raw.get('id', MISSING))}",
                  (L.SEED, L.LOAD, L.RELEASED) if seeded else (L.LOAD, L.RELEASED))
    elif raw["id"] == "":
        # the reader takes an empty id for none and asks for "unknown", which the header does not name (SP:1130);
        # that reader reads format 0 only, and the later formats' layers accept it
        if ctx.version == 0:
            yield bad("session header id is empty", (L.LOAD,))
        else:
            yield ctx.finding(R.H2, "session header id is empty (the format-0 loader would refuse it)", line=line,
                              frame=frame, refused_by=(), severity=Severity.WARNING)
    created = raw.get("createdAt", MISSING)
    if not is_nonneg_safe_int(created) or _negative_zero(created):
        # the store mints createdAt where the header has none (``meta?.createdAt ?? Date.now()``)
        yield bad(f"session header createdAt must be a non-negative safe integer, got {_s(created)}",
                  _ALL_LOAD if created is None or created is MISSING else _WITH_INVARIANTS)
    cwd = raw.get("cwd", MISSING)
    if cwd is not MISSING and (type(cwd) is not str or not _is_absolute(cwd)):
        yield bad(f"session header cwd must be an absolute path, got {_s(cwd)}", _WITH_INVARIANTS)
    # createdAt and delegationDepth have their own finding (their -0 breaks more layers)
    zero = next((p for p in _negative_zero_paths(raw) if p not in (("createdAt",), ("delegationDepth",))), None)
    if zero is not None:
        # seed snapshots the header losslessly (S:1143) and released parses it so (SF:67); load keeps it as read
        yield bad(f"session header holds -0 at {'.'.join(map(str, zero))}: not lossless JSON", (L.SEED, L.RELEASED))
    origin = raw.get("origin", MISSING)
    if origin is not MISSING and origin != "subagent":
        yield bad(f'session header origin must be "subagent", got {_s(origin)}')
    if not v0:
        return
    depth = raw.get("delegationDepth", MISSING)
    if depth is MISSING:
        yield bad("session header lacks delegationDepth (the loader requires it)", (L.LOAD, L.RELEASED))
    elif not is_nonneg_safe_int(depth) or _negative_zero(depth):
        yield bad(f"session header delegationDepth must be a non-negative safe integer, got {_s(depth)}")
    checks: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
        ("parentSession", lambda v: type(v) is str, "a string"),
        ("seedLength", is_nonneg_safe_int, "a non-negative safe integer"),
        ("agentPreset", lambda v: type(v) is str, "a string"),
    )
    for key, check, what in checks:
        value = raw.get(key, MISSING)
        if value is not MISSING and not check(value):
            yield bad(f"session header {key} must be {what}, got {_s(value)}")
    retired = [k for k in ("sandboxMode", "approvalPolicy") if k in raw]
    if retired:
        yield bad("session header uses retired policy baseline fields", (L.LOAD, L.RELEASED), keys=retired)
    allowed = set(HEADER_REQUIRED_V0) | set(HEADER_OPTIONAL_V0) | {"sandboxMode", "approvalPolicy"}
    extra = [k for k in raw if k not in allowed]
    if extra and ctx.version == 0:
        yield bad(
            f'released v0 physical header has unexpected member "{extra[0]}"',
            (L.RELEASED,),
            keys=extra,
        )


@rule_walk(R.H2, types=())
class SeedWithinLog:
    """H2's one relation of the header to the whole log: ``seedLength`` counts inherited events,
    so it cannot exceed the events the log holds (released's codec, V01:1693: "Session
    inheritedEventCount exceeds its event count"; load, seed and fold accept such a header).
    State: none; it reads the count the loop reached when it finishes."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx

    def finish(self) -> list[Finding] | None:
        h = self.ctx.log.header
        raw = h.raw if h is not None else None
        seed: Any = raw.get("seedLength", MISSING) if type(raw) is dict else MISSING
        count = len(self.ctx.events)
        if h is None or not is_nonneg_safe_int(seed) or seed <= count or not _read_whole(self.ctx.log):
            return None  # events the read lost (a limit, a bad frame, a torn tail) may be the seed: Z/L/R say why
        return [self.ctx.finding(R.H2, f"session header seedLength {_s(seed)} exceeds the log's {count} event(s)",
                                 line=h.line, frame=h.frame, refused_by=(L.RELEASED,))]


def _read_whole(log: Any) -> bool:
    """Whether the reader lost no event: no limit stopped it, no torn tail, every zstd frame whole
    and every row readable (a streamed read keeps only the irregular frames and rows)."""
    if log.limit is not None or log.torn is not None:
        return False
    frames = getattr(log.frames, "irregular", None)
    frames = log.frames if frames is None else [*frames.values(), *log.frames[-1:]]
    if any(fr.status not in ("complete", "not-record-aligned") for fr in frames):
        return False
    rows = getattr(log.rows, "irregular", None)
    rows = log.rows if rows is None else rows.values()
    return all(row.kind in ("event", "packed") for row in rows)


_LIMIT_RULES = {
    "frame-bytes": R.L1, "file-bytes": R.L1, "ratio": R.L1, "line-bytes": R.L2, "depth": R.L3,
    "unreadable-lines": R.L4, "line-ratio": R.L4,
}
_OFFICIAL_BEYOND_LIMIT = {
    R.L1: "the official loader has no such limit: it decodes the frame whole, and refuses the file or crashes "
    "only when memory runs out",
    R.L2: "the official loader accepts such a line (its only bound is V8's maximum string length)",
    R.L3: "the official loader accepts such a line (V8's JSON.parse does not recurse)",
    R.L4: "the official loader reads every line, however many",
}


@rule_pass(R.L1, R.L2, R.L3, R.L4)
def limit_rules(ctx: CheckContext) -> Iterator[Finding]:
    """L1-L4: the reader limit that stopped the read. The finding is located in the
    file: a zstd line is attributed to its frame's byte offset (its offset in the
    plaintext goes in the context).

    A pass, not a walk: it reads only the physical layer (the reader's limit record and
    the frames), which a streaming reader still provides."""
    log = ctx.log
    hit = log.limit
    if hit is None:
        return
    rule = _LIMIT_RULES[hit.kind]
    offset = hit.offset
    context: dict[str, Any] = {"limit": hit.kind, "bound": hit.limit, "observed": hit.observed, "exact": hit.exact}
    if hit.line is not None and hit.frame is not None:
        context["plaintextOffset"] = hit.offset
        offset = log.frames[hit.frame].offset if hit.frame < len(log.frames) else None
    yield ctx.finding(
        rule,
        f"{hit.message}; {_OFFICIAL_BEYOND_LIMIT[rule]}",
        line=hit.line,
        frame=hit.frame,
        offset=offset,
        context=context,
    )


_PACKED_SEQ = "member seqs must stay safe integers"
_PACKED_TIME = "member times must stay safe integers"


@rule_pass(R.R1, R.R2, R.R3, reads=(SCAN,))
def row_rules(ctx: CheckContext) -> Iterator[Finding | FindingRun]:
    """R1: every complete event line parses. R2/R3: packed chunk rows validate.

    A final line without its newline is a torn tail (the official reader drops
    it), not a corrupt line; the framing rules report it.

    A pass, not a walk: it reads the physical layer (rows and lines), which a streaming
    reader still provides; the one logical fact it needs, whether a turn/end follows a
    corrupt row, is the line of the last turn/end, which the type scan records as it passes
    (rows stand in line order, and a corrupt row holds no event, so a turn/end follows it
    exactly when that line is past the row's). A streamed read's run of empty rows is one
    :class:`FindingRun`: no turn/end stands inside it, so its members differ only in their line.
    """
    rows = ctx.log.rows
    # a streamed read keeps only the rows that did not decode whole: the rest need not be built
    kept = getattr(rows, "irregular", None)
    bad: list[tuple[int, Row | tuple[int, int]]] = [
        (row.line, row) for row in (rows if kept is None else kept.values()) if row.kind != "event" and row.kind != "packed"
    ]
    runs = getattr(rows, "blank_runs", None)  # row i is line i + 2
    blank_runs = [(first + 2, (first + 2, count)) for first, count in runs()] if runs is not None else []
    if not bad and not blank_runs:
        return
    last_turn_end_line = scanned(ctx).last_turn_end_line
    zstd = ctx.log.compression == "zstd"
    for line_number, row in heapq.merge(bad, blank_runs, key=_FIRST) if blank_runs else bad:
        if isinstance(row, tuple):
            first, count = row
            yield _empty_run(ctx, first, count, last_turn_end_line, zstd)
            continue
        kind = row.kind
        if kind in ("not-json", "empty"):
            line = ctx.log.lines[row.line - 1] if 0 < row.line <= len(ctx.log.lines) else None
            if line is not None and not line.terminated:
                continue
            why = "empty line" if kind == "empty" else (row.error or "not valid JSON")
            yield _unparsable(ctx, row.line, row.frame, why, last_turn_end_line > row.line, zstd)
        elif kind == "malformed-packed":
            why = _packed_row_error(row.value) or row.error or "malformed storage row"
            rule = R.R3 if why.endswith((_PACKED_SEQ, _PACKED_TIME)) else R.R2
            yield ctx.finding(rule, why, line=row.line, frame=row.frame)


_FIRST = itemgetter(0)


def _unparsable(ctx: CheckContext, line: int, frame: int | None, why: str, later_turn_end: bool, zstd: bool) -> Finding:
    """R1 of an unparsable row at ``line``."""
    # jsonl: the loader keeps the prefix as a torn tail unless a turn/end follows (SPJ:270-277);
    # zstd: a complete frame must commit every record (SPJ:984)
    refused = (L.LOAD, L.RELEASED) if later_turn_end or zstd else (L.RELEASED,)
    return ctx.finding(
        R.R1,
        f"corrupt session log: unparsable committed event at line {line} ({why})",
        line=line,
        frame=frame,
        refused_by=refused,
        context={"laterTurnEnd": later_turn_end},
    )


def _empty_run(ctx: CheckContext, first: int, count: int, last_turn_end_line: int, zstd: bool) -> FindingRun:
    """R1 of the ``count`` empty lines from line ``first`` on (all in one frame, all terminated)."""
    frame = ctx.log.lines[first - 1].frame
    later_turn_end = last_turn_end_line > first

    def build(k: int) -> Finding:
        return _unparsable(ctx, first + k, frame, "empty line", later_turn_end, zstd)

    return FindingRun(R.R1, count, build, build(0).refused_by)


def _packed_row_error(value: Any) -> str | None:
    """``validateRow`` (S:922-971): the official message for a malformed chunk row."""
    if not _is_record(value):
        return None
    tag = value.get("type")
    if tag not in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
        return None

    def m(why: str) -> str:
        return f"malformed {tag} storage row: {why}"

    if set(value) != {"type", "seq0", "time0", "data"}:
        return m("envelope must be exactly {type, seq0, time0, data}")
    seq0, time0, data = value["seq0"], value["time0"], value["data"]
    if not is_nonneg_safe_int(seq0):
        return m("seq0 must be a non-negative safe integer")
    if not is_safe_int(time0):
        return m("time0 must be a safe integer")
    if type(data) not in (dict, list):  # isRecord is ``typeof === "object"``: an array passes
        return m("data must be an object")
    # hasExactKeys reads Object.keys: an array's are its indices, never the row's names
    keys = set(data) if type(data) is dict else {str(k) for k in range(len(data))}
    if tag == "tool-call-chunks":
        with_name = keys == {"turn", "step", "index", "id", "name", "dt", "args"}
        if not with_name and keys != {"turn", "step", "index", "id", "dt", "args"}:
            return m("data must be exactly {turn, step, index, id, name?, dt, args}")
        if type(data["id"]) is not str or (with_name and type(data["name"]) is not str):
            return m("id (and name when present) must be strings")
        key = "args"
    else:
        if keys != {"turn", "step", "index", "dt", "texts"}:
            return m("data must be exactly {turn, step, index, dt, texts}")
        key = "texts"
    if any(type(data[k]) not in (int, float) or type(data[k]) is bool for k in ("turn", "step", "index")):
        return m("turn/step/index must be numbers")
    payload = data[key]
    if type(payload) is not list or not payload or any(type(x) is not str for x in payload):
        return m(f"{key} must be a non-empty string array")
    dt = data["dt"]
    if type(dt) is not list or not all(is_safe_int(g) for g in dt):
        return m("dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        return m(f"dt length {len(dt)} does not match {len(payload)} members")
    if not is_safe_int(seq0 + len(payload) - 1):
        return m(_PACKED_SEQ)
    t = time0
    for gap in dt:
        t += gap
        if not is_safe_int(t):
            return m(_PACKED_TIME)
    return None


_NONE = -1
"""A line or frame of ``None`` as :class:`_SeqRuns` keeps it (lines count from 1, frames from 0)."""

# how an event of a run follows the one before it, one code each
_SAME_ROW = 0  # the next member of the same packed row
_NEXT_LINE = 1  # the next line, in the same frame
_NEXT_FRAME = 2  # the next line, opening the next frame
_MIXED = 3  # a run whose events follow in more than one way: its codes are spelled out


class _SeqRuns:
    """The ``(seq, position, line, frame)`` of every event :class:`SeqOrder` judges, in file
    order, kept as runs: a run is a stretch in which seq and position both advance by one and
    each line and frame follows the one before as a next packed member, a next line or a next
    line and frame. A run is one record in six ``array('q')`` columns (first seq, position,
    line and frame, size, and how its events follow each other: one code for the whole run, or
    where its codes start in :attr:`codes`, one byte an event, when the run mixes them, as
    packed rows between plain rows do). An event that continues no run (a seq, position, line
    or frame jump) opens one; one whose seq or position does not rise also opens a chunk, so
    each chunk is sorted by (seq, position) and :meth:`segments` merges the chunks.

    Memory: 48 bytes a run, plus a byte an event of a mixed run. The positional prefix is one
    run, a gap, a repeated block or a few displaced events a few runs; an irregular stretch
    (a jump at every event) costs a run an event, in the arrays, never a tuple."""

    def __init__(self, prefix: int) -> None:
        self.first_seq = array("q")
        self.first_position = array("q")
        self.first_line = array("q")
        self.first_frame = array("q")
        self.size = array("q")
        self.step = array("q")  # the run's code as ``-1 - code``, or where its codes start
        self.codes = bytearray()
        self.chunks = array("q")  # the index of each chunk's first run
        # the open run: its first event, its size and code, and where its last event stands
        self.seq = self.position = self.line = self.frame = 0
        self.open = self.code = 0
        self.step_at = 0  # where a mixed open run's codes start
        self.next_seq = self.next_position = -1
        self.last_line = self.last_frame = _NONE
        if prefix:
            # positions 0..prefix-1 held seqs 0..prefix-1; they are never reported (a seq's
            # first holder is never a repeat, and every seq below it is held), so no line
            self.start(0, 0, _NONE, _NONE)
            self.open = prefix
            self.next_seq = self.next_position = prefix

    def add(self, seq: int, position: int, line: int | None, frame: int | None) -> None:
        """Keep the next event in file order: it continues the open run or opens the next."""
        if line is None:
            line = _NONE
        if frame is None:
            frame = _NONE
        if seq == self.next_seq and position == self.next_position:
            last = self.last_line
            if frame == self.last_frame:
                code = _SAME_ROW if line == last else _NEXT_LINE if line == last + 1 else -1
            else:
                code = _NEXT_FRAME if frame == self.last_frame + 1 and line == last + 1 else -1
            if code >= 0:
                held = self.code
                if code != held:
                    if held == _MIXED:
                        self.codes.append(code)
                    elif self.open == 1:
                        self.code = code
                    else:  # the run's events stop following one another the same way
                        self.step_at = len(self.codes)
                        self.codes += bytes((held,)) * (self.open - 1)
                        self.codes.append(code)
                        self.code = _MIXED
                self.open += 1
                self.next_seq = seq + 1
                self.next_position = position + 1
                self.last_line = line
                self.last_frame = frame
                return
        if self.open:
            self.close()
            if seq < self.next_seq or position < self.next_position:
                self.chunks.append(len(self.size))
        self.start(seq, position, line, frame)

    def start(self, seq: int, position: int, line: int, frame: int) -> None:
        """Open a run at this event (the first run opens the first chunk)."""
        if not self.size and not self.open:
            self.chunks.append(0)
        self.seq = seq
        self.position = position
        self.line = self.last_line = line
        self.frame = self.last_frame = frame
        self.open = 1
        self.code = _SAME_ROW
        self.next_seq = seq + 1
        self.next_position = position + 1

    def close(self) -> None:
        """Move the open run into the columns."""
        self.first_seq.append(self.seq)
        self.first_position.append(self.position)
        self.first_line.append(self.line)
        self.first_frame.append(self.frame)
        self.size.append(self.open)
        self.step.append(self.step_at if self.code == _MIXED else -1 - self.code)
        self.open = 0

    def segments(self) -> Iterator[tuple[int, int, int, int, int]]:
        """Every event in (seq, position) order, as segments of runs: ``(seq, position, size,
        line, frame)``, the segment's events holding seqs and positions from ``seq`` and
        ``position`` on, and its first event's line and frame. The chunks are merged through a
        heap of their next segments, one entry a chunk; a segment ends where another chunk's
        next event comes between, so a seq's later holders are each a segment's first event."""
        if self.open:
            self.close()
        first_seq, first_position, size, step, codes = self.first_seq, self.first_position, self.size, self.step, self.codes
        chunks = self.chunks
        ends = [*chunks[1:], len(size)]
        heap = [(first_seq[r], first_position[r], c, r, 0, self.first_line[r], self.first_frame[r]) for c, r in enumerate(chunks)]
        heapify(heap)
        while heap:
            seq, position, c, r, k, line, frame = heappop(heap)
            n = size[r] - k
            if heap:
                other_seq, other_position = heap[0][0], heap[0][1]
                ahead = other_seq - seq  # this run's events before the other chunk's next one
                if ahead < n:
                    n = ahead + (position + ahead < other_position)
            at = step[r]
            yield seq, position, n, line, frame
            k += n
            if k < size[r]:
                if at < 0:
                    code = -1 - at
                    line += n if code != _SAME_ROW else 0
                    frame += n if code == _NEXT_FRAME else 0
                else:  # the codes of events k-n+1..k
                    lo = at + k - n
                    line += n - codes.count(_SAME_ROW, lo, lo + n)
                    frame += codes.count(_NEXT_FRAME, lo, lo + n)
                heappush(heap, (seq + n, position + n, c, r, k, line, frame))
            elif r + 1 < ends[c]:
                r += 1
                heappush(heap, (first_seq[r], first_position[r], c, r, 0, self.first_line[r], self.first_frame[r]))


@rule_walk(R.E2, R.S9, R.C1, types=EVERY_EVENT, reads=(RUNNING_SCAN, SCAN))
class SeqOrder:
    """E2: sorted seqs are 0..n-1 with no gap or repeat. S9: physical order strictly
    increases. C1: one note when either shows the traces of several writers.

    State: nothing while every head so far is an object whose seq is its position: the walk
    sits out until the running :class:`~._scan.TypeScan` meets the first other head and
    wakes it there (a packed run's members carry their positions too). From that head on,
    the ``(seq, position, line, frame)`` of every event with a safe seq, the positional prefix
    included, in a :class:`_SeqRuns` (E2 judges the sorted seqs, so it is decided in
    :meth:`finish`): a run of consecutive seqs at consecutive positions is one record, so a
    gap, a repeated block or a few displaced events cost a few records, and a log mixing
    packed and plain rows a byte an event besides; and the first 20 step-back seqs, their
    count and the highest seq so far (S9 is decided as the walk passes). Whether the jsonl
    loader keeps the prefix before a gap as a torn tail depends on a turn/end after it, so
    the gap findings wait for the end (the last turn/end is the scan's) and pass through the
    cap like any other. The members of a packed run are read one by one, as before: only a
    log whose seqs are not positions pays for it."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.events = ctx.events
        self.runs = ctx.packed_runs[1]
        self.kept: _SeqRuns | None = None
        self.keep: Callable[[int, int, int | None, int | None], None]  # kept.add, once there is kept
        self.prev: int | None = None
        self.backsteps: list[int] = []  # the first 20
        self.backstep_count = 0
        scan = running_scan(ctx)
        if scan is not None:
            self.types: Subscriptions = ()
            scan.on_first_misplaced.append(self.wake)
        else:  # no scan to wake it (a walk built outside a check): every head from the first
            self.kept = _SeqRuns(0)
            self.keep = self.kept.add

    def wake(self, index: int) -> None:
        """Every head before ``index`` held its position as seq: positions 0..index-1 held seqs
        0..index-1, never a gap nor a repeat themselves. Walk every head from ``index`` on."""
        self.kept = _SeqRuns(index)
        self.keep = self.kept.add
        self.prev = index - 1 if index else None
        self.types = EVERY_EVENT
        resubscribe(self.ctx)

    def visit(self, index: int, event: Event) -> list[Finding] | None:
        add = self.keep
        found: list[Finding] | None = None
        events = self.events
        for i in range(index, self.runs.get(index, index + 1)):
            ev = events[i]
            s = ev.seq
            if not (type(s) is int and 0 <= s <= MAX_SAFE_INTEGER) and not is_nonneg_safe_int(s):
                continue
            s = int(s)
            prev = self.prev
            if prev is not None and s <= prev:
                if self.backstep_count < 20:
                    self.backsteps.append(s)
                self.backstep_count += 1
                if found is None:
                    found = []
                found.append(self.ctx.finding(
                    R.S9,
                    f"seq {s} at line {ev.line} follows seq {prev} in file order: physical order must strictly increase",
                    event=ev,
                    context={"previousSeq": prev},
                ))
            self.prev = s if prev is None else max(prev, s)
            add(s, i, ev.line, ev.frame)
        return found

    def finish(self) -> Iterator[Finding]:
        kept = self.kept
        if kept is None:
            return
        ctx = self.ctx
        last_turn_end = scanned(ctx).last_turn_end
        expected = 0
        gaps: list[int] = []  # the first 20
        gap_count = 0
        zstd = ctx.log.compression == "zstd"
        # C1 speaks for the layers its gaps, repeats and steps back break, no more (a jsonl gap
        # after the last turn/end is a torn tail to the loader)
        noted: set[L] = set(RULES[R.S9].refused_by) if self.backstep_count else set()
        # a segment's seqs rise by one from its first, which alone may be reported: a repeat (its
        # seq's first holder came between it and any earlier segment, so ``expected`` is s + 1)
        # or a gap; the rest each meet ``expected`` in turn
        for s, i, n, line, frame in kept.segments():
            if s < expected:
                if gap_count < 20:
                    gaps.append(s)
                gap_count += 1
                repeat = ctx.finding(R.E2, f"seq {s} repeats: it was already used by an earlier event", seq=s,
                                     line=None if line == _NONE else line, frame=None if frame == _NONE else frame,
                                     context={"duplicateSeq": s})
                noted.update(repeat.refused_by)
                yield repeat
            elif s > expected:
                missing = list(range(expected, min(s, expected + 50)))
                if gap_count < 20:
                    gaps.append(expected)
                gap_count += 1
                refused: tuple[L, ...] = (L.FOLD, L.SEED, L.INVARIANTS, L.LOAD, L.RELEASED)
                if not zstd and i > last_turn_end:
                    # the jsonl loader keeps the prefix before the gap as a torn tail (SPJ:285-294)
                    refused = (L.FOLD, L.SEED, L.INVARIANTS, L.RELEASED)
                noted.update(refused)
                yield ctx.finding(
                    R.E2,
                    f"seq gap: expected {expected}, got {s} (missing {s - expected} seq{'s' if s - expected > 1 else ''})",
                    seq=s,
                    line=None if line == _NONE else line,
                    frame=None if frame == _NONE else frame,
                    refused_by=refused,
                    context={"expected": expected, "got": s, "missing": missing, "missingCount": s - expected},
                )
            expected = s + n
        if gap_count or self.backstep_count:
            # the loader's verdict is E2's (S9 never names it): it keeps the prefix before a gap in the jsonl
            # tail as a torn tail
            layers = RULES[R.C1].refused_by
            yield ctx.finding(
                R.C1,
                f"{gap_count} seq gap(s) or repeat(s) and {self.backstep_count} step(s) back in file order: "
                "the traces two writers sharing one session leave",
                context={"gaps": gaps, "backsteps": self.backsteps},
                refused_by=tuple(x for x in L if x in noted),
            )


_SCREEN_BLOCK = 256


def _is_lossy(line: Line) -> bool:
    """Whether an event line (any but the first) holds a non-lossless number: the reader's screen
    on its bytes, then an exact parse of a line the screen cannot clear."""
    return line.number != 1 and may_hold_lossy_number(line.data) and _lossy_token(line.text) is not None


def _suspects_by_block(lines: Sequence[Line]) -> list[Line]:
    """A log the reader did not build: its lines in blocks of ``_SCREEN_BLOCK`` whose joined
    text the screen hits."""
    out: list[Line] = []
    for start in range(1, len(lines), _SCREEN_BLOCK):
        block = lines[start : start + _SCREEN_BLOCK]
        if may_hold_lossy_number(b"\n".join(line.data for line in block)):
            out.extend(block)
    return out


class _Lossy(Exception):
    pass


def _raise_lossy_int(text: str) -> int | float:
    if text == "-0":
        raise _Lossy("-0")
    if len(text) > 17:  # beyond 2**53: the double JavaScript holds, which may be infinite
        return _raise_lossy_float(text)
    return int(text)


def _raise_lossy_float(text: str) -> float:
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")) or (v == 0 and text.lstrip().startswith("-")):
        raise _Lossy(text)
    return v


def _lossy_token(text: str) -> str | None:
    """The first number in ``text`` that JSON.parse turns into a non-lossless value
    (non-finite, or negative zero), else ``None``."""
    try:
        json.loads(text, parse_int=_raise_lossy_int, parse_float=_raise_lossy_float)
    except _Lossy as exc:
        return str(exc)
    except ValueError:
        return None
    return None


class _NegativeZero:
    """A ``-0`` token of a packed row, told apart from 0 (Python's json reads both as 0)."""


_NEG0 = _NegativeZero()


def _keep_negative_zero(text: str) -> Any:
    return _NEG0 if text.lstrip("-") == "0" and text.startswith("-") else int(text)


def _keep_negative_zero_float(text: str) -> Any:
    v = float(text)
    return _NEG0 if v == 0 and text.startswith("-") else v


@functools.lru_cache(maxsize=8)  # the members of one row are judged one after another
def _row_members_with_negative_zero(text: str) -> tuple[bool, ...] | None:
    """For a packed row whose only lossy numbers are ``-0``: per member, whether the event the
    official decoder expands (S ``expandRow``: turn, step and index copied into each member, seq
    ``seq0 + k``, time ``time0`` plus the gaps so far) holds a ``-0``; ``None`` where the row is
    not read so (another lossy number, or no row of that shape), and every member counts."""
    try:
        row = json.loads(text, parse_int=_keep_negative_zero, parse_float=_keep_negative_zero_float)
    except ValueError:
        return None
    data = row.get("data") if type(row) is dict else None
    if type(data) is not dict:
        return None
    members = data.get("args" if row.get("type") == "tool-call-chunks" else "texts")
    gaps = data.get("dt")
    if type(members) is not list or type(gaps) is not list or len(gaps) < len(members) - 1:
        return None
    if any(data.get(k) is _NEG0 for k in ("turn", "step", "index")):
        return (True,) * len(members)
    out, zero = [], row.get("time0") is _NEG0  # -0 + -0 is -0; any other sum is not
    for k in range(len(members)):
        if k:
            zero = zero and gaps[k - 1] is _NEG0
        out.append(zero)
    return tuple(out)


@rule_walk(R.E1, R.E3, R.E4, R.E5, R.E7, R.E8, R.R2, types=EVERY_EVENT)
class Envelope:
    """The per-event envelope checks of seed and load (S:1193-1282, SP:499-750): the envelope's
    fields and keys (E1, E8), lossless numbers (E4), and the type vocabulary: known (E3), not
    retired (E5), ignorable with a consumer (E7). The payloads of the types that have one are
    :class:`PayloadShape`'s.

    State: none per event; each event is judged as the walk passes it. The walk keeps the
    numbers of the lines holding a non-lossless number (a handful at most), screened as the
    loop reaches them from the ranges the reader's screen could not clear
    (``log.lossy_suspects``, which grows as lines are read; for a log the reader did not build,
    the lines a block screen flags up front), and its place in those ranges. A packed member's envelope is exact
    by construction, so members are skipped, unless their row's line holds a lossy
    number: then the head hands the whole run over (its members share that line)."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.events = ctx.events
        self.runs = ctx.packed_runs[1]
        version = ctx.version
        self.version = version
        self.known = known = KNOWN_TYPES.get(version if version is not None else 3, KNOWN_TYPES[3])
        log = ctx.log
        suspects = log.lossy_suspects
        if suspects is None:  # a log the reader did not build: its lines are all at hand
            suspects = [range(line.number, line.number + 1) for line in _suspects_by_block(log.lines)]
        self.suspects = suspects
        self.span = 0  # the first suspect range not yet screened through
        self.screened = 1  # every suspect line up to this one has been screened
        self.lossy_lines: set[int] = set()
        # the common case takes one branch: a known type in an exact envelope, with no retired form
        self.plain = known - RETIRED_TYPES - {"request/header"}
        if version == 0:  # the released migration reads a v0 hook/invoked's dialect (E5's retired name)
            self.plain = self.plain - {"hook/invoked"}

    def visit(self, index: int, ev: Event) -> Iterator[Finding] | None:
        # almost every log has no suspect range: then no line is lossy, and the walk screens nothing
        lossy_lines: Any = self.suspects
        if ev.member is not None:
            counts = self._released_counts(ev) if ev.member == 0 and self.version in (0, 1) else []
            if not lossy_lines or ev.line not in self._screen(ev.line):
                return iter(counts) if counts else None
            return itertools.chain(counts, self._run(index))
        raw = ev.raw
        # the common case, an exact envelope of a plain type, finds nothing
        if raw.__class__ is dict and not lossy_lines and _exact_envelope(raw):
            t = raw.get("type", MISSING)
            if t.__class__ is str and t in self.plain:
                return None
        return self._judge(ev)

    def _released_counts(self, head: Event) -> list[Finding]:
        """R2 of a packed row whose turn, step or index is a number but no count: the session's
        row check takes any number, the released codec a non-negative safe integer (V01:1774-1776)."""
        data = head.raw.get("data") if head.raw.__class__ is dict else None
        if data.__class__ is not dict:
            return []
        chunk = data.get("chunk")
        counts = {"turn": data.get("turn", MISSING), "step": data.get("step", MISSING),
                  "index": chunk.get("index", MISSING) if chunk.__class__ is dict else MISSING}  # unpacked into the chunk
        return [
            self.ctx.finding(
                R.R2, f"packed chunk row at line {head.line}: {key} must be a non-negative safe integer for the "
                f"released codec, got {_s(value)}", event=head, refused_by=(L.RELEASED,),
            )
            for key, value in counts.items() if not is_nonneg_safe_int(value)
        ]

    def _screen(self, upto: int | None) -> set[int]:
        """Screen the suspect lines through ``upto``, the line being handed over: the reader
        appends the ranges covering a line before that line's events, in line order, so the
        ranges from :attr:`span` on hold every suspect line not screened yet."""
        lossy = self.lossy_lines
        if upto is None or upto <= self.screened:
            return lossy
        spans, lines, k, start = self.suspects, self.ctx.log.lines, self.span, self.screened + 1
        while k < len(spans):
            span = spans[k]
            stop = min(span.stop, upto + 1)
            for n in range(max(span.start, start), stop):
                if _is_lossy(lines[n - 1]):
                    lossy.add(n)
            if stop < span.stop:  # the rest of this range is not read yet
                break
            k += 1
        self.span, self.screened = k, upto
        return lossy

    def _run(self, index: int) -> Iterator[Finding]:
        """A packed row on a lossy line: each member, the head and then the rest of its run."""
        events = self.events
        for i in range(index, self.runs.get(index, index + 1)):
            yield from self._judge(events[i])

    def _judge(self, ev: Event) -> Iterator[Finding]:
        ctx = self.ctx
        lossy_lines = self._screen(ev.line) if self.suspects else self.lossy_lines
        raw = ev.raw
        if raw.__class__ is not dict:
            yield ctx.finding(R.E1, f"event is not a JSON object (got {_s(raw)[:40]})", event=ev)
            return
        t = raw.get("type", MISSING)
        if _exact_envelope(raw) and (not lossy_lines or ev.line not in lossy_lines):
            if t.__class__ is str and t in self.plain:
                return
            if t.__class__ is not str:  # the one envelope field an exact envelope leaves unchecked
                yield from _envelope_fields(ctx, ev, raw, t)
        else:
            yield from _envelope_defects(ctx, ev, raw, t, raw.get("seq", MISSING), lossy_lines)
        if type(t) is not str:
            return
        if t in RETIRED_TYPES or (t == "request/header" and _is_record(raw.get("data")) and raw["data"].get("reason") == "fallback"):
            what = f'legacy {t} event' if t in RETIRED_TYPES else 'legacy request/header reason "fallback"'
            refused: tuple[L, ...] = (L.LOAD, L.RELEASED) if t == "mode/set" else (L.SEED, L.INVARIANTS, L.LOAD, L.RELEASED)
            if ctx.version == 1 and t == "request/header":  # format 1's released restore reads no reason (measured)
                refused = tuple(x for x in refused if x is not L.RELEASED)
            yield ctx.finding(R.E5, f"event uses unsupported {what}", event=ev, refused_by=refused)
            return
        if t not in self.known:
            if raw.get("ignorable") is True:
                # released's migration validates and keeps its three inventory types: they have a consumer
                if t not in IGNORABLE_CONSUMERS and t not in _RELEASED_EXTRA \
                        and not t.startswith(IGNORABLE_CONSUMER_PREFIXES):
                    yield ctx.finding(R.E7, f'ignorable event type "{t}" has no known consumer', event=ev)
            else:
                yield ctx.finding(
                    R.E3,
                    f'event type "{t}" is unknown to this harness and not marked ignorable',
                    event=ev,
                    # released's v0 migration renames a legacy compact/* type (V01:1923): only the loader refuses it
                    refused_by=(L.LOAD,) if self.version == 0 and t in _LEGACY_COMPACTION else None,
                )
            return
        if t == "hook/invoked" and self.version == 0:
            yield from _retired_dialect(ctx, ev, raw)

    def finish(self) -> None:
        return None


@functools.lru_cache(maxsize=16)  # a hostile header may name any version
def _shaped_types(version: int | None) -> dict[str, str]:
    """:class:`PayloadShape`'s subscriptions for ``version``: one object per version, shared by every
    check (the walk loop's dispatch is cached by its walks' subscription objects)."""
    known = KNOWN_TYPES.get(version if version is not None else 3, KNOWN_TYPES[3])
    shaped = {t: "message" for t in MESSAGE_TYPES if t in known}
    if "request/header" in known:
        shaped["request/header"] = "request_header"
    if version == 3 and "system/message" in known:
        shaped["system/message"] = "system_message"
    if version == 1:  # a title's messageSeqs: whether format 1's released restore reads a cited message
        shaped["session/title"] = "title"
    return shaped


@rule_walk(R.E6, R.E9, R.E10, types=(*sorted(MESSAGE_TYPES), "request/header", "system/message", "session/title"))
class PayloadShape:
    """The payload shapes seed and load assert (S:1215-1270) of the types that have one, whatever
    their envelope: messages (E6), a request/header's header (E10), a v3 system/message's plugin
    source (E9). A type the log's version does not know, or a retired form (a request/header whose
    reason is "fallback"), is :class:`Envelope`'s alone. Handed heads only: a packed run's
    members are chunks, which carry no payload of this kind. State: in a format-1 log, the user
    messages with content that is no array, held until the end, and the seqs titles cite: format
    1's released restore reads such a message's content only where a title cites it (V01
    ``assertTitleSources`` calls ``content.flatMap``)."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.types = _shaped_types(ctx.version)
        self.held: list[tuple[int, Finding]] = []
        self.cited: set[int] = set()
        self.headers: list[bool] = []  # per request/header in order: whether it lacks a config
        self.header_values: list[Any] = []  # per request/header in order: its data's header member
        self.header_events: list[Event] = []  # per request/header in order: the event
        self.at_anchor: int | None = None  # the header in force at the last assistant message
        self.headerless: list[tuple[int, Finding]] = []  # E10 findings of headers without config

    def message(self, index: int, ev: Event) -> Iterator[Finding] | None:
        raw = ev.raw
        t = raw["type"]
        if t == "assistant/message":  # the meter's usage anchor: it compares this header with the last
            self.at_anchor = len(self.headers) - 1 if self.headers else None
        # the common case, a well-formed message, finds nothing: no generator for it
        if message_shape_error(t, raw.get("data", MISSING)) is None:
            return None
        found = _message_shape(self.ctx, ev, raw, t)
        if self.ctx.version != 1 or t != "user/message" or not isinstance(raw.get("seq"), int):
            return found
        data = raw.get("data", MISSING)
        if _is_record(data) and type(data.get("content", MISSING)) is not list:
            self.held.extend((raw["seq"], f) for f in found)
            return None
        return found

    def title(self, index: int, ev: Event) -> None:
        data = ev.raw.get("data", MISSING)
        seqs = data.get("messageSeqs", MISSING) if _is_record(data) else MISSING
        if type(seqs) is list:
            self.cited.update(s for s in seqs if type(s) is int)
        return None

    def request_header(self, index: int, ev: Event) -> Iterator[Finding] | None:
        raw = ev.raw
        data = raw.get("data")
        self.headers.append(_meter_throws_on_header(data) and not _header_unreadable(data))
        self.header_values.append(data.get("header", MISSING) if _is_record(data) else MISSING)
        self.header_events.append(ev)
        if _is_record(data) and data.get("reason") == "fallback":
            return None
        found = list(_request_header(self.ctx, ev, raw))
        if any(f.context.get(_AT_ANCHOR) for f in found):
            self.headerless.extend((len(self.headers) - 1, f) for f in found)
            return None
        return iter(found)

    def system_message(self, index: int, ev: Event) -> Iterator[Finding] | None:
        return _system_message(self.ctx, ev, ev.raw)

    def finish(self) -> list[Finding] | None:
        last, anchor = len(self.headers) - 1, self.at_anchor
        # the meter compares the header in force at the last assistant message with the last one (TM measure)
        values = self.header_values
        throws = header_comparison_throws(values[anchor], values[last]) if anchor is not None else None
        if not self.held and not self.headerless and throws is None:
            return None
        out = [
            replace(f, refused_by=tuple(x for x in L if x in f.refused_by or x is L.RELEASED)) if seq in self.cited else f
            for seq, f in self.held
        ]
        # a header without config in either throws there
        compared = {anchor, last} if anchor is not None and (self.headers[anchor] or self.headers[last]) else set()
        # ... and, where both have configs and agree up to the tools, it calls every on the anchor's tools
        if not compared and throws == "tools" and anchor is not None:
            compared = {anchor}
        if not compared and throws == "stop" and anchor is not None:
            # callConfigEquals reads a stop that is no array (its length, or every): the released
            # migration's refusal of such a stop is G5's, the meter's is this one
            out.append(self.ctx.finding(
                R.E10, "request/header header config stop must be an array: the token meter's header "
                "comparison (callConfigEquals) throws on it", event=self.header_events[anchor],
                context={"problems": ["header config stop must be an array"]}, refused_by=(L.METER,)))
        for h, f in self.headerless:
            extra = {L.METER} if h in compared else set()
            if h == last and f.context.get(_TOOLS_KEPT):
                extra.add(L.WIRE)  # the request serializer sends the last header's tools (foldRequestHeader)
            if extra:
                out.append(replace(f, refused_by=tuple(x for x in L if x in f.refused_by or x in extra),
                                   severity=Severity.ERROR))
            else:
                out.append(f if f.refused_by else replace(f, severity=Severity.WARNING))
        return out


def _exact_envelope(raw: dict[str, Any]) -> bool:
    """Whether no E1, E8 or E4 check can fault ``raw``'s envelope but for its type (and a lossy
    number on its line, which is judged by line): seq a non-negative safe integer, time a safe
    integer, data present, no key outside the seven official ones, ignorable absent or true."""
    seq = raw.get("seq", MISSING)
    time = raw.get("time", MISSING)
    return (
        seq.__class__ is int and 0 <= seq <= MAX_SAFE_INTEGER
        and time.__class__ is int and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
        and "data" in raw and raw.keys() <= ENVELOPE and raw.get("ignorable", True) is True
    )


def _envelope_defects(
    ctx: CheckContext, ev: Event, raw: dict[str, Any], t: Any, seq: Any, lossy_lines: set[int]
) -> Iterator[Finding]:
    """E1 (seq, then the other envelope fields), E8 (extra keys), E4 (lossy numbers)."""
    if not is_nonneg_safe_int(seq):
        yield ctx.finding(R.E1, f"event seq must be a non-negative safe integer, got {_s(seq)}", event=ev)
    else:
        yield from _envelope_fields(ctx, ev, raw, t)
    extra = [k for k in raw if k not in ENVELOPE]
    if extra:
        yield ctx.finding(
            R.E8,
            f"event envelope has key(s) outside the seven official ones: {', '.join(extra)}",
            event=ev,
            context={"keys": extra},
        )
    if ev.line in lossy_lines:
        text = ctx.log.lines[ev.line - 1].text
        token = _lossy_token(text) or ""
        shown = token if len(token) <= 40 else f"{token[:24]}...({len(token)} characters)"
        # released refuses only a number where its validator reads one; its codec reads every number of a
        # packed row (seq0, time0, dt, turn, step, index: V01:1741-1777), and counts refuse -0 as they do 1e400
        released = released_refuses_lossy(ctx.version, raw) or (ev.member is not None and ctx.version in (0, 1))
        # seed and the invariants judge the expanded events: a row's -0 reaches one only where expandRow copies it
        expanded = _row_members_with_negative_zero(text) if ev.member is not None else None
        reaches = expanded is None or ev.member is None or ev.member >= len(expanded) or expanded[ev.member]
        yield ctx.finding(
            R.E4,
            f"event is not losslessly JSON-serializable: number {shown} parses to a non-finite or negative-zero value",
            event=ev,
            context={"token": shown},
            refused_by=(layers := tuple(x for x in (L.SEED, L.INVARIANTS, L.RELEASED)
                                        if (x is L.RELEASED and released) or (x is not L.RELEASED and reaches))),
            severity=None if layers else Severity.WARNING,
        )


def _envelope_fields(ctx: CheckContext, ev: Event, raw: dict[str, Any], t: Any) -> Iterator[Finding]:
    """``assertSessionEventEnvelope`` (S:1193): type, time, data and ignorable."""
    problems = []
    if type(t) is not str:
        problems.append(f"type must be a string, got {_s(t)}")
    if not is_safe_int(raw.get("time", MISSING)):
        problems.append(f"time must be a safe integer, got {_s(raw.get('time', MISSING))}")
    if "data" not in raw:
        problems.append("data is missing")
    ign = raw.get("ignorable", MISSING)
    if ign is not MISSING and ign is not True:
        problems.append(f"ignorable must be absent or true, got {_s(ign)}")
    if problems:
        # the fold reads only seq and surface metadata; every other reader checks the envelope (S:1193)
        yield ctx.finding(
            R.E1,
            "invalid event envelope: " + "; ".join(problems),
            event=ev,
            context={"problems": problems},
            refused_by=(L.SEED, L.INVARIANTS, L.LOAD, L.RELEASED),
        )


RETIRED_HOOK_DIALECTS = {"claude": "claude-code"}
"""Hook dialect names the released migration no longer accepts (V01:360 admits claude-code and
codex), each with the name that replaced it; older acp recordings carry ``claude``."""


def _retired_dialect(ctx: CheckContext, ev: Event, raw: dict[str, Any]) -> Iterator[Finding]:
    """E5 for a v0 hook/invoked whose dialect is a retired name: rc.8 reads past the dialect,
    and only the released migration refuses it ("dialect must be one of claude-code, codex")."""
    data = raw.get("data", MISSING)
    dialect = data.get("dialect", MISSING) if _is_record(data) else MISSING
    if dialect.__class__ is str and dialect in RETIRED_HOOK_DIALECTS:
        yield ctx.finding(
            R.E5,
            f'hook/invoked uses the retired hook dialect "{dialect}" (now "{RETIRED_HOOK_DIALECTS[dialect]}"): '
            "the session opens today, but the released migration refuses it",
            event=ev,
            context={"dialect": dialect},
            refused_by=(L.RELEASED,),
        )


def _legacy_upgrade(t: object, data: Any) -> Any:
    """The loader's upgrade of a pre-identity message (SP:665-726), or ``None`` when
    ``data`` is not a legacy shape."""
    if not _is_record(data):
        return None
    if t == "user/message":
        if "id" in data or "role" in data or "message" in data or "content" not in data or "source" not in data:
            return None
        return {**data, "id": "legacy", "role": "user"}
    if t == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return None
        prov = data["provenance"] if _is_record(data["provenance"]) else {}
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        return {**rest, "message": {"id": "legacy", "role": "assistant", "content": data["content"], "source": {**prov, "kind": "model"}}}
    if t == "tool/result":
        if "message" in data or "callId" not in data or "content" not in data or "isError" not in data:
            return None
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        block = {"type": "tool-result", "toolCallId": data["callId"], "content": data["content"], "isError": data["isError"]}
        return {**rest, "message": {"id": "legacy", "role": "user", "content": [block], "source": {"kind": "tool", "callId": data["callId"]}}}
    return None


def message_shape_error(t: object, data: Any) -> str | None:
    """``assertMessageEventShape`` (S:1246-1270): why ``data`` is not a valid message
    event of type ``t``, or ``None``."""
    message = data if t == "user/message" else (data.get("message", MISSING) if _is_record(data) else MISSING)
    if not _is_record(message) or not _nonempty_str(message.get("id")):
        return "lacks an identified message"
    role = "assistant" if t == "assistant/message" else "user"
    if message.get("role") != role:
        return f'message must have role "{role}"'
    source = message.get("source")
    if not _is_record(source) or not _nonempty_str(source.get("kind")):
        return "message has invalid source"
    content = message.get("content")
    if type(content) is not list:
        return "message has invalid content"
    if t == "assistant/message":
        if source.get("kind") != "model" or not (_nonempty_str(source.get("provider")) and _nonempty_str(source.get("model"))):
            return "message must have model source"
        return None
    if t != "tool/result":
        return None
    if source.get("kind") != "tool" or not _nonempty_str(source.get("callId")):
        return "message must have tool source"
    block = content[0] if content else None
    if len(content) != 1 or not _is_record(block) or block.get("type") != "tool-result" or type(block.get("content")) is not list:
        return "message must contain one tool-result block"
    if block.get("toolCallId", MISSING) != source.get("callId") or type(block.get("toolCallId")) is not str:
        return "message has mismatched tool call ids"
    return None


def _message_shape(ctx: CheckContext, ev: Event, raw: dict[str, Any], t: str) -> Iterator[Finding]:
    data = raw.get("data", MISSING)
    why = message_shape_error(t, data)
    if why is None:
        return
    upgraded = _legacy_upgrade(t, data) if ctx.version == 0 else None
    if upgraded is not None:
        after = message_shape_error(t, upgraded)
        raw_readers = _LEGACY_RAW_READERS[t]
        if after is None:
            # the loader and the released migration both upgrade it: the harness can use the session
            yield ctx.finding(
                R.E6,
                f"{t} {why}: a legacy pre-identity shape that the official loader and the released migration "
                f"upgrade on read; {_LEGACY_RAW_NAMES[t]} read it raw and refuse it",
                event=ev, refused_by=raw_readers, context={"legacy": True, "upgraded": True},
                severity=Severity.WARNING,
            )
            return
        # upgraded, it still breaks the shape: the loader and the released migration refuse it too
        refused = (L.SEED, L.INVARIANTS, L.LOAD, *(x for x in raw_readers if x is L.METER), L.RELEASED, L.WIRE)
        yield ctx.finding(
            R.E6, f"{t} {why}: a legacy shape that still fails once upgraded on read ({after}), so the official "
            "loader and the released migration refuse it",
            event=ev, refused_by=refused, context={"legacy": True, "upgraded": False},
        )
        return
    # of a current-looking malformed message, the token meter refuses only what its pricing trips on (a
    # message that is no object, content it cannot iterate, a null block, a block without what it
    # measures), on a surface event it prices
    message = data if t == "user/message" else (data.get("message", MISSING) if _is_record(data) else MISSING)
    content = message.get("content", MISSING) if _is_record(message) else MISSING
    uniterable = _is_record(message) and type(content) not in (list, str)
    # deriveEventMessage (S:278) hands the meter a null message of a user/message or tool/result as is: priced 0
    unpriced = message is None and t != "assistant/message"
    priced = "surfaceOp" in raw and not unpriced and meter_price_throws(content)  # content is MISSING: no object
    released = ctx.version != 1 or _released_v1_reads(t, raw, message, uniterable)
    layers = {L.SEED, L.INVARIANTS, L.LOAD, *((L.METER,) if priced else ()),
              *((L.RELEASED,) if released else ())}
    yield ctx.finding(R.E6, f"{t} {why}", event=ev, refused_by=tuple(x for x in L if x in layers))


def meter_price_throws(content: Any) -> bool:
    """Whether the token meter's ``estimateContent`` (TM:23-38) throws on a surface message's
    content: content that is not iterable, a null block, a tool-call block whose name or
    arguments has no length (as for a text), or a text or reasoning block whose text has no length (nothing or
    null is a TypeError; a number, a boolean or an object a NaN count its schema refuses; a
    string or an array is measured); walked without recursion."""
    stack = [content]
    while stack:
        blocks = stack.pop()
        if type(blocks) is str:
            continue  # for-of over a string yields characters, priced by their JSON length
        if type(blocks) is not list:
            return True
        for block in blocks:
            if block is None or block is MISSING:
                return True
            kind = _member(block, "type")
            if kind == "text" or kind == "reasoning":
                if type(_member(block, "text")) not in (str, list):
                    return True
                measured = []
            elif kind == "tool-call":
                measured = [_member(block, "name"), _member(block, "arguments")]
            else:
                measured = []
                if kind == "tool-result":
                    stack.append(_member(block, "content"))
            if any(type(value) not in (str, list) for value in measured):
                return True  # nothing or null: a TypeError; a number, boolean or object: a NaN count
    return False


def _member(value: Any, key: str) -> Any:
    return value.get(key, MISSING) if type(value) is dict else MISSING


def _released_v1_reads(t: str, raw: dict[str, Any], message: Any, uniterable: bool) -> bool:
    """Whether format 1's released restore, which takes a message as it is, trips on this malformed
    one where its relationships read it (V01 ``assertReleasedRelationships``): an assistant
    message's content it iterates for tool calls, an appended tool result's message and source, a
    user message's source."""
    if not _is_record(message):
        return t != "user/message" and (t != "tool/result" or raw.get("surfaceOp") == "append")
    if t == "assistant/message":
        return uniterable
    if t == "tool/result" and raw.get("surfaceOp") != "append":
        return False
    return not _is_record(message.get("source"))


_LEGACY_RAW_READERS = {
    "user/message": (L.SEED, L.INVARIANTS, L.WIRE),
    "assistant/message": (L.SEED, L.INVARIANTS, L.METER, L.WIRE),
    "tool/result": (L.SEED, L.INVARIANTS, L.METER, L.WIRE),
}
"""The official layers that read a legacy message raw and refuse it (measured): the seed and
invariant checks and the request serializer (which seeds the session first) always, the token
meter on a flat assistant or tool message (it reads ``data.message.content``), never on a user
message."""

_LEGACY_RAW_NAMES = {
    "user/message": "the seed and invariant checks (and the request serializer, which seeds first)",
    "assistant/message": "the seed and invariant checks, the token meter and the request serializer",
    "tool/result": "the seed and invariant checks, the token meter and the request serializer",
}


def _request_header(ctx: CheckContext, ev: Event, raw: dict[str, Any]) -> Iterator[Finding]:
    """rc.8 ``assertCurrentLlmShape`` for request/header (S:1215-1244), for v3 the catalog's
    omission rules (0.1.5 S:231-248), and two members the token meter reads as it finds them: a
    tools that is not an array (it calls ``every`` on it) and a null system (it reads its length).
    On format 0 the released migration refuses both, the request serializer sends (or throws on)
    them, and the seed reads a null system's length too; on any other format only the meter reads
    them, and its refusal alone is still an error (a warning never answers for a refusal)."""
    data = raw.get("data", MISSING)
    problems = request_header_problems(ctx.version, data)
    if not problems:
        return
    v0 = ctx.version == 0
    layers: set[L] = set()
    if any(p not in _METER_READS and p != _TOOLS_NOT_ARRAY for p in problems):
        # format 1's released restore takes a request/header's payload as it is (measured), but for
        # reading its header's config.provider, which throws where the meter's read does
        released = ctx.version != 1 or _meter_throws_on_header(data)
        layers.update(x for x in _E10_LAYERS if released or x is not L.RELEASED)
        if _header_unreadable(data):
            layers.add(L.METER)  # canonicalHeader reads header.adapterDefaults as the meter folds the event
        if _LACKS_CONFIG in problems:
            layers.add(L.WIRE)  # the request serializer reads the provider (measured)
    for p in problems:
        if p in _METER_READS:
            layers.update(_METER_READS[p] if v0 else (L.METER,))
    tools_at_anchor = False
    if _TOOLS_NOT_ARRAY in problems:
        tools_layers, tools_at_anchor = tools_reading(data["header"]).layers(ctx.version)
        layers |= tools_layers
    # a header without config, or with tools kept that are no array: the meter trips only as it compares the
    # header in force at the last assistant message with the last one (TM measure), and the serializer sends
    # the last header's tools only, both of which PayloadShape decides once it knows the last header
    at_anchor = (_meter_throws_on_header(data) and not _header_unreadable(data)) or tools_at_anchor
    refused_by = tuple(x for x in L if x in layers)
    yield ctx.finding(
        R.E10, "request/header " + "; ".join(problems), event=ev,
        context={"problems": problems, **({_AT_ANCHOR: True} if at_anchor else {}),
                 **({_TOOLS_KEPT: True} if tools_at_anchor else {})},
        refused_by=refused_by,
        # no layer reads the member but as the canonical header drops it: the harness can use the log
        severity=Severity.WARNING if not refused_by and not at_anchor else None,
    )


_AT_ANCHOR = "meterAtAnchor"
"""E10 context: whether the meter refuses the header depends on the log's last assistant message."""

_TOOLS_KEPT = "toolsKept"
"""E10 context: the header keeps tools that are no array, which the request serializer sends (and the
provider refuses) where the header is the log's last (:mod:`._meter_header`)."""


def _header_unreadable(data: Any) -> bool:
    """Whether the meter's ``canonicalHeader`` throws folding the request/header: its data or
    header is null or absent (a property read on them)."""
    if type(data) is not dict:
        return data is None or data is MISSING
    header = data.get("header", MISSING)
    return header is None or header is MISSING


_LACKS_CONFIG = "lacks provider/model"
_TOOLS_NOT_ARRAY = "header tools must be an array"
_SYSTEM_NULL = "header system must be a string (got null)"
_METER_READS = {
    _SYSTEM_NULL: (L.SEED, L.METER, L.RELEASED, L.WIRE),
}
"""The problems the token meter trips on, and the layers refusing each in a format-0 log (measured);
a tools that is no array is :mod:`._meter_header`'s to decide."""


def request_header_problems(version: int | None, data: Any) -> list[str]:
    """What E10 finds wrong with a request/header's ``data`` (see :func:`_request_header`)."""
    header = data.get("header", MISSING) if _is_record(data) else MISSING
    header = header if _is_record(header) else None
    config = header.get("config", MISSING) if header is not None else MISSING
    problems: list[str] = []
    if not (_is_record(config) and _nonempty_str(config.get("provider")) and _nonempty_str(config.get("model"))):
        problems.append(_LACKS_CONFIG)
    else:
        effort = config.get("reasoningEffort", MISSING)
        if effort is not MISSING and not _nonempty_str(effort):
            problems.append("has an invalid reasoningEffort")
        defaults = header.get("adapterDefaults", MISSING) if header is not None else MISSING
        if defaults is not MISSING and (
            not _is_record(defaults)
            or any(k not in ("reasoningEffort", "maxTokens") for k in defaults)
            or any(v is not True for v in defaults.values())
            or (defaults.get("reasoningEffort") is True and "reasoningEffort" not in config)
            or (defaults.get("maxTokens") is True and "maxTokens" not in config)
        ):
            problems.append("has invalid adapterDefaults")
    if version == 3 and header is not None:
        if "system" in header:
            problems.append("must omit header.system (system prompts are system/message events in v3)")
        if header.get("tools", MISSING) == []:
            problems.append("must omit an empty tools list")
        if header.get("adapterDefaults", MISSING) == {}:
            problems.append("must omit an empty adapterDefaults")
    if header is not None and header.get("tools", []).__class__ is not list:
        problems.append(_TOOLS_NOT_ARRAY)
    if header is not None and "system" in header and header["system"] is None:
        problems.append(_SYSTEM_NULL)
    return problems


_E10_LAYERS = (L.SEED, L.INVARIANTS, L.LOAD, L.RELEASED)


def _meter_throws_on_header(data: Any) -> bool:
    """The meter reads ``data.header.adapterDefaults`` then ``data.header.config.provider``:
    a JavaScript property read on null/undefined throws there (measured)."""

    def read(value: Any, key: str) -> Any:
        return value.get(key, MISSING) if type(value) is dict else MISSING

    if data is None or data is MISSING:
        return True
    header = read(data, "header")
    if header is None or header is MISSING:
        return True
    config = read(header, "config")
    return config is None or config is MISSING


def _system_message(ctx: CheckContext, ev: Event, raw: dict[str, Any]) -> Iterator[Finding]:
    data = raw.get("data", MISSING)
    message = data.get("message", data) if _is_record(data) else MISSING
    if not _is_record(message) or message.get("role") != "system":
        yield ctx.finding(R.E9, 'system/message must have role "system"', event=ev)
        return
    source = message.get("source")
    if not _is_record(source) or source.get("kind") != "plugin" or not _nonempty_str(source.get("plugin")):
        yield ctx.finding(R.E9, "system/message must have plugin source", event=ev)
