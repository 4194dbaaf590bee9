"""What the perturbation families' conformance tests share: the first mutants an edit makes of
generated logs, and a judge of the built-in checker against the official layers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dshfuzz.generators import generate
from dshfuzz.harness import Judge
from dshfuzz.harness._judges import BuiltinChecker
from dshfuzz.mutators import Edit, Inapplicable, Mutant, apply_seeded, incident_weights


def seeded_mutants(edit: Edit, format_version: int, *, wanted: int, drawn: int, seed: int) -> list[Mutant]:
    """Up to ``wanted`` mutants ``edit`` makes of ``drawn`` generated logs (log ``i`` with seed ``i``),
    skipping the logs it does not apply to."""
    made: list[Mutant] = []
    logs = generate(drawn, seed=seed + format_version, turns=(1, 2), max_events=60,
                    weights=incident_weights(), format_version=format_version)
    for i, log in enumerate(logs):
        try:
            made.append(apply_seeded(edit, log, i))
        except Inapplicable:
            continue
        if len(made) == wanted:
            break
    return made


def builtin_judge(official: Any, scratch: Path) -> Iterator[Judge]:
    """A judge of the built-in checker with the official layers, for a module-scoped fixture."""
    with Judge(BuiltinChecker(), official=official, scratch=scratch) as judge:
        yield judge
