"""The schema and boundary perturbation families, judged by the official layers.

``out-of-domain``, ``header-out-of-domain``, ``duplicate-id``, ``seq-encoding`` and
``framing-boundary`` declare no
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
from perturbed_logs import builtin_judge, seeded_mutants

from dshfuzz.generators import generate
from dshfuzz.harness import Example, Judge
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.mutators import PERTURBATIONS, Inapplicable, Mutant, apply_seeded, incident_weights
from dshfuzz.mutators._boundary import BOUNDARIES, PLAIN_BOUNDARIES
from dshfuzz.mutators._schema import DUPLICATIONS, SEQ_ENCODINGS

pytestmark = pytest.mark.official

FAMILIES = ("out-of-domain", "header-out-of-domain", "duplicate-id", "seq-encoding", "framing-boundary")
PER_FAMILY = 12


def _mutants(name: str, format_version: int) -> list[Mutant]:
    return seeded_mutants(PERTURBATIONS[name], format_version, wanted=PER_FAMILY, drawn=3 * PER_FAMILY, seed=29)


@pytest.fixture(scope="module")
def judge(official: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from builtin_judge(official, tmp_path_factory.mktemp("judge"))


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


ACCEPTED_BOUNDARIES = {
    "crlf-line": "JSON.parse reads the \\r before \\n as whitespace",
    "no-checksum": "the checksum is optional in zstd, and the reader validates it only when present",
    "content-size": "a frame may declare its content size; the reader decodes it either way",
    "empty-frame": "a frame holding no text adds no line: the reader's line walk sees nothing",
}
"""Boundary variants every official layer accepts (the log stays valid: a checker that refuses
one is a false alarm), with why."""

DEPENDS_ON_PLACE = {
    "lone-cr": "a lone CR ending the last line is a torn tail the reader recovers from; elsewhere two records "
               "become one line that does not parse",
    "split-record": "a record split across two batch frames is read whole (records may span frames, SPJ:984); "
                    "split inside the header frame it breaks the header-frame shape",
    "no-final-newline": "released concatenates the frames' text and accepts the unterminated last record; the "
                        "v0 loader's frame walk refuses it (a complete frame with a torn record), a plain log's "
                        "is a torn tail",
    "unterminated-last-frame": "as no-final-newline: the v0 loader refuses, released (so every v1 layer) accepts",
}
"""Variants whose verdict depends on where they land or which layer reads them, with why."""


def _boundary_mutants(variant: str, format_version: int) -> list[Mutant]:
    from dshfuzz.mutators import Level
    from dshfuzz.mutators._boundary import ZSTD_BOUNDARIES, boundary
    from dshfuzz.mutators._perturb import Perturbation

    pinned = Perturbation(f"framing-boundary:{variant}", variant, Level.FRAME,
                          lambda frames, data: boundary(frames, data, variant), must_find=False,
                          compression="zstd" if variant in ZSTD_BOUNDARIES else "any")
    made: list[Mutant] = []
    for i, log in enumerate(generate(8, seed=40 + format_version, turns=(1, 2), max_events=40,
                                     weights=incident_weights(), format_version=format_version)):
        try:
            made.append(apply_seeded(pinned, log, i))
        except Inapplicable:
            continue
    return made


@pytest.mark.parametrize("variant", BOUNDARIES)
def test_each_boundary_variant_is_refused_or_its_acceptance_is_explained(official: Any, tmp_path: Path,
                                                                         variant: str) -> None:
    """A variant outside both tables is refused by some layer wherever it lands; a variant in
    :data:`ACCEPTED_BOUNDARIES` by none."""
    verdicts: list[tuple[str, ...]] = []
    for format_version in (0, 1):
        for mutant in _boundary_mutants(variant, format_version):
            path = tmp_path / f"mutant{mutant.suffix}"
            path.write_bytes(mutant.data)
            answered = official.check(path=path.resolve(), layers=official_layers_for(format_version))
            verdicts.append(tuple(sorted(layer for layer, v in answered.items() if not v.ok)))
    assert verdicts, f"{variant} applied to none of the sample logs"
    if variant in ACCEPTED_BOUNDARIES:
        assert not any(verdicts), f"{variant} was refused: {verdicts}"
    elif variant not in DEPENDS_ON_PLACE:
        assert all(verdicts), f"{variant} was accepted by every layer: {verdicts}"


def test_the_header_version_is_never_pushed_onto_another_known_format() -> None:
    """A mutant is judged in the format its log was drawn in: a version edge that names another
    format (0-3) would be judged with the wrong layers (a campaign finding of ours, not the
    checker's)."""
    from dshfuzz.model import loads as parse

    for format_version in (0, 1):
        for i, log in enumerate(generate(40, seed=7, turns=(1, 1), max_events=20, format_version=format_version)):
            mutant = apply_seeded(PERTURBATIONS["header-out-of-domain"], log, i, compression="none")
            version = parse(mutant.data.split(b"\n", 1)[0]).get("version")
            assert not (type(version) is int and version != format_version and 0 <= version <= 3), mutant.description
