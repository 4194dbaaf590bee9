"""Reporters over the campaign's event stream (terminal, JSON, Markdown, HTML)."""

from ._files import render_html, render_markdown, write_reports
from ._summary import SUMMARY_FORMAT, CampaignSummary
from ._terminal import LiveReporter, final_summary, final_table, progress_line

__all__ = [
    "SUMMARY_FORMAT",
    "CampaignSummary",
    "LiveReporter",
    "final_summary",
    "final_table",
    "progress_line",
    "render_html",
    "render_markdown",
    "write_reports",
]
