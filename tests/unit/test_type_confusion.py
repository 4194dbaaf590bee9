"""The ``type-confusion`` perturbation (issue 17, item 6) and its campaign stratum.

Each variant makes the shape it claims, at the place it says, and changes nothing else;
the campaign runs it as one stratum (named by ``--mutators type-confusion``) whose
examples declare no rule, so a checker is judged on them by the official layers and the
reference oracle alone.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, find, given, reject, settings
from hypothesis import strategies as st

from dshfuzz.generators import session_logs
from dshfuzz.harness import Example
from dshfuzz.harness._classify import classify, truth_from
from dshfuzz.harness._judges import CheckerVerdict, ReportedFinding
from dshfuzz.harness._strategy import (
    CAMPAIGN_PERTURBATIONS,
    FIRST_CYCLE_EXAMPLES,
    FIRST_ROUND,
    VALID,
    campaign_strata,
    schedule,
    stratum_examples,
    unknown_mutators,
)
from dshfuzz.model import dumpb, loads, parse_log
from dshfuzz.mutators import MUTATORS, PERTURBATIONS, DrawAdapter, Inapplicable, Level, perturbed
from dshfuzz.mutators._base import run_edit
from dshfuzz.mutators._draft import EventDraft, copy_json
from dshfuzz.mutators._perturb import _HUGE_NUMBERS, _UNKNOWN_KEYS, TYPE_CONFUSIONS, Confusion, confuse

LOGS = session_logs(max_events=40)


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _kind(value: Any) -> str:
    """The JSON type of ``value`` (``bool`` apart from ``number``)."""
    kind = type(value)
    return "number" if kind in (int, float) else kind.__name__


def _confused(log: Any, data: st.DataObject, variant: str) -> tuple[list[Any], EventDraft, Confusion]:
    draft = EventDraft.of(log.header, log.events, log.batches)
    before = [copy_json(e) for e in draft.events]
    try:
        where = confuse(draft, data, variant)
    except Inapplicable:
        assume(False)
        raise AssertionError("unreachable") from None
    return before, draft, where


def _expected(before: list[Any], where: Confusion) -> list[Any]:
    """``before`` with exactly the edit ``where`` reports, done independently."""
    events = [copy_json(e) for e in before]
    if not where.path:
        events[where.index] = where.value
    elif where.variant == "drop-key":
        del _at(events[where.index], where.path[:-1])[where.path[-1]]
    else:
        _at(events[where.index], where.path[:-1])[where.path[-1]] = where.value
    return events


@pytest.mark.parametrize("variant", TYPE_CONFUSIONS)
@given(log=LOGS, data=st.data())
def test_each_variant_edits_one_place_of_one_event_and_nothing_else(variant: str, log: Any, data: st.DataObject):
    before, draft, where = _confused(log, data, variant)
    assert where.variant == variant
    # compared as JSON text: in Python True == 1 and 1 == 1.0, in JSON they differ (or not) as written
    assert dumpb(draft.events) == dumpb(_expected(before, where)), where.description
    assert dumpb(draft.events[where.index]) != dumpb(before[where.index]), f"{variant} changed nothing"
    assert draft.header == log.header


@pytest.mark.parametrize("variant", TYPE_CONFUSIONS)
@given(log=LOGS, data=st.data())
def test_each_variant_makes_the_shape_it_claims(variant: str, log: Any, data: st.DataObject):
    before, _, where = _confused(log, data, variant)
    event, path, value = before[where.index], where.path, where.value
    parent = _at(event, path[:-1]) if path else None
    old = _at(event, path) if variant != "unknown-key" else None
    if variant == "null":
        assert value is None and old is not None
    elif variant == "other-type":
        assert _kind(value) != _kind(old)
    elif variant == "empty-container":
        assert value in ([], {}) and type(value) in (list, dict)
        assert not (type(old) is type(value) and not old)
    elif variant == "huge-number":
        assert value in _HUGE_NUMBERS and type(value) is not bool and abs(value) > 2**53
    elif variant == "long-string":
        assert type(value) is str and len(value) >= 1_000 and len(set(value)) == 1
    elif variant == "drop-key":
        assert path and type(parent) is dict and path[-1] in parent
    elif variant == "unknown-key":
        assert type(parent) is dict and path[-1] in _UNKNOWN_KEYS and path[-1] not in parent
    else:
        assert len(path) >= 2 and path[-2] == "content" and type(path[-1]) is int
        assert type(parent) is list and type(value) is not dict


@st.composite
def _edited(draw: Any, variant: str) -> tuple[Confusion, Any]:
    """``variant`` applied to a small generated log, and the plain JSONL bytes it lowers to."""
    log = draw(session_logs(max_events=8))
    done: list[Confusion] = []

    def edit(draft: EventDraft, data: Any) -> str:
        done.append(confuse(draft, data, variant))
        return done[-1].description

    try:
        edited = run_edit(EventDraft.of(log.header, log.events, log.batches), Level.EVENT, "none", edit,
                          DrawAdapter(draw))
    except Inapplicable:
        reject()
    return done[-1], edited


ROOT_VALUES = {"null": ("null", lambda v: v is None), "number": ("huge-number", lambda v: type(v) in (int, float)),
               "array": ("empty-container", lambda v: type(v) is list)}


@pytest.mark.parametrize("shape", sorted(ROOT_VALUES))
def test_the_event_itself_is_a_place_so_a_whole_line_becomes_null_a_number_or_an_array(shape: str):
    """The root path is drawn like any other (a depth is drawn first, depth 0 the event
    itself), so a line that is ``null``, a number or an array is among the mutants: found by
    search, then read back from the bytes."""
    variant, wanted = ROOT_VALUES[shape]
    where, edited = find(_edited(variant), lambda pair: pair[0].path == () and wanted(pair[0].value),
                         settings=settings(max_examples=500, database=None, suppress_health_check=list(HealthCheck)))
    rows = [e.raw for e in parse_log(edited.data).events]
    assert wanted(rows[where.index]) and rows[where.index] == loads(dumpb(where.value))


@given(broken=perturbed("type-confusion", LOGS))
def test_a_perturbed_log_reads_back_with_its_lines_and_declares_no_rule(broken: Any):
    log = parse_log(broken.data, compression=broken.compression)
    assert log.header is not None and log.header.raw["type"] == "session"
    assert not broken.expects and not broken.official and broken.mutator == "type-confusion"
    assert all(loads(dumpb(e.raw)) == e.raw for e in log.events)


def test_type_confusion_is_a_campaign_stratum_beside_the_mutators():
    assert set(CAMPAIGN_PERTURBATIONS) <= set(PERTURBATIONS) and not set(CAMPAIGN_PERTURBATIONS) & set(MUTATORS)
    assert "type-confusion" in campaign_strata() and set(MUTATORS) <= set(campaign_strata())
    assert unknown_mutators(["type-confusion", "seq-gap", "no-such"]) == ["no-such"]
    assert unknown_mutators(["type-confusion"], perturbations=False) == ["type-confusion"]
    named = list(islice(schedule(["type-confusion"], valid_fraction=0), 3))
    assert named == [("type-confusion", FIRST_ROUND), ("type-confusion", 2 * FIRST_ROUND), ("type-confusion", 4 * FIRST_ROUND)]


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_default_first_cycle_judges_every_incident_class_within_200_examples_then_type_confusion(seed: int):
    rounds = list(islice(schedule(seed=seed), 2 * len(campaign_strata()) + 20))
    first = rounds[: next(i for i, (_, size) in enumerate(rounds) if size > FIRST_ROUND)]
    incident = [(s, size) for s, size in first if s not in CAMPAIGN_PERTURBATIONS]
    assert {s for s, _ in incident} == {*MUTATORS, VALID}
    assert all(size == FIRST_ROUND for s, size in incident if s is not VALID)
    assert sum(size for _, size in incident) <= FIRST_CYCLE_EXAMPLES, "the incident classes outgrew the first cycle"
    assert [s for s, _ in first[len(incident):]] == sorted(CAMPAIGN_PERTURBATIONS), "perturbations close the cycle"
    assert set(CAMPAIGN_PERTURBATIONS) <= {s for s, size in rounds[len(first):]}


def test_valid_rounds_keep_their_size_while_the_first_cycle_fits():
    rounds = list(islice(schedule(["seq-gap", "torn-tail-line"], seed=3), 3))
    assert {size for _, size in rounds} == {FIRST_ROUND} and VALID in {s for s, _ in rounds}


@settings(max_examples=20, suppress_health_check=list(HealthCheck))
@given(example=stratum_examples("type-confusion"))
def test_a_type_confusion_example_is_judged_by_the_layers_alone(example: Example):
    """No declared rule: a silent checker misses when a layer refuses, an error where every
    judge accepts is a false alarm, a crash is a crash; a refusal under any id is no miss."""
    assert example.mutator == "type-confusion" and example.expects == frozenset()
    refused = truth_from({"load": False, "fold": True}, expected=example.expects, mutator=example.mutator,
                         format_version=example.format_version)
    accepted = truth_from({"load": True, "fold": True}, expected=example.expects, mutator=example.mutator,
                          format_version=example.format_version)
    silent = CheckerVerdict()
    erring = CheckerVerdict(findings=(ReportedFinding("E1", "error", None),))
    crashed = CheckerVerdict(failure="crash", detail="Traceback (most recent call last):\nKeyError: 'x'")
    assert [(d.kind, d.layer) for d in classify(silent, refused)] == [("miss", "load")]
    assert [d.kind for d in classify(erring, refused) if d.is_checker_defect] == []
    assert [(d.kind, d.rules) for d in classify(erring, accepted)] == [("false-alarm", ("E1",))]
    assert [d.kind for d in classify(crashed, refused)] == ["crash"]
    assert classify(silent, accepted) == []


@settings(max_examples=200, derandomize=True, database=None)
@given(log=LOGS, data=st.data())
def test_content_element_applies_to_every_log_that_holds_a_content_element(log: Any, data: st.DataObject):
    # it draws among the events holding one: a blind draw of the event would miss on most logs
    # (and a property over it, rejecting most of its examples, failed Hypothesis' filter health check)
    draft = EventDraft.of(log.header, log.events, log.batches)
    holds = any(p[-2:-1] == ("content",) and type(p[-1]) is int for e in draft.events for p in _paths_of(e))
    try:
        confuse(draft, data, "content-element")
    except Inapplicable:
        assert not holds, "a log with a content element was refused"
        return
    assert holds


def _paths_of(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path in ``value`` (this test's own walk, apart from the perturbation's)."""
    out = [path]
    if type(value) is dict:
        for key, child in value.items():
            out += _paths_of(child, (*path, key))
    elif type(value) is list:
        for index, child in enumerate(value):
            out += _paths_of(child, (*path, index))
    return out
