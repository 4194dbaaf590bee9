"""The official state machines behind :class:`~dshfuzz.checker._engine.TurnStepStructure`
(T1 T2 T3, and the moments T4/M1 name), one class each.

Three official moments judge turn/step structure, each with its own state machine: the
invariant companion (SI:20-102), the token meter's ``_foldEvent`` (TM:510-572, with its
estimate of cited chunks, TM:578-594) and the released validator's relationship walk
(V01:2270). The parts, each a class extending the one before it:

- :class:`_Refusals`: the ledger the machines refuse into, one hit per (event, rule) naming
  every moment that refuses it, plus the T4/M1 verdicts of null-turn events, settled into
  findings once their event is behind the walk;
- :class:`_CitedChunks`: what the meter reads of the chunk positions a message cites, and
  its verdict on each citation (T2);
- :class:`_TokenMeter`: the meter's step pairing (T1), its usage samples and the context
  window its projections read (T2);
- :class:`_TurnStepMachine`: the open turn and step as the invariant companion and the
  released walk track them (T1, T3);
- ``TurnStepStructure`` (``_engine``): the registered walk, which hands each event to the
  machines in log order and settles the ledger at the heads it is handed.

Why a chain of classes rather than one object per machine: the walk's per-chunk path reads
the open step and the meter's chunk buffer in one frame, and every machine refuses into the
ledger. Held as one object, each of those reads is one slot load; a machine held in an
attribute would cost a lookup more on every event. The chain keeps the one object and gives
each machine its own class, state and invariants. A part calls only the parts before it;
the one state it reads of a later part (the open step, which :class:`_CitedChunks` buffers
chunks against) is declared where it is read.

Why one registered walk rather than one per rule: T1 and T2 of one event come from several
machines, and a T4/M1 verdict names the moments refusing its event, so walks per rule would
have to meet again to merge ``refused_by``.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from operator import add, lt, sub
from typing import Any

from dshfuzz.contracts.js import (
    MAX_SAFE_INTEGER,
    is_number,
    is_safe_integer,
    js_add,
    js_subtract,
    number_key,
    strict_equal,
)
from dshfuzz.contracts.rules import OfficialLayer, RuleId
from dshfuzz.model import MISSING, Event

from ._context import CheckContext
from ._finding import Finding
from ._lifecycle import show_value

__all__: list[str] = []

_L = OfficialLayer
_STEP_SCOPED = frozenset({"step/end", "assistant/chunk", "assistant/message", "tool/call"})
_TURN_SCOPED = frozenset({"request/header", "request/context", "todo/write"})
_LAYER_ORDER = {layer: i for i, layer in enumerate(OfficialLayer)}


def _get(value: Any, key: str) -> Any:
    """``value[key]`` of a JSON object, else :data:`MISSING` (a primitive's properties read as undefined)."""
    return value.get(key, MISSING) if type(value) is dict else MISSING


def _field(data: Any, key: str) -> Any:
    """``data[key]`` as JavaScript reads it; raises :class:`_Unreadable` where it throws (null/undefined ``data``)."""
    if data is None or data is MISSING:
        raise _Unreadable
    return _get(data, key)


class _Unreadable(Exception):
    """``event.data`` is null or undefined: the official read of ``data.turn`` throws."""


_show = show_value


def _same(a: Any, b: Any) -> bool:
    """``a === b``, with the int/int case decided inline."""
    if type(a) is int and type(b) is int:
        return a == b
    return strict_equal(a, b)


def _ordered(layers: Iterable[OfficialLayer]) -> tuple[OfficialLayer, ...]:
    """``layers`` in :class:`OfficialLayer` order, as ``refused_by`` lists them."""
    return tuple(sorted(layers, key=_LAYER_ORDER.__getitem__))


@dataclass(slots=True)
class _Hit:
    index: int
    event: Event
    rule: RuleId
    message: str
    layers: set[OfficialLayer]


_SETTLE_AT = 256
"""Pending hits and null-turn events past which the walk hands settled ones out."""


class _Refusals:
    """The ledger the machines refuse into: one :class:`_Hit` per (event, rule), naming every
    moment that refuses that event for that rule, and the T4/M1 verdicts of events whose
    turn or step is not an int (:attr:`nulls`).

    Invariants: a hit or verdict is pending until its event is behind the walk (a later
    machine may still refuse the same event); :meth:`settle` then hands it out in log order,
    each T4/M1 verdict naming the moments its event's other hits name. :attr:`due` holds
    exactly when more than :data:`_SETTLE_AT` hits and verdicts are pending or a citation
    waits (:attr:`waiting`: a hit whose verdict is not known yet), so memory stays bounded
    however many events a hostile log breaks. :attr:`journal` keeps the heads where a
    settlement fell due while a citation waited; :meth:`replay` hands out those batches once
    none waits, so the batches are those of settling at every head."""

    __slots__ = ("ctx", "hits", "nulls", "due", "waiting", "journal")

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.hits: dict[tuple[int, RuleId], _Hit] = {}
        self.nulls: dict[int, tuple[bool, bool, Event]] = {}
        # more than _SETTLE_AT hits and null-turn verdicts are pending, or a citation waits
        self.due = False
        # the citations waiting for a position not read yet (see _CitedChunks)
        self.waiting: list[_Citation] = []
        # the heads (with their pinned events) at which a settlement was due while a citation waited
        self.journal: list[tuple[int, frozenset[int | None]]] = []

    def hit(self, index: int, event: Event, rule: RuleId, layer: OfficialLayer, message: str) -> None:
        """``layer`` refuses ``event`` for ``rule``: a new hit, or one more moment named by the
        event's hit for that rule (whose message, the first moment's, stands)."""
        key = (index, rule)
        found = self.hits.get(key)
        if found is None:
            self.hits[key] = _Hit(index, event, rule, message, {layer})
            self.recount()
        else:
            found.layers.add(layer)

    def recount(self) -> None:
        """Whether the next head the walk is handed settles: more than :data:`_SETTLE_AT`
        findings are pending, or a citation waits (its verdict is due before the next batch)."""
        self.due = bool(self.waiting) or self.crowded()

    def crowded(self, waiting: int = 0) -> bool:
        """More than :data:`_SETTLE_AT` hits, null-turn verdicts and ``waiting`` citations are pending."""
        return len(self.hits) + len(self.nulls) + waiting > _SETTLE_AT

    def null_turn(self, index: int, event: Event) -> None:
        """Keep the T4/M1 verdicts of an event whose coordinates are not both ints."""
        t4, m1 = _null_turn(event)
        if t4 or m1:
            self.nulls[index] = (t4, m1, event)
            self.recount()

    def replay(self) -> list[Finding]:
        """The batches held back while a citation waited: at each kept head, the findings of
        earlier events (bar the pinned) when more than :data:`_SETTLE_AT` of them were pending."""
        journal, self.journal = self.journal, []
        indices = sorted([index for index, _ in self.hits] + list(self.nulls))
        settled: list[Finding] = []
        popped = 0
        for head, pinned in journal:
            if bisect_left(indices, head) - popped > _SETTLE_AT:
                before = len(self.hits) + len(self.nulls)
                settled.extend(self.settle(head, pinned))
                popped += before - len(self.hits) - len(self.nulls)
        return settled

    def settle(self, before: int, pinned: frozenset[int | None]) -> Iterator[Finding]:
        """The findings of the events before ``before`` but ``pinned``, in log order; each
        T4/M1 verdict names the moments the event's other hits name."""
        hits: dict[int, list[_Hit]] = {}
        for key, hit in list(self.hits.items()):
            if hit.index < before and hit.index not in pinned:
                hits.setdefault(hit.index, []).append(self.hits.pop(key))
        nulls = {i: self.nulls.pop(i) for i in list(self.nulls) if i < before and i not in pinned}
        self.recount()
        ctx = self.ctx
        for index in sorted(hits.keys() | nulls.keys()):
            layers: set[OfficialLayer] = set()
            for hit in sorted(hits.get(index, ()), key=lambda h: h.rule):
                layers |= hit.layers
                yield ctx.finding(hit.rule, hit.message, event=hit.event, refused_by=_ordered(hit.layers))
            if index in nulls:
                t4, m1, event = nulls[index]
                yield from _null_turn_findings(ctx, event, t4, m1, _ordered(layers))


def _null_turn(event: Event) -> tuple[bool, bool]:
    """(T4: the turn is null or missing; M1: an append whose turn or step is null)."""
    raw = event.raw
    data = raw.get("data", MISSING) if type(raw) is dict else MISSING
    turn = _get(data, "turn")
    if type(turn) is int and type(_get(data, "step")) is int:
        return False, False
    t4 = turn is None or turn is MISSING
    m1 = event.type == "assistant/message" and event.surfaceOp == "append" and (turn is None or _get(data, "step") is None)
    return t4, m1


def _null_turn_findings(
    ctx: CheckContext, event: Event, t4: bool, m1: bool, layers: tuple[OfficialLayer, ...]
) -> Iterator[Finding]:
    coordinates = f"turn {_show(_get(event.data, 'turn'))}/step {_show(_get(event.data, 'step'))}"
    if t4:
        yield ctx.finding(RuleId.T4, f"{event.type} carries {coordinates}: the client cannot attribute it to a turn",
                          event=event, refused_by=layers)
    if m1:
        yield ctx.finding(RuleId.M1, f"assistant/message appends with {coordinates}; a null-turn marker must be "
                          "a replace", event=event, refused_by=layers)


@dataclass(slots=True)
class _Citation:
    """A message's citation being read source by source (TM:578-594): where the reading
    stands, and the position it waits for when a source names one the walk has not read."""

    index: int
    event: Event
    sources: list[Any]
    seq: Any
    turn: Any
    step: Any
    # the next source to read
    at: int = 0
    # the position the source before ``at`` names, not yet read (-1: none)
    awaiting: int = -1
    seen: set[Any] = field(default_factory=set)
    chunks: list[Any] = field(default_factory=list)


_NOT_CHUNK, _NO_DATA, _RARE = 0, 1, 255
"""Bytes of :attr:`_CitedChunks.cite_kinds`: a position holding no assistant/chunk, a
chunk whose data is null or missing, and a chunk whose skeleton is kept by position
(:attr:`_CitedChunks.cite_rare`); every other byte numbers a shared skeleton."""


class _CitedChunks(_Refusals):
    """The token meter's ``_estimateProviderAssistant`` (TM:578-594): the seqs an
    assistant/message cites are earlier, unique chunks of its step that assemble (T2).

    The meter looks a cited seq up in the whole log, so this part keeps what the meter reads
    of every chunk position the walk passes, without the chunks' text: the open step's chunk
    heads whole (:attr:`step_chunks`, until a citation or the step's end flushes them), then
    one byte per position up to the last chunk (:attr:`cite_kinds`), the turn/step of each
    run of chunks sharing them (:attr:`key_at`), and the citations waiting for a position
    not read yet (the ledger's :attr:`waiting`). Invariants: a numbered skeleton never
    changes, so an assembly verdict is kept per sequence of numbers (:attr:`assemblies`);
    the buffered heads all name the open int step (:attr:`inv_turn`/:attr:`inv_step`)."""

    __slots__ = ("cite_kinds", "cite_skeletons", "cite_ids", "cite_rare", "cite_finishes", "assemblies", "key_at",
                 "key_turns", "key_steps", "step_chunks", "step_runs")

    # the open turn and step, kept by _TurnStepMachine: the buffered chunk heads name them
    inv_turn: Any
    inv_step: Any

    def __init__(self, ctx: CheckContext) -> None:
        super().__init__(ctx)
        # what a citation reads of each position: _NOT_CHUNK, _NO_DATA, _RARE or a skeleton's number
        self.cite_kinds = bytearray()
        self.cite_skeletons: list[Any] = [None, None, _SKIPPED]
        self.cite_ids: dict[Any, int] = {"usage": _SKIPPED_ID}
        self.cite_rare: dict[int, Any] = {}
        self.cite_finishes: set[int] = set()  # the numbers of finish skeletons: the last one cited decides the replay
        self.assemblies: dict[bytes, str | None] = {}
        # the turn/step of the chunks from each position on (a new entry where they change)
        self.key_at = array("q")
        self.key_turns: list[Any] = []
        self.key_steps: list[Any] = []
        # the chunk heads found naming the open int step (inv_turn/inv_step) since the last
        # flush, with the end of each packed run among them
        self.step_chunks: dict[int, Any] = {}
        self.step_runs: dict[int, int] = {}

    def cited_chunks(self, index: int, event: Event) -> None:
        """``_estimateProviderAssistant``: cited seqs are earlier, unique, same-step chunks that assemble.

        The meter looks a cited seq up in the whole log, so a damaged citation may name a chunk
        of the open step (the common case), a chunk of an earlier step with the same or another
        turn/step, a non-chunk, or (when seqs are not positions) a position after the message,
        even past the log's end. The walk reads none of them again: it keeps what the meter
        reads of every chunk it is handed (:meth:`note_chunk`), one byte per position up to
        the last chunk (:attr:`cite_kinds`: no chunk, a chunk without data, or the number of a
        shared *skeleton*, the chunk as :func:`_assembly_problem` reads it, without its text)
        and the turn/step of each run of chunks that share them (:attr:`key_at`; both are
        compared with :func:`_same`, as the meter compares them). A source naming a position
        not read yet makes the citation wait (:attr:`waiting`) until the walk is past it, or
        until :meth:`finish`, where a position past the log names no event."""
        sources = event.sourceEventSeqs
        if sources is MISSING:
            return
        if type(sources) is not list:
            self.hit(index, event, RuleId.T2, _L.METER, f"{_CITING}{_show(event.seq)} sourceEventSeqs is not iterable")
            return
        if self.step_chunks:
            self.flush()
        seq = event.seq
        data = event.data
        turn, step = _get(data, "turn"), _get(data, "step")
        if type(seq) is int and type(turn) is int and type(step) is int:
            cited = self.ascending_citation(sources, seq, turn, step, index)
            if cited is not None:
                problem = self.assembly_problem(cited)
                if problem is not None:
                    self.hit(index, event, RuleId.T2, _L.METER, f"{_CITING}{_show(seq)} cites chunks that do not assemble: {problem}")
                return
        citation = _Citation(index, event, sources, seq, turn, step)
        if not self.read_citation(citation, index + 1, None):
            self.waiting.append(citation)
            self.due = True

    def ascending_citation(self, sources: list[Any], seq: int, turn: int, step: int, index: int) -> bytes | None:
        """The numbers of the cited chunks' skeletons, each once in the order first cited, when the
        citation is the common one (else ``None``, and the general reading decides): strictly
        ascending ints from 0, all before the message and its seq, naming chunks of the int
        ``turn``/``step`` that the walk has read. Ascending seqs repeat none; each skeleton is
        taken once, since a chunk read as one already read changes nothing in the assembly (the
        members of a packed run share their head's)."""
        if not sources:
            return b""
        first, last = sources[0], sources[-1]
        if not (_INT_ONLY.issuperset(map(type, sources)) and first >= 0 and last < seq and last < index
                and all(map(lt, sources, islice(sources, 1, None)))):
            return None
        key_at = self.key_at
        if not key_at or key_at[-1] > first:
            return None
        key_turn, key_step = self.key_turns[-1], self.key_steps[-1]
        if not (key_turn.__class__ is int and key_turn == turn and key_step.__class__ is int and key_step == step):
            return None
        kinds = self.cite_kinds
        if last >= len(kinds):
            return None
        ids = kinds[first : last + 1] if last - first + 1 == len(sources) else bytearray(map(kinds.__getitem__, sources))
        if _NOT_CHUNK in ids or _NO_DATA in ids or _RARE in ids:
            return None
        once = bytes(dict.fromkeys(ids))
        finishes = self.cite_finishes
        if len(finishes) > 1 and len(finishes.intersection(once)) > 1:
            # the assembler keeps the last finish's replayState: repeat it after the first-cited order
            once += _BYTES[next(cid for cid in reversed(ids) if cid in finishes)]
        return once

    def assembly_problem(self, cited: bytes) -> str | None:
        """:func:`_assembly_problem` of the skeletons numbered ``cited``: a numbered skeleton never
        changes, so a sequence is judged once (most messages of a log cite alike), and up to
        :data:`_ASSEMBLY_MEMO` sequences are kept."""
        memo = self.assemblies
        if cited in memo:
            return memo[cited]
        skeletons = self.cite_skeletons
        problem = _assembly_problem([skeletons[cid] for cid in cited])
        if len(memo) < _ASSEMBLY_MEMO:
            memo[cited] = problem
        return problem

    def read_citation(self, citation: _Citation, passed: int, total: int | None) -> bool:
        """Read ``citation`` on from where it stands, as the meter reads it (the general
        reading); ``passed``: the positions before it are read; ``total``: the log's length, in
        :meth:`finish`. True once decided (a refusal is a hit on the message), False while it
        waits for a position not read yet (:attr:`_Citation.awaiting`)."""
        sources, seen, seq = citation.sources, citation.seen, citation.seq
        problem = None
        if citation.awaiting >= 0:
            if total is None and citation.awaiting >= passed:
                return False
            problem = self.cited_problem(citation, citation.awaiting, sources[citation.at - 1], total)
            citation.awaiting = -1
        count = len(sources)
        while problem is None and citation.at < count:
            source = sources[citation.at]
            citation.at += 1
            # numbers only reach ``seen``, where 1 and 1.0 coincide as in a JS Set
            if type(source) not in (int, float) or type(seq) not in (int, float):
                problem = f"source seq {_show(source)} is not a seq"
            elif source >= seq:
                problem = f"source seq {_show(source)} is not earlier"
            elif source in seen:
                problem = f"repeats source seq {_show(source)}"
            else:
                seen.add(source)
                if not is_safe_integer(source) or source < 0:
                    problem = f"source seq {_show(source)} names no event"
                elif total is None and source >= passed:
                    citation.awaiting = int(source)
                    return False
                else:
                    problem = self.cited_problem(citation, int(source), source, total)
        if problem is not None:
            self.hit(citation.index, citation.event, RuleId.T2, _L.METER, f"{_CITING}{_show(seq)} {problem}")
            return True
        problem = _assembly_problem(citation.chunks)
        if problem is not None:
            self.hit(citation.index, citation.event, RuleId.T2, _L.METER,
                     f"{_CITING}{_show(seq)} cites chunks that do not assemble: {problem}")
        return True

    def cited_problem(self, citation: _Citation, position: int, source: Any, total: int | None) -> str | None:
        """Why the meter refuses the (read) ``position`` a source names; else its skeleton joins
        the citation's chunks."""
        if total is not None and position >= total:
            return f"source seq {_show(source)} names no event"
        kinds = self.cite_kinds
        cid = kinds[position] if position < len(kinds) else _NOT_CHUNK
        if cid == _NOT_CHUNK:
            return f"source seq {_show(source)} is not assistant/chunk"
        if cid == _NO_DATA:
            return f"source seq {_show(source)} has no data"
        at = bisect_right(self.key_at, position) - 1
        if not _same(self.key_turns[at], citation.turn) or not _same(self.key_steps[at], citation.step):
            return f"source seq {_show(source)} belongs to another step"
        citation.chunks.append(self.cite_rare[position] if cid == _RARE else self.cite_skeletons[cid])
        return None

    def resume(self, passed: int, total: int | None) -> None:
        """Go on reading the waiting citations whose position is now read (all of them in :meth:`finish`)."""
        self.waiting = [c for c in self.waiting if not self.read_citation(c, passed, total)]
        self.recount()

    def flush(self) -> None:
        """Keep what a citation reads of the open step's chunk heads found so far (and their
        runs), as :meth:`note_chunk` keeps it: they all name the open int step, and the common
        chunk (an int index) is keyed inline, as :func:`_cite_key` keys it."""
        chunks, runs = self.step_chunks, self.step_runs
        turn, step, turns, steps = self.inv_turn, self.inv_step, self.key_turns, self.key_steps
        # ints, as the buffered chunks name them: an entry more for an equal key only repeats it
        if not (turns and turn == turns[-1] and turns[-1].__class__ is int
                and step == steps[-1] and steps[-1].__class__ is int):
            self.key_at.append(next(iter(chunks)))
            turns.append(turn)
            steps.append(step)
        kinds = self.cite_kinds
        known = self.cite_ids.get
        append, extend = kinds.append, kinds.extend
        at = len(kinds)
        for index, chunk in chunks.items():
            if index != at:
                extend(bytes(index - at))
            cid = None
            if chunk.__class__ is dict:
                kind = chunk.get("type")
                if kind == "usage":
                    cid = _SKIPPED_ID
                elif kind == "finish":
                    cid = known(("finish", _replay_blocks_null(chunk)))
                elif (position := chunk.get("index")).__class__ is int:
                    try:
                        if kind == "block-end":
                            block = chunk.get("block")
                            # the common block, judged as _block_problem judges it
                            cid = known((kind, position, None if block.__class__ is dict and block.get("text") is not None
                                         and block.get("type") in _TEXT_BLOCKS else _end_verdict(block)))
                        elif kind == "block-start":
                            cid = known((kind, position, chunk.get("blockType")))
                        else:
                            cid = known((kind, position, None))
                    except TypeError:  # an unhashable type or block type, read as _cite_key reads it
                        pass
            stop = runs.get(index) if runs else None
            if cid is None:
                cid = self.cite_ids.get(key, _RARE) if (key := _cite_key(chunk)) is not None else _RARE
                if cid == _RARE:
                    cid = self.new_skeleton(key, chunk, index, stop or index + 1)
            if stop is None:
                append(cid)
                at = index + 1
            else:
                extend(_BYTES[cid] * (stop - index))
                at = stop
        chunks.clear()
        runs.clear()

    def note_chunk(self, index: int, stop: int, data: Any) -> None:
        """Keep what a citation reads of the chunk head at ``index`` and the rest of its run
        (which share its turn, step and skeleton): its skeleton, or that it has no data."""
        kinds = self.cite_kinds
        if len(kinds) < index:
            kinds.extend(bytes(index - len(kinds)))
        if data is None or data is MISSING:
            kinds.extend(_BYTES[_NO_DATA] * (stop - index))
            return
        chunk = _get(data, "chunk")
        key = _cite_key(chunk)
        cid = self.cite_ids.get(key, _RARE) if key is not None else _RARE
        if cid == _RARE:
            cid = self.new_skeleton(key, chunk, index, stop)
        kinds.extend(_BYTES[cid] * (stop - index))
        self.note_key(index, _get(data, "turn"), _get(data, "step"))

    def note_key(self, index: int, turn: Any, step: Any) -> None:
        """The chunk at ``index`` names ``turn``/``step``: a new entry when they differ from the last."""
        turns = self.key_turns
        if not turns or not _same(turns[-1], turn) or not _same(self.key_steps[-1], step):
            self.key_at.append(index)
            turns.append(turn)
            self.key_steps.append(step)

    def new_skeleton(self, key: Any, chunk: Any, index: int, stop: int) -> int:
        """Number the skeleton of a chunk whose ``key`` is new; past the bytes' numbers, or for a
        chunk with no key (a container index, identified by the object), keep it by position."""
        skeletons = self.cite_skeletons
        if key is not None and len(skeletons) < _RARE:
            self.cite_ids[key] = len(skeletons)
            skeletons.append(_skeleton(chunk))
            if key.__class__ is tuple and key[0] == "finish":
                self.cite_finishes.add(len(skeletons) - 1)
            return len(skeletons) - 1
        skeleton = _skeleton(chunk)
        for position in range(index, stop):
            self.cite_rare[position] = skeleton
        return _RARE


_CITING = "token meter: assistant/message at seq "


_INT_ONLY = frozenset({int})
_CHUNK_TYPES = ("block-start", "text-delta", "reasoning-delta", "tool-call-delta", "block-end", "usage", "finish")
_ASSEMBLED = ("text", "reasoning", "tool-call")  # a tuple: block types may be unhashable JSON


_SKIPPED = {"type": "usage"}
_SKIPPED_ID = 2
"""The skeleton of every usage chunk (the assembler keeps its usage, which the meter does not read)."""
_FINISH = {"type": "finish"}
_FINISH_NULL_BLOCKS = {"type": "finish", "replayState": {"blocks": None}}


def _replay_blocks_null(chunk: dict[str, Any]) -> bool:
    """Whether a finish chunk's ``replayState.blocks`` is null: ``assembled()`` reads its length
    (DL:851-855), where undefined, or a replayState that is no object, is passed over."""
    replay = chunk.get("replayState")
    return replay.__class__ is dict and "blocks" in replay and replay["blocks"] is None
_ODD = object()
_TEXT_BLOCKS = ("text", "reasoning")
_BYTES = [bytes((cid,)) for cid in range(256)]


def _end_verdict(block: Any) -> Any:
    """What the assembler reads of a block-end's block: that there is none (null or missing), or
    :func:`_block_problem`'s verdict on it."""
    return _ODD if block is None or block is MISSING else _block_problem(block)


def _cite_key(chunk: Any) -> Any:
    """The key of the chunks :func:`_assembly_problem` reads alike (one skeleton each), or
    ``None`` for a chunk whose index is a container (identified by the object, as a JS Map
    does): its type, its index (a number by value, as the assembler's map keys it, anything
    else as :func:`number_key`), and what the assembler reads besides: the block type of a
    block-start, the verdict on the block of a block-end."""
    if chunk.__class__ is not dict:
        return ("value", chunk if chunk is None or chunk is MISSING else 0)
    kind = chunk.get("type", MISSING)
    if kind.__class__ is not str or kind not in _CHUNK_TYPES:
        return ("type", _show(kind))
    if kind == "usage":
        return "usage"
    if kind == "finish":
        return ("finish", _replay_blocks_null(chunk))
    index = chunk.get("index", MISSING)
    if index.__class__ is not int and index.__class__ is not float:
        if index is not None and index is not MISSING and index.__class__ is not str and index.__class__ is not bool:
            return None
        index = number_key(index)
    if kind == "block-start":
        block_type = chunk.get("blockType", MISSING)
        return (kind, index, block_type) if block_type.__class__ is str else (kind, index, _ODD, _show(block_type))
    if kind == "block-end":
        return (kind, index, _end_verdict(chunk.get("block")))
    return (kind, index, None)  # a delta: nothing else is read


def _skeleton(chunk: Any) -> Any:
    """A chunk :func:`_assembly_problem` reads as it reads ``chunk``, holding none of its text:
    the type and index, a block-start's block type, and for a block-end's block one that
    :func:`_block_problem` judges alike (:data:`_VERDICT_BLOCKS`)."""
    if chunk.__class__ is not dict:
        return chunk if chunk is None or chunk is MISSING else 0
    kind = chunk.get("type", MISSING)
    if kind.__class__ is not str or kind not in _CHUNK_TYPES:
        return {"type": kind}
    if kind == "usage":
        return _SKIPPED
    if kind == "finish":
        return _FINISH_NULL_BLOCKS if _replay_blocks_null(chunk) else _FINISH
    index = chunk.get("index", MISSING)
    if kind == "block-start":
        return {"type": kind, "index": index, "blockType": chunk.get("blockType", MISSING)}
    if kind == "block-end":
        block = chunk.get("block", MISSING)
        return {"type": kind, "index": index,
                "block": block if block is None or block is MISSING else _VERDICT_BLOCKS[_block_problem(block)]}
    return {"type": kind, "index": index}


_ASSEMBLY_MEMO = 4096
"""Skeleton sequences whose assembly verdict a check keeps (a bound on a hostile log's variety)."""


def _assembly_problem(chunks: list[Any]) -> str | None:
    """Why ``BlockAssembler`` (dsh-llm) plus ``estimateContent`` would throw on ``chunks``, or ``None``."""
    partials: dict[Any, dict[str, Any]] = {}
    null_blocks = False  # the last finish chunk's replayState.blocks is null
    for chunk in chunks:
        if type(chunk) is not dict:
            if chunk is None or chunk is MISSING:
                return "a chunk is missing"
            return "unknown chunk type undefined"
        kind = chunk.get("type", MISSING)
        if kind not in _CHUNK_TYPES:
            return f"unknown chunk type {_show(kind)}"
        if kind == "usage":
            continue
        if kind == "finish":
            null_blocks = _replay_blocks_null(chunk)
            continue
        index = chunk.get("index", MISSING)
        # A JS Map keys 1 and 1.0 alike, as Python's hashing does for numbers.
        key = index if type(index) is int or type(index) is float else number_key(index)
        partial = partials.get(key)
        if kind == "block-end":
            block = chunk.get("block", MISSING)
            if block is None or block is MISSING:
                return "a block-end chunk carries no block"
            if partial is None:
                partials[key] = {"type": _get(block, "type"), "block": block}
            elif "block" not in partial:
                partial["block"] = block
        elif partial is None:
            if kind == "block-start":
                partials[key] = {"type": chunk.get("blockType", MISSING)}
            else:
                partials[key] = {"type": "tool-call" if kind == "tool-call-delta" else "text"}
    for partial in partials.values():
        if partial.get("block") is None and partial["type"] not in _ASSEMBLED:
            return f"cannot assemble incomplete block of type {_show(partial['type'])}"
    if null_blocks:
        return "the last finish chunk's replayState.blocks is null"
    for partial in partials.values():
        block = partial.get("block")
        if block is not None:
            problem = _block_problem(block)
            if problem is not None:
                return problem
    return None


def _block_problem(block: Any) -> str | None:
    """Where ``estimateContent`` would throw on an assembled block, the common blocks decided inline."""
    kind = block.get("type") if type(block) is dict else None
    if kind == "text" or kind == "reasoning":  # the common blocks, measured as _estimate_problem does
        if block.get("text") is not None:
            return None
    elif kind == "tool-call" and block.get("name") is not None and block.get("arguments") is not None:
        return None
    return _estimate_problem(block)


def _estimate_problem(block: Any) -> str | None:
    """Where ``estimateContent`` (TM:23-38) would throw on one block (walked without recursion)."""
    stack = [block]
    while stack:
        block = stack.pop()
        kind = _get(block, "type")
        if kind in ("text", "reasoning"):
            if not _has_length(_get(block, "text")):
                return f"{kind} block text has no length"
        elif kind == "tool-call":
            if not (_has_length(_get(block, "name")) and _has_length(_get(block, "arguments"))):
                return "tool-call block name or arguments has no length"
        elif kind == "tool-result":
            content = _get(block, "content")
            if type(content) is str:
                continue  # a string is iterable: each character is priced as an unknown block (no read throws)
            if type(content) is not list:
                return "tool-result block content is not iterable"
            if any(inner is None or inner is MISSING for inner in content):
                return "tool-result block holds a null block"
            stack.extend(reversed(content))
    return None


_VERDICT_BLOCKS: dict[str | None, dict[str, Any]] = {
    None: {"type": "text", "text": ""},
    "text block text has no length": {"type": "text"},
    "reasoning block text has no length": {"type": "reasoning"},
    "tool-call block name or arguments has no length": {"type": "tool-call"},
    "tool-result block content is not iterable": {"type": "tool-result"},
    "tool-result block holds a null block": {"type": "tool-result", "content": [None]},
}
"""A block for each verdict :func:`_block_problem` gives (the skeleton of a block-end's block)."""


def _has_length(value: Any) -> bool:
    """``value.length`` does not throw (any value but null/undefined)."""
    return value is not None and value is not MISSING


class _TokenMeter(_CitedChunks):
    """The token meter's ``_foldEvent`` (TM:510-545): a step/start opens the meter's step and
    a step/end or assistant/message must match it (T1); each usage sample is folded as the
    meter's projections fold it (TM:195-290) and the totals are judged once the log is
    folded, as is the last request/context's window (TM:320) (T2).

    Invariants: :attr:`meter_step` is a copy of the data of the step/start the meter holds
    open (``{}`` when that data is no object), ``None`` once a step/end closes it;
    :attr:`usage_totals` sum the newest sample of each turn/step; :attr:`last_usage` is the
    newest sample, :attr:`usage_problem` the first whose counts are not non-negative
    integers, :attr:`last_context` the last request/context (each with its event). The
    end-of-log verdicts name one of those events, which :meth:`pinned` holds back from
    settling."""

    __slots__ = ("meter_step", "header_seen", "last_context", "usage_totals", "last_usage", "usage_problem")

    def __init__(self, ctx: CheckContext) -> None:
        super().__init__(ctx)
        self.meter_step: dict[str, Any] | None = None
        self.header_seen = False
        self.last_context: tuple[int, Event] | None = None
        self.usage_totals: tuple[Any, ...] = (0, 0, 0, 0)
        self.last_usage: tuple[Any, Any, tuple[Any, ...], int, Event] | None = None
        self.usage_problem: tuple[int, Event, str] | None = None

    def meter(self, index: int, event: Event, kind: str, data: Any) -> None:
        """The token meter's ``_foldEvent`` pairing (TM:510-545) and cited chunks (TM:578-594)."""
        rule = RuleId.T1
        if kind == "request/header":
            self.header_seen = True
        elif kind == "request/context":
            self.last_context = (index, event)
        elif kind == "step/start":
            if self.meter_step is not None:
                self.hit(index, event, rule, _L.METER, f"token meter: step/start at seq {_show(event.seq)} arrived before turn "
                         f"{_show(self.meter_step.get('turn', MISSING))}/step {_show(self.meter_step.get('step', MISSING))} ended")
            self.meter_step = dict(data) if type(data) is dict else {}
        elif kind in ("step/end", "assistant/message"):
            opened = self.meter_step
            if data is None or data is MISSING or opened is None or not _same(
                opened.get("turn", MISSING), _get(data, "turn")
            ) or not _same(opened.get("step", MISSING), _get(data, "step")):
                self.hit(index, event, rule, _L.METER, f"token meter: {kind} at seq {_show(event.seq)} has no matching step/start event")
                if kind == "step/end":
                    self.meter_step = None
                return
            if kind == "step/end":
                self.meter_step = None
            elif _get(data, "usage") is not MISSING:
                self.usage_sample(index, event, data["usage"], released_reads=self.ctx.version == 0)
                if self.header_seen:
                    self.cited_chunks(index, event)

    def usage_sample(self, index: int, event: Event, usage: Any, *, released_reads: bool) -> None:
        """Fold one usage sample as the meter's projections do (TM:195-290): per turn/step the
        newest sample replaces the earlier one in running totals, and the newest overall sets
        the prompt pressure; both are checked once the log is folded. ``released_reads``: the
        released payload check reads this sample (an assistant/message of a format-0 file,
        V01:345; it never reads chunk payloads, V01:1918, nor a format-1 payload)."""
        data = event.data
        turn, step = _get(data, "turn"), _get(data, "step")
        buckets = _exact_buckets(usage)
        if buckets is None:
            if usage is None or usage is MISSING:
                self.hit(index, event, RuleId.T2, _L.METER, f"token meter: the usage sample at seq {_show(event.seq)} is missing")
                return
            if released_reads and not _released_usage(usage):
                self.hit(index, event, RuleId.T2, _L.RELEASED, f"token meter: the usage sample at seq {_show(event.seq)} is not "
                         "exactly {inputTokens, outputTokens, totalTokens?, cacheReadTokens?, cacheWriteTokens?, "
                         "reasoningTokens?} with non-negative integer counts")
            fields = usage if type(usage) is dict else {}  # a primitive's properties read as undefined
            buckets = tuple(_js_count(fields.get(k, MISSING), optional=k.startswith("cache"))
                            for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"))
            if self.usage_problem is None and not all(_count_ok(b) for b in buckets):
                self.usage_problem = (index, event, "holds a token count that is not a non-negative integer")
        last = self.last_usage
        previous = last[2] if last is not None and _same(last[0], turn) and _same(last[1], step) else None
        if previous is None or not all(map(strict_equal, previous, buckets)):  # an equal repeat is a no-op (TM:262)
            totals, before = self.usage_totals, previous or (0, 0, 0, 0)
            if _INT_ONLY.issuperset(map(type, (*totals, *before, *buckets))):  # the common case: plain sums
                self.usage_totals = tuple(map(add, map(sub, totals, before), buckets))
            else:
                # `totals - (previous?.x ?? 0) + next` in JavaScript: a string count concatenates, and a later
                # subtraction turns the text back into a number ("02" - "2" is 0)
                self.usage_totals = tuple(
                    js_add(js_subtract(t, 0 if p is None or p is MISSING else p), b)
                    for t, p, b in zip(totals, before, buckets)
                )
        self.last_usage = (turn, step, buckets, index, event)

    def usage_verdict(self) -> None:
        """The projections' schemas: every total and the newest pressure are non-negative integers."""
        if self.last_usage is None:
            return
        newest = self.last_usage[2]
        pressure = js_add(js_add(newest[0], newest[2]), newest[3])
        if all(_count_ok(t) for t in self.usage_totals) and _count_ok(pressure):
            return
        index, event, problem = self.usage_problem or (
            *self.last_usage[3:], "leaves token totals that are not non-negative integers")
        self.hit(index, event, RuleId.T2, _L.METER, f"token meter: the usage sample at seq {_show(event.seq)} {problem}")

    def context_window(self) -> None:
        """The last request/context's contextWindow is the pressure projection's positive-integer window (TM:320)."""
        if self.last_context is None:
            return
        index, event = self.last_context
        window = _get(event.data, "contextWindow")
        if window is not MISSING and not (is_safe_integer(window) and window > 0):
            self.hit(index, event, RuleId.T2, _L.METER,
                     f"token meter: contextWindow {_show(window)} is not a positive integer")

    def pinned(self) -> frozenset[int | None]:
        """The events an end-of-log verdict may still name: the last request/context, the first
        problem sample and the newest usage sample so far."""
        last = self.last_usage[3] if self.last_usage is not None else None
        problem = self.usage_problem[0] if self.usage_problem is not None else None
        context = self.last_context[0] if self.last_context is not None else None
        return frozenset((context, last, problem))


def _js_count(value: Any, *, optional: bool) -> Any:
    """A usage count as the projections read it: the value itself, with ``?? 0`` for the
    cache counts (their arithmetic is JavaScript's, :func:`js_add`)."""
    if optional and (value is None or value is MISSING):
        return 0
    return value


_USAGE_KEYS = ("inputTokens", "outputTokens", "totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


_USAGE_KEY_SET = frozenset(_USAGE_KEYS)


def _exact_buckets(usage: Any) -> tuple[int, int, int, int] | None:
    """The common sample, decided without the general reading: the released shape with exact
    int counts, whose buckets (input, output, cache read, cache write) are then valid too."""
    if (type(usage) is dict and "inputTokens" in usage and "outputTokens" in usage and usage.keys() <= _USAGE_KEY_SET
            and _INT_ONLY.issuperset(map(type, usage.values()))
            and min(usage.values()) >= 0 and max(usage.values()) <= MAX_SAFE_INTEGER):
        return usage["inputTokens"], usage["outputTokens"], usage.get("cacheReadTokens", 0), usage.get("cacheWriteTokens", 0)
    return None


def _released_usage(usage: Any) -> bool:
    """The released codec's ``tokenUsageValue`` (V01:638-646)."""
    return (type(usage) is dict and "inputTokens" in usage and "outputTokens" in usage
            and all(k in _USAGE_KEYS and is_safe_integer(v) and v >= 0 for k, v in usage.items()))


def _count_ok(value: Any) -> bool:
    """The zod schema ``number().int().nonnegative()``: a number (not a string, boolean or
    null), finite, integral, not negative and, as zod 4's ``int()`` bounds it, a safe integer
    (the meter refuses 2**53: "Integers must be within the safe integer range")."""
    return is_number(value) and not math.isnan(value) and 0 <= value <= MAX_SAFE_INTEGER and float(value).is_integer()


class _TurnStepMachine(_TokenMeter):
    """The open turn and step as the invariant companion's ``validateEvent`` (SI:20-102) and
    the released walk's turn/step checks (V01:2270) track them (T1; step numbering is
    T3). Their checks coincide, so a refusal names both (:meth:`both`), bar two: a todo/write
    outside a turn (the released walk has no todo/write case) and a step-scoped event whose
    turn and step equal the machine's while no turn or step is open (the companion only
    compares them; the released walk also requires an open step).

    Invariants: :attr:`inv_turn`/:attr:`inv_step` are the turn and step the last turn/start
    and step/start named, ``None`` once closed; :attr:`next_turn`/:attr:`next_step` are the
    numbers the next ones must carry. After a refusal the transition applies anyway, so one
    broken event does not hide the next. Before the open step changes, the meter's buffered
    chunk heads of it are flushed (they are keyed by the open step)."""

    __slots__ = ("inv_turn", "inv_step", "next_turn", "next_step")

    def __init__(self, ctx: CheckContext) -> None:
        super().__init__(ctx)
        self.inv_turn: Any = None
        self.inv_step: Any = None
        self.next_turn = 1
        self.next_step = 1

    def both(self, index: int, event: Event, rule: RuleId, message: str) -> None:
        """A refusal the invariant companion and the released walk share (their checks coincide)."""
        self.hit(index, event, rule, _L.INVARIANTS, message)
        self.hit(index, event, rule, _L.RELEASED, message)

    def structure(self, index: int, event: Event, kind: str, data: Any) -> None:
        """The invariant companion's ``validateEvent`` plus the released walk's turn/step checks."""
        rule = RuleId.T1
        try:
            if kind in _STEP_SCOPED or (kind == "tool/result" and event.surfaceOp == "append"):
                if type(data) is dict:
                    turn, step = data.get("turn", MISSING), data.get("step", MISSING)
                    inv_turn, inv_step = self.inv_turn, self.inv_step
                    # the common event names the open int step: require_open_step finds nothing
                    if not (type(turn) is int and type(step) is int and type(inv_turn) is int and type(inv_step) is int
                            and turn == inv_turn and step == inv_step):
                        self.require_open_step(index, event, kind, rule, turn, step)
                else:
                    self.require_open_step(index, event, kind, rule, _field(data, "turn"), _field(data, "step"))
                if kind == "step/end":
                    if self.step_chunks:
                        self.flush()
                    self.inv_step = None
                    self.next_step += 1
            elif kind == "turn/start":
                if self.step_chunks:
                    self.flush()
                turn = _field(data, "turn")
                if self.inv_turn is not None:
                    self.both(index, event, rule, f"turn/start {_show(turn)} while turn {_show(self.inv_turn)} is still open")
                if not strict_equal(turn, self.next_turn):
                    self.both(index, event, rule, f"turn/start expected turn {self.next_turn}, got {_show(turn)}")
                self.inv_turn, self.inv_step, self.next_step = turn, None, 1
            elif kind == "turn/end":
                if self.step_chunks:
                    self.flush()
                turn = _field(data, "turn")
                if not strict_equal(self.inv_turn, turn):
                    self.both(index, event, rule, f"turn/end {_show(turn)} does not match open turn {_show(self.inv_turn)}")
                if self.inv_step is not None:
                    self.both(index, event, rule, f"turn/end {_show(turn)} while step {_show(self.inv_step)} is still open")
                self.inv_turn, self.inv_step = None, None
                self.next_turn += 1
            elif kind == "step/start":
                turn, step = _field(data, "turn"), _field(data, "step")
                if not strict_equal(self.inv_turn, turn):
                    self.both(index, event, rule, f"step/start in turn {_show(turn)} but open turn is {_show(self.inv_turn)}")
                if self.inv_step is not None:
                    self.both(index, event, rule, f"step/start {_show(step)} while step {_show(self.inv_step)} is still open")
                if not strict_equal(step, self.next_step):
                    self.both(index, event, RuleId.T3, f"step/start expected step {self.next_step} in turn {_show(turn)}, got {_show(step)}")
                if self.step_chunks:
                    self.flush()
                self.inv_step = step
            elif kind == "tool/result":
                if self.inv_turn is None:
                    self.both(index, event, rule, "tool/result surface replacement appended outside any open turn")
            elif kind in _TURN_SCOPED and self.inv_turn is None:
                message = f"{kind} appended outside any open turn (core execution events must be turn-enclosed)"
                if kind == "todo/write":
                    # The released walk has no todo/write case (V01:2369-2375 check only request/*).
                    self.hit(index, event, rule, _L.INVARIANTS, message)
                else:
                    self.both(index, event, rule, message)
        except _Unreadable:
            self.both(index, event, rule, f"{kind} data is {_show(data) if data is not MISSING else 'missing'}, so its turn cannot be read")

    def require_open_step(self, index: int, event: Event, kind: str, rule: RuleId, turn: Any, step: Any) -> None:
        """A step-scoped event must name the open turn/step: both moments refuse another one,
        the released walk alone one that matches while none is open."""
        inv_turn, inv_step = self.inv_turn, self.inv_step
        shared = not _same(inv_turn, turn) or not _same(inv_step, step)
        if shared or inv_turn is None or inv_step is None:
            message = f"{kind} names turn {_show(turn)}/step {_show(step)} but open is turn {_show(inv_turn)}/step {_show(inv_step)}"
            if shared:
                self.both(index, event, rule, message)
            else:
                self.hit(index, event, rule, _L.RELEASED, message)

