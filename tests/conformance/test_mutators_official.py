"""Every mutator's ``official`` claim, verified against the official layers.

A mutator names the official layers that must refuse its mutants; this suite
writes each format-v0 mutant to disk and asks the official oracle, so the claim
is measured rather than copied from the reference. Like the checker gates, it
runs as a Hypothesis property over every mutator and as a seeded sweep that
exercises each mutator on every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from dshfuzz.generators import generate
from dshfuzz.mutators import MUTATORS, Inapplicable, Mutant, apply_seeded, incident_logs, incident_weights, mutants

CLAIMING = sorted(name for name, m in MUTATORS.items() if m.official)
SWEEP = 3


def assert_official_layers_refuse(official: Any, mutant: Mutant, directory: Path) -> None:
    path = directory / f"{mutant.mutator}{mutant.suffix}"
    path.write_bytes(mutant.data)
    verdicts = official.check(path=path.resolve(), layers=sorted(mutant.official))
    accepted = sorted(layer for layer in mutant.official if verdicts[layer].ok)
    assert not accepted, (
        f"{mutant.mutator}: {mutant.description}\n official layers {accepted} accepted a mutant they are claimed "
        f"to refuse (verdicts: { {k: (v.ok, v.error.message[:80] if v.error else None) for k, v in verdicts.items()} })"
    )


def test_official_claims_are_only_made_for_refusing_layers() -> None:
    assert CLAIMING, "no mutator claims an official refusal"
    assert all(m.official <= {"fold", "seed", "invariants", "load", "loadApp", "meter", "inbox", "released", "wire"}
               for m in MUTATORS.values())


@given(st.sampled_from(CLAIMING).flatmap(lambda name: mutants(name, incident_logs())))
def test_named_official_layers_refuse_every_mutant(official: Any, tmp_path_factory: pytest.TempPathFactory,
                                                   mutant: Mutant) -> None:
    note(mutant.description)
    assert_official_layers_refuse(official, mutant, tmp_path_factory.mktemp("mutant"))


@pytest.mark.parametrize("name", CLAIMING)
def test_named_official_layers_refuse_in_a_seeded_sweep(official: Any, tmp_path: Path, name: str) -> None:
    done = 0
    for i, log in enumerate(generate(30, seed=2027, turns=(1, 3), weights=incident_weights())):
        try:
            mutant = apply_seeded(MUTATORS[name], log, i)
        except Inapplicable:
            continue
        assert_official_layers_refuse(official, mutant, tmp_path)
        done += 1
        if done == SWEEP:
            return
    assert done, f"{name} applied to none of the sample logs"
