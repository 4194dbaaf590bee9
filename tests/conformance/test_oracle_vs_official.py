"""The reference oracle agrees with the official layers it models.

For every log judged, each model's verdict is compared with its official layer:

- ``fold_surface`` vs ``fold``: same nodes and replacements; or the same message,
  at the same event (the official prefix before it folds, the prefix through it
  does not).
- ``check_enclosure`` vs ``invariants``, where ``seed`` accepts (the companion only
  ever sees a seed that passed): same verdict, message and failing event.
- ``check_meter`` vs ``meter``: same verdict and message (meter messages name the
  seq); the projections' schema checks on the token arithmetic are out of scope.
- ``replay_inbox`` vs ``inbox``: same verdict, wrapper message (it names the seq)
  and cause.
- ``check_lifecycle`` vs ``released``: where the official layer accepts, or refuses
  with a relationship error, the same verdict, message and failing event; a refusal
  by the migration's payload validation is outside the model.
- ``wire_stream`` vs ``wire``, where ``seed`` accepts: the same request messages,
  or the same refusal.

Logs: the valid fixture, the real sessions, every generated log, random edits of
them (surface ops, ranges, sourceEventSeqs, dropped, duplicated and swapped events,
turn and step numbers, dropped tool results, inbox splices, compaction ranges),
and the mutants of every incident mutator.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, REAL_SESSIONS, shared_params
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.generators import session_logs
from dshfuzz.model import loads, parse_log, read_log
from dshfuzz.mutators import MUTATORS, mutants
from dshfuzz.oracle import (
    check_enclosure,
    check_lifecycle,
    check_meter,
    fold_surface,
    replay_inbox,
    wire_stream,
)

pytestmark = pytest.mark.official

Events = list[Any]
CHECKED_LAYERS = ["fold", "seed", "invariants", "meter", "inbox", "released", "wire"]

# Messages of assertReleasedArtifactRelationships (V01:2270-2570) and of the migration's
# delivery-marker check (V01:1944): the released refusals the lifecycle model speaks for.
RELATIONSHIP_MESSAGE = re.compile(
    "("
    + "|".join(
        (
            r"does not open expected turn \d+",
            r"turn/end \S+ has no matching open turn",
            r"crosses an open (step|compaction)",
            r"does not match the open turn and next step",
            r"does not match an open turn and step",
            r"leaves unresolved tool call .*",
            r"repeats advertised tool call .*",
            r"does not match one advertised tool call",
            r"has no advertised tool lifecycle",
            r"is not the exact TOOL_NOT_STARTED repair",
            r"is outside an open turn",
            r"requires a surfaceOp marker",
            r"replacement range is not on the current surface",
            r"replacement sourceEventSeqs omit a shadowed surface node",
            r"overlaps an open compaction",
            r"has no matching compaction/start",
            r"does not match the open turn",
            r"compaction/summary repeats",
            r"do not name an exact current surface span",
            r"changes its owner turn",
            r"successful compaction/end requires one summary",
            r"messageSeqs must be empty exactly for a user title",
            r"messageSeqs must cite earlier human user/message events",
            r"messages do not represent messageSeqs",
            r"repeats commandId .*|has no prior command/run|has invalid sourceEventSeq",
            r"llm/retry.*",
            r"tool/code-dispatch.*(rootCallId|unique start|its start|subCallId)",
            r"delivery marker names the wrong Session",
        )
    )
    + r")$"
)


def describe(events: Events) -> str:
    return "\n".join(json.dumps(e)[:300] for e in events)


class Judge:
    """One log's official verdicts, and the comparisons against each model."""

    def __init__(self, official: Any, events: Events, header: Any) -> None:
        self.official, self.events, self.header = official, events, header
        self.verdicts = official.check(events=events, header=header, layers=CHECKED_LAYERS)

    def first_failure_is(self, layer: str, index: int) -> bool:
        """Whether the official ``layer`` accepts the prefix before ``index`` and refuses the one through it.

        A fork's prefix shorter than its inherited part is no log the released codec
        reads (it refuses the header), so there the position cannot be asked; the
        message comparison stands alone.
        """
        inherited = self.header.get("seedLength", 0) if isinstance(self.header, dict) else 0
        if layer == "released" and isinstance(inherited, int) and inherited > index:
            return True
        before = self.official.check(events=self.events[:index], header=self.header, layers=[layer])[layer]
        through = self.official.check(events=self.events[: index + 1], header=self.header, layers=[layer])[
            layer
        ]
        return before.ok and not through.ok

    def fold(self) -> None:
        mine, theirs = fold_surface(self.events), self.verdicts["fold"]
        assert mine.ok == theirs.ok, (mine, theirs.error)
        if mine.ok:
            result = theirs.result
            assert list(mine.state.nodes) == result["nodes"]
            assert [
                {"seq": r.seq, "start": r.start, "end": r.end, "shadowedSeqs": list(r.shadowed_seqs)}
                for r in mine.state.replacements
            ] == result["replacements"]
        else:
            assert mine.message == theirs.error.message, (mine, theirs.error)
            assert self.first_failure_is("fold", mine.seq), mine

    def enclosure(self) -> None:
        if not self.verdicts["seed"].ok:
            return  # the companion never runs on a seed the session refuses
        mine, theirs = check_enclosure(self.events, self.header), self.verdicts["invariants"]
        assert mine.ok == theirs.ok, (mine, theirs.error)
        if not mine.ok:
            if mine.code == "malformed-event":
                assert theirs.error.name == "TypeError", (mine, theirs.error)
            else:
                assert mine.message == theirs.error.message, (mine, theirs.error)
            assert self.first_failure_is("invariants", mine.seq), mine

    def meter(self) -> None:
        mine, theirs = check_meter(self.events, self.header), self.verdicts["meter"]
        if not theirs.ok and theirs.error.name == "ZodError":
            return  # the projection schemas judge the token arithmetic, which is not modelled
        assert mine.ok == theirs.ok, (mine, theirs.error)
        if not mine.ok:
            if mine.code == "malformed-event":
                assert theirs.error.name == "TypeError", (mine, theirs.error)
            else:
                assert mine.message == theirs.error.message, (mine, theirs.error)

    def inbox(self) -> None:
        mine, theirs = replay_inbox(self.events, self.header), self.verdicts["inbox"]
        assert mine.ok == theirs.ok, (mine, theirs.error)
        if mine.ok:
            assert [list(mine.state.next_turn), list(mine.state.next_step)] == [
                theirs.result["nextTurn"],
                theirs.result["nextStep"],
            ]
        else:
            cause = theirs.error.cause
            assert mine.message.startswith(theirs.error.message + ": "), (mine, theirs.error)
            if mine.code == "inbox-malformed-splice" or mine.code == "malformed-event":
                assert (cause.name if cause else theirs.error.name) == "TypeError", (mine, theirs.error)
            else:
                assert mine.message == f"{theirs.error.message}: {cause.message}", (mine, theirs.error)

    def lifecycle(self) -> None:
        theirs = self.verdicts.get("released")
        if theirs is None:
            return
        in_domain = theirs.ok or bool(RELATIONSHIP_MESSAGE.search(theirs.error.message))
        if not in_domain:
            return  # refused by the migration's payload validation, before any relationship
        mine = check_lifecycle(self.events, self.header)
        assert mine.ok == theirs.ok, (mine, theirs.error)
        if not mine.ok:
            assert theirs.error.message.endswith(mine.message), (mine, theirs.error)
            assert self.first_failure_is("released", mine.seq), mine

    def wire(self) -> None:
        if not self.verdicts["seed"].ok:
            return  # Session.create refuses first; the wire model folds only the surface
        mine, theirs = wire_stream(self.events, self.header), self.verdicts["wire"]
        assert mine.ok == theirs.ok, (mine, theirs.error)
        if mine.ok and theirs.result["body"] is not None:
            assert [m.body for m in mine.state.messages] == theirs.result["body"]["messages"]
        elif not mine.ok:
            assert mine.message == theirs.error.message, (mine, theirs.error)

    def all(self) -> None:
        for check in (self.fold, self.enclosure, self.meter, self.inbox, self.lifecycle, self.wire):
            check()


def fixture_log(fixtures_dir: Path) -> tuple[Any, Events]:
    lines = [loads(line) for line in (fixtures_dir / "valid-v0.unpacked.jsonl").read_text().splitlines()]
    return lines[0], lines[1:]


def test_the_valid_fixture_is_accepted_alike(official: Any, fixtures_dir: Path) -> None:
    header, events = fixture_log(fixtures_dir)
    judge = Judge(official, events, header)
    assert all(v.ok for v in judge.verdicts.values())
    judge.all()
    assert fold_surface(events).state.nodes == (45, 39, 51, 59, 64, 73)


# Real logs whose stored shapes the v0->v1 migration rewrites in ways the relationships
# see (flat messages, compact/*, identity-less user messages, steering) are judged by
# the released layer after that rewrite; the lifecycle model reads them as stored.
LEGACY_RELATIONSHIP_SHAPES = ("flat", "compact/", "without-identity", "steering")


def real_sessions(manifest: Path) -> list[tuple[str, bool]]:
    files = json.loads(manifest.read_text())["files"]
    return [
        (f["name"], not any(s in shape for shape in f["legacy_shapes"] for s in LEGACY_RELATIONSHIP_SHAPES))
        for f in files
    ]


@shared_params(
    "name,as_stored",
    "real-sessions/manifest.json",
    lambda manifest: [pytest.param(*case, id=case[0]) for case in real_sessions(manifest)],
)
def test_real_sessions_are_judged_alike(
    official: Any, real_sessions_dir: Path, name: str, as_stored: bool
) -> None:
    log = read_log(real_sessions_dir / "concrete" / name)
    events = [e.raw for e in log.events]
    judge = Judge(official, events, log.header.raw if log.header else None)
    judge.fold()
    judge.enclosure()
    judge.meter()
    judge.inbox()
    judge.wire()
    if as_stored:
        judge.lifecycle()


@given(session_logs(max_events=120))
def test_every_generated_log_is_accepted_alike(official: Any, log: Any) -> None:
    judge = Judge(official, log.events, log.header)
    judge.all()
    for model in (check_enclosure, check_meter, replay_inbox, check_lifecycle):
        assert model(log.events, log.header).ok, describe(log.events)


# -- random edits ---------------------------------------------------------------------------------

SURFACE_TYPES = ("user/message", "assistant/message", "tool/result")


def renumber(events: Events) -> None:
    for index, event in enumerate(events):
        if isinstance(event, dict):
            event["seq"] = index


@st.composite
def surface_ops(draw: Any, n: int) -> Any:
    seq = st.integers(0, n + 1)
    return draw(
        st.one_of(
            st.just("append"),
            st.builds(lambda s, e: {"op": "replace", "start": s, "end": e}, seq, seq),
            st.sampled_from(
                [
                    None,
                    "prepend",
                    [],
                    {"op": "replace", "start": 0},
                    {"op": "replace", "start": 1, "end": 2.5},
                    {"op": "replace", "start": 0, "end": 0, "x": 1},
                ]
            ),
        )
    )


@st.composite
def edit(draw: Any, events: Events) -> str:
    """Apply one random edit to ``events`` in place; return its description."""
    n = len(events)
    if n == 0:
        return "none"
    i = draw(st.integers(0, n - 1))
    event = events[i]
    data = event.get("data") if isinstance(event, dict) else None
    kind = draw(
        st.sampled_from(
            [
                "op",
                "sources",
                "drop",
                "drop-gap",
                "dup",
                "swap",
                "turn-step",
                "drop-results",
                "inbox",
                "range",
                "null-data",
            ]
        )
    )
    if kind == "op":
        surface = [k for k, e in enumerate(events) if isinstance(e, dict) and e.get("type") in SURFACE_TYPES]
        i = draw(st.sampled_from(surface)) if surface and draw(st.booleans()) else i
        op = draw(surface_ops(n))
        if op is None and draw(st.booleans()):
            events[i].pop("surfaceOp", None)
        else:
            events[i]["surfaceOp"] = op
    elif kind == "sources":
        sources = draw(st.one_of(st.none(), st.lists(st.integers(-1, n + 1), max_size=5), st.just(7)))
        if sources is None:
            events[i].pop("sourceEventSeqs", None)
        else:
            events[i]["sourceEventSeqs"] = sources
    elif kind == "drop":
        del events[i]
        renumber(events)
    elif kind == "drop-gap":
        del events[i]
    elif kind == "dup":
        events.insert(i + 1, copy.deepcopy(event))
        renumber(events)
    elif kind == "swap" and i + 1 < n:
        events[i], events[i + 1] = events[i + 1], events[i]
        renumber(events)
    elif kind == "turn-step" and isinstance(data, dict):
        key = draw(st.sampled_from(["turn", "step"]))
        data[key] = draw(st.one_of(st.none(), st.integers(0, 4), st.just("1")))
    elif kind == "drop-results":
        results = [k for k, e in enumerate(events) if e.get("type") == "tool/result"]
        for k in reversed(draw(st.lists(st.sampled_from(results), unique=True)) if results else []):
            del events[k]
        renumber(events)
    elif kind == "inbox" and isinstance(data, dict) and event.get("type") == "agent/inbox/spliced":
        data[draw(st.sampled_from(["start", "removedCount"]))] = draw(st.integers(-1, 3))
    elif kind == "range" and isinstance(data, dict) and isinstance(data.get("shadowedRange"), dict):
        data["shadowedRange"][draw(st.sampled_from(["start", "end"]))] = draw(st.integers(0, n))
    elif kind == "null-data":
        events[i]["data"] = None
    return f"{kind}@{i}"


@st.composite
def edited_logs(draw: Any, bases: list[tuple[Any, Events]]) -> tuple[Any, Events, list[str]]:
    if bases and draw(st.booleans()):
        header, events = draw(st.sampled_from(bases))
    else:
        generated = draw(session_logs(max_events=80))
        header, events = generated.header, generated.events
    events = copy.deepcopy(events)
    edits = [draw(edit(events)) for _ in range(draw(st.integers(1, 3)))]
    return header, events, edits


def edit_bases() -> list[tuple[Any, Events]]:
    """The vendored fixture, and up to five real sessions when ``shared/`` is there (none otherwise)."""
    bases = [fixture_log(FIXTURES)]
    manifest = REAL_SESSIONS / "manifest.json"
    for name, as_stored in real_sessions(manifest) if manifest.is_file() else []:
        if as_stored and name.startswith("toninfo") and len(bases) < 6:
            log = read_log(REAL_SESSIONS / "concrete" / name)
            bases.append((log.header.raw if log.header else None, [e.raw for e in log.events]))
    return bases


BASES = edit_bases()


@given(edited_logs(BASES))
def test_edited_logs_are_judged_alike(official: Any, case: tuple[Any, Events, list[str]]) -> None:
    header, events, edits = case
    Judge(official, events, header).all()


# -- incident mutants -------------------------------------------------------------------------------


def finite(value: Any) -> bool:
    """Whether ``value`` holds no infinite number (``1e400``): the inline transport to
    the official server writes those as ``null``, so the two sides would not see one log."""
    if isinstance(value, float):
        return value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return True


@given(st.sampled_from(sorted(MUTATORS)).flatmap(mutants))
def test_incident_mutants_are_judged_alike(official: Any, mutant: Any) -> None:
    log = parse_log(mutant.data, compression=mutant.compression)
    header = log.header.raw if log.header is not None and isinstance(log.header.raw, dict) else None
    events = [e.raw for e in log.events]
    if finite(events):
        Judge(official, events, header).all()
