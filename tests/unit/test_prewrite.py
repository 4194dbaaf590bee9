"""Prewrite: an edit is accepted exactly when the log with the edit applied has no
error-level finding the log lacks; the official writer's next event is always
accepted; the log is never written."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from agent_loop_logs import Builder, jsonl

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.checker._prewrite import apply_edit, prewrite
from dshfuzz.cli import main
from dshfuzz.generators import session_logs
from dshfuzz.model import dumps, encode_zstd, parse_log

STRICT = CheckOptions(strict=True)


def _log(header: dict[str, Any], events: list[Any], zstd: bool = False):
    data = encode_zstd(header, [events]) if zstd else jsonl(header, events).encode()
    return parse_log(data, path="session.jsonl.zstd" if zstd else "session.jsonl")


def _errors(header: dict[str, Any], events: list[Any]) -> Counter:
    """Error findings by (rule, seq) of the JSONL log written from scratch (not through prewrite)."""
    report = check_log(_log(header, events), STRICT)
    return Counter((str(f.rule), f.seq if f.seq is not None else ("line", f.line)) for f in report.findings if f.is_error)


def _session() -> Builder:
    b = Builder()
    b.tool_turn(n_calls=2)
    b.text_turn()
    return b


def test_every_next_event_the_writer_appends_is_accepted() -> None:
    b = _session()
    for zstd in (False, True):
        for k in range(len(b.events)):
            result = prewrite(_log(b.header, b.events[:k], zstd), b.events[k], STRICT)
            assert result.accepted, (k, zstd, [(f.rule, f.message) for f in result.added])


def test_the_appended_event_lands_where_the_writer_puts_it() -> None:
    b = _session()
    edited = apply_edit(_log(b.header, b.events[:-1], zstd=True), b.events[-1])
    assert len(edited.frames) == 3 and edited.events[-1].frame == 2
    assert edited.events[-1].raw == b.events[-1]
    edited = apply_edit(_log(b.header, b.events[:-1]), b.events[-1])
    assert edited.events[-1].line == len(b.events) + 1


def test_seed_001_written_through_prewrite_is_refused_at_the_turn_end() -> None:
    b = Builder()
    b.open_step()
    [call] = b.assistant([{"type": "tool-call", "name": "read", "arguments": "{}"}])
    b.tool_call(call)
    log = _log(b.header, b.events)
    assert prewrite(log, {"type": "step/end", "seq": b.seq, "time": 1, "data": {"turn": 1, "step": 1}}).added
    assert prewrite(log, {"type": "tool/call", "seq": b.seq, "time": 1,
                          "data": {"turn": 1, "step": 1, "callId": "c", "name": "n", "arguments": "{}"}}).added


def test_an_edited_event_list_is_judged_against_the_original() -> None:
    b = _session()
    log = _log(b.header, b.events)
    assert prewrite(log, copy.deepcopy(b.events), STRICT).accepted
    result = prewrite(log, [{**e, "data": {**e["data"], "reason": {}}} if e["type"] == "turn/end" else e
                            for e in b.events], STRICT)
    assert not result.accepted and {f.rule for f in result.added} == {RuleId.T5}


def _mutated(event: dict[str, Any], draw: Any) -> dict[str, Any]:
    event = copy.deepcopy(event)
    where = event["data"] if isinstance(event.get("data"), dict) and draw(st.booleans()) else event
    key = draw(st.sampled_from(sorted(where) + ["turn", "surfaceOp", "sourceEventSeqs"]))
    value = draw(st.none() | st.integers(-1, 40) | st.text(max_size=3) | st.just("append") | st.lists(st.integers(0, 40), max_size=3))
    where[key] = value
    return event


@given(session_logs(max_events=60), st.data())
def test_prewrite_accepts_exactly_when_appending_adds_no_error(generated: Any, data: st.DataObject) -> None:
    header, events = generated.header, generated.events
    k = data.draw(st.integers(0, len(events)), label="prefix")
    pool = events or [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}]
    kind = data.draw(st.sampled_from(["next", "elsewhere", "mutated"]), label="kind")
    if kind == "next" and k < len(events):
        candidate = events[k]
    else:
        candidate = copy.deepcopy(data.draw(st.sampled_from(pool), label="event"))
        if kind == "mutated":
            candidate = _mutated(candidate, data.draw)
    result = prewrite(_log(header, events[:k]), candidate, STRICT)
    added = _errors(header, events[:k] + [candidate]) - _errors(header, events[:k])
    assert result.accepted == (not added), (dumps(candidate), added, [(f.rule, f.seq) for f in result.added])


def _prewrite(tmp_path: Path, edit: Any, log: Path | None, *flags: str) -> int:
    """``dshfuzz check --prewrite EDIT.json [--log LOG] [flags]``, as a user runs it."""
    edit_path = tmp_path / "edit.json"
    edit_path.write_text(edit if isinstance(edit, str) else dumps(edit), encoding="utf-8")
    return main(["check", "--prewrite", str(edit_path), *([] if log is None else ["--log", str(log)]), *flags])


def test_cli_exit_codes_and_read_only(tmp_path: Path, capsys: Any) -> None:
    b = _session()
    path = tmp_path / "session.jsonl"
    path.write_text(jsonl(b.header, b.events[:-1]), encoding="utf-8")
    before = path.read_bytes()
    assert _prewrite(tmp_path, b.events[-1], path) == 0
    assert capsys.readouterr().out.startswith("ACCEPTED  append to ")
    broken = {**b.events[-1], "data": {"turn": 2}}
    assert _prewrite(tmp_path, broken, path, "--json", "--redact") == 1
    assert '"accepted":false' in capsys.readouterr().out
    assert _prewrite(tmp_path, broken, path) == 1
    assert capsys.readouterr().out.startswith("REFUSED  append to ")
    assert _prewrite(tmp_path, "{not json", path) == 2
    assert _prewrite(tmp_path, 7, path) == 2
    assert _prewrite(tmp_path, b.events[-1], None) == 2
    assert _prewrite(tmp_path, b.events[-1], tmp_path / "missing.jsonl") == 2
    assert path.read_bytes() == before


@given(session_logs(max_events=60), st.data())
def test_the_streamed_prewrite_of_a_file_judges_as_prewrite_of_its_model(generated: Any, data: st.DataObject) -> None:
    """``prewrite_bytes`` (what ``dshfuzz check --prewrite`` runs: two streamed checks, no model)
    builds the same edited file and reaches the same verdict as ``prewrite`` on the file's model,
    torn tails included (the edit lands where the loader's repair cuts the file back)."""
    from dshfuzz.checker import prewrite_bytes

    header, events = generated.header, generated.events
    zstd = data.draw(st.booleans(), label="zstd")
    k = data.draw(st.integers(0, len(events)), label="prefix")
    file = encode_zstd(header, [events[:k]]) if zstd else jsonl(header, events[:k]).encode()
    file = file[: len(file) - data.draw(st.integers(0, min(12, len(file))), label="torn bytes")]
    pool = events or [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}]
    edit: Any = copy.deepcopy(data.draw(st.sampled_from(pool), label="event"))
    if data.draw(st.booleans(), label="mutated"):
        edit = _mutated(edit, data.draw)
    if data.draw(st.booleans(), label="a whole list"):
        edit = copy.deepcopy(events[: data.draw(st.integers(0, len(events)), label="listed")])
    compression = "zstd" if zstd else "none"
    via_model = prewrite(parse_log(file, compression=compression), edit, STRICT)
    # the edited file is written a piece of the original at a time, at any size of piece
    with patch("dshfuzz.checker._prewrite._PIECE", data.draw(st.integers(1, 64), label="piece")):
        streamed = prewrite_bytes(file, edit, compression=compression, options=STRICT)
    assert streamed.edited == via_model.edited
    assert streamed.accepted == via_model.accepted
    assert [f.to_json() for f in streamed.added] == [f.to_json() for f in via_model.added]
    assert streamed.report.to_json() == via_model.report.to_json()
    assert streamed.before.to_json() == via_model.before.to_json()
