"""Reporters: the campaign's event stream (terminal, JSON, Markdown, HTML) and the checker's reports.

Every name is imported on first use: ``dshfuzz check`` renders a report without loading
the campaign's reporters (and the harness they read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dshfuzz._lazy import lazy_attributes

if TYPE_CHECKING:
    from ._check import prewrite_lines, render_check
    from ._files import render_html, render_markdown, write_reports
    from ._summary import SUMMARY_FORMAT, CampaignSummary
    from ._terminal import LiveReporter, final_summary, final_table, progress_line

__getattr__ = lazy_attributes(__name__, {
    "prewrite_lines": "_check", "render_check": "_check",
    "render_html": "_files", "render_markdown": "_files", "write_reports": "_files",
    "SUMMARY_FORMAT": "_summary", "CampaignSummary": "_summary",
    "LiveReporter": "_terminal", "final_summary": "_terminal", "final_table": "_terminal",
    "progress_line": "_terminal",
})

__all__ = [
    "SUMMARY_FORMAT",
    "CampaignSummary",
    "LiveReporter",
    "final_summary",
    "final_table",
    "prewrite_lines",
    "progress_line",
    "render_check",
    "render_html",
    "render_markdown",
    "write_reports",
]
