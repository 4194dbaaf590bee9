"""dshfuzz's own checker of the DSH session-log contract catalog.

The registry (:mod:`dshfuzz.contracts.rules`, re-exported here) is the single
source of truth for every rule; rule passes live in private modules grouped by what they read
(persistence envelope, surface fold, zstd framing, engine state, plugin
semantics, wire stream, migration pre-checks) and are run by :func:`check_log`,
or streamed from a file's bytes by :func:`check_stream`. :func:`prewrite` (and
:func:`prewrite_bytes`, streamed) judges an edit before it lands;
:func:`recover_plan` (and :func:`recover_bytes`, streamed) finds the latest safe
complete-turn boundary; the ``redact_*`` functions hash what a result quotes of a log.
All of these are imported on first use, since checking a file needs none of them. The
checker builds typed results and never prints: :mod:`dshfuzz.report` renders them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dshfuzz._lazy import lazy_attributes
from dshfuzz.contracts.rules import RULES, OfficialLayer, Rule, RuleId, RuleLayer, Severity

from ._causes import CAUSAL_ORDER, attribute, consequence_table
from ._context import CheckContext, CheckOptions, is_nonneg_safe_int, is_safe_int
from ._finding import Finding, Report
from ._run import check_log, check_path, check_stream, implementations, implemented_rules, rule_pass

if TYPE_CHECKING:
    from ._output import redact_plan, redact_prewrite, redact_report, redact_streamed
    from ._prewrite import EditError, PrewriteResult, edit_mode, prewrite, prewrite_bytes
    from ._recover import RecoveryPlan, recover_bytes, recover_plan
    from ._serve import serve

__getattr__ = lazy_attributes(__name__, {
    "EditError": "_prewrite", "edit_mode": "_prewrite",
    "redact_plan": "_output", "redact_prewrite": "_output", "redact_report": "_output", "redact_streamed": "_output",
    "PrewriteResult": "_prewrite", "prewrite": "_prewrite", "prewrite_bytes": "_prewrite",
    "RecoveryPlan": "_recover", "recover_bytes": "_recover", "recover_plan": "_recover",
    "serve": "_serve",
})

__all__ = [
    "CAUSAL_ORDER",
    "RULES",
    "CheckContext",
    "CheckOptions",
    "EditError",
    "Finding",
    "OfficialLayer",
    "PrewriteResult",
    "RecoveryPlan",
    "Report",
    "Rule",
    "RuleId",
    "RuleLayer",
    "Severity",
    "attribute",
    "check_log",
    "check_path",
    "check_stream",
    "consequence_table",
    "edit_mode",
    "implementations",
    "implemented_rules",
    "is_nonneg_safe_int",
    "is_safe_int",
    "prewrite",
    "prewrite_bytes",
    "recover_bytes",
    "recover_plan",
    "redact_plan",
    "redact_prewrite",
    "redact_report",
    "redact_streamed",
    "rule_pass",
    "serve",
]
