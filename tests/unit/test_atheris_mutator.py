"""The atheris custom mutator: deterministic, mostly realistic, never raising.

libFuzzer's byte mutator only exists inside a running fuzzer, so a deterministic
stand-in replaces it here; the properties are about dshfuzz's own part: the
edits applied to logs decoded from the input, and the crossover.
"""

from __future__ import annotations

import random

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness._atheris import TARGETS, StructuredMutator, edits
from dshfuzz.model import JsonDecodeError, compress_frame, loads, parse_log, scan_frames
from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS

MAX_SIZE = 4096
LOGS = list(generate(6, 11, max_events=10))


def _bytes_only(data: bytes, max_size: int) -> bytes:
    """The stand-in for libFuzzer's mutator: recognisable, deterministic, within ``max_size``."""
    return (b"BYTES:" + data)[:max_size]


def _mutator(target: str, share: float = 1.0) -> StructuredMutator:
    t = TARGETS[target]
    return StructuredMutator(t.compression, t.shape, _bytes_only, structured_share=share)


def _inputs(target: str) -> list[bytes]:
    t = TARGETS[target]
    files = [log.to_zstd() if t.compression == "zstd" else log.to_jsonl() for log in LOGS]
    if t.shape == "row":
        return [line for data in files for line in data.split(b"\n")[1:] if line][:12]
    return files


def _decodes(target: str, data: bytes) -> bool:
    t = TARGETS[target]
    if t.shape == "row":
        try:
            loads(data)
        except JsonDecodeError:
            return False
        return True
    log = parse_log(data, compression=t.compression)
    return log.header is not None and bool(log.events)


def test_the_mutator_draws_on_every_incident_mutator_transform_and_perturbation():
    names = {e.name for e in edits()}
    assert names == {*MUTATORS, *METAMORPHIC, *PERTURBATIONS}


@pytest.mark.parametrize("target", ["checker-jsonl", "checker-zstd", "row-decoder"])
def test_the_same_seed_gives_the_same_mutant(target):
    mutator = _mutator(target, share=0.5)
    for seed, data in enumerate(_inputs(target) * 3):
        assert mutator.mutate(data, MAX_SIZE, seed) == mutator.mutate(data, MAX_SIZE, seed)
        other = _mutator(target, share=0.5)  # no state carried between calls or instances
        assert other.mutate(data, MAX_SIZE, seed) == mutator.mutate(data, MAX_SIZE, seed)


@pytest.mark.parametrize("target", ["checker-jsonl", "checker-zstd", "row-decoder"])
def test_structured_mutants_are_realistic_most_of_the_time(target):
    mutator = _mutator(target)
    mutants = [mutator.mutate(data, MAX_SIZE, seed) for seed, data in enumerate(_inputs(target) * 5)]
    structured = [m for m in mutants if not m.startswith(b"BYTES:")]
    assert len(structured) >= 0.6 * len(mutants), (
        f"only {len(structured)} of {len(mutants)} inputs took an edit"
    )
    decodable = [m for m in structured if _decodes(target, m)]
    assert len(decodable) >= 0.6 * len(structured), (
        f"only {len(decodable)} of {len(structured)} mutants decode"
    )
    assert len(set(structured)) > len(structured) // 2, "the edits keep producing the same mutant"


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_mutator_never_raises_and_respects_max_size(target):
    rng = random.Random(7)
    garbage = [b"", b"\n", b"{", b"\x28\xb5\x2f\xfd" + rng.randbytes(40), rng.randbytes(300)]
    truncated = [data[: len(data) // 2] for data in _inputs(target)]
    mutator = _mutator(target)
    for seed, data in enumerate(garbage + truncated + _inputs(target)):
        for max_size in (1, 64, MAX_SIZE):
            out = mutator.mutate(data, max_size, seed)
            assert isinstance(out, bytes) and len(out) <= max_size


def test_a_share_of_zero_leaves_every_mutation_to_libfuzzer():
    mutator = _mutator("checker-jsonl", share=0.0)
    for seed, data in enumerate(_inputs("checker-jsonl")):
        assert mutator.mutate(data, MAX_SIZE, seed) == _bytes_only(data, MAX_SIZE)


def test_jsonl_crossover_splices_whole_lines():
    mutator = _mutator("checker-jsonl")
    a, b = _inputs("checker-jsonl")[:2]
    for seed in range(20):
        child = mutator.crossover(a, b, MAX_SIZE * 4, seed)
        lines = set(a.splitlines()) | set(b.splitlines())
        assert all(line in lines for line in child.splitlines())


def test_zstd_crossover_splices_whole_frames():
    mutator = _mutator("checker-zstd")
    a, b = _inputs("checker-zstd")[:2]
    frames = {data[f.offset : f.end] for data in (a, b) for f in scan_frames(data)}
    for seed in range(20):
        child = mutator.crossover(a, b, MAX_SIZE * 4, seed)
        assert all(child[f.offset : f.end] in frames for f in scan_frames(child))


def test_a_small_zstd_input_inflating_to_megabytes_is_left_to_libfuzzer():
    header, body = LOGS[0].to_jsonl().split(b"\n", 1)
    padded = body.replace(b"\n", b" " * 500_000 + b"\n", 1)  # whitespace around JSON is still JSON
    bomb = compress_frame(header + b"\n") + compress_frame(padded, block="rle")
    assert len(bomb) < MAX_SIZE and parse_log(bomb, compression="zstd").events
    mutator = _mutator("checker-zstd")
    for seed in range(5):
        assert mutator.mutate(bomb, MAX_SIZE, seed).startswith(b"BYTES:")
