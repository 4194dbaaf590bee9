"""The schema and boundary perturbation families, judged by the official layers.

``out-of-domain``, ``duplicate-id``, ``seq-encoding`` and ``framing-boundary`` declare no
rule: the official layers decide what each perturbed log is. Two things are pinned here:

* every layer a campaign consults answers about every variant (a verdict, never a bridge
  failure), through the campaign's own judge;
* each family makes logs the official layers refuse: per family, pinned probes that must be
  refused by a named layer, and variants some layer accepts are listed with why (a divergence
  a campaign reports, never one this test hides).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness import Example, Judge
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.mutators import PERTURBATIONS, Inapplicable, Mutant, apply_seeded, incident_weights
from dshfuzz.mutators._boundary import BOUNDARIES, PLAIN_BOUNDARIES
from dshfuzz.mutators._schema import DUPLICATIONS, SEQ_ENCODINGS

pytestmark = pytest.mark.official

FAMILIES = ("out-of-domain", "duplicate-id", "seq-encoding", "framing-boundary")
PER_FAMILY = 12


def _mutants(name: str, format_version: int) -> list[Mutant]:
    made: list[Mutant] = []
    logs = generate(3 * PER_FAMILY, seed=29 + format_version, turns=(1, 2), max_events=60,
                    weights=incident_weights(), format_version=format_version)
    for i, log in enumerate(logs):
        try:
            made.append(apply_seeded(PERTURBATIONS[name], log, i))
        except Inapplicable:
            continue
        if len(made) == PER_FAMILY:
            break
    return made


@pytest.fixture(scope="module")
def judge(official: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    with Judge(BuiltinChecker(), official=official, scratch=tmp_path_factory.mktemp("judge")) as j:
        yield j


@pytest.mark.parametrize("format_version", [0, 1])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_layer_answers_and_some_layer_refuses(
    official: Any, judge: Judge, tmp_path: Path, family: str, format_version: int
) -> None:
    """Every layer that can read the log answers about every mutant, and the family makes refused logs (variants that
    leave a log valid exist: a field whose validator accepts the edge value, a frame without a
    checksum; a family whose every mutant is accepted aims at nothing)."""
    mutants = _mutants(family, format_version)
    assert len(mutants) >= PER_FAMILY // 2, f"{family} applied to too few sample logs"
    layers = official_layers_for(format_version)
    refused = 0
    for mutant in mutants:
        path = tmp_path / f"mutant{mutant.suffix}"
        path.write_bytes(mutant.data)
        verdicts = official.check(path=path.resolve(), layers=layers)
        # a header no layer can read leaves the event layers nothing to judge: they do not answer
        assert verdicts and set(verdicts) <= set(layers), f"{mutant.description}: answered {sorted(verdicts)}"
        for layer, verdict in verdicts.items():
            assert verdict.ok or (verdict.error is not None and verdict.error.message), (
                f"{mutant.description}: {layer} refused without saying why"
            )
        refused += any(not v.ok for v in verdicts.values())
        example = Example(mutant.data, mutant.compression, family, frozenset(), mutant.description,
                          mutant.format_version)
        judged = judge.judge(example)
        assert set(judged.official) == set(verdicts), f"{mutant.description}: the campaign's judge lost a layer"
    assert refused, f"every official layer accepted every {family} mutant"


def test_the_variant_tables_are_the_documented_ones() -> None:
    """The variants each family draws among (the docs and the reach work list name them)."""
    assert DUPLICATIONS == ("list-element", "event", "identifier", "seq")
    assert "ranges" in SEQ_ENCODINGS and "plain" in SEQ_ENCODINGS
    assert set(PLAIN_BOUNDARIES) < set(BOUNDARIES)
