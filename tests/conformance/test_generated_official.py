"""Every generated log passes every official layer (the generators' contract).

Format 0: fold, seed, invariants, meter, inbox and wire on the decoded rows,
load / loadApp / released on the ``.jsonl`` bytes, and load / loadApp on the
``.jsonl.zstd`` bytes. Format 1 (v0 rows under a ``version: 1`` header, what the
newest harness writes): only the released layer's v1 restore can judge it, and
it must accept. The ``ci`` profile runs >= 200 examples per property.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.generators import GeneratedLog, session_logs
from dshfuzz.mutators import MUTATORS, LogShape, logs_for

_ZSTD_LAYERS = ("load", "loadApp")


def _refusals(verdicts: dict, suffix: str) -> list[str]:
    return [f"{name} ({suffix}): {v.error}" for name, v in verdicts.items() if not v.ok]


def _explain(log: GeneratedLog, refusals: list[str]) -> str:
    return "\n".join(refusals) + "\nlog:\n" + log.to_jsonl(pack=False).decode()


@given(session_logs())
def test_generated_v0_logs_pass_every_official_layer_as_jsonl_and_zstd(official, log: GeneratedLog) -> None:
    with tempfile.TemporaryDirectory(prefix="dshfuzz-gen-") as tmp:
        plain, packed = Path(tmp) / "log.jsonl", Path(tmp) / "log.jsonl.zstd"
        plain.write_bytes(log.to_jsonl())
        packed.write_bytes(log.to_zstd())
        refusals = _refusals(official.check(path=plain), "jsonl")
        refusals += _refusals(official.check(path=packed, layers=_ZSTD_LAYERS), "zstd")
    assert refusals == [], _explain(log, refusals)


@given(session_logs(format_version=1))
def test_generated_v1_logs_pass_the_released_v1_restore(official, log: GeneratedLog) -> None:
    with tempfile.TemporaryDirectory(prefix="dshfuzz-gen-") as tmp:
        plain = Path(tmp) / "log.jsonl"
        plain.write_bytes(log.to_jsonl())
        refusals = _refusals(official.check(path=plain, layers=("released",)), "jsonl")
    assert refusals == [], _explain(log, refusals)


_SHAPED = sorted(name for name, m in MUTATORS.items() if m.logs != LogShape())


@given(st.sampled_from(_SHAPED).flatmap(lambda name: logs_for(name, max_events=120)))
def test_logs_of_every_declared_mutator_shape_pass_the_official_layers(official, log: GeneratedLog) -> None:
    """A mutator's declared :class:`LogShape` only reweights the generator: format 0 passes every
    layer, format 1 the released v1 restore."""
    with tempfile.TemporaryDirectory(prefix="dshfuzz-gen-") as tmp:
        plain = Path(tmp) / "log.jsonl"
        plain.write_bytes(log.to_jsonl())
        layers = None if log.format_version == 0 else ("released",)
        refusals = _refusals(official.check(path=plain, layers=layers), "jsonl")
    assert refusals == [], _explain(log, refusals)
