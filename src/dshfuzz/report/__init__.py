"""Reporters: the campaign's event stream (terminal, JSON, Markdown, HTML), the kill matrix, a
coverage-guided fuzzing run's summary and the checker's reports (checks, pre-write verdicts,
recovery plans).

Every name is imported on first use: ``dshfuzz check`` renders a report without loading
the campaign's reporters (and the harness they read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dshfuzz._lazy import lazy_attributes

if TYPE_CHECKING:
    from ._atheris import atheris_markdown, atheris_status, write_atheris_summary
    from ._check import check_json, prewrite_lines, recovery_lines, render_check
    from ._coverage import coverage_text
    from ._corpus import corpus_list_lines, marked_fixed_line, replay_json, replay_line, replay_summary
    from ._files import render_html, render_markdown, write_reports
    from ._matrix import (
        MATRIX_LEGEND,
        matrix_json,
        matrix_markdown,
        matrix_out_problem,
        matrix_progress,
        render_matrix,
        write_matrix,
    )
    from ._mutants import mutant_line, mutants_plan_line, render_mutants, write_mutants_summary
    from ._official import official_verdicts_json, render_official_verdicts
    from ._reach import render_checker_reach, render_reach
    from ._registry import (
        contracts_json,
        contracts_lines,
        contracts_markdown,
        mutators_json,
        mutators_markdown,
        mutators_tables,
    )
    from ._summary import SUMMARY_FORMAT, CampaignSummary
    from ._terminal import LiveReporter, final_summary, final_table, fit, progress_line

__getattr__ = lazy_attributes(__name__, {
    "atheris_markdown": "_atheris", "atheris_status": "_atheris", "write_atheris_summary": "_atheris",
    "coverage_text": "_coverage",
    "corpus_list_lines": "_corpus", "marked_fixed_line": "_corpus", "replay_json": "_corpus",
    "replay_line": "_corpus", "replay_summary": "_corpus",
    "check_json": "_check", "prewrite_lines": "_check", "recovery_lines": "_check", "render_check": "_check",
    "render_html": "_files", "render_markdown": "_files", "write_reports": "_files",
    "MATRIX_LEGEND": "_matrix", "matrix_json": "_matrix", "matrix_markdown": "_matrix",
    "matrix_out_problem": "_matrix", "matrix_progress": "_matrix", "render_matrix": "_matrix",
    "write_matrix": "_matrix",
    "contracts_json": "_registry", "contracts_lines": "_registry", "contracts_markdown": "_registry",
    "mutators_json": "_registry", "mutators_markdown": "_registry", "mutators_tables": "_registry",
    "mutant_line": "_mutants", "mutants_plan_line": "_mutants", "render_mutants": "_mutants",
    "write_mutants_summary": "_mutants",
    "official_verdicts_json": "_official", "render_official_verdicts": "_official",
    "render_reach": "_reach", "render_checker_reach": "_reach",
    "SUMMARY_FORMAT": "_summary", "CampaignSummary": "_summary",
    "LiveReporter": "_terminal", "final_summary": "_terminal", "final_table": "_terminal", "fit": "_terminal",
    "progress_line": "_terminal",
})

__all__ = [
    "MATRIX_LEGEND",
    "SUMMARY_FORMAT",
    "CampaignSummary",
    "LiveReporter",
    "atheris_markdown",
    "atheris_status",
    "check_json",
    "contracts_json",
    "contracts_lines",
    "contracts_markdown",
    "corpus_list_lines",
    "coverage_text",
    "final_summary",
    "final_table",
    "fit",
    "marked_fixed_line",
    "mutant_line",
    "mutants_plan_line",
    "matrix_json",
    "matrix_markdown",
    "matrix_out_problem",
    "matrix_progress",
    "mutators_json",
    "mutators_markdown",
    "mutators_tables",
    "official_verdicts_json",
    "prewrite_lines",
    "progress_line",
    "recovery_lines",
    "render_check",
    "render_html",
    "render_markdown",
    "render_matrix",
    "render_mutants",
    "render_official_verdicts",
    "render_checker_reach",
    "render_reach",
    "replay_json",
    "replay_line",
    "replay_summary",
    "write_atheris_summary",
    "write_matrix",
    "write_mutants_summary",
    "write_reports",
]
