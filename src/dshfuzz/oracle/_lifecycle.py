"""Released relationships: ``assertReleasedArtifactRelationships`` (V01:2270-2570).

The strictest official statement of format v0 adds, on top of enclosure, the
*lifecycle* of every tool call: an ``assistant/message`` advertises its
tool-call blocks; a ``tool/call`` starts exactly one advertised call with the
same name and arguments; an appended ``tool/result`` settles an advertised call
(one never started only by the exact ``TOOL_NOT_STARTED`` repair); and every
advertised call is settled before its ``step/end`` or ``turn/end``
(``unresolved-tool-call``). It also keeps its own surface (a replace must name a
current span and cite all of it), ties compaction start/summary/end to one owner
and turn with the summary naming the exact current surface span, requires
``session/title`` sources to be earlier human ``user/message`` events, and pairs
``command/*``, ``llm/retry*`` and ``tool/code-dispatch*`` records.

The official layer runs this on the artifact the v0->v1 migration produced, after
exact per-type payload validation; this model runs it on the v0 events as
stored, so it speaks only for logs without legacy shapes. Payload shapes are not
checked beyond the reads the relationships make (``released-not-object`` where
``releasedV0Record`` refuses, ``malformed-event`` where V8 would throw).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from dshfuzz.contracts import js as _js
from dshfuzz.model import MISSING, Event, dumps

from ._verdict import Accepted, Verdict, Violation, raw_header

__all__ = ["LifecycleState", "RelationWalk", "check_lifecycle"]

RELEASED_V0_EVENT_TYPES = frozenset(
    """agent-preset/selected agent/inbox/spliced approval/asked approval/decided approval/policy
    assistant/chunk assistant/message command/done command/run compaction/end compaction/prune
    compaction/start compaction/summary feedback/record goal/change hook/invoked hook/result llm/retry
    llm/retry-started model/selection permission/preset plan/mode request/context request/header
    sandbox/mode schedule/change session-log-deepseek/delivery-accepted session/end-seed session/title
    session/title-llm-request step/end step/start subagent/descriptor subagent/model-selection-policy
    team/member team/message/delivered team/message/queued team/task todo/write tool-workflow/agent-end
    tool-workflow/agent-start tool-workflow/run-end tool-workflow/run-start tool/call tool/code-dispatch
    tool/code-dispatch-start tool/result turn/end turn/start user/message
    web/deepseek-search-llm-request""".split()
)
_SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_REPAIR_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)
_TITLE_PROMPT = "Generate the session title from this JSON array of human messages:\n"


@dataclass(frozen=True, slots=True)
class LifecycleState:
    """Where the relationships end: open turn/step, unsettled tool calls
    (``call id -> "advertised" | "started"``) of the open step, and the surface."""

    open_turn: Any
    open_step: Any
    tools: tuple[tuple[Any, str], ...]
    surface: tuple[Any, ...]


class _Fail(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _same(a: Any, b: Any) -> bool:
    """``a === b``: :func:`_js.strict_equal`, with two ints or two strings compared inline."""
    kind = type(a)
    if kind is type(b) and (kind is int or kind is str):
        same: bool = a == b
        return same
    return _js.strict_equal(a, b)


def _json(value: Any) -> str:
    """``JSON.stringify(value)`` inside a template literal."""
    return "undefined" if value is MISSING else dumps(value)


def _record(value: Any, label: str, seq: Any = MISSING) -> dict[str, Any]:
    """``releasedV0Record``: the value must be a JSON object. In ``label``, ``{seq}`` stands
    for ``String(seq)``, formatted only for the refusal (the walk reads records on every event)."""
    if type(value) is not dict:
        raise _Fail("released-not-object", f"{label.replace('{seq}', _js.js_string(seq))} must be a JSON object")
    return value


def _at(value: Any, key: str) -> Any:
    """``record["key"]`` on a value already known to be a record (or a V8 read otherwise)."""
    return _js.get(value, key)


def _iterate(value: Any) -> list[Any]:
    if type(value) is list:
        return value
    if type(value) is str:
        return list(value)
    raise _js.JsTypeError(f"{_js.js_string(value)} is not iterable")


class _Surface:
    """The walk's surface: node seqs in order, with ``indexOf`` answered from an index of
    each node's first position instead of a scan, so a walk is linear in its events when
    replacements rewrite the newest nodes (as the Harness writes them).

    Invariant: ``first[_identity(n)]`` is the smallest position holding a node ``===`` to
    ``n`` (NaN, ``===`` to nothing, is never found). A replacement re-indexes its span and
    the nodes after it, which move."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.first: dict[Any, int] = {}

    def append(self, seq: Any) -> None:
        self.first.setdefault(("n", seq) if seq.__class__ is int else _identity(seq), len(self.nodes))
        self.nodes.append(seq)

    def index(self, seq: Any) -> int:
        """``surface.indexOf(seq)`` (``-1`` when absent)."""
        position = self.first.get(_identity(seq))
        return -1 if position is None or not _same(self.nodes[position], seq) else position

    def span(self, start: int, end: int) -> list[Any]:
        return self.nodes[start : end + 1]

    def replace(self, start: int, end: int, seq: Any) -> None:
        """``surface.splice(start, end - start + 1, seq)``."""
        for node in self.nodes[start:]:
            key = _identity(node)
            if self.first.get(key, -1) >= start:
                del self.first[key]
        self.nodes[start : end + 1] = [seq]
        for position in range(start, len(self.nodes)):
            self.first.setdefault(_identity(self.nodes[position]), position)


class _Later(Exception):
    """A check read a position the walk has not been fed yet: the check waits (see :class:`RelationWalk`)."""


_READ_LATER = frozenset({"user/message", "command/run", "command/done", "compaction/start", "compaction/end",
                         "session/end-seed"})
"""The record types whose positions, or whose order, a later check reads."""


class RelationWalk:
    """The relationship walk fed one record at a time: :meth:`feed` each record with its
    position, in ascending positions, then :meth:`verdict` once with the log's length. A
    position never fed holds no released record (a chunk's stand-in, say).

    Released reads ``artifact.events[...]`` at random in three places; the walk answers them
    from what it keeps of the records it was fed, or by letting the check wait:

    - a title's messageSeqs read the user/message at each cited position: ``citable`` keeps,
      per user/message position, what that read finds (the joined text of a human message, or
      the refusal it makes), O(user messages);
    - a command/done's sourceEventSeq asks whether its position holds a command record:
      ``commands`` keeps those positions, O(command records) ints;
    - a turn boundary may cross an open compaction that a seed boundary anywhere in the log
      leaves open (``inheritedOrphanCompactionStarts``): ``stale`` keeps the start seqs that
      the orphan scan over every fed record has found so far, O(compactions) keys.

    A check that reads a position not fed yet, or a crossing of a compaction not (yet) found
    stale, *waits*: the walk goes on as though it passed, and :meth:`verdict` decides the
    waiting checks in log order, knowing the whole log; the first that fails is the verdict,
    ahead of any later refusal (the walk as released runs it would have stopped there). A
    check's reads are pure functions of the records, so deciding late is deciding first.
    After a refusal the walk checks nothing more, and keeps recording only while a check
    waits (``done`` once none does).

    The rest is the walk's pending state: open turn and step, the open step's unsettled tool
    calls, the surface (node seqs), the open compaction, and per retry chain, scheduled
    attempt, code-dispatch start and command the few values a later record is compared with.
    A container where an id or a seq belongs is keyed by identity (``_js.number_key``: its
    ``id()``), so a key the walk stores must not be reused by a later object: ``held`` keeps
    each container the walk keyed a stored entry with, O(such records), which only a damaged
    log has (a caller that drops the records it fed may then not free those)."""

    def __init__(self, header: Any) -> None:
        self.header = header if type(header) is dict else {}
        self.open_turn: Any = None
        self.open_step: Any = None
        self.open_step_provider: Any = MISSING
        self.next_turn = 1
        self.next_step = 1
        self.surface = _Surface()
        self.compaction: dict[str, Any] | None = None
        # accepted llm/retry records by the values the scans of released compare with ===:
        # the (retry, retryId) of the last of each policy chain, the retryIds used, and the
        # (turn, step) of the first of each (retryId, retry)
        self.retry_chains: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        self.retry_ids: set[Any] = set()
        self.scheduled: dict[tuple[Any, Any], tuple[Any, Any]] = {}
        self.retry_starts: set[str] = set()
        self.ptc_roots: dict[Any, Any] = {}
        self.ptc_starts: dict[Any, dict[str, Any]] = {}
        self.tools: dict[Any, tuple[Any, dict[str, Any]]] = {}
        self.command_runs: set[Any] = set()
        self.citable: dict[int, tuple[str, str]] = {}
        self.commands: set[int] = set()
        self.stale: set[Any] = set()
        self.orphan_start: Any = MISSING  # the orphan scan's open compaction start seq
        self.index = -1  # the position of the record being checked
        self.length: int | None = None  # known once the walk is asked for its verdict
        self.waiting: list[tuple[int, Any, tuple[Any, ...]]] = []  # (position, check, its arguments)
        self.refusal: Violation | None = None
        self.done = False
        self.fed: Any = None
        self.origins: dict[int, Any] = {}
        self.held: list[Any] = []

    def _hold(self, *values: Any) -> None:
        """Keep alive the containers among ``values``, which key a stored entry by identity."""
        for value in values:
            if value.__class__ is dict or value.__class__ is list:
                self.held.append(value)

    def feed(self, index: int, event: Any, origin: Any = None) -> None:
        """Check the record at position ``index``: a JSON value, or a model event read as its raw
        value. :meth:`origin` answers ``origin`` (default: ``event``) for this position should the
        verdict fall there."""
        if self.done:
            return
        self.fed = event if origin is None else origin
        if event.__class__ is Event:
            event = event.raw
        if event.__class__ is not dict:
            if self.refusal is None:
                self.index = index
                try:
                    _js.get(event, "type")  # a read of null's type throws; any other value has no string type
                except _js.JsTypeError as exc:
                    self._refuse(Violation(index, "malformed-event", str(exc)))
            return
        etype = event.get("type", MISSING)
        if etype.__class__ is not str:
            return
        role = _ROLES.get(etype)
        if role is None:  # no released type: the walk passes over it
            return
        read_later, surface, boundary = role
        if read_later:
            self._keep(index, etype, event)
        if self.refusal is not None:
            return
        self.index = index
        try:
            seq = event.get("seq", MISSING)
            data = event.get("data", MISSING)
            if type(data) is not dict:
                _record(data, etype + " {seq} data", seq)
            if surface:
                self._apply_surface(event, etype, seq)
            if boundary and self.compaction is not None:
                start = _js.number_key(self.compaction["startSeq"])
                if start not in self.stale:  # unless a later seed boundary leaves it open
                    self._hold(self.compaction["startSeq"])
                    self._wait(self._crossing, start, etype)
            handler = _HANDLERS.get(etype)
            if handler is not None:
                handler(self, event, data, seq)
        except _Fail as exc:
            self._refuse(Violation(index, exc.code, str(exc)))
        except _js.JsTypeError as exc:
            self._refuse(Violation(index, "malformed-event", str(exc)))

    def origin(self, index: int) -> Any:
        """What was fed (or named the origin) at ``index``, a position where the verdict may fall:
        a waiting check's or the refusal's."""
        return self.origins[index]

    def verdict(self, length: int) -> Verdict[LifecycleState]:
        """The walk's verdict over a log of ``length`` positions, all of them fed."""
        self.length = length
        for index, check, arguments in self.waiting:
            try:
                check(*arguments)
            except _Fail as exc:
                return Violation(index, exc.code, str(exc))
            except _js.JsTypeError as exc:
                return Violation(index, "malformed-event", str(exc))
        if self.refusal is not None:
            return self.refusal
        return Accepted(
            LifecycleState(
                self.open_turn,
                self.open_step,
                tuple((call_id, state["state"]) for call_id, state in self.tools.values()),
                tuple(self.surface.nodes),
            )
        )

    def _refuse(self, violation: Violation) -> None:
        self.refusal = violation
        self.origins[self.index] = self.fed
        self.done = not self.waiting

    def _keep(self, index: int, kind: str, event: dict[str, Any]) -> None:
        """Record what a later check may read of this record: a user/message's citable reading, a
        command record's position, and the orphan scan's step (``inheritedOrphanCompactionStarts``)."""
        if kind == "user/message":
            reading = _citable(event)
            if reading is not None:
                self.citable[index] = reading
        elif kind == "command/run" or kind == "command/done":
            self.commands.add(index)
        elif kind == "compaction/start":
            self.orphan_start = event.get("seq", MISSING)
        elif kind == "compaction/end":
            self.orphan_start = MISSING
        else:
            if self.orphan_start is not MISSING:
                self._hold(self.orphan_start)
                self.stale.add(_js.number_key(self.orphan_start))
            self.orphan_start = MISSING

    def _wait(self, check: Any, *arguments: Any) -> None:
        self.waiting.append((self.index, check, arguments))
        self.origins[self.index] = self.fed

    def _position(self, key: Any) -> int | None:
        """The position ``artifact.events[key]`` reads, ``None`` for no element; raises
        :class:`_Later` for a position the walk has not been fed yet."""
        if _js.is_number(key) and float(key).is_integer() and 0 <= key:
            position = int(key)
        elif type(key) is str and _js.is_array_index(key):
            position = int(key)
        elif type(key) is list:  # a property key is String(key): [3] reads events["3"]
            return self._position(_js.js_string(key))
        else:
            return None
        if self.length is None:
            if position > self.index:
                raise _Later
            return position
        return position if position < self.length else None

    def _crossing(self, start: Any, etype: str) -> None:
        if start not in self.stale:
            raise _Fail("compaction-crossed", f"{etype} crosses an open compaction")

    def _require_open_step(self, etype: str, data: dict[str, Any]) -> None:
        turn, step, open_turn, open_step = data.get("turn", MISSING), data.get("step", MISSING), self.open_turn, self.open_step
        if turn.__class__ is int and step.__class__ is int and open_turn.__class__ is int and open_step.__class__ is int:
            # four ints: ``_same`` is ``==`` and neither open coordinate is null
            if turn == open_turn and step == open_step:
                return
            raise _Fail("not-in-open-step", f"{etype} does not match an open turn and step")
        if (
            not _same(data.get("turn", MISSING), self.open_turn)
            or not _same(data.get("step", MISSING), self.open_step)
            or self.open_turn is None
            or self.open_step is None
        ):
            raise _Fail("not-in-open-step", f"{etype} does not match an open turn and step")

    def _assert_no_unresolved(self, boundary: str) -> None:
        if self.tools:
            first = next(iter(self.tools.values()))[0]
            if first is not MISSING:  # `keys().next().value !== undefined`
                raise _Fail(
                    "unresolved-tool-call", f"{boundary} leaves unresolved tool call {_js.js_string(first)}"
                )

    def _apply_surface(self, event: dict[str, Any], etype: str, seq: Any) -> None:
        operation = event.get("surfaceOp", MISSING)
        if operation is MISSING:
            raise _Fail("surface-op-missing", f"{etype} requires a surfaceOp marker")
        if operation == "append" if operation.__class__ is str else _same(operation, "append"):
            self.surface.append(seq)
            return
        start_seq, end_seq = _js.get(operation, "start"), _js.get(operation, "end")
        start, end = self.surface.index(start_seq), self.surface.index(end_seq)
        if start < 0 or end < start:
            raise _Fail(
                "replace-range-off-surface", f"{etype} replacement range is not on the current surface"
            )
        cited = event.get("sourceEventSeqs", MISSING)
        sources = {_js.number_key(s) for s in cited} if type(cited) is list else set()
        if any(_js.number_key(node) not in sources for node in self.surface.span(start, end)):
            raise _Fail(
                "replace-missing-shadowed",
                f"{etype} replacement sourceEventSeqs omit a shadowed surface node",
            )
        self.surface.replace(start, end, seq)

    def _turn_start(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        turn = data.get("turn", MISSING)
        if self.open_turn is not None or not _same(turn, self.next_turn):
            raise _Fail(
                "turn-out-of-order", f"turn/start {_json(turn)} does not open expected turn {self.next_turn}"
            )
        self.open_turn, self.open_step, self.next_step = turn, None, 1
        self.tools.clear()

    def _turn_end(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        turn = data.get("turn", MISSING)
        if not _same(self.open_turn, turn):
            raise _Fail("turn-end-unmatched", f"turn/end {_json(turn)} has no matching open turn")
        self._assert_no_unresolved("turn/end")
        if self.open_step is not None:
            raise _Fail("turn-end-step-open", f"turn/end {_json(turn)} crosses an open step")
        self.open_turn = None
        self.next_turn += 1

    def _step_start(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        step = data.get("step", MISSING)
        if (
            not _same(self.open_turn, data.get("turn", MISSING))
            or self.open_step is not None
            or not _same(step, self.next_step)
        ):
            reused = self.open_step is None and _js.is_number(step) and step < self.next_step
            code = "step-reused" if reused and self.open_turn is not None else "step-mismatch"
            raise _Fail(code, "step/start does not match the open turn and next step")
        self.open_step = step

    def _step_end(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._require_open_step("step/end", data)
        self._assert_no_unresolved("step/end")
        self.tools.clear()
        self.open_step = None
        self.next_step += 1

    def _assistant_chunk(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._require_open_step("assistant/chunk", data)

    def _assistant_message(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._require_open_step("assistant/message", data)
        message = _record(data.get("message", MISSING), "assistant/message {seq} message", seq)
        for block in _iterate(message.get("content", MISSING)):
            # ``_at`` of a record is its own ``get``; two strings are ``===`` when ``==``
            kind = block.get("type", MISSING) if block.__class__ is dict else _at(block, "type")
            if not (kind == "tool-call" if kind.__class__ is str else _same(kind, "tool-call")):
                continue
            call_id = _at(block, "id")
            key = _js.number_key(call_id)
            if key in self.tools:
                raise _Fail(
                    "duplicate-advertised-call",
                    f"assistant/message repeats advertised tool call {_js.js_string(call_id)}",
                )
            self.tools[key] = (
                call_id,
                {"name": _at(block, "name"), "arguments": _at(block, "arguments"), "state": "advertised"},
            )

    def _tool_call(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._require_open_step("tool/call", data)
        call_id = data.get("callId", MISSING)
        entry = self.tools.get(_js.number_key(call_id))
        lifecycle = entry[1] if entry is not None else None
        if (
            lifecycle is None
            or lifecycle["state"] != "advertised"
            or not _same(lifecycle["name"], data.get("name", MISSING))
            or not _same(lifecycle["arguments"], data.get("arguments", MISSING))
        ):
            raise _Fail(
                "tool-call-unadvertised",
                f"tool/call {_js.js_string(call_id)} does not match one advertised tool call",
            )
        lifecycle["state"] = "started"

    def _tool_result(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        if not _same(event.get("surfaceOp", MISSING), "append"):
            if self.open_turn is None:
                raise _Fail(
                    "tool-result-replace-outside-turn", "tool/result replacement is outside an open turn"
                )
            return
        self._require_open_step("tool/result", data)
        message = _record(data.get("message", MISSING), "tool/result {seq} message", seq)
        call_id = _record(message.get("source", MISSING), "tool/result {seq} source", seq).get("callId", MISSING)
        error = data.get("error", MISSING)
        error = MISSING if error is MISSING else _record(error, "tool/result {seq} error", seq)
        entry = self.tools.get(_js.number_key(call_id))
        if entry is None:
            raise _Fail(
                "tool-result-unadvertised",
                f"tool/result {_js.js_string(call_id)} has no advertised tool lifecycle",
            )
        if entry[1]["state"] == "advertised" and not _is_not_started_repair(event, message, call_id, error):
            raise _Fail(
                "tool-result-not-repair",
                f"tool/result {_js.js_string(call_id)} is not the exact TOOL_NOT_STARTED repair",
            )
        del self.tools[_js.number_key(call_id)]

    def _request_header(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        if self.open_turn is None:
            raise _Fail("outside-turn", "request/header is outside an open turn")
        self.open_step_provider = _js.get(_js.get(data.get("header", MISSING), "config"), "provider")

    def _request_context(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        if self.open_turn is None:
            raise _Fail("outside-turn", "request/context is outside an open turn")

    def _tool_code_dispatch_start(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._code_dispatch("tool/code-dispatch-start", data)

    def _tool_code_dispatch(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._code_dispatch("tool/code-dispatch", data)

    def _code_dispatch(self, etype: str, data: dict[str, Any]) -> None:
        if self.open_turn is None:
            raise _Fail("ptc-outside-turn", f"{etype} is outside an open turn")  # a code-dispatch relation: G4's
        root, parent, child = (data.get(k, MISSING) for k in ("rootCallId", "parentCallId", "subCallId"))
        child_key = _js.number_key(child)
        known = self.ptc_roots.get(child_key, MISSING)  # a root stored as undefined is `known === void 0`: no check
        if known is not MISSING and not _same(known, root):
            raise _Fail("ptc-root-changed", f"{etype} changes its rootCallId")
        parent_root = self.ptc_roots.get(_js.number_key(parent), MISSING)
        if not _same(parent, root) and not _same(parent_root, root):
            raise _Fail("ptc-parent", f"{etype} parentCallId does not belong to rootCallId")
        if etype == "tool/code-dispatch-start":
            if child_key in self.ptc_starts:
                raise _Fail("ptc-start-repeated", "tool/code-dispatch-start repeats subCallId")
            self.ptc_starts[child_key] = {
                "root": root,
                "parent": parent,
                "name": data.get("name", MISSING),
                "arguments": data.get("arguments", MISSING),
                "settled": False,
            }
        else:
            start = self.ptc_starts.get(child_key)
            if start is None or start["settled"]:
                raise _Fail("ptc-start-missing", "tool/code-dispatch has no unique start")
            if (
                not _same(start["root"], root)
                or not _same(start["parent"], parent)
                or not _same(start["name"], data.get("name", MISSING))
                or not _js.deep_equal_json(start["arguments"], data.get("arguments", MISSING))
            ):
                raise _Fail("ptc-start-mismatch", "tool/code-dispatch does not match its start")
            self.ptc_starts[child_key] = _SETTLED_DISPATCH  # its start is no longer compared
        self._hold(child)
        self.ptc_roots[child_key] = root

    def _llm_retry(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        current_step = self.open_step if self.open_step is not None else self.next_step - 1
        if (
            not _same(self.open_turn, data.get("turn", MISSING))
            or not _same(data.get("step", MISSING), current_step)
            or self.open_turn is None
        ):
            raise _Fail("retry-mismatch", "llm/retry does not match the current turn and step")
        if not _same(data.get("provider", MISSING), self.open_step_provider):
            raise _Fail("retry-provider", "llm/retry provider does not match the open request/header")
        chain = tuple(_identity(data.get(k, MISSING)) for k in ("turn", "step", "provider", "policyKey"))
        prior = self.retry_chains.get(chain)
        previous = prior[0] if prior is not None else MISSING
        expected = _plus_one(0 if previous is MISSING or previous is None else previous)
        if not _same(data.get("retry", MISSING), expected):
            raise _Fail("retry-number", f"llm/retry must use retry {_js.js_string(expected)}")
        retry_id = data.get("retryId", MISSING)
        if prior is not None and not _same(prior[1], retry_id):
            raise _Fail("retry-id", "llm/retry must preserve retryId across one policy chain")
        if prior is None and _identity(retry_id) in self.retry_ids:
            raise _Fail("retry-id", f"llm/retry reuses retryId {_json(retry_id)} across policy chains")
        self._hold(*(data.get(k, MISSING) for k in ("turn", "step", "provider", "policyKey", "retry", "retryId")))
        self.retry_chains[chain] = (data.get("retry", MISSING), retry_id)
        self.retry_ids.add(_identity(retry_id))
        self.scheduled.setdefault(
            (_identity(retry_id), _identity(data.get("retry", MISSING))), (data.get("turn", MISSING), data.get("step", MISSING))
        )

    def _llm_retry_started(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        scheduled = self.scheduled.get(
            (_identity(data.get("retryId", MISSING)), _identity(data.get("retry", MISSING)))
        )
        if scheduled is None:
            raise _Fail("retry-started-unpaired", "llm/retry-started pairs no prior scheduled attempt")
        if not _same(scheduled[0], data.get("turn", MISSING)) or not _same(scheduled[1], data.get("step", MISSING)):
            raise _Fail(
                "retry-started-mismatch", "llm/retry-started does not match its scheduled turn and step"
            )
        key = f"{_json(data.get('retryId', MISSING))}\0{_json(data.get('retry', MISSING))}"
        if key in self.retry_starts:
            raise _Fail("retry-started-repeated", "llm/retry-started repeats one scheduled attempt")
        self.retry_starts.add(key)

    def _session_title(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        try:
            self._title_sources("session/title", data, seq)
        except _Later:
            self._wait(self._title_sources, "session/title", data, seq)

    def _session_title_llm_request(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        try:
            self._title_sources("session/title-llm-request", data, seq)
        except _Later:
            self._wait(self._title_sources, "session/title-llm-request", data, seq)

    def _title_sources(self, etype: str, data: dict[str, Any], seq: Any) -> None:
        """``assertTitleSources``: cited seqs are human user messages; a user title cites none."""
        seqs = data.get("messageSeqs", MISSING)
        label = f"{etype} {_js.js_string(seq)}"
        if etype == "session/title":
            kind = _record(data.get("source", MISSING), "session/title {seq} source", seq).get(
                "kind", MISSING
            )
            if _same(_js.get(seqs, "length"), 0) != _same(kind, "user"):
                raise _Fail(
                    "title-user-kind",
                    f"session/title {_js.js_string(seq)} messageSeqs must be empty exactly for a user title",
                )
        selected = []
        for cited in _iterate(seqs):
            position = self._position(cited)
            reading = None if position is None else self.citable.get(position)
            if reading is None:  # no element (``undefined?.type``), a null, or a record that is no human user/message
                raise _Fail(
                    "title-source", f"{label} messageSeqs must cite earlier human user/message events"
                )
            what, found = reading
            if what == "malformed":
                raise _js.JsTypeError(found)
            if what != "text":
                raise _Fail("released-not-object", f"user/message {_js.js_string(cited)} {what} must be a JSON object")
            selected.append({"seq": cited, "text": found})
        if etype == "session/title-llm-request":
            self._title_request(data, selected)

    def _title_request(self, data: dict[str, Any], selected: list[dict[str, Any]]) -> None:
        messages = data.get("messages", MISSING)
        expected = _TITLE_PROMPT + dumps(selected)
        message = _js.get(messages, 0)
        content = MISSING if message is None or message is MISSING else _js.get(message, "content")
        source = (
            MISSING
            if message is MISSING
            else _record(_js.get(message, "source"), "session/title-llm-request message source")
        )
        refused = _Fail(
            "title-request-messages", "session/title-llm-request messages do not represent messageSeqs"
        )
        if (
            not _same(_js.get(messages, "length"), 1)
            or not _same(
                _js.get(message, "role") if message not in (None, MISSING) else MISSING, "user"
            )
            or not _same(
                _js.get(content, "length") if content not in (None, MISSING) else MISSING, 1
            )
            or not _same(_js.get(source, "kind") if source is not MISSING else MISSING, "plugin")
            or not _same(_js.get(source, "plugin"), "dsh-session-title-llm")
        ):
            raise refused
        framed = _js.get(content, 0)
        if (
            framed is MISSING
            or not _same(_js.get(framed, "type"), "text")
            or not _same(_js.get(framed, "text"), expected)
        ):
            raise refused

    def _command_run(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        command_id = data.get("commandId", MISSING)
        if _js.number_key(command_id) in self.command_runs:
            raise _Fail("command-repeated", f"command/run repeats commandId {_js.js_string(command_id)}")
        self._hold(command_id)
        self.command_runs.add(_js.number_key(command_id))

    def _command_done(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        command_id = data.get("commandId", MISSING)
        if _js.number_key(command_id) not in self.command_runs:
            raise _Fail(
                "command-done-unmatched", f"command/done {_js.js_string(command_id)} has no prior command/run"
            )
        source_seq = data.get("sourceEventSeq", MISSING)
        if source_seq is not MISSING:
            if not _same(data.get("kind", MISSING), "success"):
                _command_source_refused(command_id)
            try:
                self._command_source(command_id, source_seq)
            except _Later:
                self._wait(self._command_source, command_id, source_seq)

    def _command_source(self, command_id: Any, source_seq: Any) -> None:
        """A successful command/done may not cite a command record."""
        if self._position(source_seq) in self.commands:
            _command_source_refused(command_id)

    def _session_log_deepseek_delivery_accepted(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        # The migration checks v0 markers (V01:1944) and the relationships v1 ones; a
        # marker of either generation must name this session unless it was inherited.
        version = data.get("sessionFormatVersion", MISSING)
        accepted = 0 if version is MISSING or version is None else version
        if not (_same(accepted, 0) or _same(accepted, 1)):
            return
        inherited = (
            self.header.get("parentSession", MISSING) is not MISSING
            and _js.is_number(seq)
            and seq < _seed_length(self.header)
        )
        if not inherited and not _same(
            data.get("sessionId", MISSING), self.header.get("id", MISSING)
        ):
            raise _Fail(
                "delivery-wrong-session", "current-generation delivery marker names the wrong Session"
            )

    def _compaction_start(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        if self.compaction is not None:
            raise _Fail("compaction-overlap", "compaction/start overlaps an open compaction")
        turn = data.get("turn", MISSING)
        self._assert_compaction_turn(turn, "compaction/start")
        self.compaction = {
            "id": data.get("compactionId", MISSING),
            "sourceCommandId": data.get("sourceCommandId", MISSING),
            "turn": turn,
            "startSeq": seq,
            "summarized": False,
        }

    def _compaction_summary(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._assert_compaction_owner(data, "compaction/summary")
        self._assert_compaction_turn(self._owner_turn(), "compaction/summary")
        if self.compaction is not None and self.compaction["summarized"] is True:
            raise _Fail("compaction-summary-repeated", "compaction/summary repeats")
        self._assert_current_span(data, "compaction/summary")
        if self.compaction is not None:
            self.compaction["summarized"] = True

    def _compaction_end(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._assert_compaction_owner(data, "compaction/end")
        if not _same(data.get("turn", MISSING), self._owner_turn()):
            raise _Fail("compaction-end-turn", "compaction/end changes its owner turn")
        self._assert_compaction_turn(self._owner_turn(), "compaction/end")
        summarized = self.compaction is not None and self.compaction["summarized"] is True
        if data.get("error", MISSING) is MISSING and not summarized:
            raise _Fail("compaction-end-unsummarized", "successful compaction/end requires one summary")
        self.compaction = None

    def _compaction_prune(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self._assert_current_span(data, "compaction/prune")

    def _user_message(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        source = _record(data.get("source", MISSING), "user/message {seq} source", seq)
        if (
            not _same(event.get("surfaceOp", MISSING), "append")
            and _same(source.get("kind", MISSING), "plugin")
            and _same(source.get("plugin", MISSING), "compact")
        ):
            self._assert_compaction_owner(source, f"compaction checkpoint at seq {_js.js_string(seq)}")

    def _session_end_seed(self, event: Any, data: dict[str, Any], seq: Any) -> None:
        self.compaction = None

    def _owner_turn(self) -> Any:
        return MISSING if self.compaction is None else self.compaction["turn"]

    def _assert_compaction_owner(self, data: dict[str, Any], what: str) -> None:
        open_ = self.compaction
        if (
            open_ is None
            or not _same(data.get("compactionId", MISSING), open_["id"])
            or not _same(data.get("sourceCommandId", MISSING), open_["sourceCommandId"])
        ):
            raise _Fail("compaction-owner", f"{what} has no matching compaction/start")

    def _assert_compaction_turn(self, owner: Any, what: str) -> None:
        mismatch = (
            self.open_turn is not None if owner is None else not _same(owner, self.open_turn)
        )
        if mismatch:
            raise _Fail("compaction-turn", f"{what} does not match the open turn")

    def _assert_current_span(self, data: dict[str, Any], what: str) -> None:
        span = data.get("shadowedRange", MISSING)
        seqs = data.get("shadowedSeqs", MISSING)
        start_seq, end_seq = _js.get(span, "start"), _js.get(span, "end")
        start, end = self.surface.index(start_seq), self.surface.index(end_seq)
        expected = [] if start < 0 or end < start else self.surface.span(start, end)
        if not _same(len(expected), _js.get(seqs, "length")) or any(
            not _same(node, _js.get(seqs, i)) for i, node in enumerate(expected)
        ):
            raise _Fail("compaction-span", f"{what} shadowedSeqs do not name an exact current surface span")


_SETTLED_DISPATCH = {"settled": True}


def _command_source_refused(command_id: Any) -> None:
    raise _Fail("command-done-source", f"command/done {_js.js_string(command_id)} has invalid sourceEventSeq")


def _citable(event: dict[str, Any]) -> tuple[str, str] | None:
    """What a title's citation of this user/message finds (``assertTitleSources``' loop body,
    V01:2549-2556): ``("text", joined text)`` for a human message, ``(field, "")`` when its
    ``data`` or ``source`` is no object, ``("malformed", V8's message)`` when reading its blocks
    throws, ``None`` when it is no human message (which the citation refuses as any other record)."""
    data = event.get("data", MISSING)
    if type(data) is not dict:
        return ("data", "")
    source = data.get("source", MISSING)
    if type(source) is not dict:
        return ("source", "")
    if not _same(source.get("kind", MISSING), "user"):
        return None
    content = data.get("content", MISSING)
    if type(content) is not list:
        return ("malformed", "content.flatMap is not a function")
    texts = []
    for block in content:
        if block.__class__ is dict:  # ``_same(block.type, "text")``: only a string equals one
            if block.get("type") == "text":
                text = block.get("text")
                if text.__class__ is str:
                    texts.append(text)
        elif block is None:  # any other value has no string type, and reading it does not throw
            return ("malformed", "Cannot read properties of null (reading 'type')")
    return ("text", "\n".join(texts))


_ROLES = {
    etype: (etype in _READ_LATER, etype in _SURFACE_TYPES, etype in ("turn/start", "turn/end"))
    for etype in RELEASED_V0_EVENT_TYPES
}
"""Per released type, read once per record: whether a later check reads it, whether it is a
surface type, whether it is a turn boundary."""

_HANDLERS = {
    etype: handler
    for etype in RELEASED_V0_EVENT_TYPES
    if (handler := getattr(RelationWalk, "_" + etype.replace("/", "_").replace("-", "_"), None)) is not None
}
"""One method of :class:`RelationWalk` per event type with a relationship, named after the type."""


def _is_not_started_repair(event: dict[str, Any], message: dict[str, Any], call_id: Any, error: Any) -> bool:
    """``isExactToolNotStartedRepair``: the one synthetic result for a call never started."""
    seq = event.get("seq", MISSING)
    block = _js.get(message.get("content", MISSING), 0)
    repair = _js.get(block, "content") if block not in (None, MISSING) else MISSING
    first = _js.get(repair, 0) if repair not in (None, MISSING) else MISSING
    return (
        error is not MISSING
        and _same(error.get("name", MISSING), "ToolNotStartedError")
        and _same(error.get("code", MISSING), "TOOL_NOT_STARTED")
        and "sourceEventSeqs" not in event
        and _same(
            message.get("id", MISSING),
            f"interrupted-tool-result-{_js.js_string(call_id)}-{_js.js_string(seq)}",
        )
        and block not in (None, MISSING)
        and _js.get(block, "isError") is True
        and repair not in (None, MISSING)
        and _same(_js.get(repair, "length"), 1)
        and first not in (None, MISSING)
        and _same(_js.get(first, "type"), "text")
        and _same(_js.get(first, "text"), _REPAIR_TEXT)
    )


def _identity(value: Any) -> Any:
    """A hashable key equal for two JSON values exactly when they are ``===``: a number is
    its own key (Python's ``==`` across int and float is the comparison ``===`` makes), any
    other value its :func:`_js.number_key` (containers by identity; the walk keeps every
    record it keyed alive)."""
    return ("n", value) if _js.is_number(value) else _js.number_key(value)


def _plus_one(value: Any) -> Any:
    """JavaScript's ``value + 1`` for a JSON value."""
    if _js.is_number(value) or type(value) is bool:
        return value + 1
    return _js.js_string(value) + "1"


def _seed_length(header: dict[str, Any]) -> float:
    value = header.get("seedLength", MISSING)
    return float(value) if _js.is_number(value) else 0.0


def check_lifecycle(
    events: Iterable[Any], header: Any = None, *, visit: Sequence[int] | None = None
) -> Verdict[LifecycleState]:
    """Walk the released relationships over ``events``; ``header`` supplies the
    session ``id``, ``parentSession`` and ``seedLength`` the delivery marker needs.

    ``visit`` (ascending positions) spares the walk the events it would pass over anyway:
    the caller vouches that every event at another position is a non-null value of no
    released type (a stand-in ``{}``, say), so the verdict is the one without ``visit``.
    Those events keep their positions, where ``artifact.events[seq]`` still reads them."""
    log = events if type(events) is list else list(events)
    walk = RelationWalk(raw_header(header))
    feed = walk.feed
    for index in range(len(log)) if visit is None else visit:
        feed(index, log[index])  # a model event is read as its raw value
        if walk.done:
            break
    return walk.verdict(len(log))
