"""The built-in checker names exactly the official layers that refuse each ``aimed-meter`` mutant.

The family (:mod:`dshfuzz.mutators._aimed`) writes the rare header and content forms the
checker's meter-header, content, plugin and wire branches judge. Reaching them showed the
checker wrong, each time measured against the pinned packages:

- ``canonicalHeader`` keeps ``tools`` where ``tools.length > 0`` reads through ``ToNumber``
  (``{"length": "0x10"}``, ``{"length": [1]}``, ``{"length": "Infinity"}`` are kept, so the
  meter and the wire refuse them; ``{"length": "1_0"}`` and ``{"length": "\\u0661"}`` are
  dropped), which the checker read with Python's ``float``;
- ``headerEquals`` compares the two tools lengths strictly (``2 === "2"`` is false), which
  the checker compared as numbers;
- the request serializer sends the last request/header's tools only, so an earlier header's
  kept non-array tools draw no wire refusal, which the checker claimed for every header;
- ``callConfigEquals`` throws on a config ``stop`` that is no array (null: its length;
  anything else: ``every``), so the meter refuses the header in force at the last assistant
  message, which the checker never claimed;
- the DeepSeek adapter refuses an image anywhere in the request (a tool result's output
  too), and the meter prices a tool-call's ``arguments`` by its length (an object's is NaN,
  which its schema refuses); P4 claimed neither.

Each test below fails on the checker before those fixes.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dshfuzz.checker import check_path
from dshfuzz.contracts.rules import OfficialLayer
from dshfuzz.generators import generate
from dshfuzz.mutators import Inapplicable, Level, Mutant, apply_seeded, incident_weights
from dshfuzz.mutators._aimed import AIMS
from dshfuzz.mutators._perturb import Perturbation

pytestmark = pytest.mark.official

_LAYERS = frozenset(str(layer) for layer in OfficialLayer)


@cache
def _logs() -> tuple[Any, ...]:
    return tuple(generate(30, seed=77, turns=(1, 3), max_events=100, weights=incident_weights(), format_version=0))


def _mutants(variant: str, most: int) -> list[Mutant]:
    fn = AIMS["meter"][variant]
    pinned = Perturbation(f"aimed-meter:{variant}", variant, Level.EVENT, lambda draft, data: fn(draft, data),
                          must_find=False)
    made: list[Mutant] = []
    for i, log in enumerate(_logs()):
        for draw in range(3):
            try:
                made.append(apply_seeded(pinned, log, 100 * i + draw))
            except Inapplicable:
                continue
            if len(made) == most:
                return made
    return made


@pytest.mark.parametrize("variant", sorted(AIMS["meter"]))
def test_the_checker_names_the_official_layers_refusing_each_meter_mutant(official: Any, tmp_path: Path,
                                                                           variant: str) -> None:
    mutants = _mutants(variant, most=10)
    assert mutants, f"{variant} applied to none of the sample logs"
    for mutant in mutants:
        path = tmp_path / f"mutant{mutant.suffix}"
        path.write_bytes(mutant.data)
        verdicts = official.check(path=path.resolve())
        layers = _LAYERS & set(verdicts)
        # the checker speaks for the loader once: loadApp is the same load through an app
        refusing = {"load" if layer == "loadApp" else layer for layer in layers if not verdicts[layer].ok}
        claimed = {str(layer) for f in check_path(path).findings for layer in f.refused_by} & layers
        assert claimed == refusing, f"{mutant.description}: official {sorted(refusing)}, checker {sorted(claimed)}"
