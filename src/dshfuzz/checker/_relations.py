"""G4: the released relation walk (``assertReleasedArtifactRelationships``, V01:2270-2584), the
checker's own reading of it, written from the official source, not from the reference oracle
that judges the checker (a differential between the two must be able to disagree).

Released walks every record of its inventory once, in log order, and throws at the first
relation it refuses: an out-of-order turn, step or tool lifecycle, a surface replacement off
the current surface, an uncited title source, a delivery marker naming another session, a
record that is no JSON object, a property read of ``null`` (V8's TypeError), or one of the
relations G4 names (compaction, llm/retry, command and code-dispatch records, and a delivery
marker of the walked generation). G4 reports
that first refusal when it is one of the latter, and nothing otherwise: the others are other
rules' findings, and released never reaches what comes after its first refusal.

Equality is JavaScript's ``===`` (numbers by value, containers by identity), ``Map``/``Set``
membership SameValueZero, which JSON values share with ``===``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from dshfuzz.contracts.js import deep_equal_json, js_string, strict_equal
from dshfuzz.contracts.rules import RuleId
from dshfuzz.model import MISSING, Event, dumps

from ._context import CheckContext
from ._finding import Finding
from ._migration import LEGACY_SOURCE_TYPES, RELEASED_V0_EVENT_TYPES
from ._run import resubscribe, rule_walk

__all__ = ["ReleasedRelations"]

_LEGACY_COMPACTION = tuple(sorted(kind for kind in LEGACY_SOURCE_TYPES if kind.startswith("compact/")))
_SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})
_BOUNDARIES = frozenset({"turn/start", "turn/end"})
_KEPT = frozenset({"user/message", "command/run", "command/done", "compaction/start", "compaction/end",
                   "session/end-seed"})
"""The records a later check reads back: a title's cited message, a command/done's source, and
the seed boundary that leaves a compaction open (``inheritedOrphanCompactionStarts``)."""
_G4_CODES = ("compaction-", "retry-", "command-", "ptc-", "delivery-")
_REPAIR_TEXT = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
_TITLE_PROMPT = "Generate the session title from this JSON array of human messages:\n"


class _Refused(Exception):
    """Released throws here: ``code`` names the relation (G4 reports the codes of ``_G4_CODES``)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Later(Exception):
    """A check reads a position the loop has not handed yet: it waits until ``position`` has been."""

    def __init__(self, position: float) -> None:
        self.position = position


_MALFORMED = "malformed-event"


def _renamed(kind: str) -> str:
    """A legacy compact/* type as the migration renames it."""
    return "compaction/" + kind[len("compact/"):] if kind.startswith("compact/") else kind


def _key(value: Any) -> Any:
    """A dict key equal for two JSON values exactly when they are ``===`` (a container by its
    ``id()``: whoever stores such a key keeps the container alive, see ``held``)."""
    kind = value.__class__
    if kind is int or kind is float or kind is str:
        return value  # 1 and 1.0 share a key, as they are ===; a string never equals a number
    if kind is bool:
        return (kind, value)  # True == 1 in Python, not in JavaScript
    if kind is dict or kind is list:
        return (kind, id(value))
    return value  # null, undefined


def _same(a: Any, b: Any) -> bool:
    """``a === b``; two ints or two strings are compared inline."""
    kind = a.__class__
    if kind is b.__class__ and (kind is int or kind is str):
        same: bool = a == b
        return same
    return strict_equal(a, b)


def _prop(value: Any, key: str | int) -> Any:
    """``value[key]`` as V8 reads a JSON value; a read of null or undefined refuses the log."""
    if value is None or value is MISSING:
        raise _Refused(_MALFORMED, f"Cannot read properties of {js_string(value)} (reading '{js_string(key)}')")
    kind = value.__class__
    if kind is dict:
        return value.get(key if key.__class__ is str else js_string(key), MISSING)
    if kind is list or kind is str:
        units = value if kind is list or value.isascii() else _utf16(value)
        if key == "length":
            return len(units)
        index = key if key.__class__ is int else _index(key)
        return units[index] if index is not None and index < len(units) else MISSING
    return MISSING


def _utf16(text: str) -> list[str]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i:i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(raw), 2)]


def _index(key: Any) -> int | None:
    """The array index ``events[key]`` reads (a property key is ``String(key)``), ``None`` for none."""
    kind = key.__class__
    if kind is int:
        return key if key >= 0 else None
    if kind is float:
        return int(key) if key == key and key not in (float("inf"), float("-inf")) and key.is_integer() and key >= 0 else None
    if kind is list:
        return _index(js_string(key))  # String([3]) is "3"
    if kind is str and key.isascii() and key.isdigit() and (key == "0" or key[0] != "0"):
        return int(key)
    return None


def _record(value: Any, what: str) -> dict[str, Any]:
    """``releasedV0Record``: a JSON object, else released refuses the log."""
    if value.__class__ is not dict:
        raise _Refused("released-not-object", f"{what} must be a JSON object")
    return value


def _iterate(value: Any) -> Any:
    """``for (const x of value)``: an array, or a string's characters; anything else throws."""
    if value.__class__ is list or value.__class__ is str:
        return value
    raise _Refused(_MALFORMED, f"{js_string(value)} is not iterable")


_Check = Callable[..., None]


@rule_walk(RuleId.G4, types=(*sorted(RELEASED_V0_EVENT_TYPES), *_LEGACY_COMPACTION))
class ReleasedRelations:
    """G4: released's relation walk, decided record by record as the streamed loop hands them.

    Each record of released's inventory (format 0: after the migration's normalisation of the
    relation records, :class:`_RelationMigration`) is checked at once against the pending state
    the walk keeps: the open turn and step and their counters, the open step's advertised tool
    calls, the surface (node seqs, with each node's first position), the open compaction, and
    per retry chain, scheduled attempt, code-dispatch call and command id the few values a later
    record is compared with. Three checks read what the loop may not have handed yet:

    - a title reads the user/message at each cited position (``texts``: the joined text of each
      human user/message by position, O(human user messages));
    - a successful command/done asks whether its sourceEventSeq's position holds a command record
      (``commands``: those positions, O(command records));
    - a turn boundary inside an open compaction is allowed when a seed boundary anywhere in the log
      leaves that compaction open (``stale``: the start seqs the orphan scan has found, O(compactions)).

    Such a check *waits* in ``waiting`` (with its record, where a finding would be located) and is
    retried once the loop has handed the position it reads, or at :meth:`finish`, where the log's
    length and the whole orphan scan are known; the walk goes on meanwhile, since none of these
    checks changes the state. The verdict is the first refusal in log order: the first waiting
    check that refuses, else the refusal the walk met. Once that is known the walk unsubscribes;
    after a refusal with checks still waiting it only records what they read."""

    # Slots: past 30 attributes CPython gives an instance a plain dict, which every read of the
    # chunk shortcut pays for. ``types`` alone stays in that dict (the class attribute the walk
    # registry sets is its default, which a slot of that name would replace).
    __slots__ = ("awaited", "chains", "command_ids", "commands", "compaction", "ctx", "done", "final", "first_at",
                 "handed", "header", "held", "migration", "next_step", "next_turn", "open_step", "open_turn",
                 "orphan", "provider", "ptc_roots", "ptc_starts", "refusal", "retry_ids", "scheduled", "stale",
                 "started", "surface", "texts", "tools", "waiting", "__dict__")

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        assert ctx.log.header is not None, "the relation walk runs on a log with a versioned header"
        header = ctx.log.header.raw
        self.header = header if header.__class__ is dict else {}
        self.open_turn: Any = None
        self.open_step: Any = None
        self.provider: Any = MISSING  # the open request/header's provider
        self.next_turn: Any = 1
        self.next_step: Any = 1
        self.surface: list[Any] = []
        self.first_at: dict[Any, int] = {}  # node key -> its first position on the surface
        self.tools: dict[Any, list[Any]] = {}  # call key -> [call id, name, arguments, started]
        self.compaction: list[Any] | None = None  # [id, sourceCommandId, turn, start seq, summarised]
        self.chains: dict[tuple[Any, ...], tuple[Any, Any]] = {}  # chain keys -> (retry, retryId) of its last
        self.retry_ids: set[Any] = set()
        self.scheduled: dict[tuple[Any, Any], tuple[Any, Any]] = {}  # (retryId, retry) -> the first's (turn, step)
        self.started: set[tuple[Any, Any]] = set()
        self.ptc_roots: dict[Any, Any] = {}
        self.ptc_starts: dict[Any, list[Any] | None] = {}  # subCallId -> [root, parent, name, arguments]; None once settled
        self.command_ids: set[Any] = set()
        self.held: list[Any] = []  # the containers behind stored keys (an id() must not be reused)
        self.texts: dict[int, str] = {}
        self.commands: set[int] = set()
        self.stale: set[Any] = set()
        self.orphan: Any = MISSING  # the orphan scan's open compaction/start seq
        self.handed = -1
        self.final = False
        self.waiting: deque[tuple[int, Event, _Check, tuple[Any, ...]]] = deque()
        self.awaited: float = -1  # the position the first waiting check reads next
        self.refusal: tuple[int, Event, _Refused] | None = None  # the walk's own, while checks before it wait
        self.done = False  # the verdict is known
        self.types: dict[str, str] | tuple[()]
        if ctx.version == 0:
            self.migration = _RelationMigration(self.header.get("id", MISSING))
            self.types = _HANDLERS_V0
        else:
            self.types = _HANDLERS_V1

    # -- the loop's handlers

    def visit(self, index: int, event: Event) -> list[Finding] | None:
        return self._walk(index, event, event.raw)

    def chunk(self, index: int, event: Event) -> list[Finding] | None:
        """An assistant/chunk head, the commonest record: one of the open step (integer turn and step
        equal to the open ones, nothing waiting) passes the general walk unchanged, so it is decided
        here; any other goes through :meth:`_walk`."""
        raw = event.raw
        if not self.waiting and self.refusal is None:
            data = raw.get("data")
            if data.__class__ is dict:
                turn, step, open_turn, open_step = data.get("turn"), data.get("step"), self.open_turn, self.open_step
                if turn.__class__ is int and step.__class__ is int and open_turn.__class__ is int \
                        and open_step.__class__ is int and turn == open_turn and step == open_step:
                    self.handed = index
                    return None
        return self._walk(index, event, raw)

    def migrated(self, index: int, event: Event) -> list[Finding] | None:
        return self._walk(index, event, self.migration.normalise(event.raw))

    def finish(self) -> list[Finding] | None:
        self.final = True
        return self._settle() if self.waiting or self.refusal is not None else None

    # -- one record

    def _walk(self, index: int, event: Event, raw: dict[str, Any]) -> list[Finding] | None:
        kind = raw["type"]
        self.handed = index
        if kind in _KEPT:
            self._keep(index, kind, raw)
        if self.waiting and index >= self.awaited:
            found = self._settle()
            if self.done:
                return found
        if self.refusal is not None:  # only the waiting checks are left
            return None
        try:
            seq = raw.get("seq", MISSING)
            data = raw.get("data", MISSING)
            if data.__class__ is not dict:
                raise _Refused("released-not-object", f"{kind} {js_string(seq)} data must be a JSON object")
            if kind in _SURFACE:
                self._apply_surface(raw, kind, seq)
            if kind in _BOUNDARIES and self.compaction is not None:
                self._check(index, event, self._crossing, self.compaction[3], kind)
            check = _CHECKS.get(kind)
            if check is not None:
                check(self, index, event, raw, data, seq)
        except _Refused as refused:
            self.refusal = (index, event, refused)
            found = self._settle()
            if not self.done:  # checks still wait: the walk now records only what they read
                assert isinstance(self.types, dict), "only a decided walk has unsubscribed"
                self.types = {k: v for k, v in self.types.items() if _renamed(k) in _KEPT}
                resubscribe(self.ctx)
            return found
        return None

    def _check(self, index: int, event: Event, check: _Check, *arguments: Any) -> None:
        """Run ``check`` now, or queue it when it reads what the loop has not handed yet."""
        if self.waiting:  # a check decided now must not overtake an earlier waiting one
            self.waiting.append((index, event, check, arguments))
            return
        try:
            check(*arguments)
        except _Later as later:
            self.awaited = later.position
            self.waiting.append((index, event, check, arguments))

    def _settle(self) -> list[Finding] | None:
        """Decide the waiting checks in log order, up to the first still waiting; once none waits,
        the verdict is known (a refusal met meanwhile is the last candidate)."""
        waiting = self.waiting
        while waiting:
            index, event, check, arguments = waiting[0]
            try:
                check(*arguments)
            except _Later as later:
                self.awaited = later.position
                return None
            except _Refused as refused:
                waiting.clear()
                return self._decided(index, event, refused)
            waiting.popleft()
        self.awaited = -1
        if self.refusal is not None:
            return self._decided(*self.refusal)
        return None

    def _decided(self, index: int, event: Event, refused: _Refused) -> list[Finding] | None:
        """The walk's verdict: a finding when it is a relation G4 names; the walk stops listening."""
        self.done = True
        self.refusal = None
        self.waiting.clear()
        self.types = ()
        resubscribe(self.ctx)
        self.texts.clear()
        self.held.clear()
        if not refused.code.startswith(_G4_CODES):
            return None
        return [self.ctx.finding(RuleId.G4, refused.message, event=event, context={"code": refused.code})]

    def _hold(self, value: Any) -> None:
        if value.__class__ is dict or value.__class__ is list:
            self.held.append(value)

    def _keep(self, index: int, kind: str, raw: dict[str, Any]) -> None:
        """What a later check reads back of this record."""
        if kind == "user/message":
            text = _human_text(raw)
            if text is not None:
                self.texts[index] = text
        elif kind == "command/run" or kind == "command/done":
            self.commands.add(index)
        elif kind == "compaction/start":
            self.orphan = raw.get("seq", MISSING)
        elif kind == "compaction/end":
            self.orphan = MISSING
        else:  # session/end-seed leaves the compaction open: a later turn boundary may cross it
            if self.orphan is not MISSING:
                self._hold(self.orphan)
                self.stale.add(_key(self.orphan))
                self.awaited = -1  # a crossing waiting for this may pass now
            self.orphan = MISSING

    def _read(self, key: Any) -> int | None:
        """The position ``artifact.events[key]`` reads, ``None`` for none; :class:`_Later` when the
        loop has not handed it yet."""
        position = _index(key)
        if position is None or self.final:
            return position
        if position > self.handed:
            raise _Later(position)
        return position

    # -- the waiting checks

    def _crossing(self, start: Any, kind: str) -> None:
        if _key(start) not in self.stale:
            if not self.final:
                raise _Later(float("inf"))
            raise _Refused("compaction-crossed", f"{kind} crosses an open compaction")

    def _title_sources(self, kind: str, data: dict[str, Any], seq: Any) -> None:
        """``assertTitleSources``: every cited seq is a human user/message; a user title cites
        none; a title request frames exactly the cited texts."""
        seqs = data.get("messageSeqs", MISSING)
        if kind == "session/title":
            source = _record(data.get("source", MISSING), f"session/title {js_string(seq)} source")
            if _same(_prop(seqs, "length"), 0) != _same(source.get("kind", MISSING), "user"):
                raise _Refused("title-user-kind", "messageSeqs must be empty exactly for a user title")
        selected = []
        for cited in _iterate(seqs):
            position = self._read(cited)
            text = None if position is None else self.texts.get(position)
            if text is None:  # no record there, or no human user/message whose text reads
                raise _Refused("title-source", "messageSeqs must cite earlier human user/message events")
            selected.append({"seq": cited, "text": text})
        if kind == "session/title-llm-request":
            _title_request(data.get("messages", MISSING), selected)

    def _command_source(self, command_id: Any, source: Any) -> None:
        position = self._read(source)
        if position is not None and position in self.commands:
            raise _Refused("command-done-source", f"command/done {js_string(command_id)} has invalid sourceEventSeq")

    # -- the surface

    def _apply_surface(self, raw: dict[str, Any], kind: str, seq: Any) -> None:
        """``applySurface``: an append adds the record's seq; a replacement swaps an exact current
        span, every node of which its sourceEventSeqs cite, for the record's seq."""
        operation = raw.get("surfaceOp", MISSING)
        if operation == "append" and operation.__class__ is str:
            self._append(seq)
            return
        if operation is MISSING:
            raise _Refused("surface-op-missing", f"{kind} requires a surfaceOp marker")
        start = self._position(_prop(operation, "start"))
        end = self._position(_prop(operation, "end"))
        if start < 0 or end < start:
            raise _Refused("replace-range-off-surface", f"{kind} replacement range is not on the current surface")
        cited = raw.get("sourceEventSeqs", MISSING)
        sources = {_key(s) for s in cited} if cited.__class__ is list else set()
        if any(_key(node) not in sources for node in self.surface[start:end + 1]):
            raise _Refused("replace-missing-shadowed", f"{kind} replacement sourceEventSeqs omit a shadowed surface node")
        first_at = self.first_at
        for node in self.surface[start:]:  # the span goes and the nodes after it move
            key = _key(node)
            if first_at.get(key, -1) >= start:
                del first_at[key]
        self.surface[start:end + 1] = [seq]
        for position in range(start, len(self.surface)):
            first_at.setdefault(_key(self.surface[position]), position)

    def _append(self, seq: Any) -> None:
        self.first_at.setdefault(seq if seq.__class__ is int else _key(seq), len(self.surface))
        self.surface.append(seq)

    def _position(self, seq: Any) -> int:
        """``surface.indexOf(seq)``."""
        return self.first_at.get(_key(seq), -1)

    def _current_span(self, data: dict[str, Any], what: str) -> None:
        """``assertCurrentSurfaceSpan``: shadowedSeqs name exactly the surface from shadowedRange's
        start to its end."""
        span = data.get("shadowedRange", MISSING)
        seqs = data.get("shadowedSeqs", MISSING)
        start = self._position(_prop(span, "start"))
        end = self._position(_prop(span, "end"))
        expected = [] if start < 0 or end < start else self.surface[start:end + 1]
        if not _same(len(expected), _prop(seqs, "length")) or any(
                not _same(node, _prop(seqs, i)) for i, node in enumerate(expected)):
            raise _Refused("compaction-span", f"{what} shadowedSeqs do not name an exact current surface span")

    # -- turns, steps and tool lifecycles

    def _open_step(self, kind: str, data: dict[str, Any]) -> None:
        """``requireOpenStep``."""
        turn, step = data.get("turn", MISSING), data.get("step", MISSING)
        open_turn, open_step = self.open_turn, self.open_step
        if turn.__class__ is int and step.__class__ is int and open_turn.__class__ is int \
                and open_step.__class__ is int and turn == open_turn and step == open_step:
            return  # the common case, without the general ===
        if open_turn is None or open_step is None or not _same(turn, open_turn) or not _same(step, open_step):
            raise _Refused("not-in-open-step", f"{kind} does not match an open turn and step")

    def _unresolved(self, boundary: str) -> None:
        """``assertNoUnresolvedTools``: the first unsettled call's id, unless that id is undefined."""
        for entry in self.tools.values():
            if entry[0] is not MISSING:
                raise _Refused("unresolved-tool-call", f"{boundary} leaves unresolved tool call {js_string(entry[0])}")
            return

    def turn_start(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        turn = data.get("turn", MISSING)
        if self.open_turn is not None or not _same(turn, self.next_turn):
            raise _Refused("turn-out-of-order", "turn/start does not open the expected turn")
        self.open_turn, self.open_step, self.next_step = turn, None, 1
        self.tools.clear()

    def turn_end(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        if not _same(self.open_turn, data.get("turn", MISSING)):
            raise _Refused("turn-end-unmatched", "turn/end has no matching open turn")
        self._unresolved("turn/end")
        if self.open_step is not None:
            raise _Refused("turn-end-step-open", "turn/end crosses an open step")
        self.open_turn = None
        self.next_turn = self.next_turn + 1

    def step_start(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        step = data.get("step", MISSING)
        if not _same(self.open_turn, data.get("turn", MISSING)) or self.open_step is not None \
                or not _same(step, self.next_step):
            raise _Refused("step-mismatch", "step/start does not match the open turn and next step")
        self.open_step = step

    def step_end(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._open_step("step/end", data)
        self._unresolved("step/end")
        self.tools.clear()
        self.open_step = None
        self.next_step = self.next_step + 1

    def assistant_chunk(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._open_step("assistant/chunk", data)  # a packed run's members share their head's turn and step

    def assistant_message(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._open_step("assistant/message", data)
        message = data.get("message", MISSING)
        if message.__class__ is not dict:  # the label only when it refuses
            _record(message, f"assistant/message {js_string(seq)} message")
        tools = self.tools
        for block in _iterate(message.get("content", MISSING)):
            if block.__class__ is not dict:
                _prop(block, "type")  # null throws; no other value has a type
                continue
            if block.get("type") != "tool-call":
                continue
            call_id = block.get("id", MISSING)
            key = _key(call_id)
            if key in tools:
                raise _Refused("duplicate-advertised-call", "assistant/message repeats an advertised tool call")
            tools[key] = [call_id, block.get("name", MISSING), block.get("arguments", MISSING), False]

    def tool_call(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._open_step("tool/call", data)
        entry = self.tools.get(_key(data.get("callId", MISSING)))
        if entry is None or entry[3] or not _same(entry[1], data.get("name", MISSING)) \
                or not _same(entry[2], data.get("arguments", MISSING)):
            raise _Refused("tool-call-unadvertised", "tool/call does not match one advertised tool call")
        entry[3] = True

    def tool_result(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        if not _same(raw.get("surfaceOp", MISSING), "append"):
            if self.open_turn is None:
                raise _Refused("tool-result-replace-outside-turn", "tool/result replacement is outside an open turn")
            return
        self._open_step("tool/result", data)
        message, error = data.get("message", MISSING), data.get("error", MISSING)
        source: Any = message.get("source", MISSING) if message.__class__ is dict else MISSING
        if source.__class__ is not dict or (error is not MISSING and error.__class__ is not dict):
            label = f"tool/result {js_string(seq)}"  # the label only when it refuses
            _record(message, f"{label} message")
            _record(source, f"{label} source")
            _record(error, f"{label} error")
        call_id = source.get("callId", MISSING)
        key = _key(call_id)
        entry = self.tools.get(key)
        if entry is None:
            raise _Refused("tool-result-unadvertised", "tool/result has no advertised tool lifecycle")
        if not entry[3] and not _not_started_repair(raw, message, call_id, error, seq):
            raise _Refused("tool-result-not-repair", "tool/result is not the exact TOOL_NOT_STARTED repair")
        del self.tools[key]

    # -- requests, code dispatch, retries

    def request_header(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        if self.open_turn is None:
            raise _Refused("outside-turn", "request/header is outside an open turn")
        self.provider = _prop(_prop(data.get("header", MISSING), "config"), "provider")

    def request_context(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        if self.open_turn is None:
            raise _Refused("outside-turn", "request/context is outside an open turn")

    def code_dispatch(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        kind = raw["type"]
        if self.open_turn is None:  # V01:2378; no other layer (T1's invariants included) refuses a dispatch there
            raise _Refused("ptc-outside-turn", f"{kind} is outside an open turn")
        root, parent, child = data.get("rootCallId", MISSING), data.get("parentCallId", MISSING), data.get("subCallId", MISSING)
        child_key = _key(child)
        known = self.ptc_roots.get(child_key, MISSING)
        if known is not MISSING and not _same(known, root):
            raise _Refused("ptc-root-changed", f"{kind} changes its rootCallId")
        if not _same(parent, root) and not _same(self.ptc_roots.get(_key(parent), MISSING), root):
            raise _Refused("ptc-parent", f"{kind} parentCallId does not belong to rootCallId")
        if kind == "tool/code-dispatch-start":
            if child_key in self.ptc_starts:
                raise _Refused("ptc-start-repeated", "tool/code-dispatch-start repeats subCallId")
            self.ptc_starts[child_key] = [root, parent, data.get("name", MISSING), data.get("arguments", MISSING)]
        else:
            start = self.ptc_starts.get(child_key)
            if start is None:  # never started, or settled already
                raise _Refused("ptc-start-missing", "tool/code-dispatch has no unique start")
            if not _same(start[0], root) or not _same(start[1], parent) or not _same(start[2], data.get("name", MISSING)) \
                    or not deep_equal_json(start[3], data.get("arguments", MISSING)):
                raise _Refused("ptc-start-mismatch", "tool/code-dispatch does not match its start")
            self.ptc_starts[child_key] = None
        self._hold(child)
        self.ptc_roots[child_key] = root

    def llm_retry(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        """The retry names the current turn and step and the open request's provider, and continues
        its policy chain (``assertRetryChain``: the last retry of the same turn, step, provider and
        policyKey fixes the number and the retryId; a new chain's retryId is new)."""
        turn, step = data.get("turn", MISSING), data.get("step", MISSING)
        current = self.open_step if self.open_step is not None else self.next_step - 1
        if self.open_turn is None or not _same(self.open_turn, turn) or not _same(step, current):
            raise _Refused("retry-mismatch", "llm/retry does not match the current turn and step")
        provider = data.get("provider", MISSING)
        if not _same(provider, self.provider):
            raise _Refused("retry-provider", "llm/retry provider does not match the open request/header")
        values = (turn, step, provider, data.get("policyKey", MISSING))
        chain = tuple(map(_key, values))
        prior = self.chains.get(chain)
        # ``(prior?.retry ?? 0) + 1``: a chain's last retry passed this check, so it is a number
        expected = 1 if prior is None else prior[0] + 1
        retry, retry_id = data.get("retry", MISSING), data.get("retryId", MISSING)
        if not _same(retry, expected):
            raise _Refused("retry-number", f"llm/retry must use retry {js_string(expected)}")
        if prior is not None and not _same(prior[1], retry_id):
            raise _Refused("retry-id", "llm/retry must preserve retryId across one policy chain")
        if prior is None and _key(retry_id) in self.retry_ids:
            raise _Refused("retry-id", f"llm/retry reuses retryId {'undefined' if retry_id is MISSING else dumps(retry_id)} "
                                       "across policy chains")
        for value in (*values, retry, retry_id):
            self._hold(value)
        self.chains[chain] = (retry, retry_id)
        self.retry_ids.add(_key(retry_id))
        self.scheduled.setdefault((_key(retry_id), _key(retry)), (turn, step))

    def llm_retry_started(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        attempt = (_key(data.get("retryId", MISSING)), _key(data.get("retry", MISSING)))
        scheduled = self.scheduled.get(attempt)
        if scheduled is None:
            raise _Refused("retry-started-unpaired", "llm/retry-started pairs no prior scheduled attempt")
        if not _same(scheduled[0], data.get("turn", MISSING)) or not _same(scheduled[1], data.get("step", MISSING)):
            raise _Refused("retry-started-mismatch", "llm/retry-started does not match its scheduled turn and step")
        if attempt in self.started:  # scalars only: a container never pairs a scheduled attempt
            raise _Refused("retry-started-repeated", "llm/retry-started repeats one scheduled attempt")
        self.started.add(attempt)

    # -- titles, commands, delivery markers

    def title(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._check(index, event, self._title_sources, raw["type"], data, seq)

    def command_run(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        command_id = data.get("commandId", MISSING)
        if _key(command_id) in self.command_ids:
            raise _Refused("command-repeated", f"command/run repeats commandId {js_string(command_id)}")
        self._hold(command_id)
        self.command_ids.add(_key(command_id))

    def command_done(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        command_id = data.get("commandId", MISSING)
        if _key(command_id) not in self.command_ids:
            raise _Refused("command-done-unmatched", f"command/done {js_string(command_id)} has no prior command/run")
        source = data.get("sourceEventSeq", MISSING)
        if source is MISSING:
            return
        if not _same(data.get("kind", MISSING), "success"):
            raise _Refused("command-done-source", f"command/done {js_string(command_id)} has invalid sourceEventSeq")
        self._check(index, event, self._command_source, command_id, source)

    def delivery_accepted(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        """A marker of the walked generation (1) names this session, unless the parent session wrote
        it (a seq within the seed)."""
        version = data.get("sessionFormatVersion", MISSING)
        # ``(sessionFormatVersion ?? 0) === header.version``: the walked artifact is format 1 (a
        # format-0 file migrated first; its generation-0 markers are assertSourceDeliveryMarker's, G5)
        if not _same(0 if version is MISSING or version is None else version, 1):
            return
        header = self.header
        seed = header.get("seedLength", MISSING)
        inherited = header.get("parentSession", MISSING) is not MISSING and seq.__class__ in (int, float) \
            and seq < (seed if seed.__class__ in (int, float) else 0)
        if not inherited and not _same(data.get("sessionId", MISSING), header.get("id", MISSING)):
            raise _Refused("delivery-wrong-session", "current-generation delivery marker names the wrong Session")

    # -- compactions

    def _owner(self, data: dict[str, Any], what: str) -> None:
        """``assertCompactionOwner``: the open compaction's compactionId and sourceCommandId."""
        open_ = self.compaction
        if open_ is None or not _same(data.get("compactionId", MISSING), open_[0]) \
                or not _same(data.get("sourceCommandId", MISSING), open_[1]):
            raise _Refused("compaction-owner", f"{what} has no matching compaction/start")

    def _owner_turn(self, owner: Any, what: str) -> None:
        """``assertCompactionTurn``: a null owner turn while no turn is open, else the open turn."""
        if (self.open_turn is not None) if owner is None else not _same(owner, self.open_turn):
            raise _Refused("compaction-turn", f"{what} does not match the open turn")

    def compaction_start(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        if self.compaction is not None:
            raise _Refused("compaction-overlap", "compaction/start overlaps an open compaction")
        turn = data.get("turn", MISSING)
        self._owner_turn(turn, "compaction/start")
        self.compaction = [data.get("compactionId", MISSING), data.get("sourceCommandId", MISSING), turn, seq, False]

    def compaction_summary(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._owner(data, "compaction/summary")
        open_ = self.compaction
        assert open_ is not None  # the owner check refuses without one
        self._owner_turn(open_[2], "compaction/summary")
        if open_[4]:
            raise _Refused("compaction-summary-repeated", "compaction/summary repeats")
        self._current_span(data, "compaction/summary")
        open_[4] = True

    def compaction_end(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._owner(data, "compaction/end")
        open_ = self.compaction
        assert open_ is not None
        if not _same(data.get("turn", MISSING), open_[2]):
            raise _Refused("compaction-end-turn", "compaction/end changes its owner turn")
        self._owner_turn(open_[2], "compaction/end")
        if data.get("error", MISSING) is MISSING and not open_[4]:
            raise _Refused("compaction-end-unsummarized", "successful compaction/end requires one summary")
        self.compaction = None

    def compaction_prune(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self._current_span(data, "compaction/prune")

    def user_message(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        """A compaction checkpoint (a compact-plugin message replacing the surface) belongs to the open compaction."""
        source = _record(data.get("source", MISSING), f"user/message {js_string(seq)} source")
        if source.get("kind") == "plugin" and source.get("plugin") == "compact" \
                and not _same(raw.get("surfaceOp", MISSING), "append"):
            self._owner(source, f"compaction checkpoint at seq {js_string(seq)}")

    def session_end_seed(self, index: int, event: Event, raw: dict[str, Any], data: dict[str, Any], seq: Any) -> None:
        self.compaction = None


_CHECKS: dict[str, Callable[..., None]] = {
    "turn/start": ReleasedRelations.turn_start,
    "turn/end": ReleasedRelations.turn_end,
    "step/start": ReleasedRelations.step_start,
    "step/end": ReleasedRelations.step_end,
    "assistant/chunk": ReleasedRelations.assistant_chunk,
    "assistant/message": ReleasedRelations.assistant_message,
    "tool/call": ReleasedRelations.tool_call,
    "tool/result": ReleasedRelations.tool_result,
    "request/header": ReleasedRelations.request_header,
    "request/context": ReleasedRelations.request_context,
    "tool/code-dispatch-start": ReleasedRelations.code_dispatch,
    "tool/code-dispatch": ReleasedRelations.code_dispatch,
    "llm/retry": ReleasedRelations.llm_retry,
    "llm/retry-started": ReleasedRelations.llm_retry_started,
    "session/title": ReleasedRelations.title,
    "session/title-llm-request": ReleasedRelations.title,
    "command/run": ReleasedRelations.command_run,
    "command/done": ReleasedRelations.command_done,
    "session-log-deepseek/delivery-accepted": ReleasedRelations.delivery_accepted,
    "compaction/start": ReleasedRelations.compaction_start,
    "compaction/summary": ReleasedRelations.compaction_summary,
    "compaction/end": ReleasedRelations.compaction_end,
    "compaction/prune": ReleasedRelations.compaction_prune,
    "user/message": ReleasedRelations.user_message,
    "session/end-seed": ReleasedRelations.session_end_seed,
}
"""The type-specific part of released's switch; every other type of its inventory only has to
hold a data object (and, on the surface, its surfaceOp)."""


def _human_text(raw: dict[str, Any]) -> str | None:
    """What a title citing this user/message reads (``assertTitleSources``' loop body): the joined
    text blocks of a human message; ``None`` when released refuses the citation (no data or source
    object, no human source, content that ``flatMap`` cannot read)."""
    data = raw.get("data")
    if data.__class__ is not dict:
        return None
    source = data.get("source")
    if source.__class__ is not dict or source.get("kind") != "user" or source["kind"].__class__ is not str:
        return None
    content = data.get("content")
    if content.__class__ is not list:
        return None  # content.flatMap is not a function
    texts = []
    for block in content:
        if block is None:
            return None  # null.type throws
        if block.__class__ is dict and block.get("type") == "text" and block["type"].__class__ is str:
            text = block.get("text")
            if text.__class__ is str:
                texts.append(text)
    return "\n".join(texts)


def _title_request(messages: Any, selected: list[dict[str, Any]]) -> None:
    """A title request's one message: the title plugin's user message whose only block frames the
    cited texts."""
    refused = _Refused("title-request-messages", "session/title-llm-request messages do not represent messageSeqs")
    message = _prop(messages, 0)
    content = MISSING if message is MISSING else _prop(message, "content")
    source = MISSING if message is MISSING else _record(_prop(message, "source"), "session/title-llm-request message source")
    if not _same(_prop(messages, "length"), 1) \
            or message is MISSING or not _same(_prop(message, "role"), "user") \
            or content is None or content is MISSING or not _same(_prop(content, "length"), 1) \
            or source is MISSING or not _same(source.get("kind", MISSING), "plugin") \
            or not _same(source.get("plugin", MISSING), "dsh-session-title-llm"):
        raise refused
    framed = _prop(content, 0)
    if framed is MISSING or not _same(_prop(framed, "type"), "text") \
            or not _same(_prop(framed, "text"), _TITLE_PROMPT + dumps(selected)):
        raise refused


def _not_started_repair(raw: dict[str, Any], message: dict[str, Any], call_id: Any, error: Any, seq: Any) -> bool:
    """``isExactToolNotStartedRepair``: the one synthetic result for a call never started."""
    block = _prop(message.get("content", MISSING), 0)
    repair = MISSING if block is MISSING or block is None else _prop(block, "content")
    if error is MISSING or not _same(error.get("name", MISSING), "ToolNotStartedError") \
            or not _same(error.get("code", MISSING), "TOOL_NOT_STARTED") or "sourceEventSeqs" in raw \
            or not _same(message.get("id", MISSING), f"interrupted-tool-result-{js_string(call_id)}-{js_string(seq)}") \
            or block is MISSING or block is None or _prop(block, "isError") is not True \
            or repair is MISSING or repair is None or not _same(_prop(repair, "length"), 1):
        return False
    first = _prop(repair, 0)
    return first is not MISSING and first is not None and _same(_prop(first, "type"), "text") \
        and _same(_prop(first, "text"), _REPAIR_TEXT)


_MIGRATED_TYPES = frozenset({"llm/retry", "session/end-seed", "compaction/start", "compaction/summary",
                             "compaction/end", "user/message", *_LEGACY_COMPACTION})
"""The records :class:`_RelationMigration` reads or rewrites."""

_HANDLERS_V0: dict[str, str] = {**{kind: "migrated" if kind in _MIGRATED_TYPES else "visit"
                                   for kind in (*RELEASED_V0_EVENT_TYPES, *_LEGACY_COMPACTION)},
                                "assistant/chunk": "chunk"}
_HANDLERS_V1: dict[str, str] = {**dict.fromkeys(RELEASED_V0_EVENT_TYPES, "visit"), "assistant/chunk": "chunk"}
""":class:`ReleasedRelations`' handler of each type it walks, by format (shared by every walk, never
mutated: a walk that unsubscribes assigns its ``types`` anew)."""


class _RelationMigration:
    """The v0->v1 migration's legacy normalisation of the relation records (V01:1922-2018), one
    record at a time in log order (no other record takes part): compact/* renamed compaction/*,
    and a missing retryId or compactionId filled in (per retry chain, and from the open
    compaction), so that the walk sees what released walks. A rewritten record is a copy.
    State: the retryId of each retry chain (O(retry chains)) and the open compaction's id."""

    def __init__(self, session_id: Any) -> None:
        self.session_id = session_id
        self.chains: dict[tuple[str, ...], str] = {}
        self.open_id: Any = MISSING

    def normalise(self, raw: dict[str, Any]) -> dict[str, Any]:
        """``raw`` (one of :data:`_MIGRATED_TYPES`) as the migration leaves it."""
        kind = raw["type"]
        data = raw.get("data", MISSING)
        if kind.startswith("compact/"):
            kind = "compaction/" + kind[len("compact/"):]
            raw = {**raw, "type": kind}
        if type(data) is dict and kind == "llm/retry":
            chain = tuple(dumps(data.get(k, MISSING)) if k in data else "" for k in ("turn", "step", "provider", "policyKey"))
            retry_id = data.get("retryId", MISSING)
            if type(retry_id) is str and retry_id:
                self.chains[chain] = retry_id
            elif retry_id is MISSING:
                self.chains.setdefault(chain, f"legacy-retry:{js_string(self.session_id)}:{js_string(raw.get('seq', MISSING))}")
                raw = {**raw, "data": {**data, "retryId": self.chains[chain]}}
        elif kind == "session/end-seed":
            self.open_id = MISSING
        elif type(data) is dict and kind == "compaction/start":
            existing = data.get("compactionId", MISSING)
            if type(existing) is str and existing:
                self.open_id = existing
            elif existing is MISSING:
                self.open_id = f"legacy-compaction:{js_string(self.session_id)}:{js_string(raw.get('seq', MISSING))}"
                raw = {**raw, "data": {**data, "compactionId": self.open_id}}
        elif self.open_id is not MISSING and type(data) is dict and kind in ("compaction/summary", "compaction/end"):
            if "compactionId" not in data:
                raw = {**raw, "data": {**data, "compactionId": self.open_id}}
            if kind == "compaction/end":
                self.open_id = MISSING
        elif self.open_id is not MISSING and type(data) is dict and kind == "user/message":
            source = data.get("source", MISSING)
            if type(source) is dict and source.get("kind") == "plugin" and source.get("plugin") == "compact" \
                    and "compactionId" not in source:
                raw = {**raw, "data": {**data, "source": {**source, "compactionId": self.open_id}}}
        return raw
