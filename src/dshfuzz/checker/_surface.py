"""Surface rules S1-S8: one linear-time replay of the official surface fold, as a walk
(:class:`SurfaceWalk`) whose state is the current surface, not the log.

The official ``foldSurface`` (S:395-455) keeps the surface as an array and finds
replace bounds with ``indexOf``, which is quadratic on replace-heavy logs. This
fold keeps the same node order in a doubly linked list keyed by seq, with an
order rank per node (a replacing node takes the rank of the first node it
replaces, so ranks stay strictly increasing along the list): bound lookup and
the ``start <= end`` test are O(1), and collecting the shadowed nodes costs what
removing them costs.

Each event is checked in the official order. The first failure is S8's verdict
with the official message (the fold throws there; a reversed range omits the
node indices, which the linked list does not keep); every failure is also
reported under its own rule, after which the event leaves the surface untouched
and the replay goes on, so one pass reports every independent defect:

- S1 a surface type without ``surfaceOp``; S2 surface metadata off the surface;
- S4 a malformed replace op or range; S5 a replace not citing every shadowed node;
- S3 an append's, S6 a replace's ``sourceEventSeqs`` shape (array, non-empty
  except on assistant/message, unique, earlier seqs);
- S7 a tool/result replace rewriting more than one result's content.

Format v3 (catalog): replace ops name ``startSeq``/``endSeq``, assistant/message
carries no ``sourceEventSeqs``, and system/message is a surface type.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterator
from dataclasses import replace
from typing import Any, Literal

from dshfuzz.contracts import MAX_SAFE_INTEGER, deep_equal_json
from dshfuzz.contracts.js import get as js_get
from dshfuzz.contracts.js import spread
from dshfuzz.contracts.rules import RULES
from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.contracts.rules import RuleId as R
from dshfuzz.model import MISSING, Event

from ._context import CheckContext, is_nonneg_safe_int
from ._finding import Finding
from ._run import EVERY_EVENT, rule_walk
from ._scan import SCAN, scanned

SURFACE_V0 = frozenset({"user/message", "assistant/message", "tool/result"})
SURFACE_V3 = SURFACE_V0 | {"system/message"}


def _name(t: Any) -> str:
    if t is MISSING:
        return "undefined"
    return t if type(t) is str else str(t)


_INT_ONLY = frozenset({int})


def _seq_ok(v: Any) -> bool:
    return (type(v) is int and 0 <= v <= MAX_SAFE_INTEGER) or is_nonneg_safe_int(v)


class _Violation(Exception):
    """One failed check; ``refused_by`` narrows the rule's layers for this instance;
    ``also`` names further rules the same defect breaks (one finding each)."""

    def __init__(
        self, rule: R, message: str, refused_by: tuple[L, ...] | None = None, *, also: tuple[R, ...] = (), **context: Any
    ) -> None:
        super().__init__(message)
        self.rule = rule
        self.refused_by = refused_by
        self.also = also
        self.context = context


def _format_count(v: Any) -> bool:
    """``sessionFormatCount`` (SF:27): a non-negative safe integer, never ``-0``."""
    return _seq_ok(v) and not (type(v) is float and v == 0 and math.copysign(1.0, v) < 0)


def released_decodes_sources(value: Any, seq: Any) -> bool:
    """Whether the released codec's ``decodeSeqRanges`` (V01:1844-1863, called for every row
    carrying ``sourceEventSeqs``, V01:1732) decodes the row's list: plain counts and
    ``[start, end]`` ranges expanding to at most ``seq`` entries, strictly increasing once a
    range appears. It checks nothing else of the list (not that the seqs are earlier, nor the
    event type), so this is the whole of released's verdict on a list it decodes. ``seq`` is
    the row's seq as read: the decoder's entry bound."""
    if not _format_count(seq) or type(value) is not list:
        return False
    out: list[Any] = []
    ranged = False
    for entry in value:
        if type(entry) in (int, float):
            if len(out) >= seq or not _format_count(entry):
                return False
            out.append(entry)
            continue
        if type(entry) is not list or len(entry) != 2 or not (_format_count(entry[0]) and _format_count(entry[1])):
            return False
        start, end = int(entry[0]), int(entry[1])
        if end < start or end - start + 1 > seq - len(out):
            return False
        out.extend(range(start, end + 1))
        ranged = True
    return not (ranged and any(b <= a for a, b in zip(out, out[1:])))


def _with_released(rule: R, src: Any, seq: Any, layers: tuple[L, ...] | None = None) -> tuple[L, ...]:
    """``layers`` (the rule's own by default) with released exactly when it cannot decode the
    row's ``sourceEventSeqs``: released reads the list through its decoder alone."""
    base = tuple(x for x in (RULES[rule].refused_by if layers is None else layers) if x is not L.RELEASED)
    return base if released_decodes_sources(src, seq) else (*base, L.RELEASED)


# a malformed op never reaches the meter's or the released migration's range checks (measured)
_OP_SHAPE = (L.FOLD, L.SEED, L.INVARIANTS, L.LOAD)
_SURFACE_PATH = _OP_SHAPE
# the released migration refuses a non-array sourceEventSeqs, but accepts the other shape breaks (measured)
_NOT_ARRAY = (*_SURFACE_PATH, L.RELEASED)
# A format-0 steering/message is no surface type for the fold and the layers that fold the raw events,
# but the loader reads it as the user/message it upgrades it to first (SP:540-565), and the released
# migration as a surface event (V01:1533, 2526): both need its append marker, and accept it with one
# (measured).
_STEERING_APPEND = (L.FOLD, L.SEED, L.INVARIANTS)
_STEERING_BARE = (L.LOAD, L.RELEASED)


class LinearSurface:
    """The current surface: node seqs in model-visible order, O(1) lookup and splice."""

    __slots__ = ("_next", "_prev", "_rank", "head", "tail", "_counter")

    def __init__(self) -> None:
        self._next: dict[int, int | None] = {}
        self._prev: dict[int, int | None] = {}
        self._rank: dict[int, int] = {}
        self.head: int | None = None
        self.tail: int | None = None
        self._counter = 0

    def __contains__(self, seq: int) -> bool:
        return seq in self._rank

    def __len__(self) -> int:
        return len(self._rank)

    def __iter__(self) -> Iterator[int]:
        node = self.head
        nxt = self._next
        while node is not None:
            yield node
            node = nxt[node]

    def append(self, seq: int) -> None:
        self._counter += 1
        self._rank[seq] = self._counter
        self._prev[seq] = self.tail
        self._next[seq] = None
        if self.tail is None:
            self.head = seq
        else:
            self._next[self.tail] = seq
        self.tail = seq

    def ordered(self, start: int, end: int) -> bool:
        return self._rank[start] <= self._rank[end]

    def span(self, start: int, end: int) -> list[int]:
        """The nodes from ``start`` through ``end`` (which must be ordered)."""
        out = [start]
        node = start
        nxt = self._next
        while node != end:
            following = nxt[node]
            assert following is not None, "an ordered span reaches its end"
            node = following
            out.append(node)
        return out

    def replace(self, shadowed: list[int], seq: int) -> None:
        first, last = shadowed[0], shadowed[-1]
        before, after = self._prev[first], self._next[last]
        self._rank[seq] = self._rank[first]
        for node in shadowed:
            del self._rank[node], self._next[node], self._prev[node]
        self._prev[seq], self._next[seq] = before, after
        if before is None:
            self.head = seq
        else:
            self._next[before] = seq
        if after is None:
            self.tail = seq
        else:
            self._prev[after] = seq


def _provenance(raw: dict[str, Any], t: Any, seq: int, rule: R, v3: bool) -> Container[int]:
    """``assertProvenance`` up to (not including) the shadowed-coverage test: the cited seqs."""
    src = raw.get("sourceEventSeqs", MISSING)
    if src is MISSING:
        return set()
    if v3 and t == "assistant/message":
        raise _Violation(rule, 'session event "assistant/message" cannot carry sourceEventSeqs in format v3')
    if src.__class__ is list and src:
        first, n = src[0], len(src)
        if first.__class__ is int:
            if n == 1:
                if 0 <= first < seq:  # the common citation of one earlier event: nothing below can fail
                    return {first}
            elif 1 < first and first + n <= seq and src == list(range(first, first + n)):
                # a run of earlier seqs (a message citing its chunks): an element equal to a seq above 1
                # is that int or a float the general reading takes as it, never a bool; so none can fail
                return range(first, first + n)
    if type(src) is not list:
        raise _Violation(rule, f"sourceEventSeqs on event at seq {seq} must be an array when present", _NOT_ARRAY)
    if not src and t != "assistant/message":  # the catalog states emptiness in S6 too, append or replace
        also = (R.S6,) if rule is not R.S6 else ()
        # a replace (S6 here) shadows at least one node, which the released migration finds missing
        # from an empty source set (V01 applySurface)
        refused = (*_SURFACE_PATH, L.RELEASED) if rule is R.S6 else _SURFACE_PATH
        raise _Violation(rule, "sourceEventSeqs must not be empty except on assistant/message", refused, also=also)
    if src and _INT_ONLY.issuperset(map(type, src)) and 0 <= min(src) and (highest := max(src)) <= MAX_SAFE_INTEGER:
        # the common list, screened at C speed: only exact safe ints
        sources = set(src)
        non_earlier = next((s for s in src if s >= seq), None) if highest >= seq else None
    else:
        sources = set()
        non_earlier = None
        for s in src:
            if not _seq_ok(s):
                raise _Violation(rule, f'session event "{_name(t)}" sourceEventSeqs must densely contain non-negative safe integers',
                                 _with_released(rule, src, seq))
            sources.add(int(s))
            if non_earlier is None and s >= seq:
                non_earlier = int(s)
    if len(sources) != len(src):
        dups = sorted({int(s) for s in src if src.count(s) > 1})
        raise _Violation(rule, "sourceEventSeqs must not contain duplicates", _with_released(rule, src, seq, _SURFACE_PATH),
                         duplicates=dups)
    if non_earlier is not None:
        raise _Violation(
            rule, f"sourceEventSeqs must reference earlier events: {non_earlier} >= current seq {seq}",
            _with_released(rule, src, seq, _SURFACE_PATH), source=non_earlier
        )
    return sources


def _masked(data: Any) -> dict[str, Any] | None:
    """The masked copy ``assertToolResultRewrite`` (S:369-396) makes of a tool/result's data,
    ``{...data, message: {...message, content: [{...content[0], content: null}]}}``, or ``None``
    where JavaScript throws making it: reading ``data.message.content[0]`` throws unless the
    data and its message are objects and the content is neither null nor missing. The content
    is indexed as JavaScript indexes it (a string's first UTF-16 unit, an object's ``"0"``, a
    number's or boolean's nothing) and the first entry spread as JavaScript spreads it (a
    string or an array into index keys, a number, boolean or null into nothing)."""
    if type(data) is not dict:
        return None
    message = data.get("message", MISSING)
    if type(message) is not dict:  # any other value's .content is undefined (or it throws)
        return None
    content = message.get("content", MISSING)
    if content is None or content is MISSING:
        return None
    return {**data, "message": {**message, "content": [{**spread(js_get(content, 0)), "content": None}]}}


def _masked_equal(a: Any, b: Any) -> bool:
    """``isDeepEqualJson`` of the two masked copies ``assertToolResultRewrite`` compares
    (:func:`_masked`), and ``False`` where either copy would throw."""
    masked_a, masked_b = _masked(a), _masked(b)
    return masked_a is not None and masked_b is not None and deep_equal_json(masked_a, masked_b)


class SurfaceReplay:
    """The fold state of one check; :meth:`step` applies one event or raises.

    ``surface`` holds the current nodes; ``by_seq`` the tool/result S7 compares a rewrite
    of a node with, for current nodes only: the first tool/result event carrying the node's
    seq among those judged since the node last came onto the surface, the one that brought
    it included. A node's entry goes when a replace shadows it, and a tool/result that
    leaves its seq off the surface leaves none (:meth:`settle`), so the state is the
    surface's, not the log's. (The pass before the walk kept the first tool/result of each
    seq in the whole log; the two differ only where a seq repeats, once S8 has failed.)"""

    def __init__(self, version: int | None) -> None:
        self.v3 = version == 3
        self.v0 = version == 0
        self.types = SURFACE_V3 if self.v3 else SURFACE_V0
        self.start_key, self.end_key = ("startSeq", "endSeq") if self.v3 else ("start", "end")
        self.surface = LinearSurface()
        self.by_seq: dict[int, Event] = {}

    def op_of(self, raw: dict[str, Any], t: Any) -> Literal["append"] | tuple[int, int] | None:
        """``surfaceOpOf`` (S:305-318)."""
        op = raw.get("surfaceOp", MISSING)
        if not (type(t) is str and t in self.types):
            steering = self.v0 and t == "steering/message"
            if op is not MISSING:
                raise _Violation(R.S2, f'session event "{_name(t)}" is not surface-eligible and cannot carry surfaceOp',
                                 _STEERING_APPEND if steering and op == "append" and type(op) is str else None)
            if raw.get("sourceEventSeqs", MISSING) is not MISSING:
                layers = _with_released(R.S2, raw["sourceEventSeqs"], raw.get("seq", MISSING))
                raise _Violation(R.S2, f'session event "{_name(t)}" is not surface-eligible and cannot carry sourceEventSeqs',
                                 (*layers, L.RELEASED) if steering and L.RELEASED not in layers else layers)
            return None
        if op is MISSING:
            # measured: the meter's surface pricing throws on any assistant/message without one
            refused = (*_SURFACE_PATH, L.METER, L.RELEASED) if t == "assistant/message" else (*_SURFACE_PATH, L.RELEASED)
            raise _Violation(R.S1, f'session event "{t}" is surface-eligible and requires a surfaceOp marker', refused)
        if op == "append" and type(op) is str:
            return "append"
        if type(op) is not dict:
            raise _Violation(R.S4, f'session event "{t}" carries an invalid surfaceOp', self._malformed_op(op, raw))
        s, e = op.get(self.start_key, MISSING), op.get(self.end_key, MISSING)
        if not (len(op) == 3 and op.get("op") == "replace" and type(op.get("op")) is str and _seq_ok(s) and _seq_ok(e)):
            raise _Violation(R.S4, f'session event "{t}" carries an invalid replace surfaceOp', self._malformed_op(op, raw))
        return int(s), int(e)

    def _malformed_op(self, op: Any, raw: dict[str, Any]) -> tuple[L, ...]:
        """The layers refusing a malformed surfaceOp: the fold's shape check, and the token meter
        and the released migration wherever their own reading of it as a replace (anything but
        "append": ``op.start``/``op.end`` looked up among the current nodes, in order) finds no
        range (TM ``foldSurfaceTokens``, V01 ``applySurface``); the released migration also where
        the sourceEventSeqs (an array, else none) leave out a node of the range it finds."""
        if type(op) is dict:
            s, e = op.get("start", MISSING), op.get("end", MISSING)
            rank = self.surface._rank
            if (type(s) in (int, float) and type(e) in (int, float) and s in rank and e in rank
                    and self.surface.ordered(int(s), int(e))):
                src = raw.get("sourceEventSeqs", MISSING)
                sources = {x for x in src if type(x) in (int, float)} if type(src) is list else set()
                covered = all(node in sources for node in self.surface.span(int(s), int(e)))
                return _OP_SHAPE if covered else (*_OP_SHAPE, L.RELEASED)
        return (*_OP_SHAPE, L.METER, L.RELEASED)

    def step(self, raw: dict[str, Any], seq: int) -> None:
        t = raw.get("type", MISSING)
        op: Literal["append"] | tuple[int, int] | None = raw.get("surfaceOp")
        if not (op == "append" and op.__class__ is str and t.__class__ is str and t in self.types):
            try:
                op = self.op_of(raw, t)  # else it answers "append"
            except _Violation as v:
                if v.rule is R.S4:
                    self._read_as_replace(raw, seq)
                raise
        if op is None:
            return
        surface = self.surface
        on_surface = surface._rank  # the nodes, read without a Python-level __contains__
        if op == "append":
            # The node lands before its provenance is judged: the meter, which never reads
            # provenance, keeps it, so a later replace of it is no S4 of the meter's.
            if seq not in on_surface:
                surface.append(seq)
            if "sourceEventSeqs" in raw:
                _provenance(raw, t, seq, R.S3, self.v3)
            return
        start, end = op
        if start not in on_surface:
            raise _Violation(R.S4, f"surface replace: start seq {start} not found in surface")
        if end not in on_surface:
            raise _Violation(R.S4, f"surface replace: end seq {end} not found in surface")
        if not surface.ordered(start, end):
            raise _Violation(R.S4, f"surface replace: start seq {start} is after end seq {end}")
        shadowed = surface.span(start, end)
        try:
            sources = _provenance(raw, t, seq, R.S6, self.v3)
            missing = [n for n in shadowed if n not in sources]
            if missing:
                raise _Violation(
                    R.S5,
                    "surface replace: sourceEventSeqs must include every shadowed surface node; missing "
                    + ", ".join(map(str, missing)),
                    missing=missing,
                    shadowed=shadowed,
                )
            if t == "tool/result":
                self._tool_result_rewrite(raw, shadowed)
        finally:
            # the meter (TM foldSurfaceTokens) reads no provenance and no rewrite: it replaces the range all the same
            if seq not in on_surface:
                self.shadow(shadowed, seq)

    def _read_as_replace(self, raw: dict[str, Any], seq: int) -> None:
        """After a malformed surfaceOp (S4): the meter and the released migration read anything but
        "append" as a replace of ``op.start``..``op.end`` and, where that range is current, replace
        it (TM ``foldSurfaceTokens``, V01 ``applySurface``), so the surface the walk keeps for the
        layers that read on does too. (The fold has thrown: S8 names it.)"""
        op = raw.get("surfaceOp", MISSING)
        if type(op) is not dict or seq in self.surface._rank:
            return
        s, e = op.get("start", MISSING), op.get("end", MISSING)
        rank = self.surface._rank
        if (type(s) in (int, float) and type(e) in (int, float) and s in rank and e in rank
                and self.surface.ordered(int(s), int(e))):
            self.shadow(self.surface.span(int(s), int(e)), seq)

    def shadow(self, shadowed: list[int], seq: int) -> None:
        """Replace ``shadowed`` by ``seq`` on the surface; their tool/results go with them."""
        self.surface.replace(shadowed, seq)
        by_seq = self.by_seq
        if by_seq:
            for node in shadowed:
                by_seq.pop(node, None)

    def settle(self, seq: int) -> None:
        """After a tool/result carrying ``seq`` was judged: keep its entry only if the seq is
        a current node (a repeated seq could bring it back later; S8 has failed by then)."""
        if seq not in self.surface._rank:
            self.by_seq.pop(seq, None)

    def _tool_result_rewrite(self, raw: dict[str, Any], shadowed: list[int]) -> None:
        """``assertToolResultRewrite`` (S:369-396)."""
        if len(shadowed) != 1:
            raise _Violation(R.S7, "tool/result surface replacement must rewrite exactly one current node", shadowed=shadowed)
        original = self.by_seq.get(shadowed[0])
        if original is None or original.type != "tool/result":
            raise _Violation(R.S7, "tool/result surface replacement must target a current tool/result", target=shadowed[0])
        if not _masked_equal(original.data, raw.get("data", MISSING)):
            raise _Violation(R.S7, "tool/result surface replacement may change only content", target=shadowed[0])


@rule_walk(R.S1, R.S2, R.S3, R.S4, R.S5, R.S6, R.S7, R.S8, types=EVERY_EVENT, reads=(SCAN,))
class SurfaceWalk:
    """S1-S8 in log order: the fold applied to each head the loop hands over, S8's verdict
    (the first failure) in :meth:`finish`.

    :meth:`visit` sees every head. An object whose seq is the int equal to its position
    and that carries no surface metadata is passed over after one seq test, two key tests
    and, for its type, a set test (the fold does nothing with it unless its type is a
    surface type; a type that is no string it ignores). A plain append of a surface type
    at its position is applied there; any other event with surface metadata at its
    position goes to :meth:`fold`, and the rest (no object, a seq off its position) to
    :meth:`judge`, which is the general reading of any head. A packed run is handed over
    by its first member only, as the pass before the walk read it: its members carry no
    surface metadata and consecutive seqs from the first one's, so if one is off its
    position the first is, and S8 has its verdict there.

    State: the current surface nodes (:class:`LinearSurface`: three dicts of ints keyed by
    node and a counter), the tool/result event of each current tool/result node
    (``SurfaceReplay.by_seq``, dropped when the node is shadowed), and the first failure.
    Nothing else outlives the head being judged."""

    __slots__ = ("ctx", "replay", "kinds", "nodes", "first_failure", "gap_at")

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.replay = SurfaceReplay(ctx.version)
        self.kinds = self.replay.types
        self.nodes = self.replay.surface._rank  # the current nodes, one dict for the whole check
        self.first_failure: Finding | None = None
        # the position of the seq gap that is S8's verdict, if it is one (its loader verdict is known at the end)
        self.gap_at: int | None = None

    def visit(self, index: int, ev: Event) -> list[Finding] | None:
        raw = ev.raw
        if raw.__class__ is dict:
            seq = raw.get("seq")
            if seq == index and seq.__class__ is int:
                if "surfaceOp" not in raw:
                    if "sourceEventSeqs" not in raw:
                        kind = raw.get("type")
                        if kind.__class__ is not str or kind not in self.kinds:
                            return self.bare_steering(ev) if kind == "steering/message" and self.replay.v0 else None
                else:
                    # no packed member gets here (a member carries no surface metadata)
                    op = raw["surfaceOp"]
                    kind = raw.get("type")
                    if op == "append" and op.__class__ is str and kind.__class__ is str and kind in self.kinds:
                        # the fold's commonest step inline, as SurfaceReplay.step takes it
                        replay = self.replay
                        if seq not in self.nodes:
                            replay.surface.append(seq)
                        if kind == "tool/result":
                            replay.by_seq.setdefault(seq, ev)
                        if "sourceEventSeqs" in raw:
                            try:
                                _provenance(raw, kind, seq, R.S3, replay.v3)
                            except _Violation as v:
                                return self.violated(v, ev, seq)
                        return None
                return self.fold(ev, raw, seq)
        return self.judge(index, ev)

    def judge(self, index: int, ev: Event) -> list[Finding] | None:
        """The fold's verdict on the head at ``index``, whatever it is: its findings, if any."""
        ctx = self.ctx
        raw = ev.raw
        if ev.member is not None:
            # a packed chunk-row member: no surface metadata, and its seq is checked below only if it is off
            if raw["seq"] == index or self.first_failure is not None:
                return None
        if raw.__class__ is not dict:
            if self.first_failure is None:
                # the meter reads event.type of anything: only null throws there (an array, a number or a string has none)
                layers = RULES[R.S8].refused_by if raw is None else tuple(x for x in RULES[R.S8].refused_by if x is not L.METER)
                self.first_failure = ctx.finding(R.S8, f"foldSurface throws at index {index}: the event is not an object",
                                                 event=ev, refused_by=layers)
            return None
        seq = raw.get("seq", MISSING)
        if seq.__class__ is not int or seq != index:
            if not _seq_ok(seq):
                if self.first_failure is None:
                    self.first_failure = ctx.finding(  # the token meter never checks a seq: E1's layers
                        R.S8, f"foldSurface throws: session event seq {_name(seq)} is not contiguous; expected {index}", event=ev,
                        refused_by=RULES[R.E1].refused_by,
                    )
                return None
            seq = int(seq)
            if seq != index and self.first_failure is None:
                self.gap_at = index
                self.first_failure = ctx.finding(
                    R.S8,
                    f"foldSurface throws: session event seq {seq} is not contiguous; expected {index}",
                    event=ev,
                    context={"index": index},
                    refused_by=RULES[R.E2].refused_by,
                )
        t = raw.get("type")
        if t.__class__ is str and t not in self.kinds and "surfaceOp" not in raw and "sourceEventSeqs" not in raw:
            return self.bare_steering(ev) if t == "steering/message" and self.replay.v0 else None
        return self.fold(ev, raw, seq)

    def bare_steering(self, ev: Event) -> list[Finding]:
        """S1 for a format-0 steering/message without surface metadata: the fold passes it over, but
        the loader upgrades it to a user/message, which needs an append marker, and the released
        migration asks a steering/message for one too (:data:`_STEERING_BARE`)."""
        return [self.ctx.finding(
            R.S1, 'legacy steering/message without surfaceOp: the loader upgrades it to a user/message, and session '
            'event "user/message" is surface-eligible and requires a surfaceOp marker', event=ev,
            refused_by=_STEERING_BARE)]

    def fold(self, ev: Event, raw: dict[str, Any], seq: int) -> list[Finding] | None:
        """Apply an object carrying the safe ``seq`` to the surface: its findings, if any."""
        replay = self.replay
        result = raw.get("type") == "tool/result"
        if result:
            replay.by_seq.setdefault(seq, ev)
        try:
            replay.step(raw, seq)
        except _Violation as v:
            if result:
                replay.settle(seq)
            return self.violated(v, ev, seq)
        if result:
            replay.settle(seq)
        return None

    def violated(self, v: _Violation, ev: Event, seq: int) -> list[Finding]:
        """The findings of the failed check ``v`` at ``ev``; S8's verdict if it is the first."""
        ctx = self.ctx
        finding = ctx.finding(v.rule, str(v), event=ev, context=v.context, refused_by=v.refused_by)
        found = [finding]
        for rule in v.also:
            found.append(ctx.finding(rule, str(v), event=ev, context=v.context, refused_by=v.refused_by))
        if self.first_failure is None:
            self.first_failure = ctx.finding(
                R.S8,
                f"foldSurface throws at seq {seq}: {v}",
                event=ev,
                context={"rule": str(v.rule), **v.context},
                refused_by=finding.refused_by,
            )
        return found

    def finish(self) -> list[Finding] | None:
        failure = self.first_failure
        if failure is None:
            return None
        if self.gap_at is not None and self.ctx.log.compression != "zstd" and self.gap_at > scanned(self.ctx).last_turn_end:
            # the jsonl loader keeps the prefix before a gap after the last turn/end as a torn tail (SPJ:285-294), as E2 says
            failure = replace(failure, refused_by=tuple(x for x in failure.refused_by if x is not L.LOAD))
        return [failure]
