"""Incident mutators, metamorphic transforms and robustness perturbations.

Each mutator reproduces one real incident from the contract catalog or the
seeds (torn frames, seq gaps, orphan tool calls, the seed-001 scheduler
failure ...): it names the rules that must fire (``expects``) and the official
layers that must refuse (``official``), and applies itself to a log through a
Hypothesis ``data`` object, so one mutator yields many shrinkable mutants.
Metamorphic transforms change a log without changing its meaning; robustness
perturbations feed checkers malformed input that must become findings.
``MUTATORS`` (name -> :class:`Mutator`) holds the built-ins and any third-party
mutators registered under the ``dshfuzz.mutators`` entry-point group;
``mutants(name)`` is the Hypothesis strategy of a mutator's mutants, and
``apply_seeded`` the seeded one-shot form behind ``dshfuzz mutate``. A mutator's
twin (:meth:`Mutator.twin`, strategy ``twins(name)``) is the same drawn context and
inserted structure without the defect: a log every official layer accepts.
"""

from ._base import CompressionPolicy, DrawAdapter, Edit, Level, LogShape, Mutant, Mutator, applicable_rules, mutator
from ._draft import DraftSource, Inapplicable
from ._metamorphic import METAMORPHIC, Transform, variants
from ._perturb import Perturbation
from ._perturbations import PERTURBATIONS, perturbed
from ._registry import ENTRY_POINT_GROUP, MUTATORS, get, get_edit, load_mutators
from ._strategy import apply_seeded, incident_logs, incident_weights, logs_for, mutants, twins

__all__ = [
    "ENTRY_POINT_GROUP",
    "METAMORPHIC",
    "MUTATORS",
    "PERTURBATIONS",
    "CompressionPolicy",
    "DrawAdapter",
    "Edit",
    "Inapplicable",
    "Level",
    "LogShape",
    "Mutant",
    "Mutator",
    "Perturbation",
    "Transform",
    "applicable_rules",
    "apply",
    "apply_seeded",
    "get",
    "get_edit",
    "incident_logs",
    "incident_weights",
    "load_mutators",
    "logs_for",
    "mutants",
    "mutator",
    "perturbed",
    "twins",
    "variants",
]


def apply(mutator: Mutator | str, log: DraftSource, data: object) -> Mutant:
    """Apply the mutator (or the one named) to ``log`` with choices drawn from ``data``."""
    return (get(mutator) if isinstance(mutator, str) else mutator).apply(log, data)
