"""The campaign's judge consults, for each format version, only the official layers that
read that format as it is meant: a valid log of any version shows no disagreement. There is
no v3 generator; v3 logs are v0 logs rewritten in the v3 shapes, as campaigns make them."""

from __future__ import annotations

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness import Example, Judge, load_checker
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.model import encode_jsonl
from dshfuzz.mutators._strategy import _as_v3


def _valid_logs(format_version: int) -> list[bytes]:
    if format_version < 3:
        return [log.to_jsonl() for log in generate(6, seed=format_version, format_version=format_version, turns=(1, 3))]
    drafts = [_as_v3(log) for log in generate(6, seed=3, turns=(1, 3))]
    return [encode_jsonl(draft.header, [draft.events]) for draft in drafts]


@pytest.mark.parametrize("format_version", [0, 1, 2, 3])
def test_valid_logs_of_every_format_show_no_disagreement(official, format_version: int) -> None:
    with Judge(load_checker("builtin"), official=official) as judge:
        for data in _valid_logs(format_version):
            example = Example(data, "none", None, frozenset(), format_version=format_version)
            judged = judge.judge(example)
            assert set(judged.official) == set(official_layers_for(format_version))
            assert not judged.disagreements, (
                f"v{format_version}: {[d.signature for d in judged.disagreements]}\n{data.decode()}"
            )


def test_formats_2_and_3_are_not_judged_by_layers_that_refuse_them_by_version_or_shape() -> None:
    assert "released" not in official_layers_for(2)
    assert not {"fold", "invariants", "meter", "released"} & set(official_layers_for(3))
    assert official_layers_for(None) == official_layers_for(0)
