"""The tool ledger and the wire's lenient surface fold as state walks
(:class:`~dshfuzz.checker._lifecycle.ToolLedgerWalk`, :class:`~dshfuzz.checker._wire.SurfaceFold`):
fed head by head in the shared loop, they publish (:func:`~dshfuzz.checker._lifecycle.tool_ledger`,
:func:`~dshfuzz.checker._wire.surface_indices`, :func:`~dshfuzz.checker._wire.wire_messages`)
the same ledger, surface and request history as the same walks handed every event of the
whole log outside a check, and every refusal and unresolved advert of the ledger carries
the event at its position, on generated logs, every mutator's mutants, logs with replaces
that shadow, skip or repeat nodes, and legacy flat messages; and the W rules, judged from
what the walks kept, read no event outside it."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from checker_logs import assistant_message, ev, header, minimal_events, session_log, tool_call_block

from dshfuzz.checker import CheckOptions, check_log, implemented_rules
from dshfuzz.checker._context import CheckContext
from dshfuzz.checker._lifecycle import TOOL_LEDGER, ToolLedgerWalk, tool_ledger
from dshfuzz.checker._wire import FINAL_SURFACE, SurfaceFold, WireStream, surface_indices, wire_messages
from dshfuzz.checker._run import WALKS, _plan
from dshfuzz.generators import generate
from dshfuzz.model import SessionLog, encode_jsonl, parse_log
from dshfuzz.mutators import MUTATORS, Inapplicable, apply_seeded


def _grabbed_at_finish(log: SessionLog, walk: type, grab: Callable[[CheckContext], list[Any]]) -> list[Any]:
    """What ``grab`` reads from the check's context once ``walk`` has finished, in a full check."""
    implemented_rules()
    published: list[Any] = []
    finish = walk.finish

    def keep(self: Any) -> Any:
        found = finish(self)
        published.extend(grab(self.ctx))
        return found

    walk.finish = keep  # type: ignore[method-assign]
    try:
        check_log(log, CheckOptions(strict=True))
    finally:
        walk.finish = finish  # type: ignore[method-assign]
    return published


def _whole(log: SessionLog) -> list[Any]:
    """The ledger, surface positions and request history of the ledger and fold walks handed
    every event of the log in turn, outside a check (no shared loop, no window)."""
    ctx = CheckContext(log, CheckOptions())
    walks = [ToolLedgerWalk(ctx), SurfaceFold(ctx)]
    for index, event in enumerate(log.events):
        kind = event.raw.get("type") if type(event.raw) is dict else None
        for walk in walks:
            method = walk.types.get(kind) if type(kind) is str else None
            if method is not None:
                getattr(walk, method)(index, event)
    for walk in walks:
        walk.finish()
    return [tool_ledger(ctx), surface_indices(ctx), wire_messages(ctx)]


def _published(log: SessionLog) -> tuple[Any, Any]:
    """What a full check's walks published (ledger, surface positions, request history), and
    the same from the walks handed the whole log."""
    published = _grabbed_at_finish(
        log, WireStream, lambda ctx: [tool_ledger(ctx), surface_indices(ctx), wire_messages(ctx)])
    return published, _whole(log)


def _located_where_they_stand(log: SessionLog, ledger: Any) -> None:
    """Every refusal carries the stored event at its position, every unresolved advert its
    assistant/message."""
    for refusal in (*ledger.released, *ledger.invariants):
        assert refusal.event is log.events[refusal.index]
    for advert in (*ledger.unresolved, *ledger.tail_pending):
        assert advert.message is log.events[advert.message_index]


def _replaced(events: list[Any], rng: random.Random) -> list[Any]:
    """``events`` with a few surface events turned into replaces of random ranges (some not
    current, some ending before they start) and a few seqs repeated."""
    events = copy.deepcopy(events)
    surface = [e for e in events if type(e) is dict and "surfaceOp" in e]
    for event in rng.sample(surface, min(len(surface), rng.randint(1, 6))):
        start, end = rng.randrange(len(events)), rng.randrange(len(events))
        event["surfaceOp"] = {"op": "replace", "start": start, "end": end, "startSeq": start, "endSeq": end}
        event["sourceEventSeqs"] = list(range(start, end + 1))
    for event in rng.sample(surface, min(len(surface), rng.randint(0, 2))):
        event["seq"] = rng.randrange(len(events))
    return events


def _logs() -> list[SessionLog]:
    logs = []
    for version in (0, 1):
        bases = list(generate(6, 40 + version, format_version=version, max_events=200, turns=(1, 4)))
        logs += [parse_log(encode_jsonl(b.header, b.batch_events())) for b in bases]
        rng = random.Random(version)
        for name, mutator in sorted(MUTATORS.items()):
            base = bases[rng.randrange(len(bases))]
            try:
                mutant = apply_seeded(mutator, base, rng.randrange(1 << 30))
            except Inapplicable:
                continue
            logs.append(parse_log(mutant.data))
    return logs


def test_the_ledger_and_the_surface_run_before_every_walk_that_reads_them() -> None:
    implemented_rules()
    for version in (0, 1, 3):
        order = [w.cls for w in _plan(version, None)[1]]
        readers = [w.cls for w in WALKS if w.reads & {TOOL_LEDGER, FINAL_SURFACE}]
        assert readers and max(order.index(ToolLedgerWalk), order.index(SurfaceFold)) < min(map(order.index, readers))


def test_the_walks_publish_what_the_whole_log_gives() -> None:
    logs = _logs()
    assert len(logs) > 40
    rng = random.Random(7)
    for log in list(logs):
        events = [e.raw for e in log.events]
        logs.append(session_log(log.header.raw, _replaced(events, rng)))
    assert sum(1 for log in logs if any(type(e.raw) is dict and type(e.raw.get("surfaceOp")) is dict for e in log.events)) > 40
    for log in logs:
        walked, whole = _published(log)
        assert walked == whole
        _located_where_they_stand(log, walked[0])


def test_a_legacy_flat_message_is_upgraded_where_it_stands() -> None:
    events: list[Any] = minimal_events()
    flat = ev(0, "assistant/message", {"turn": 1, "step": 1, "content": [tool_call_block("c1")],
                                       "provenance": {"provider": "p"}}, surfaceOp="append")
    result = ev(0, "tool/result", {"turn": 1, "step": 1, "callId": "c2", "content": [], "isError": False},
                surfaceOp="append")
    events[5:5] = [flat, result]
    for i, value in enumerate(events):
        value["seq"] = i
    walked, whole = _published(session_log(header(), events))
    assert walked == whole
    ledger = walked[0]
    assert [r.code for r in ledger.released].count("no-lifecycle") == 1
    assert any(a.call_id == "c1" for a in ledger.unresolved)
    assert ("c1",) in [m.calls for m in walked[2]] and "c2" in [m.answers for m in walked[2]]


def test_the_wire_rules_read_only_the_events_the_walks_kept() -> None:
    """Every W finding of these logs is located at an event the fold or the ledger kept: the
    check's events are hidden from the wire walk's finish, which would fail on any other."""
    implemented_rules()
    finish = WireStream.finish
    fired: list[Any] = []

    def hidden(self: WireStream) -> Any:
        ctx = self.ctx
        kept = ctx.events
        ctx.events = _Hidden()  # type: ignore[assignment]
        try:
            found = list(finish(self))
        finally:
            ctx.events = kept  # type: ignore[assignment]
        fired.extend(f.rule for f in found)
        return found

    rng = random.Random(11)
    WireStream.finish = hidden  # type: ignore[method-assign]
    try:
        for log in _logs()[:40]:
            check_log(log, CheckOptions(strict=True))
            check_log(session_log(log.header.raw, _replaced([e.raw for e in log.events], rng)), CheckOptions(strict=True))
    finally:
        WireStream.finish = finish  # type: ignore[method-assign]
    assert {"W3", "W4", "W5"} <= {str(r) for r in fired}


class _Hidden:
    def __getitem__(self, position: int) -> Any:
        raise AssertionError(f"the wire walk read event {position} at random")

    def __len__(self) -> int:
        raise AssertionError("the wire walk read the whole log")
