"""The official bridge against the official layers themselves.

Specification: the valid fixture passes every layer in both encodings; rows of
the reference mutation matrix (official-dsh-packages.md §2.2-2.3) reproduce with
the documented error class and coordinates; a wedged or dead server is replaced
and the next call works; nothing the bridge touches is ever written.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import shutil
import tempfile
import threading
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import zstandard

from dshfuzz.cli import main as cli_main
from dshfuzz.model import dumps, loads
from dshfuzz.oracle.official import (
    LAYERS,
    OfficialOracle,
    OfficialRefusal,
    OracleCrashed,
    OracleTimeout,
    Reply,
    unavailable_reason,
)

pytestmark = pytest.mark.official


@pytest.fixture(scope="module")
def valid(fixtures_dir: Path) -> tuple[dict, list[dict]]:
    """Header and the 76 events of the valid fixture."""
    lines = (fixtures_dir / "valid-v0.unpacked.jsonl").read_text("utf-8").splitlines()
    return loads(lines[0]), [loads(line) for line in lines[1:]]


def write_jsonl(path: Path, header: dict, rows: list) -> Path:
    path.write_text("".join(dumps(value) + "\n" for value in [header, *rows]), "utf-8")
    return path


def zstd_frames(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each complete zstd frame."""
    frames, start = [], 0
    while start < len(data):
        rest = data[start:]
        decoder = zstandard.ZstdDecompressor().decompressobj()
        decoder.decompress(rest)
        end = start + len(rest) - len(decoder.unused_data)
        frames.append((start, end))
        start = end
    return frames


def explain(verdicts) -> str:
    return "\n".join(f"  {name}: {'ok' if v.ok else v.error.summary}" for name, v in verdicts.items())


# -- the valid fixture -----------------------------------------------------------


@pytest.mark.parametrize("name", ["valid-v0.jsonl", "valid-v0.jsonl.zstd"])
def test_fixture_passes_every_layer(official: OfficialOracle, fixtures_dir: Path, name: str):
    report = official.check_report(path=fixtures_dir / name)
    assert report.decode_error is None
    assert list(report.layers) == list(LAYERS)
    assert report.ok, explain(report.layers)
    assert report.layers["load"].result["events"] == 76
    assert report.layers["released"].result["events"] == 76


def test_relative_paths_are_the_callers(official: OfficialOracle, fixtures_dir: Path, monkeypatch):
    monkeypatch.chdir(fixtures_dir)
    assert official.check(path="valid-v0.jsonl", layers=["load", "loadApp"])["loadApp"].ok
    assert official.read_raw("valid-v0.jsonl").torn is False


def test_fixture_events_inline_pass_every_event_layer(official: OfficialOracle, valid):
    header, events = valid
    verdicts = official.check(events=events, header=header)
    assert list(verdicts) == [n for n in LAYERS if n not in ("load", "loadApp")]
    assert all(v.ok for v in verdicts.values()), explain(verdicts)


@pytest.mark.parametrize("argv_tail", [["valid-v0.jsonl.zstd"], ["valid-v0.jsonl"]])
def test_cli_reports_every_layer_ok(fixtures_dir: Path, argv_tail):
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["oracle", str(fixtures_dir / argv_tail[0]), "--json"])
    report = json.loads(out.getvalue())
    assert code == 0
    assert report == {str(fixtures_dir / argv_tail[0]): {name: {"ok": True} for name in LAYERS}}


def test_cli_exits_1_on_a_refusal_and_names_it(official: OfficialOracle, valid, tmp_path: Path):
    header, events = valid
    log = write_jsonl(tmp_path / "gap.jsonl", header, official.pack(events[:30] + events[31:]))
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["oracle", str(log), "--json", "--layers", "fold,load"])
    assert code == 1
    cells = json.loads(out.getvalue())[str(log)]
    assert cells["fold"]["error"] == {
        "name": "Error", "class": "Error", "message": "session event seq 31 is not contiguous; expected 30", "seq": 30,
    }
    assert cells["load"]["error"]["line"] == 26


# -- mutation-matrix rows ----------------------------------------------------------


def test_seq_gap_is_refused_by_every_layer_but_inbox_at_one_position(official: OfficialOracle, valid, tmp_path):
    header, events = valid
    gapped = events[:30] + events[31:]
    log = write_jsonl(tmp_path / "gap.jsonl", header, official.pack(gapped))
    verdicts = official.check(path=log)
    refused = {name for name, v in verdicts.items() if not v.ok}
    assert refused == {"fold", "seed", "invariants", "meter", "load", "loadApp", "released", "wire"}, explain(verdicts)
    assert verdicts["load"].error.message == (
        "corrupt session log: seq gap in committed region at line 25 (expected 30, got 31)"
    )
    assert verdicts["released"].error.kind == "SessionFormatError"
    for name in ("fold", "seed", "load", "loadApp", "released"):
        assert verdicts[name].error.seq == 30, explain(verdicts)
    # persistence counts rows, the released codec counts from 0: both are physical line 26
    assert verdicts["load"].error.line == verdicts["released"].error.line == 26


def test_turn_end_without_reason_is_refused_only_on_read(official: OfficialOracle, valid, tmp_path):
    header, events = valid
    mutant = copy.deepcopy(events)
    del mutant[41]["data"]["reason"]
    log = write_jsonl(tmp_path / "no-reason.jsonl", header, official.pack(mutant))
    verdicts = official.check(path=log)
    assert [n for n, v in verdicts.items() if not v.ok] == ["load", "loadApp", "released"], explain(verdicts)
    assert verdicts["load"].error.kind == "SessionPersistenceCorruptionError"
    assert "malformed pre-react-loop turn/end at seq 41" in verdicts["load"].error.message
    assert verdicts["released"].error.kind == "SessionFormatUnsupportedMigrationError"
    assert verdicts["released"].error.message.endswith('turn/end 41 data lacks required member "reason"')
    assert verdicts["load"].error.seq == verdicts["released"].error.seq == 41


@pytest.mark.parametrize("ignorable", [False, True])
def test_unknown_type_is_refused_by_load_unless_ignorable_and_always_by_released(
    official: OfficialOracle, valid, tmp_path, ignorable
):
    header, events = valid
    mutant = copy.deepcopy(events)
    mutant[42]["type"] = "x-vendor/custom"
    if ignorable:
        mutant[42]["ignorable"] = True
    log = write_jsonl(tmp_path / "unknown.jsonl", header, official.pack(mutant))
    verdicts = official.check(path=log, layers=["fold", "seed", "load", "loadApp", "released"])
    assert verdicts["fold"].ok and verdicts["seed"].ok
    assert verdicts["released"].error.kind == "SessionFormatUnsupportedMigrationError"
    assert "migration refuses unknown historical events even when ignorable" in verdicts["released"].error.message
    if ignorable:
        assert verdicts["load"].ok and verdicts["loadApp"].ok, explain(verdicts)
    else:
        for name in ("load", "loadApp"):
            error = verdicts[name].error
            assert error.kind == "SessionFormatUnsupportedError" and error.seq == 42
            assert "(raw log:" not in error.message and str(tmp_path) not in error.message
            assert "<scratch>" not in error.message
        assert verdicts["load"].error == verdicts["loadApp"].error


def test_torn_zstd_tail_loads_with_a_torn_marker(official: OfficialOracle, fixtures_dir, tmp_path):
    data = (fixtures_dir / "valid-v0.jsonl.zstd").read_bytes()
    start, end = zstd_frames(data)[-1]
    torn = tmp_path / "torn.jsonl.zstd"
    torn.write_bytes(data[: start + (end - start) // 2])
    verdicts = official.check(path=torn, layers=["load", "loadApp", "released"])
    assert all(v.ok for v in verdicts.values()), explain(verdicts)
    assert verdicts["load"].result["torn"]["truncateTo"] == start
    assert verdicts["released"].result["events"] == verdicts["load"].result["storedEvents"]


def test_corrupted_middle_frame_is_refused_with_its_byte_offset(official: OfficialOracle, fixtures_dir, tmp_path):
    data = bytearray((fixtures_dir / "valid-v0.jsonl.zstd").read_bytes())
    frames = zstd_frames(bytes(data))
    start, end = frames[len(frames) // 2]
    data[(start + end) // 2] ^= 0xFF
    log = tmp_path / "corrupt.jsonl.zstd"
    log.write_bytes(bytes(data))
    verdicts = official.check(path=log, layers=["load", "loadApp", "released"])
    assert not any(v.ok for v in verdicts.values()), explain(verdicts)
    error = verdicts["load"].error
    assert error.message == f"corrupt Zstandard session log: frame at byte {start} failed validation"
    assert error.offset == start
    assert error.cause is not None


def test_undecodable_file_still_reports_its_file_layers(official: OfficialOracle, tmp_path):
    log = tmp_path / "garbage.jsonl.zstd"
    log.write_bytes(b"not a zstd log at all\n")
    report = official.check_report(path=log)
    assert report.decode_error is not None
    assert set(report.layers) == {"load", "loadApp", "released"}
    assert not any(v.ok for v in report.layers.values())
    assert report.layers["load"].error.offset == 0


def test_format_v1_header_is_judged_by_the_released_v1_restore(official: OfficialOracle, valid, tmp_path):
    header, events = valid
    log = write_jsonl(tmp_path / "v1.jsonl", {**header, "version": 1}, official.pack(events))
    verdicts = official.check(path=log, layers=["load", "released"])
    assert verdicts["load"].error.kind == "SessionFormatUnsupportedError"
    assert verdicts["released"].ok, explain(verdicts)
    assert verdicts["released"].result["header"]["version"] == 1


# -- official functions ---------------------------------------------------------------


def test_pack_unpack_round_trip_and_raw_read(official: OfficialOracle, valid, fixtures_dir):
    header, events = valid
    rows = official.pack(events)
    assert len(rows) == 63
    assert official.unpack(rows) == events
    raw = official.read_raw(fixtures_dir / "valid-v0.jsonl.zstd")
    assert (raw.compression, raw.header, raw.rows, raw.torn) == ("zstd", header, rows, False)
    assert official.fold(events)["nodes"] == [45, 39, 51, 59, 64, 73]


def test_unpack_refusal_carries_the_official_message(official: OfficialOracle):
    row = {"type": "text-chunks", "seq0": 0, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a", "b"]}}
    with pytest.raises(OfficialRefusal) as caught:
        official.unpack([row])
    assert caught.value.error.message.startswith("malformed text-chunks storage row")


def test_inbox_replays_from_the_seed_length(official: OfficialOracle, valid):
    header, events = valid
    queued = events[:1]  # agent/inbox/spliced inserting msg-user-1
    assert official.layer("inbox", events=queued).result == {"nextTurn": ["msg-user-1"], "nextStep": []}
    skipped = {"nextTurn": [], "nextStep": []}
    assert official.layer("inbox", events=queued, options={"seedLength": 1}).result == skipped
    assert official.layer("inbox", events=queued, header={**header, "seedLength": 1}).result == skipped


def test_wire_serialises_the_final_surface_offline(official: OfficialOracle, valid):
    _, events = valid
    body = official.wire(events)
    roles = [m["role"] for m in body["messages"]]
    assert roles[0] == "system" and "tool" in roles
    assert official.wire(events[:2]) is None  # no request/header yet: nothing to serialise


# -- robustness -------------------------------------------------------------------------


def test_inputs_are_not_mutated_and_layers_judge_the_same_input(official: OfficialOracle, valid):
    header, events = valid
    before = copy.deepcopy((header, events))
    together = official.check(events=events, header=header)
    alone = {name: official.layer(name, events=events, header=header) for name in together}
    assert (header, events) == before
    assert together == alone


def test_concurrent_callers_each_get_their_own_reply(official: OfficialOracle, valid):
    _, events = valid
    prefixes = [events[:n] for n in (5, 13, 29, 42)]
    expected = [official.fold(p) for p in prefixes]
    results: dict[int, list] = {}

    def worker(i: int) -> None:
        results[i] = [official.fold(prefixes[i]) for _ in range(10)]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(prefixes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[i] == [expected[i]] * 10 for i in range(len(prefixes)))


def test_user_files_are_byte_identical_after_every_op(official: OfficialOracle, valid, fixtures_dir, tmp_path):
    header, events = valid
    # a torn tail and an open turn: exactly what load() would repair in place
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(write_jsonl(tmp_path / "x.jsonl", header, official.pack(events[:60])).read_bytes() + b'{"type":"tu')
    zst = shutil.copy(fixtures_dir / "valid-v0.jsonl.zstd", tmp_path / "copy.jsonl.zstd")
    for path in (torn, Path(zst)):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        stat = path.stat()
        official.check(path=path)
        for op in ("load", "loadApp", "released", "readRaw", "fold", "seed", "closers"):
            official.call(op, path=str(path))
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert official.check(path=torn)["load"].result["closers"]  # the repair was computed, not written


@pytest.fixture()
def fragile() -> OfficialOracle:
    if unavailable_reason() is not None:
        pytest.skip(unavailable_reason())
    with OfficialOracle(timeout=2.0, debug_ops=True) as oracle:
        yield oracle


def test_timeout_kills_the_server_and_the_next_call_works(fragile: OfficialOracle):
    assert fragile.ping()
    with pytest.raises(OracleTimeout):
        fragile.call("__hang")
    assert fragile.ping()


def test_crash_is_reported_and_the_next_call_works(fragile: OfficialOracle):
    with pytest.raises(OracleCrashed):
        fragile.call("__crash")
    assert fragile.ping()


def test_scratch_is_removed_even_after_a_killed_server(fixtures_dir: Path, tmp_path: Path, monkeypatch):
    if unavailable_reason() is not None:
        pytest.skip(unavailable_reason())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with OfficialOracle(debug_ops=True) as oracle:
        assert oracle.layer("loadApp", path=fixtures_dir / "valid-v0.jsonl.zstd").ok
        [scratch] = tmp_path.iterdir()
        assert [p.name for p in scratch.iterdir()] == ["zstd"]
        assert list((scratch / "zstd").iterdir()) == []  # the symlink's directory went with the request
        with pytest.raises(OracleCrashed):
            oracle.call("__crash")
        assert not scratch.exists()
        assert oracle.ping()
    assert list(tmp_path.iterdir()) == []


def test_pipeline_survives_a_wedged_request(fragile: OfficialOracle):
    requests = [{"op": "ping"}, {"op": "__hang"}, {"op": "ping"}, {"op": "__crash"}, {"op": "ping"}]
    results = fragile.pipeline(requests, window=8)
    assert [type(r) for r in results] == [Reply, OracleTimeout, Reply, OracleCrashed, Reply]
    assert [r.result for r in results if isinstance(r, Reply)] == ["pong"] * 3


def test_requests_in_flight_survive_a_wedged_request(fragile: OfficialOracle):
    requests = [{"op": "ping"}, {"op": "__hang"}, {"op": "ping"}, {"op": "__crash"}, {"op": "ping"}]
    with fragile.in_flight(requests) as replies:
        results = replies()
    assert [type(r) for r in results] == [Reply, OracleTimeout, Reply, OracleCrashed, Reply]
    assert [r.result for r in results if isinstance(r, Reply)] == ["pong"] * 3


def test_replies_left_in_flight_never_answer_the_next_request(fragile: OfficialOracle):
    """Replies the block did not collect are read on the way out; when the block raises, the
    server is replaced: either way the next call gets its own reply."""
    with fragile.in_flight([{"op": "version"}] * 3):
        pass
    assert fragile.ping()
    with pytest.raises(KeyError), fragile.in_flight([{"op": "version"}] * 3):
        raise KeyError("the caller's own failure")
    assert fragile.ping()


def test_checking_files_at_once_gives_each_file_its_verdicts(official: OfficialOracle, fixtures_dir: Path):
    valid = fixtures_dir / "valid-v0.jsonl.zstd"
    files = [(valid, ("fold", "load")), (valid, ()), (fixtures_dir / "valid-v0.jsonl", ("released",))]
    with official.checking(files) as verdicts:
        got = verdicts()
    assert [sorted(v) for v in got] == [["fold", "load"], [], ["released"]]
    assert got[0] == official.check(path=valid, layers=("fold", "load"))


def _one_of_each_incident() -> list[tuple[str, bytes, str]]:
    """One seeded mutant of every mutator and perturbation: ``(name, data, file suffix)``."""
    from dshfuzz.generators import generate
    from dshfuzz.mutators import MUTATORS, PERTURBATIONS, Inapplicable, apply_seeded

    logs = list(generate(count=6, seed=21, max_events=60)) + list(generate(count=3, seed=22, format_version=1))
    found = []
    for name, edit in {**MUTATORS, **PERTURBATIONS}.items():
        for number, log in enumerate(logs):
            try:
                mutant = apply_seeded(edit, log, number)
            except Inapplicable:
                continue
            found.append((name, mutant.data, ".jsonl.zstd" if mutant.compression == "zstd" else ".jsonl"))
            break
    return found


def test_all_layers_at_once_is_each_layer_alone_on_every_incident(official: OfficialOracle, tmp_path: Path):
    """``all`` shares one read of the file between the event layers and ``released``: on one
    mutant of every incident class (a zstd bomb, a log too deep to copy) each layer's verdict is
    the verdict that layer gives when asked alone."""
    from dshfuzz.contracts.layers import CAMPAIGN_LAYERS

    incidents = _one_of_each_incident()
    assert {"frame-over-limit", "deep-nesting"} <= {name for name, _, _ in incidents}
    for name, data, suffix in incidents:
        path = tmp_path / f"{name}{suffix}"
        path.write_bytes(data)
        together = official.check(path=path, layers=CAMPAIGN_LAYERS)
        alone = {layer: official.layer(layer, path=path) for layer in together}
        assert together == alone, f"{name}: together\n{explain(together)}\nalone\n{explain(alone)}"
