"""The structure-aware custom mutator: libFuzzer explores realistic logs, not only bytes.

libFuzzer calls ``mutate(data, max_size, seed)`` for every new input. Most of the
time (``1 - structured_share``) and whenever ``data`` does not decode as a log,
it falls back to libFuzzer's own byte mutator (``atheris.Mutate``). Otherwise it
reads ``data`` as a log in the target's container, applies one of dshfuzz's edits
(the incident ``MUTATORS``, the ``METAMORPHIC`` transforms and the robustness
``PERTURBATIONS``) with every choice drawn by Hypothesis from bytes of
``random.Random(seed)``, and re-encodes the result in the same container (JSONL
lines or zstd frames, as the edit lowers it). A row target's input is one storage
row: it is mutated as the only row of a one-header log, and one line of the
result comes back.

Deterministic given ``(data, max_size, seed)`` and the byte mutator; never raises
(an edit that does not apply, or a result over ``max_size``, falls back too), and
stays cheap: a zstd input whose frames inflate far beyond ``max_size`` is not
re-encoded (its result could not fit, and encoding megabytes takes seconds).
The crossover splices two inputs at line boundaries (JSONL, rows) or frame
boundaries (zstd), which keeps both halves readable.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dshfuzz.model import Compression, SessionLog, parse_log, scan_frames
from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS, Edit, Inapplicable, Mutant

from ._targets import Shape

__all__ = ["ByteMutator", "StructuredMutator", "edits"]

ByteMutator = Callable[[bytes, int], bytes]
"""``(data, max_size) -> bytes``: libFuzzer's byte mutator, or a stand-in in tests."""

_CHOICE_BYTES = 96  # enough for every draw of one edit; Hypothesis pads a short buffer with zeros
_ATTEMPTS = 3  # edits tried before giving up on the structured path for this input
_MAX_INFLATION = 8  # plaintext beyond 8x the size limit seldom re-encodes within it, and slowly


@cache
def edits() -> tuple[Edit, ...]:
    """Every edit the mutator may apply, in a stable order (so a seed means one edit)."""
    pool = [*MUTATORS.values(), *METAMORPHIC.values(), *PERTURBATIONS.values()]
    return tuple(sorted(pool, key=lambda e: (type(e).__name__, e.name)))


@cache
def _row_header() -> bytes:
    """The header line a row is wrapped under: that of the first generated log."""
    from dshfuzz.generators import generate

    return next(generate(1, 0, max_events=2)).to_jsonl().split(b"\n", 1)[0] + b"\n"


class _Applier:
    """One Hypothesis-driven application of an edit, without Hypothesis' engine.

    ``fuzz_one_input`` runs the ``@given`` body once on a fixed choice buffer: the
    same buffer gives the same draws, and a rejected draw returns ``None``.
    """

    def __init__(self) -> None:
        self._job: tuple[Edit, SessionLog, Compression] | None = None
        self._result: Mutant | None = None

        @settings(database=None)
        @given(st.data())
        def body(data: Any) -> None:
            assert self._job is not None
            edit, log, compression = self._job
            self._result = edit.apply_or_raise(log, data, compression=compression)

        # the handle @given sets on the test, which its type does not declare
        self._run = getattr(body, "hypothesis").fuzz_one_input

    def __call__(
        self, edit: Edit, log: SessionLog, compression: Compression, choices: bytes
    ) -> Mutant | None:
        self._job, self._result = (edit, log, compression), None
        try:
            self._run(choices)
        except Inapplicable:
            return None
        except Exception:  # noqa: BLE001 - edits are written for readable logs; a fuzzed one may break them
            return None
        finally:
            self._job = None
        return self._result


@dataclass(slots=True)
class StructuredMutator:
    """The custom mutator (and crossover) for one target's container and input shape."""

    compression: Compression
    shape: Shape
    byte_mutate: ByteMutator
    structured_share: float = 0.2
    _apply: _Applier = field(default_factory=_Applier, repr=False)

    def mutate(self, data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if rng.random() < self.structured_share:
            mutated = self._structured(bytes(data), max_size, rng)
            if mutated is not None and 0 < len(mutated) <= max_size:
                return mutated
        return self.byte_mutate(bytes(data), max_size)

    def crossover(self, data1: bytes, data2: bytes, max_out_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        left, right = self._pieces(bytes(data1)), self._pieces(bytes(data2))
        head = left[: rng.randint(0, len(left))]
        tail = right[rng.randint(0, len(right)) :]
        return b"".join(head + tail)[:max_out_size]

    def _pieces(self, data: bytes) -> list[bytes]:
        if self.compression == "zstd":
            return [data[f.offset : f.end] for f in scan_frames(data)] or [data]
        return data.splitlines(keepends=True) or [data]

    def _structured(self, data: bytes, max_size: int, rng: random.Random) -> bytes | None:
        wrapped = _row_header() + data.rstrip(b"\n") + b"\n" if self.shape == "row" else data
        log = parse_log(wrapped, compression=self.compression)
        if log.header is None or not log.events:
            return None
        end = max((line.offset + line.size for line in log.lines if line.offset is not None), default=0)
        if end > _MAX_INFLATION * max_size:
            return None  # a small zstd input inflating to megabytes: re-encoding it would take seconds
        for _ in range(_ATTEMPTS):
            mutant = self._apply(rng.choice(edits()), log, self.compression, rng.randbytes(_CHOICE_BYTES))
            if mutant is not None:
                return self._unwrap(mutant.data, rng) if self.shape == "row" else mutant.data
        return None

    @staticmethod
    def _unwrap(data: bytes, rng: random.Random) -> bytes | None:
        rows: Sequence[bytes] = [line for line in data.split(b"\n")[1:] if line]
        return rng.choice(rows) if rows else None
