"""Every mutator's twin is accepted by every official layer.

A mutator injects one incident. Its twin (:meth:`Mutator.twin`) makes the same draws and
inserts the same structure (a marker's edit block, a system message, a descriptor ...) but
leaves the defect out; if an official layer refuses the twin, the incident carries a second
defect riding along (a marker with a null turn, an insert that desynchronises a seq some
payload names), and every verdict on the mutant is about two defects. The twins are drawn
on the logs a campaign draws for the mutator (:func:`logs_for`: its formats and shape) and
judged by every layer that reads the twin's format: all of them for format 0, for a later
format the ones the campaign consults for it (:func:`official_layers_for`). As in the
mutators' own suite, a Hypothesis property over every mutator and a seeded sweep that
exercises each one on every run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from dshfuzz.generators import GeneratedLog, generate
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.mutators import MUTATORS, Inapplicable, Mutant, Mutator, apply_seeded, incident_weights, twins
from dshfuzz.mutators._draft import EventDraft
from dshfuzz.mutators._strategy import _as_v3
from dshfuzz.oracle.official import LAYERS

# Every mutator builds a twin (tests/unit/test_mutator_twins.py holds them to it); none is
# excused from the official layers.
TWINNED = sorted(name for name, m in MUTATORS.items() if m.has_twin)
SWEEP = 4
"""Twins per mutator and format in the seeded sweep."""


def layers_for(twin: Mutant) -> tuple[str, ...]:
    """Every served layer for a format-0 twin; for another format, the layers whose verdict on
    it means something (the rc.8 seed and load refuse any version but 0 by the version alone)."""
    return tuple(LAYERS) if twin.format_version == 0 else official_layers_for(twin.format_version)


def assert_official_layers_accept(official: Any, twin: Mutant, directory: Path) -> None:
    path = directory / f"{twin.mutator}-twin{twin.suffix}"
    path.write_bytes(twin.data)
    verdicts = official.check(path=path.resolve(), layers=list(layers_for(twin)))
    refused = {layer: v.error.message if v.error else "refused" for layer, v in verdicts.items() if not v.ok}
    assert not refused, (
        f"{twin.mutator} (format {twin.format_version}, {twin.compression}): {twin.description}\n"
        f" its twin carries a second defect: official layers refuse it: {refused}"
    )


@settings(max_examples=150)
@given(st.sampled_from(TWINNED).flatmap(twins))
def test_every_official_layer_accepts_every_twin(official: Any, tmp_path_factory: pytest.TempPathFactory,
                                                 twin: Mutant) -> None:
    note(twin.description)
    assert_official_layers_accept(official, twin, tmp_path_factory.mktemp("twin"))


def sweep_logs(m: Mutator, format_version: int) -> list[GeneratedLog | EventDraft]:
    """Seeded valid logs of the mutator's shape (a v3-only incident: v0 logs in the v3 shapes)."""
    weights = replace(incident_weights(), **dict(m.logs.weights))
    logs = generate(30, seed=2031 + format_version, turns=m.logs.turns, weights=weights,
                    format_version=0 if format_version == 3 else format_version)
    return [_as_v3(log) for log in logs] if format_version == 3 else list(logs)


def sweep_formats(m: Mutator) -> list[int]:
    formats = [v for v in (0, 1) if v in m.formats]
    return formats or [3]


@pytest.mark.parametrize("name", TWINNED)
def test_every_official_layer_accepts_twins_in_a_seeded_sweep(official: Any, tmp_path: Path, name: str) -> None:
    m = MUTATORS[name]
    for format_version in sweep_formats(m):
        done = 0
        for i, log in enumerate(sweep_logs(m, format_version)):
            try:
                twin = apply_seeded(m, log, i, twin=True)
            except Inapplicable:
                continue
            assert_official_layers_accept(official, twin, tmp_path)
            done += 1
            if done == SWEEP:
                break
        assert done, f"{name} applied to none of the format-{format_version} sample logs"
