"""File reporters: ``summary.json``, ``report.md`` and a self-contained ``report.html``.

All three render the same :class:`CampaignSummary`; the witnesses (minimal logs)
are written beside them as ``witnesses/<n>.jsonl[.zstd]``. Every file is written
atomically; the HTML needs no network (inline CSS, no scripts from elsewhere).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from dshfuzz._atomic import write_atomic

from ._summary import CampaignSummary

__all__ = ["write_reports"]

_MAX_INLINE_LOG = 20_000


def _witness_name(index: int, compression: str) -> str:
    return f"witnesses/{index:03d}.jsonl" + (".zstd" if compression == "zstd" else "")


def _log_text(data: bytes, compression: str) -> str:
    if compression == "zstd":
        from dshfuzz.model import parse_log

        log = parse_log(data, compression="zstd")
        text = b"".join(f.content for f in log.frames).decode("utf-8", "replace")
        return f"(zstd, {len(log.frames)} frames; decoded content)\n{text}"
    return data.decode("utf-8", "replace")


def write_reports(summary: CampaignSummary, run_dir: Path) -> dict[str, Path]:
    """Write every report file for ``summary`` into ``run_dir``; returns their paths."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(summary.findings, 1):
        write_atomic(run_dir / _witness_name(i, f.compression), f.data)
    payload = summary.to_json()
    for i, entry in enumerate(payload["findings"], 1):
        entry["witness"] = _witness_name(i, entry["compression"])
    return {
        "json": write_atomic(run_dir / "summary.json", json.dumps(payload, indent=1) + "\n"),
        "markdown": write_atomic(run_dir / "report.md", render_markdown(summary)),
        "html": write_atomic(run_dir / "report.html", render_html(summary)),
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def render_markdown(summary: CampaignSummary) -> str:
    s = summary.to_json()
    run = s["run"] or {}
    out = [
        f"# dshfuzz campaign {run.get('id', '')}",
        "",
        f"- checker: `{run.get('checker')}`; seed {run.get('seed')}; workers {run.get('workers')}; "
        f"official layers {'on' if run.get('official') else 'off'}",
        f"- stopped by: {s['stop']} after {s['elapsedSeconds']:.1f} s",
        f"- judged logs: {s['examples']} ({s['mutants']} mutants), {s['examplesPerSecond']:.1f} logs/s, "
        f"mean {s['meanEvents']} events",
        f"- distinct findings: {len(s['findings'])}",
        "",
        "## Findings",
        "",
    ]
    if not summary.findings:
        out.append("None: the checker agreed with every judge on every log.")
    for i, (f, entry) in enumerate(zip(summary.findings, s["findings"]), 1):
        out += [
            f"### {i}. {f.kind} — `{f.signature}`",
            "",
            f"- seen {entry['count']}×; minimised from {f.events_found} to {f.events_minimal} events",
            f"- detail: {f.detail}",
            f"- checker reported: {', '.join(f.checker_rules) or 'nothing'}; expected: "
            f"{', '.join(f.expected_rules) or '—'}",
            f"- official: " + ", ".join(f"{k} {'ok' if v.get('ok') else 'refuses'}" for k, v in f.official.items()),
            f"- witness: `{_witness_name(i, f.compression)}`",
            "",
            "```",
            _log_text(f.data, f.compression)[:_MAX_INLINE_LOG],
            "```",
            "",
        ]
    out += ["## Mutator recall", "", "| mutator | logs | recall |", "| --- | ---: | ---: |"]
    for name, n in sorted(summary.mutator_examples.items()):
        out.append(f"| {name} | {n} | {_pct(summary.recall(name))} |")
    out.append("")
    return "\n".join(out)


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:24em}
.bar{display:inline-block;background:#4a7;height:10px}h2{margin-top:1.6em}
"""


def _heat(n: int, total: int) -> str:
    if not total or not n:
        return ""
    alpha = min(1.0, 0.15 + n / total)
    return f' style="background:rgba(200,60,40,{alpha:.2f})"'


def render_html(summary: CampaignSummary) -> str:
    s = summary.to_json()
    run = s["run"] or {}
    e = html.escape
    rules = sorted({r for c in summary.coverage.values() for r in c})
    rows = []
    for mutator, n in sorted(summary.mutator_examples.items()):
        cells = "".join(f"<td{_heat(summary.coverage[mutator][r], n)}>{summary.coverage[mutator][r] or ''}</td>" for r in rules)
        rows.append(f"<tr><td>{e(mutator)}</td><td>{n}</td><td>{_pct(summary.recall(mutator))}</td>{cells}</tr>")
    peak = max((p["examples"] for p in s["throughput"]), default=1)
    bars = "".join(
        f"<tr><td>{p['t']:.0f}s</td><td><span class=bar style='width:{300 * p['examples'] / peak:.0f}px'></span> "
        f"{p['examples']}</td></tr>"
        for p in s["throughput"]
    )
    findings = []
    for i, (f, entry) in enumerate(zip(summary.findings, s["findings"]), 1):
        findings.append(
            f"<h3>{i}. {e(f.kind)} — <code>{e(f.signature)}</code></h3>"
            f"<p>seen {entry['count']}×; minimised {f.events_found} → {f.events_minimal} events. {e(f.detail)}</p>"
            f"<pre>{e(_log_text(f.data, f.compression)[:_MAX_INLINE_LOG])}</pre>"
        )
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>dshfuzz campaign {e(str(run.get('id', '')))}</title><style>{_CSS}</style></head><body>"
        f"<h1>dshfuzz campaign {e(str(run.get('id', '')))}</h1>"
        f"<p>checker <code>{e(str(run.get('checker')))}</code>, seed {run.get('seed')}, {run.get('workers')} workers; "
        f"stopped by {e(str(s['stop']))} after {s['elapsedSeconds']:.1f} s; {s['examples']} logs judged "
        f"({s['examplesPerSecond']:.1f}/s); {len(s['findings'])} distinct findings.</p>"
        "<h2>Kill matrix (mutator × rule fired)</h2>"
        f"<table><tr><th>mutator</th><th>logs</th><th>recall</th>{''.join(f'<th>{e(r)}</th>' for r in rules)}</tr>"
        f"{''.join(rows)}</table>"
        "<h2>Findings</h2>" + ("".join(findings) or "<p>None.</p>") +
        f"<h2>Throughput</h2><table><tr><th>from</th><th>logs judged</th></tr>{bars}</table>"
        "</body></html>\n"
    )
