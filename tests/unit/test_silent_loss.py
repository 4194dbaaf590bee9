"""``silent-loss`` (issue 32 item 5): a checker that says how many events it judged (its
report's ``events``) and reports nothing at all, on a log the official loader accepts with
more events than that, lost events without a word. Only such a checker, and only then."""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from dshfuzz.harness import CheckerVerdict, ReportedFinding, classify, load_checker, verdict_from_json
from dshfuzz.harness._classify import Disagreement, truth_from
from dshfuzz.harness._judge import loaded_events, scope_of
from dshfuzz.oracle.official import LayerVerdict

DATA = Path(__file__).resolve().parents[1] / "data"
HEADER = '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'


def _losses(verdict: CheckerVerdict, truth, **kw) -> list[str]:
    return [d.signature for d in classify(verdict, truth, **kw) if d.kind == "silent-loss"]


def _loaded(n: int | None, **layers: bool):
    return truth_from({"load": True, "fold": True, **layers}, loaded_events=n)


def test_fewer_events_than_the_loader_recovers_and_no_word_is_a_silent_loss():
    [found] = [d for d in classify(CheckerVerdict(events=3), _loaded(5)) if d.kind == "silent-loss"]
    assert found.signature == "silent-loss|load|-|v0"
    assert found.is_checker_defect and found.is_reportable
    assert "recovers 5 events" in found.detail and "judged 3" in found.detail


def test_a_checker_that_gives_no_count_is_never_judged():
    assert _losses(CheckerVerdict(), _loaded(5)) == []


@pytest.mark.parametrize("severity", ["error", "warning"])
def test_a_checker_that_said_anything_is_not_silent(severity):
    verdict = CheckerVerdict((ReportedFinding("Z1", severity, None),), events=3)
    assert _losses(verdict, _loaded(5)) == []


@pytest.mark.parametrize(
    "verdict",
    [CheckerVerdict(failure="crash", detail="boom", events=3), CheckerVerdict(assessable=False, events=3)],
    ids=["crashed", "declined"],
)
def test_a_checker_that_failed_or_declined_is_not_judged_for_it(verdict):
    assert _losses(verdict, _loaded(5)) == []


def test_as_many_or_more_events_than_the_loader_is_no_loss():
    assert _losses(CheckerVerdict(events=5), _loaded(5)) == []
    assert _losses(CheckerVerdict(events=9), _loaded(5)) == []  # the loader keeps a prefix; a checker may read on


def test_a_log_the_loader_refuses_or_was_not_asked_about_has_no_count():
    refused = truth_from({"load": False, "fold": True}, reasons={"load": "corrupt"}, loaded_events=5)
    assert refused.loaded_events is None
    assert _losses(CheckerVerdict(events=3), refused) == []
    # a Truth built by hand with a count the loader never gave is not believed either
    assert _losses(CheckerVerdict(events=3), replace(refused, loaded_events=5)) == []
    assert _losses(CheckerVerdict(events=3), truth_from({"fold": True}, loaded_events=5)) == []
    assert _losses(CheckerVerdict(events=3), _loaded(None)) == []


def test_a_checker_that_does_not_answer_for_load_is_not_held_to_its_count():
    assert _losses(CheckerVerdict(events=3), _loaded(5), layers=frozenset({"released"})) == []
    assert _losses(CheckerVerdict(events=3), _loaded(5), layers=frozenset({"load", "released"})) != []


def test_the_minimiser_asks_the_checker_and_the_loader_alone():
    scope = scope_of(Disagreement("silent-loss", "load", (), None, ""))
    assert scope.layers == ("load",) and not scope.oracle and not scope.reference and not scope.twin


# --- the loader's count -----------------------------------------------------------------------------


def _load(ok: bool, result: object = None) -> LayerVerdict:
    if ok:
        return LayerVerdict.from_json("load", {"ok": True, "result": result})
    return LayerVerdict.from_json("load", {"ok": False, "error": {"name": "Error", "message": "corrupt session log"}})


@pytest.mark.parametrize(
    "official, count",
    [
        ({"load": _load(True, {"events": 9, "storedEvents": 7, "closers": [{}, {}]})}, 7),  # closers are the loader's own
        ({"load": _load(True, {"storedEvents": 0})}, 0),
        ({"load": _load(False)}, None),
        ({"load": _load(True, None)}, None),
        ({"load": _load(True, {"storedEvents": "7"})}, None),
        ({"load": _load(True, {"storedEvents": True})}, None),
        ({"load": _load(True, {"storedEvents": -1})}, None),
        ({"fold": LayerVerdict("fold", True, None, {"storedEvents": 7})}, None),
        ({}, None),
        # as a campaign records it (summary.json, a corpus entry), for a replay
        ({"load": {"ok": True, "events": 7}}, 7),
        ({"load": {"ok": True}}, None),
        ({"load": {"ok": False, "events": 7}}, None),
        ({"load": {"ok": "yes", "events": 7}}, None),
        ({"load": [1, 2]}, None),
    ],
)
def test_the_loaders_count_is_its_stored_events_where_it_accepted(official, count):
    assert loaded_events(official) == count


# --- the protocol's "events" ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload, events",
    [
        ({"findings": [], "events": 12}, 12),
        ({"findings": [], "events": 0}, 0),
        ({"findings": []}, None),
        ([], None),  # a bare list has nowhere to say it
        ({"assessable": False, "events": 4}, 4),
    ],
)
def test_a_report_may_say_how_many_events_it_judged(payload, events):
    assert verdict_from_json(payload).events == events


@pytest.mark.parametrize("value", [None, -1, 3.0, 2.5, "12", True, [3], {"n": 3}])
def test_an_events_field_that_is_no_count_is_a_precise_protocol_error(value):
    with pytest.raises(ValueError, match=r"'events' is not a non-negative integer"):
        verdict_from_json({"findings": [], "events": value})


def _log(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(HEADER)
    return path


def _script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "checker.py"
    script.write_text(textwrap.dedent(body))
    return script


@pytest.mark.parametrize("events, expected", [("7", 7), ('"7"', None)])
def test_every_protocol_carries_the_count_or_its_protocol_error(tmp_path, monkeypatch, events, expected):
    log = _log(tmp_path)
    reply = '{"findings": [], "events": %s}' % events
    cmd = _script(tmp_path, f"print({reply!r})\n")
    batch = tmp_path / "batch.py"
    batch.write_text(
        "import json, sys\n"
        f"print(json.dumps([{{**json.loads({reply!r}), 'file': p}} for p in sys.argv[1:]]))\n"
    )
    serve = tmp_path / "serve.py"
    serve.write_text(
        "import json, sys\n"
        "print(json.dumps({'protocol': 'dshfuzz-checker/1', 'rules': ['H1']}), flush=True)\n"
        "for line in sys.stdin:\n"
        f"    print(json.dumps({{**json.loads({reply!r}), 'id': json.loads(line)['id']}}), flush=True)\n"
    )
    name = f"events_checker_{expected}"  # a module name of its own: an import is cached
    module = tmp_path / f"{name}.py"
    module.write_text(f"import json\n\ndef check(path):\n    return json.loads({reply!r})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = [f"cmd:{sys.executable} {cmd} {{log}}", f"cmd:{sys.executable} {batch} {{logs}}",
             f"serve:{sys.executable} {serve}", f"py:{name}:check"]
    for spec in specs:
        with load_checker(spec) as checker:
            verdict = checker.check(log)
        if expected is not None:
            assert verdict.failure is None and verdict.events == expected, (spec, verdict)
        else:
            assert verdict.failure == "unparsable-output", (spec, verdict)
            assert "'events' is not a non-negative integer" in verdict.detail, (spec, verdict.detail)


# --- the built-in checker's count: events, not rows ---------------------------------------------------


def test_the_builtin_checker_counts_the_events_of_packed_chunk_rows():
    packed, unpacked = DATA / "valid-v0.jsonl", DATA / "valid-v0.unpacked.jsonl"
    rows = len(packed.read_text().splitlines()) - 1
    events = len(unpacked.read_text().splitlines()) - 1
    assert rows < events  # the fixture packs chunk runs
    checker = load_checker("builtin")
    for path in (packed, unpacked, DATA / "valid-v0.jsonl.zstd"):
        assert checker.check(path).events == events
    # held to the loader's count of the same (expanded) events, it lost nothing
    assert _losses(checker.check(packed), _loaded(events)) == []


def test_dshfuzz_check_json_and_serve_replies_carry_the_count(tmp_path):
    from dshfuzz.checker import check_path
    from dshfuzz.checker._serve import answer
    from dshfuzz.checker import CheckOptions

    path = DATA / "valid-v0.jsonl"
    report = check_path(path).to_json()
    assert report["events"] == report["summary"]["events"] == 76
    assert verdict_from_json(report).events == 76
    reply = answer(json.dumps({"id": 1, "path": str(path)}).encode(), CheckOptions())
    assert reply["events"] == 76 and verdict_from_json(reply).events == 76


def test_the_drops_last_frame_checker_loses_the_last_frame_of_a_zstd_log_silently():
    from tests.broken_checkers.drops_last_frame import check

    zstd = check(str(DATA / "valid-v0.jsonl.zstd"))
    assert zstd["findings"] == [] and 0 < zstd["events"] < 76
    assert check(str(DATA / "valid-v0.jsonl"))["events"] == 76
    verdict = verdict_from_json(zstd)
    assert _losses(verdict, _loaded(76)) == ["silent-loss|load|-|v0"]


def test_a_replayed_silent_loss_holds_to_the_loaders_recorded_count(tmp_path, monkeypatch):
    from dshfuzz.harness import Corpus, ReplayStatus, replay_entry
    from dshfuzz.harness._judges import BuiltinChecker

    monkeypatch.chdir(DATA.parents[1])  # py:tests.… imports from the repository's root
    corpus = Corpus(tmp_path / "corpus")
    entry, _ = corpus.add(
        (DATA / "valid-v0.jsonl.zstd").read_bytes(), signature="silent-loss|load|-|v0", kind="silent-loss",
        compression="zstd", format_version=0, expected={"rules": []}, actual={"rules": []},
        checker="py:tests.broken_checkers.drops_last_frame:check", official={"load": {"ok": True, "events": 76}},
    )
    path = corpus.path_of(entry)
    assert replay_entry(path, entry).status is ReplayStatus.STILL_FAILING
    assert replay_entry(path, entry, BuiltinChecker()).status is ReplayStatus.FIXED  # it reads every frame
