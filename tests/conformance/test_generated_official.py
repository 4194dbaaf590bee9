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

from dshfuzz.generators import GeneratedLog, session_logs

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
