"""Type-confusion mutants are judged by the official layers, without harness errors.

The ``type-confusion`` stratum declares no rule: the official layers decide what each
perturbed log is. That only works when every layer that reads the log's format answers
about it (a verdict, accept or refuse) rather than the bridge failing, timing out or
dropping the layer. A seeded sweep makes each variant on logs of formats 0 and 1 and asks
the layers a campaign consults for that format, through the campaign's own judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from perturbed_logs import builtin_judge, seeded_mutants

from dshfuzz.harness import Example, Judge
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.mutators import Level, Mutant
from dshfuzz.mutators._perturb import TYPE_CONFUSIONS, Perturbation, confuse

pytestmark = pytest.mark.official

PER_VARIANT = 3
"""Mutants per variant and format: enough to meet the event itself and nested places."""


def _variant(name: str) -> Perturbation:
    """``type-confusion`` pinned to one variant, as a perturbation of its own."""
    def edit(draft: Any, data: Any) -> str:
        return confuse(draft, data, name).description

    return Perturbation(f"type-confusion:{name}", name, Level.EVENT, edit, must_find=False)


def _mutants(name: str, format_version: int) -> list[Mutant]:
    return seeded_mutants(_variant(name), format_version, wanted=PER_VARIANT, drawn=12, seed=17)


@pytest.fixture(scope="module")
def judge(official: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from builtin_judge(official, tmp_path_factory.mktemp("judge"))


@pytest.mark.parametrize("format_version", [0, 1])
@pytest.mark.parametrize("variant", TYPE_CONFUSIONS)
def test_every_layer_answers_about_every_variant(
    official: Any, judge: Judge, tmp_path: Path, variant: str, format_version: int
) -> None:
    mutants = _mutants(variant, format_version)
    assert mutants, f"{variant} applied to none of the sample logs"
    layers = official_layers_for(format_version)
    for mutant in mutants:
        path = tmp_path / f"mutant{mutant.suffix}"
        path.write_bytes(mutant.data)
        # the oracle raises OracleError when the bridge fails or times out: that is the harness error
        verdicts = official.check(path=path.resolve(), layers=layers)
        assert sorted(verdicts) == sorted(layers), f"{mutant.description}: answered {sorted(verdicts)}"
        for layer, verdict in verdicts.items():
            assert verdict.ok or (verdict.error is not None and verdict.error.message), (
                f"{mutant.description}: {layer} refused without saying why"
            )
        example = Example(mutant.data, mutant.compression, "type-confusion", frozenset(), mutant.description,
                          mutant.format_version)
        judged = judge.judge(example)
        assert set(judged.official) == set(layers), f"{mutant.description}: the campaign's judge lost a layer"
