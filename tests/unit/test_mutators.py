"""The mutator registry, the log drafts and the transforms, without any checker.

What these specify: every mutator is documented and names real rules and layers;
the draft pipeline reproduces the official writer when nothing is mutated;
renumbering keeps every reference pointing at the same event; seeded application
is deterministic; every mutator applies to the logs the generators make; the
metamorphic transforms leave the logical events untouched.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import RULES
from dshfuzz.generators import FeatureWeights, GeneratedLog, generate, session_logs
from dshfuzz.model import parse_log
from dshfuzz.mutators import (
    METAMORPHIC,
    MUTATORS,
    PERTURBATIONS,
    Inapplicable,
    Level,
    Mutator,
    apply_seeded,
    get,
    incident_weights,
    load_mutators,
    mutator,
    perturbed,
    variants,
)
from dshfuzz.mutators._base import run_edit
from dshfuzz.mutators._draft import EventDraft, seq_refs
from dshfuzz.oracle.official import LAYERS

def sample_logs(format_version: int = 0) -> list[GeneratedLog]:
    """Forty varied valid logs from the generators' seeded (engine-free) stream."""
    return list(generate(40, seed=7, format_version=format_version, turns=(1, 3), weights=incident_weights()))


def as_v3(log: GeneratedLog) -> EventDraft:
    """A generated log re-tagged as format v3 (the generators write v0 and v1 only)."""
    draft = EventDraft.of(log.header, log.events, log.batches)
    draft.header["version"] = 3
    return draft


def identity(draft: Any, data: Any) -> str:
    return "unchanged"


class _Fixed:
    """A ``data`` object for edits that draw nothing except the pinned container."""

    def draw(self, strategy: Any, label: object = None) -> Any:
        raise AssertionError("identity edit drew a value")


def test_every_mutator_documents_its_incident_precondition_and_determinism() -> None:
    for m in MUTATORS.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-zA-Z0-9]+)*", m.name), m.name
        assert len(m.incident.split()) >= 15, f"{m.name}: the incident needs its real story"
        assert m.doc.startswith("Precondition:"), f"{m.name}: docstring must open with its precondition"
        assert "Deterministic" in m.doc, f"{m.name}: docstring must state determinism"
        assert m.expects, f"{m.name} expects no rule"
        assert m.expects <= set(RULES), f"{m.name} expects unknown rules"
        assert m.official <= set(LAYERS), f"{m.name} names unknown official layers"
        assert isinstance(m.level, Level)


def test_transforms_and_perturbations_are_documented() -> None:
    for t in (*METAMORPHIC.values(), *PERTURBATIONS.values()):
        assert t.summary and (t.fn.__doc__ or "").strip(), t.name
    assert not set(METAMORPHIC) & set(PERTURBATIONS) and not set(METAMORPHIC) & set(MUTATORS)


@given(session_logs(), st.sampled_from(("none", "zstd")))
def test_unmutated_draft_lowers_to_the_official_writers_bytes(log: GeneratedLog, compression: str) -> None:
    draft = EventDraft.of(log.header, log.events, log.batches)
    edited = run_edit(draft, Level.EVENT, compression, identity, _Fixed())
    assert edited.data == (log.to_zstd() if compression == "zstd" else log.to_jsonl())


@given(session_logs(), st.data())
def test_insert_renumbers_every_reference_and_remove_undoes_it(log: GeneratedLog, data: st.DataObject) -> None:
    draft = EventDraft.of(log.header, log.events, log.batches)
    at = data.draw(st.integers(0, len(draft.events)), label="at")
    draft.insert(at, {"type": "x-test/probe", "seq": -1, "time": 0, "data": {}})
    assert [e["seq"] for e in draft.events] == list(range(len(log.events) + 1))
    for old, new in zip(log.events, draft.events[:at] + draft.events[at + 1 :], strict=True):
        assert [c[k] for c, k in seq_refs(new)] == [r + (r >= at) for r in (c[k] for c, k in seq_refs(old))]
    assert draft.cuts[-1] == len(draft.events) and draft.cuts == sorted(set(draft.cuts))
    draft.remove(at)
    assert draft.events == log.events and draft.header == log.header


@pytest.mark.parametrize("name", sorted(MUTATORS))
def test_every_mutator_applies_to_generated_logs_and_changes_them(name: str) -> None:
    m = MUTATORS[name]
    logs = [as_v3(log) for log in sample_logs()] if m.formats == {3} else sample_logs()
    made = []
    for i, log in enumerate(logs):
        try:
            mutant = apply_seeded(m, log, seed_value=i)
        except Inapplicable:
            continue
        original = EventDraft.of(log.header, log.events, log.cuts if isinstance(log, EventDraft) else log.batches)
        unchanged = run_edit(original, Level.EVENT, mutant.compression, identity, _Fixed()).data
        assert mutant.data != unchanged, f"{name} left the log unchanged: {mutant.description}"
        assert mutant.mutator == name and mutant.description
        assert mutant.expects <= m.expects
        made.append(mutant)
        if len(made) == 3:
            break
    assert made, f"{name} applied to none of {len(logs)} generated logs"


@pytest.mark.parametrize("name", ["seq-gap", "message-shape", "corrupt-frame", "replace-range"])
def test_seeded_application_is_deterministic_and_depends_on_the_seed(name: str, fixtures_dir) -> None:
    from dshfuzz.model import read_log

    log = read_log(fixtures_dir / "valid-v0.jsonl.zstd")
    m = get(name)
    assert apply_seeded(m, log, 11).data == apply_seeded(m, log, 11).data
    assert len({apply_seeded(m, log, s).data for s in range(6)}) >= 2


def test_an_inapplicable_log_is_refused_with_its_reason() -> None:
    log = next(generate(1, seed=1, weights=FeatureWeights(tool_calls=0.0)))
    with pytest.raises(Inapplicable, match="tool/call"):
        apply_seeded(get("scheduler-failure"), log, 0)
    with pytest.raises(Inapplicable, match="zstd"):
        apply_seeded(get("torn-tail-frame"), log, 0, compression="none")


def test_get_names_the_known_mutators_on_a_typo() -> None:
    with pytest.raises(KeyError, match="seq-gap"):
        get("seq-gapp")


@mutator("plugin-probe", level=Level.EVENT, expects=("Z3",), incident="a third-party probe " * 8)
def _plugin_probe(draft: EventDraft, data: Any) -> str:
    """Precondition: none. Clears the log. Deterministic."""
    draft.events.clear()
    return "cleared"


class _EntryPoint:
    def __init__(self, name: str, value: object) -> None:
        self.name, self._value = name, value

    def load(self) -> object:
        if isinstance(self._value, Exception):
            raise self._value
        return self._value


def test_third_party_mutators_load_from_the_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    import dshfuzz.mutators._registry as registry

    clash = Mutator("seq-gap", "x", Level.EVENT, frozenset({"E2"}), frozenset(), _plugin_probe.fn)
    eps = [_EntryPoint("probe", _plugin_probe), _EntryPoint("many", [clash]), _EntryPoint("broken", ImportError("no"))]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps if group == "dshfuzz.mutators" else [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = load_mutators()
    assert "plugin-probe" in table and table["seq-gap"] is MUTATORS["seq-gap"]
    assert list(table)[: len(MUTATORS)] == list(MUTATORS)
    messages = " ".join(str(w.message) for w in caught)
    assert "clashes" in messages and "failed to load" in messages
    assert "plugin-probe" not in load_mutators(plugins=False)


KEEPS_EVENTS = sorted(set(METAMORPHIC) - {"rename-ids", "skippable-frames"})


@given(st.sampled_from(KEEPS_EVENTS).flatmap(lambda name: variants(name, session_logs())))
def test_metamorphic_transforms_keep_the_logical_events(pair: tuple[GeneratedLog, Any]) -> None:
    log, variant = pair
    read = parse_log(variant.data)
    assert read.header is not None and read.header.raw == log.header, variant.description
    assert [e.raw for e in read.events] == log.events, variant.description


@given(variants("rename-ids", session_logs()))
def test_renaming_ids_is_a_bijection_on_ids(pair: tuple[GeneratedLog, Any]) -> None:
    log, variant = pair
    read = [e.raw for e in parse_log(variant.data).events]
    assert len(read) == len(log.events)
    old_ids = _ids(log.events)
    new_ids = _ids(read)
    assert len(set(old_ids)) == len(set(new_ids)) and len(old_ids) == len(new_ids)
    assert [o == p for o, p in zip(old_ids, old_ids[1:])] == [o == p for o, p in zip(new_ids, new_ids[1:])]


def _ids(value: Any) -> list[str]:
    if type(value) is dict:
        return [x for k, v in value.items() for x in ([v] if k in {"id", "callId", "toolCallId"} and type(v) is str else _ids(v))]
    if type(value) is list:
        return [x for v in value for x in _ids(v)]
    return []


EDITS = {**MUTATORS, **{n: p for n, p in PERTURBATIONS.items() if n != "huge-string"}, **METAMORPHIC}


@st.composite
def damaged_logs(draw: Any) -> Any:
    """A generated log broken by a robustness perturbation, read back through the model."""
    name = draw(st.sampled_from(sorted(set(PERTURBATIONS) - {"huge-string"})), label="perturbation")
    broken = draw(perturbed(name, session_logs(max_events=40)))
    return parse_log(broken.data)


@given(damaged_logs(), st.sampled_from(sorted(EDITS)), st.data())
def test_edits_on_damaged_logs_apply_or_refuse_but_never_crash(log: Any, name: str, data: st.DataObject) -> None:
    try:
        mutant = EDITS[name].apply_or_raise(log, data)
    except Inapplicable:
        return
    assert isinstance(mutant.data, bytes) and mutant.mutator == name


def test_invalid_seq_edits_a_read_log_whose_event_already_lacks_a_seq() -> None:
    """Atheris feeds mutators read logs of any shape: removing an absent seq is no crash."""
    log = parse_log(re.sub(rb'"seq":\d+,', b"", next(iter(generate(1, 3))).to_jsonl()))
    for seed in range(40):
        assert apply_seeded(MUTATORS["invalid-seq"], log, seed).data


def test_the_replace_guard_reads_ranges_on_the_surface_not_on_seqs():
    """A compaction's summary (seq 3) stands where node 0 stood, so a later compaction's range
    runs from seq 3 to seq 2 and spans nodes 1 and 2: an event inserted before either lands
    inside it (a campaign's user-text-between mutant did, and the fold refused the log)."""
    from dshfuzz.mutators._draft import EventDraft
    from dshfuzz.mutators._select import replace_guard

    def message(seq: int, op: Any) -> dict[str, Any]:
        return {"type": "user/message", "seq": seq, "time": seq, "data": {}, "surfaceOp": op}

    draft = EventDraft.of({"type": "session", "version": 0}, [
        message(0, "append"), message(1, "append"), message(2, "append"),
        message(3, {"op": "replace", "start": 0, "end": 0}),
        message(4, {"op": "replace", "start": 3, "end": 2}),
    ])
    inside = replace_guard(draft)
    assert inside(1) and inside(2), "between the summary and the range's end node"
    assert not inside(0), "before node 0, which the first replace covers from its start: the new node precedes it"
    assert not inside(5), "after every replace"


def _far_seqs(log: GeneratedLog, offset: int) -> bytes:
    """``log`` with every event's seq moved ``offset`` up: the tail of a very long session, or a fuzzed one."""
    import json

    header, *events = log.to_jsonl().splitlines()
    moved = [json.loads(line) for line in events]
    for event in moved:
        if isinstance(event, dict) and isinstance(event.get("seq"), int):
            event["seq"] += offset
    return b"\n".join([header, *(json.dumps(e).encode() for e in moved)]) + b"\n"


_EVERY_EDIT = {**MUTATORS, **METAMORPHIC, **PERTURBATIONS}


@pytest.mark.parametrize("name,seeds", [(n, 60 if n == "seq-encoding" else 3) for n in sorted(_EVERY_EDIT)])
def test_an_edit_grows_a_log_by_its_shape_never_by_the_numbers_it_holds(name: str, seeds: int) -> None:
    """Seq numbers of 10**7 and more (a hostile log may hold 10**15) must not size what an edit writes:
    a list as long as a seq is an out-of-memory crash of the campaign or of libFuzzer's mutator. The
    bound is what the hostile edits write by design (``huge-string``: megabytes, whatever the log)."""
    data = _far_seqs(next(generate(1, seed=7, max_events=40)), 10_000_000)
    log, size = parse_log(data), len(data)
    for s in range(seeds):
        try:
            mutant = apply_seeded(_EVERY_EDIT[name], log, s)
        except Inapplicable:
            continue
        assert len(mutant.data) < size + 8 * 1024 * 1024, f"{name} seed {s}: {len(mutant.data)} bytes from {size}: {mutant.description}"


REFERENCE_KEYS = {"id", "callId", "toolCallId", "compactionId", "sourceCommandId", "messageId", "goalId", "commandId",
                  "rootCallId", "parentCallId", "subCallId", "ownerId", "targetId"}


def _references(value: Any) -> list[str]:
    if type(value) is dict:
        return [x for k, v in value.items()
                for x in ([v] if k in REFERENCE_KEYS and type(v) is str else _references(v))]
    if type(value) is list:
        return [x for v in value for x in _references(v)]
    return []


def test_renaming_ids_keeps_every_reference_naming_its_object() -> None:
    """A legacy goal source's goalId names its change's goal.id, a team task's ownerId a member's id,
    a command/run's commandId its source's sourceCommandId: the rename keeps each pair equal (it
    once renamed one side only, and a checker that rightly refused the result was called inconsistent)."""
    from dshfuzz.checker import check_stream
    from dshfuzz.generators import generate
    from dshfuzz.mutators import apply_seeded, incident_weights

    kinds = set()
    for n, log in enumerate(generate(120, seed=5, turns=(1, 3), max_events=120, weights=incident_weights())):
        variant = apply_seeded(METAMORPHIC["rename-ids"], log, n)
        old = _references(log.events)
        new = _references([e.raw for e in parse_log(variant.data, compression=variant.compression).events])
        assert len(old) == len(new), variant.description
        index = {value: i for i, value in enumerate(dict.fromkeys(old))}
        renamed = {value: i for i, value in enumerate(dict.fromkeys(new))}
        assert [index[v] for v in old] == [renamed[v] for v in new], (
            f"log {n}: {variant.description}: a reference no longer names its object\n"
            + "\n".join(f"{o} -> {w}" for o, w in zip(old, new) if index[o] != renamed[w]))
        if any('"goalId"' in json.dumps(e) for e in log.events):
            kinds.add("goal")
            # a legacy goal message's content renders its change, goal id and all: the id stays, and
            # the built-in checker's verdict with it (a rename of one side was a false metamorphic finding)
            before = {f.rule for f in check_stream(log.to_jsonl()).findings}
            after = {f.rule for f in check_stream(variant.data, compression=variant.compression).findings}
            assert before == after, f"log {n}: {variant.description}: {sorted(before)} became {sorted(after)}"
    assert "goal" in kinds, "no generated log holds a goalId: the test would prove nothing"


def test_shuffling_keys_keeps_an_object_a_text_renders_in_its_order() -> None:
    """A legacy goal message's content renders its change's goal as JSON, keys in order, and
    released compares the two: shuffling that goal made a log released rightly refuses, and the
    built-in checker's right G5 failed the gate that metamorphic variants keep every verdict."""
    from dshfuzz.checker import check_stream
    from dshfuzz.generators import generate
    from dshfuzz.mutators import apply_seeded, incident_weights

    goals = 0
    for n, log in enumerate(generate(120, seed=5, turns=(1, 3), max_events=120, weights=incident_weights())):
        if not any('"goalId"' in json.dumps(e) for e in log.events):
            continue
        goals += 1
        variant = apply_seeded(METAMORPHIC["shuffle-keys"], log, n)
        before = {f.rule for f in check_stream(log.to_jsonl()).findings}
        after = {f.rule for f in check_stream(variant.data, compression=variant.compression).findings}
        assert before == after, f"log {n}: {variant.description}: {sorted(before)} became {sorted(after)}"
    assert goals, "no generated log holds a goalId: the test would prove nothing"


def test_an_event_edit_writes_the_lossy_number_markers_as_their_literals() -> None:
    """``dumpb`` writes -0.0 as 0 and a non-finite number as null (as JSON.stringify does), so an
    event-level edit puts a marker where a lossy number belongs, and lowering writes its literal."""
    from dshfuzz.model import loads
    from dshfuzz.mutators._draft import LOSSY_NUMBERS

    markers = sorted(LOSSY_NUMBERS)
    draft = EventDraft.of({"type": "session", "version": 0}, [
        {"type": "plan/mode", "seq": 0, "time": 1, "data": {"active": True, "n": markers, "s": "\u2063dshfuzz-other"}}])
    (line,) = draft.lower().lower().frames[1]
    assert line == (b'{"type":"plan/mode","seq":0,"time":1,"data":{"active":true,"n":['
                    + b",".join(LOSSY_NUMBERS[m] for m in markers) + b'],"s":"\xe2\x81\xa3dshfuzz-other"}}')
    assert [str(n) for n in loads(line)["data"]["n"]] == ["inf", "-inf", "-0.0"]
