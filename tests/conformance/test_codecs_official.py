"""The codecs against the official packages: JSON text, chunk rows, framing and the load verdict.

Every comparison runs many cases through one pipelined oracle call; a failure
names the case (variant and bytes) that disagreed.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dshfuzz.model import (
    JsonDecodeError,
    RowDecodeError,
    SessionLog,
    compress_frame,
    decode_frame,
    dumps,
    encode_jsonl,
    encode_zstd,
    loads,
    pack_chunk_runs,
    parse_log,
    scan_frames,
    skippable_frame,
    unpack_rows,
)
from dshfuzz.model._json import decode_utf8
from dshfuzz.oracle.official import OfficialOracle, Reply

pytestmark = pytest.mark.official

REPO = Path(__file__).resolve().parents[2]


# -- JSON text: JSON.stringify(JSON.parse(t)) and Buffer#toString("utf8") ----------------------

_NODE_JSON = r"""
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(([kind, b64]) => {
  const text = Buffer.from(b64, 'base64').toString('utf8');
  if (kind === 'utf8') return [true, text];
  try { return [true, JSON.stringify(JSON.parse(text))]; } catch { return [false, null]; }
});
process.stdout.write(JSON.stringify(out));
"""


def _node_json(official: OfficialOracle, cases: list[tuple[str, bytes]]) -> list[tuple[bool, str | None]]:
    from dshfuzz.oracle.official._server import node_executable

    payload = json.dumps([[kind, base64.b64encode(data).decode()] for kind, data in cases])
    out = subprocess.run([str(node_executable()), "-e", _NODE_JSON], input=payload.encode(), capture_output=True, check=True)
    # Lone surrogates survive JSON.stringify as escapes, so the reply is plain JSON.
    return [(ok, text) for ok, text in json.loads(out.stdout)]


def _json_cases(rng: random.Random, n: int) -> list[bytes]:
    atoms = ['-0', '0', '1.0', '1e21', '1e-7', '1e400', '-1e400', '12345678901234567890', '9007199254740993', '0.1',
             '"\\ud800"', '"\\ud83d\\ude00"', '"\\u0000\\u001f\x7f"', '"é"', 'true', 'null', '[]', '{}', '"-0"']
    keys = ['"a"', '"b"', '"0"', '"10"', '"01"', '"4294967294"', '"4294967295"', '"\\ud800"', '"a"']
    noise = ["\ufeff", " ", "\t", "\x0c", ",", "NaN", "Infinity", "'", "\x01"]

    def value(depth: int) -> str:
        pick = rng.random()
        if depth > 2 or pick < 0.5:
            return rng.choice(atoms)
        if pick < 0.75:
            return "[" + ",".join(value(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        return "{" + ",".join(f"{rng.choice(keys)}:{value(depth + 1)}" for _ in range(rng.randint(0, 4))) + "}"

    out = []
    for _ in range(n):
        text = value(0)
        if rng.random() < 0.15:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(noise) + text[at:]
        out.append(text.encode("utf-8", "surrogatepass"))
    return out


def test_json_text_round_trips_exactly_as_node_does(official: OfficialOracle) -> None:
    rng = random.Random(2026)
    texts = _json_cases(rng, 3000)
    invalid = [bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) for _ in range(1000)]
    replies = _node_json(official, [("json", t) for t in texts] + [("utf8", b) for b in invalid])
    for text, (ok, expected) in zip(texts, replies):
        try:
            ours: tuple[bool, str | None] = (True, dumps(loads(text)))
        except JsonDecodeError:
            ours = (False, None)
        assert ours == (ok, expected), f"JSON text {text!r}"
    for data, (_, expected) in zip(invalid, replies[len(texts) :]):
        assert decode_utf8(data) == expected, f"UTF-8 decoding of {data!r}"


# -- chunk rows --------------------------------------------------------------------------------


def _random_events(rng: random.Random) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    seq, time = rng.randint(0, 5), rng.randint(0, 2**40)
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(["text-delta", "reasoning-delta", "tool-call-delta", "unnamed", "other"])
        index, call = rng.randint(0, 2), rng.choice(["call_1", "call_2"])
        for _ in range(rng.randint(1, 8)):
            time += rng.randint(-3, 30)
            text = rng.choice(["", "a", "é\n", "\ud800", '{"p":', "\x00"])
            if kind == "other":
                event: dict[str, Any] = {"type": "step/start", "seq": seq, "time": time, "data": {"turn": 1, "step": 1}}
            else:
                chunk: dict[str, Any] = {"type": "tool-call-delta" if kind == "unnamed" else kind, "index": index}
                if kind in ("text-delta", "reasoning-delta"):
                    chunk["text"] = text
                else:
                    chunk["id"] = call
                    if kind == "tool-call-delta":
                        chunk["name"] = "read"
                    chunk["argumentsDelta"] = text
                event = {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": 1, "step": 1, "chunk": chunk}}
            twist = rng.randrange(20)
            if twist == 0:
                event["ignorable"] = True
            elif twist == 1:
                event["time"] = time + 0.5
            elif twist == 2:
                seq += 1
                event["seq"] = seq
            elif twist == 3 and kind != "other":
                event["data"]["chunk"]["index"] = index + 1
            elif twist == 4:
                event["data"]["turn"] = 2.0
            elif twist == 5 and kind != "other":
                event["data"]["chunk"]["extra"] = 1
            events.append(event)
            seq += 1
    return events


def _malformed_rows(rng: random.Random, rows: list[Any]) -> list[Any]:
    packed = [r for r in rows if isinstance(r, dict) and str(r.get("type", "")).endswith("-chunks")]
    if not packed:
        return rows
    victim = json.loads(json.dumps(rng.choice(packed)))
    edits: list[Callable[[dict[str, Any]], None]] = [
        lambda r: r.update(extra=1),
        lambda r: r.update(seq0=-1),
        lambda r: r.update(seq0=2**53 - 1),
        lambda r: r.update(time0="x"),
        lambda r: r.update(data=[]),
        lambda r: r["data"].update(dt=r["data"]["dt"] + [1]),
        lambda r: r["data"].update(dt=[0.5] * len(r["data"]["dt"])),
        lambda r: r["data"].update(turn=None),
        lambda r: r["data"].update(id=3) if "id" in r["data"] else r["data"].update(texts=[]),
        lambda r: r["data"].pop("dt"),
    ]
    rng.choice(edits)(victim)
    return [victim if r is not None and r == rng.choice(packed) else r for r in rows] + [victim]


def test_pack_and_unpack_equal_the_official_codec_on_fixtures_and_1000_generated_runs(
    official: OfficialOracle, fixtures_dir: Path
) -> None:
    rng = random.Random(7)
    fixture_events = [loads(line) for line in (fixtures_dir / "valid-v0.unpacked.jsonl").read_bytes().splitlines()[1:]]
    cases = [fixture_events] + [_random_events(rng) for _ in range(1000)]
    packed = [pack_chunk_runs(events) for events in cases]
    assert sum(1 for rows in packed for r in rows if "seq0" in r) > 1000
    replies = official.pipeline([{"op": "pack", "events": events} for events in cases])
    for events, ours, reply in zip(cases, packed, replies):
        assert isinstance(reply, Reply) and reply.ok, f"pack refused {events!r}"
        assert dumps(ours) == dumps(reply.result), f"pack of {events!r}"
    row_cases = packed + [_malformed_rows(rng, rows) for rows in packed[1:300]]
    replies = official.pipeline([{"op": "unpack", "rows": rows} for rows in row_cases])
    for rows, reply in zip(row_cases, replies):
        assert isinstance(reply, Reply)
        try:
            ours_events: Any = unpack_rows(rows)
        except RowDecodeError as exc:
            assert not reply.ok and reply.error is not None, f"official unpacked rows we refuse: {rows!r}"
            assert reply.error.message == exc.message, f"rows {rows!r}"
            continue
        assert reply.ok, f"official refused rows we unpack: {rows!r} ({reply.error})"
        assert dumps(ours_events) == dumps(reply.result), f"unpack of {rows!r}"


# -- framing: the load verdict on variants of the valid fixture ----------------------------------


def _verdict(log: SessionLog) -> tuple[Any, ...]:
    if log.refusal is not None:
        return ("refused", log.refusal.message)
    torn = None if log.torn is None else {"truncateTo": log.torn.truncate_to, "recoveredEvents": log.torn.recovered_events}
    return ("read", log.committed_events, torn)


def _official_verdict(reply: Reply) -> tuple[Any, ...]:
    if not reply.ok:
        assert reply.error is not None
        return ("refused", reply.error.message)
    return ("read", reply.result["storedEvents"], reply.result["torn"])


def _frames(data: bytes) -> list[bytes]:
    return [data[f.offset : f.end] for f in scan_frames(data)]


def _zstd_variants(data: bytes) -> dict[str, bytes]:
    frames = _frames(data)
    contents = [decode_frame(f) for f in frames]
    last = scan_frames(data)[-1]
    variants: dict[str, bytes] = {"fixture": data}
    for cut in range(last.offset, len(data)):
        variants[f"truncated at byte {cut}"] = data[:cut]
    for cut in range(1, last.offset, 53):
        variants[f"truncated early at byte {cut}"] = data[:cut]
    for i, frame in enumerate(frames):
        start = sum(len(f) for f in frames[:i])
        for label, at in (("magic", 0), ("descriptor bit", 4), ("payload", len(frame) // 2), ("checksum", len(frame) - 1)):
            damaged = bytearray(data)
            damaged[start + at] ^= 0x08 if label == "descriptor bit" else 0x41
            variants[f"frame {i} corrupted {label}"] = bytes(damaged)
        variants[f"skippable frame before frame {i}"] = b"".join(frames[:i]) + skippable_frame(b"x") + b"".join(frames[i:])
    variants["header and first batch merged"] = compress_frame(contents[0] + contents[1]) + b"".join(frames[2:])
    variants["whole log in one frame"] = compress_frame(b"".join(contents))
    variants["batches merged"] = frames[0] + compress_frame(b"".join(contents[1:]))
    mid = contents[1].rfind(b"\n", 0, len(contents[1]) - 1) + 5
    variants["record split across frames"] = frames[0] + compress_frame(contents[1][:mid]) + compress_frame(contents[1][mid:]) + b"".join(frames[2:])
    variants["last frame unaligned"] = b"".join(frames[:-1]) + compress_frame(contents[-1][:-1])
    for block in ("raw", "rle"):
        for checksum in (True, False):
            variants[f"{block} blocks, checksum {checksum}"] = b"".join(compress_frame(c, block=block, checksum=checksum) for c in contents)  # type: ignore[arg-type]
    variants["content sizes"] = b"".join(compress_frame(c, content_size=True) for c in contents)
    raw = compress_frame(contents[1], block="raw")  # magic, descriptor 0x04, window byte, blocks, checksum
    rest = b"".join(frames[2:])
    variants["dictionary id on frame 1"] = frames[0] + raw[:4] + bytes([raw[4] | 1]) + raw[5:6] + b"\x07" + raw[6:] + rest
    for window_log in (10, 27, 31):
        variants[f"window 2**{window_log} on frame 1"] = frames[0] + raw[:5] + bytes([(window_log - 10) << 3]) + raw[6:] + rest
    raw_last = b"".join(frames[:-1]) + compress_frame(contents[-1], block="raw")
    for cut in range(len(raw_last) - len(compress_frame(contents[-1], block="raw")), len(raw_last), 97):
        variants[f"raw last frame truncated at byte {cut}"] = raw_last[:cut]
    return variants


def _compare(official: OfficialOracle, tmp_path: Path, variants: dict[str, bytes], suffix: str) -> int:
    paths = {}
    for i, (name, data) in enumerate(variants.items()):
        path = tmp_path / f"v{i}{suffix}"
        path.write_bytes(data)
        paths[name] = path
    replies = official.pipeline([{"op": "load", "path": str(p)} for p in paths.values()])
    compression = "zstd" if suffix.endswith("zstd") else "none"
    for (name, data), reply in zip(variants.items(), replies):
        assert isinstance(reply, Reply), f"{name}: {reply}"
        ours = _verdict(parse_log(data, compression=compression))
        assert ours == _official_verdict(reply), f"{name} ({len(data)} bytes)"
    return len(variants)


def test_the_zstd_reader_verdict_equals_the_official_loader_on_framing_variants(
    official: OfficialOracle, fixtures_dir: Path, tmp_path: Path
) -> None:
    data = (fixtures_dir / "valid-v0.jsonl.zstd").read_bytes()
    assert _compare(official, tmp_path, _zstd_variants(data), ".jsonl.zstd") > 1000


def test_the_plain_reader_verdict_equals_the_official_loader_on_torn_and_damaged_lines(
    official: OfficialOracle, fixtures_dir: Path, tmp_path: Path
) -> None:
    data = (fixtures_dir / "valid-v0.jsonl").read_bytes()
    lines = data.split(b"\n")
    variants = {f"truncated at byte {cut}": data[:cut] for cut in range(len(data) - 400, len(data))}
    variants["fixture"] = data
    for i in (1, 20, 40, len(lines) - 2):
        variants[f"line {i + 1} not JSON"] = b"\n".join(lines[:i] + [b"{x"] + lines[i + 1 :])
        variants[f"line {i + 1} empty"] = b"\n".join(lines[:i] + [b""] + lines[i + 1 :])
        variants[f"line {i + 1} dropped"] = b"\n".join(lines[:i] + lines[i + 1 :])
        variants[f"line {i + 1} null"] = b"\n".join(lines[:i] + [b"null"] + lines[i + 1 :])
    variants["header only"] = lines[0] + b"\n"
    variants["no newline at all"] = lines[0]
    variants["BOM before the header"] = b"\xef\xbb\xbf" + data
    variants["BOM before line 20"] = b"\n".join(lines[:19] + [b"\xef\xbb\xbf" + lines[19]] + lines[20:])
    variants["CRLF line ends"] = data.replace(b"\n", b"\r\n")
    assert _compare(official, tmp_path, variants, ".jsonl") > 400


def test_writers_reproduce_the_official_bytes(fixtures_dir: Path) -> None:
    zstd = (fixtures_dir / "valid-v0.jsonl.zstd").read_bytes()
    contents = [decode_frame(f) for f in _frames(zstd)]
    header = loads(contents[0])
    batches = [[e for row in c.splitlines() for e in unpack_rows([loads(row)])] for c in contents[1:]]
    assert encode_zstd(header, batches) == zstd
    assert encode_jsonl(header, batches) == (fixtures_dir / "valid-v0.jsonl").read_bytes()


@pytest.fixture
def oracle_sketch(shared: Callable[..., Path]) -> Path:
    return shared("reference", "oracle-sketch")


def test_synth_is_byte_identical_to_the_sketch_generator(
    official: OfficialOracle, oracle_sketch: Path, tmp_path: Path
) -> None:
    from dshfuzz.oracle.official._server import node_executable

    work = tmp_path / "sketch"
    work.mkdir()
    for name in ("gen-synth.mjs", "lib"):
        target = work / name
        if (oracle_sketch / name).is_dir():
            target.mkdir()
            for f in (oracle_sketch / name).iterdir():
                (target / f.name).write_bytes(f.read_bytes())
        else:
            target.write_bytes((oracle_sketch / name).read_bytes())
    (work / "node_modules").symlink_to(REPO / "src/dshfuzz/oracle/official/js/node_modules")
    args = ["--events", "3000", "--replace-every", "50"]
    subprocess.run([str(node_executable()), "gen-synth.mjs", *args, "--out", str(tmp_path / "js")], cwd=work, check=True, capture_output=True)
    subprocess.run([str(REPO / ".venv/bin/python"), str(REPO / "benchmarks/synth.py"), *args, "--out", str(tmp_path / "py")], check=True, capture_output=True)
    for suffix in (".jsonl", ".jsonl.zstd"):
        assert (tmp_path / f"py{suffix}").read_bytes() == (tmp_path / f"js{suffix}").read_bytes(), suffix


_BYTE_LAYER = ("corrupt session log:", "corrupt Zstandard session log:", "empty or header-less", "session header uses retired", "Cannot read properties of null")


def test_real_sessions_get_the_official_byte_layer_verdict_plain_and_reframed(
    official: OfficialOracle, real_sessions_dir: Path, tmp_path: Path
) -> None:
    variants: dict[str, bytes] = {}
    for path in sorted((real_sessions_dir / "concrete").glob("*.jsonl")):
        data = path.read_bytes()
        variants[path.name] = data
        lines = data.split(b"\n")
        groups = [b"".join(line + b"\n" for line in lines[i : i + 5]) for i in range(1, len(lines) - 1, 5)]
        variants[path.name + ".zstd"] = b"".join(compress_frame(c) for c in [lines[0] + b"\n", *groups])
    assert len(variants) >= 60
    for i, (name, data) in enumerate(variants.items()):
        (tmp_path / f"r{i}{'.jsonl.zstd' if name.endswith('.zstd') else '.jsonl'}").write_bytes(data)
    paths = [tmp_path / f"r{i}{'.jsonl.zstd' if n.endswith('.zstd') else '.jsonl'}" for i, n in enumerate(variants)]
    replies = official.pipeline([{"op": "load", "path": str(p)} for p in paths])
    for (name, data), path, reply in zip(variants.items(), paths, replies):
        assert isinstance(reply, Reply), f"{name}: {reply}"
        ours = _verdict(parse_log(data, compression="zstd" if name.endswith(".zstd") else "none"))
        theirs = _official_verdict(reply)
        semantic_refusal = theirs[0] == "refused" and not str(theirs[1]).startswith(_BYTE_LAYER) and " uses log format v" not in str(theirs[1])
        if semantic_refusal:
            assert ours[0] == "read", f"{name}: we refuse at the byte layer, the official reader only later ({theirs[1]})"
        else:
            assert ours == theirs, name


def test_torn_synthetic_logs_recover_the_same_packed_records_as_the_official_loader(
    official: OfficialOracle, tmp_path: Path
) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from synth import write_synth

    write_synth(tmp_path / "synth", events=2500, replace_every=50)
    data = (tmp_path / "synth.jsonl.zstd").read_bytes()
    plain = (tmp_path / "synth.jsonl").read_bytes()
    rng = random.Random(11)
    frames = scan_frames(data)
    variants: dict[str, bytes] = {}
    for frame in rng.sample(frames[1:], 15):
        for cut in sorted(rng.sample(range(frame.offset + 1, frame.end), 4)):
            variants[f"cut at byte {cut} in frame {frame.offset}"] = data[:cut]
        raw = compress_frame(decode_frame(data[frame.offset : frame.end]), block="raw")
        for cut in sorted(rng.sample(range(1, len(raw)), 4)):
            variants[f"raw frame at {frame.offset} cut at {cut}"] = data[: frame.offset] + raw[:cut]
    assert _compare(official, tmp_path, variants, ".jsonl.zstd") == len(variants)
    cuts = {f"plain cut at byte {c}": plain[:c] for c in sorted(rng.sample(range(1, len(plain)), 60))}
    assert _compare(official, tmp_path, cuts, ".jsonl") == len(cuts)
