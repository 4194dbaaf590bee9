"""Recovery planning: the latest complete turn at or before the anchor whose prefix
nothing refuses, or a new session; read-only; located by seq, line and bytes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

from hypothesis import assume, given
from hypothesis import strategies as st

from agent_loop_logs import jsonl
from recovery_scenarios import DEFECTIVE, HEALTHY, session

from dshfuzz.checker import CheckOptions, check_log
from dshfuzz.checker._recover import blocking, fork_bytes, recover_bytes, recover_plan, stream_fork_bytes
from dshfuzz.cli._recover import run
from dshfuzz.generators import session_logs
from dshfuzz.model import Limits, batch_text, encode_zstd, header_text, parse_log

STRICT = CheckOptions(strict=True)


def _log(kinds: list[str], zstd: bool = False):
    b = session(kinds)
    data = encode_zstd(b.header, [b.events]) if zstd else jsonl(b.header, b.events).encode()
    return b, parse_log(data, path="s.jsonl")


def _turn_ends(b) -> list[int]:
    return [e["seq"] for e in b.events if e["type"] == "turn/end"]


def test_a_healthy_log_forks_after_its_last_turn() -> None:
    b, log = _log(["text", "tool", "text"])
    plan = recover_plan(log, options=STRICT)
    assert plan.fork is not None and plan.fork.seq == _turn_ends(b)[-1] and plan.fork.turn == 3
    assert plan.fork.offset == len(jsonl(b.header, b.events).encode()) and plan.fork.line == len(b.events) + 1


def test_a_fork_whose_one_frame_is_over_the_frame_limit_is_still_recommended() -> None:
    """The fork writes its events as one batch, one frame: a log read within the frame limit in
    many frames forks into a frame over it. Found on the 1M-event synthetic log (120 MB of
    plaintext): every prefix over 64 MiB got L1, and the planner checked candidate after
    candidate. The fork is dshfuzz's own output, so its size is not limited."""
    b = session(["text", "tool", "text", "tool", "text"])
    small = Limits(frame_bytes=2048)
    log = parse_log(encode_zstd(b.header, [[e] for e in b.events]), compression="zstd", limits=small)
    assert log.limit is None
    plan = recover_plan(log, options=STRICT, limits=small)
    assert plan.fork is not None and plan.fork.seq == _turn_ends(b)[-1], [r.findings for r in plan.rejected]
    # read under the log's limits, the fork's one frame would stop the read at L1
    assert parse_log(fork_bytes(log, plan.fork), compression="zstd", limits=small).limit is not None


def test_seed_001_forks_before_the_broken_turn() -> None:
    b, log = _log(["text", "tool", "gap", "text"])
    plan = recover_plan(log, options=STRICT)
    assert plan.fork is not None and plan.fork.seq == _turn_ends(b)[1]
    assert [r.point.turn for r in plan.rejected] == [4, 3]
    assert any(f.rule == "W3" for f in plan.rejected[0].findings)


def test_the_anchor_bounds_the_boundary() -> None:
    b, log = _log(["text", "tool", "text"])
    ends = _turn_ends(b)
    assert recover_plan(log, at=ends[1], options=STRICT).fork.seq == ends[1]
    assert recover_plan(log, at=ends[1] - 1, options=STRICT).fork.seq == ends[0]
    plan = recover_plan(log, at=ends[0] - 1, options=STRICT)
    assert plan.fork is None and plan.candidates == 0


def test_a_defect_in_the_first_turn_needs_a_new_session() -> None:
    _, log = _log(["no-reason", "text", "text"])
    plan = recover_plan(log, options=STRICT)
    assert plan.fork is None and len(plan.rejected) == 3
    assert [r.findings[0].rule for r in plan.rejected] == ["T5"] * 3, "the stable T5 blocker is carried, not rechecked"


def test_zstd_boundaries_name_the_frame_and_whether_it_must_be_split() -> None:
    b, log = _log(["text", "text"], zstd=True)
    plan = recover_plan(log, options=STRICT)
    assert plan.fork.frame == 1 and plan.fork.offset == log.size
    first = recover_plan(log, at=_turn_ends(b)[0], options=STRICT).fork
    assert first.frame == 1 and first.offset is None and first.frame_offset == log.frames[1].offset


@given(st.lists(st.sampled_from(HEALTHY + DEFECTIVE), min_size=1, max_size=5), st.data())
def test_the_recommended_prefix_has_no_blocking_finding(kinds: list[str], data: st.DataObject) -> None:
    b, log = _log(kinds)
    at = data.draw(st.none() | st.integers(0, max(len(b.events) - 1, 0)), label="at")
    plan = recover_plan(log, at=at, options=STRICT)
    if plan.fork is None:
        assert all(r.total for r in plan.rejected)
        return
    assert at is None or plan.fork.seq <= at
    prefix = parse_log(fork_bytes(log, plan.fork))
    assert len(prefix.events) == plan.fork.events
    assert not [f for f in check_log(prefix, STRICT).findings if blocking(f)]
    for rejected in plan.rejected:  # including the candidates skipped on a prefix-stable blocker
        shorter = parse_log(fork_bytes(log, rejected.point))
        assert [f for f in check_log(shorter, STRICT).findings if blocking(f)], rejected.point
    later = [e for e in _turn_ends(b) if e > plan.fork.seq and (at is None or e <= at)]
    assert [r.point.seq for r in plan.rejected] == sorted(later, reverse=True)
    if not set(kinds) & set(DEFECTIVE):
        assert not plan.rejected


def _args(path: Path, **flags: Any) -> argparse.Namespace:
    return argparse.Namespace(log=str(path), at=flags.get("at"), json=flags.get("json", False),
                              format_version=None, redact=flags.get("redact", False))


def test_cli_is_read_only_with_exit_0_for_a_fork_1_for_a_new_session_2_for_unusable_input(
    tmp_path: Path, capsys: Any
) -> None:
    b = session(["text", "gap"])
    path = tmp_path / "s.jsonl"
    path.write_text(jsonl(b.header, b.events), encoding="utf-8")
    before = path.read_bytes()
    assert run(_args(path, json=True, redact=True)) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["found"] and plan["fork"]["seq"] == _turn_ends(b)[0] and plan["rejected"][0]["blocking"] >= 1
    assert "call-" not in json.dumps(plan["rejected"]), "redacted plans quote no call id"
    assert run(_args(path, at=3)) == 1
    assert "NEW SESSION" in capsys.readouterr().out
    assert run(_args(tmp_path / "missing.jsonl")) == 2
    assert run(_args(path, at=-5)) == 2
    assert path.read_bytes() == before


@given(st.data())
def test_recover_and_prewrite_never_crash_on_damaged_bytes(fixtures_dir: Path, data: st.DataObject) -> None:
    """Flipped, cut and inserted bytes of the valid fixture (both encodings)."""
    from dshfuzz.checker._prewrite import prewrite, prewrite_bytes

    name = data.draw(st.sampled_from(["valid-v0.jsonl.zstd", "valid-v0.jsonl"]), label="fixture")
    raw = bytearray((fixtures_dir / name).read_bytes())
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        at = data.draw(st.integers(0, len(raw)), label="at")
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]), label="action")
        if action == "flip" and at < len(raw):
            raw[at] ^= data.draw(st.integers(1, 255), label="mask")
        elif action == "cut":
            del raw[at:]
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=16), label="bytes")
    log = parse_log(bytes(raw))
    recover_plan(log, options=STRICT)
    prewrite(log, {"type": "turn/start", "seq": len(log.events), "time": 0, "data": {"turn": 3}}, STRICT)
    prewrite(log, [e.raw for e in log.events[:12]], STRICT)
    recover_bytes(bytes(raw), options=STRICT)
    prewrite_bytes(bytes(raw), {"type": "turn/start", "seq": len(log.events), "time": 0, "data": {"turn": 3}}, options=STRICT)


def _plans_alike(data: bytes, compression: str, at: Any) -> None:
    log = parse_log(data, compression=compression)
    via_model = recover_plan(log, at=at, options=STRICT)
    streamed = recover_bytes(data, at, compression=compression, options=STRICT)
    assert streamed.to_json() == via_model.to_json()
    for point in [r.point for r in via_model.rejected] + ([via_model.fork] if via_model.fork else []):
        assert stream_fork_bytes(data, point, compression=log.compression) == fork_bytes(log, point), point


_SESSIONS = st.one_of(
    st.lists(st.sampled_from(HEALTHY + DEFECTIVE), min_size=1, max_size=5).map(session),
    session_logs(max_events=120),  # chunk deltas: packed runs, cut by the batches and packed again by the fork
)


@given(_SESSIONS, st.booleans(), st.data())
def test_the_streamed_planner_plans_as_the_planner_over_the_model(b: Any, zstd: bool, data: st.DataObject) -> None:
    """``recover_bytes`` (what ``dshfuzz recover`` runs: no model, each fork written by streaming the
    file again) makes the plan ``recover_plan`` makes over the file's model, and writes the same forks,
    the chunk runs packed across the log's own batches included."""
    batches = data.draw(st.sampled_from(["one", "per event", "drawn"]), label="batches")
    if batches == "one":
        split = [b.events]
    elif batches == "per event":
        split = [[e] for e in b.events]
    else:
        cuts = sorted(data.draw(st.sets(st.integers(1, max(len(b.events) - 1, 1)), max_size=6), label="cuts"))
        split = [b.events[i:j] for i, j in zip([0, *cuts], [*cuts, len(b.events)]) if i < j]
    file = encode_zstd(b.header, split) if zstd else b"".join([header_text(b.header), *(batch_text(x) for x in split)])
    at = data.draw(st.none() | st.integers(0, max(len(b.events) - 1, 0)), label="at")
    _plans_alike(file, "zstd" if zstd else "none", at)


@given(st.data())
def test_the_streamed_planner_plans_as_the_planner_over_the_model_on_damaged_bytes(fixtures_dir: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["valid-v0.jsonl.zstd", "valid-v0.jsonl"]), label="fixture")
    raw = bytearray((fixtures_dir / name).read_bytes())
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        at = data.draw(st.integers(0, len(raw)), label="at")
        if data.draw(st.booleans(), label="cut"):
            del raw[at:]
        elif at < len(raw):
            raw[at] ^= data.draw(st.integers(1, 255), label="mask")
    _plans_alike(bytes(raw), "zstd" if name.endswith(".zstd") else "none", None)


@given(session_logs(max_events=120), st.booleans(), st.integers(1, 512))
def test_a_fork_is_the_same_bytes_whatever_pieces_its_batch_is_written_in(b: Any, zstd: bool, flush: int) -> None:
    """A long fork's batch is written (and, for zstd, compressed) in pieces as it grows, never held
    whole; the fork is :func:`fork_bytes`'s at every size of piece."""
    file = encode_zstd(b.header, [b.events]) if zstd else header_text(b.header) + batch_text(b.events)
    log = parse_log(file)
    plan = recover_plan(log)
    points = [r.point for r in plan.rejected] + ([plan.fork] if plan.fork else [])
    assume(points)  # a log without a complete turn has no fork
    with patch("dshfuzz.checker._recover._FLUSH", flush):
        for point in points:
            assert stream_fork_bytes(file, point, compression=log.compression) == fork_bytes(log, point), point
