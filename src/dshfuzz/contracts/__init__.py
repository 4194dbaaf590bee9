"""The contract vocabulary every other dshfuzz package shares, below all of them.

What two packages must mean alike lives here once, so that none reaches into another
for it or keeps a copy: the contract-rule registry (:mod:`~dshfuzz.contracts.rules`), the
official layers (:mod:`~dshfuzz.contracts.layers`),
JavaScript's value semantics over ``JSON.parse`` output (:mod:`~dshfuzz.contracts.js`)
and the seq references between events (:mod:`~dshfuzz.contracts.seqs`).

Invariant: this package imports only the standard library, and every other package
may import it (the import contracts in ``pyproject.toml`` hold both).
"""

from __future__ import annotations

from . import js, layers, rules, seqs
from .js import MAX_SAFE_INTEGER, MISSING, deep_equal_json, is_safe_integer, js_string, number_to_string, strict_equal
from .layers import CAMPAIGN_LAYERS, SERVED_LAYERS, OfficialLayer
from .rules import ALL_FORMATS, RELEASED_CHECKS, RULES, Origin, Rule, RuleId, RuleLayer, Severity
from .seqs import event_seq, is_event_seq, seq_refs

__all__ = [
    "ALL_FORMATS",
    "CAMPAIGN_LAYERS",
    "MAX_SAFE_INTEGER",
    "MISSING",
    "SERVED_LAYERS",
    "OfficialLayer",
    "Origin",
    "RELEASED_CHECKS",
    "RULES",
    "Rule",
    "RuleId",
    "RuleLayer",
    "Severity",
    "deep_equal_json",
    "event_seq",
    "is_event_seq",
    "is_safe_integer",
    "js",
    "js_string",
    "layers",
    "number_to_string",
    "rules",
    "seq_refs",
    "seqs",
    "strict_equal",
]
