"""File reporters: ``summary.json``, ``report.md`` and a self-contained ``report.html``.

All three render the same :class:`CampaignSummary`; the witnesses (minimal logs)
are written beside them as ``witnesses/<n>.jsonl[.zstd]``. Every file is written
atomically; the HTML needs no network (inline CSS, no scripts from elsewhere).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dshfuzz._atomic import write_atomic
from dshfuzz.harness._events import DisagreementFound

from ._reach import checker_reach_html, checker_reach_markdown, reach_html, reach_markdown
from ._summary import (
    KIND_MEANING,
    SCORE_COLUMNS,
    STAGE_MEANING,
    UNCONFIRMED_MEANING,
    CampaignSummary,
    reproduce_command,
    rule_order,
    time_line,
)

__all__ = ["write_reports"]

_MAX_INLINE_LOG = 20_000


def _witness_name(index: int, compression: str, *, original: bool = False) -> str:
    """A finding's witness file; a metamorphic finding's log before its transform is the
    ``.original`` beside it."""
    return f"witnesses/{index:03d}{'.original' if original else ''}.jsonl" + (".zstd" if compression == "zstd" else "")


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
        if f.original is not None:
            write_atomic(run_dir / _witness_name(i, f.original_compression, original=True), f.original)
    payload = _payload(summary, run_dir)
    return {
        "json": write_atomic(run_dir / "summary.json", json.dumps(payload, indent=1) + "\n"),
        "markdown": write_atomic(run_dir / "report.md", render_markdown(summary, run_dir)),
        "html": write_atomic(run_dir / "report.html", render_html(summary, run_dir)),
    }


def _payload(summary: CampaignSummary, run_dir: Path | None) -> dict[str, Any]:
    """``summary.to_json()`` with each finding's witness path and the command that reproduces it."""
    payload = summary.to_json()
    checker = (payload["run"] or {}).get("checker", "builtin")
    for i, (entry, f) in enumerate(zip(payload["findings"], summary.findings, strict=True), 1):
        entry["witness"] = _witness_name(i, entry["compression"])
        where = str(run_dir / entry["witness"]) if run_dir is not None else entry["witness"]
        entry["reproduce"] = reproduce_command(str(checker), where)
        if f.original is not None:  # the change is the finding: both logs, and the command on each
            entry["original"] = _witness_name(i, f.original_compression, original=True)
            before = str(run_dir / entry["original"]) if run_dir is not None else entry["original"]
            entry["reproduce"] = (f"{reproduce_command(str(checker), before)}; {entry['reproduce']}"
                                  f"  # the verdicts differ: {entry['original']} before {entry['layer']}, "
                                  f"{entry['witness']} after")
    return payload


def _reached(entry: dict[str, Any]) -> str:
    return ", ".join(f"{name} {n}" for name, n in entry.get("reachedBy", {}).items()) or "—"


def _explained(kind: str, seen: set[str]) -> str:
    """The kind's one-sentence meaning, the first time it appears in a report."""
    if kind in seen or kind not in KIND_MEANING:
        return ""
    seen.add(kind)
    return KIND_MEANING[kind]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _lost(s: dict[str, Any]) -> str:
    """The lost cluster workers in one line: address, the slots it ran, when."""
    return "; ".join(
        f"{w['worker']} (slot{'s' if len(w['slots']) != 1 else ''} {', '.join(map(str, w['slots'])) or 'none'}, "
        f"after {w['afterSeconds']:.0f} s)"
        for w in s["lostWorkers"]
    )


def render_markdown(summary: CampaignSummary, run_dir: Path | None = None) -> str:
    s = _payload(summary, run_dir)
    run = s["run"] or {}
    out = [
        f"# dshfuzz campaign {run.get('id', '')}",
        "",
        f"- checker: `{run.get('checker')}`; seed {run.get('seed')}; workers {run.get('workers')}; "
        f"official layers {'on' if run.get('official') else 'off'}",
        f"- stopped by: {s['stop']} after {s['elapsedSeconds']:.1f} s",
        f"- judged logs: {s['examples']} ({s['mutants']} mutants), {s['examplesPerSecond']:.1f} logs/s, "
        f"mean {s['meanEvents']} events",
        f"- mutators reached: {s['mutatorsReached']}"
        + (f" of {len(s['mutatorsPlanned'])}" if s["mutatorsPlanned"] else "")
        + f"; rules fired: {len(s['rulesFired'])}",
        "- rounds cut at their time cap: " + (", ".join(f"{k} {v}" for k, v in s["roundsCut"].items()) or "none"),
        *([f"- out of scope: {', '.join(f'{k} {v}' for k, v in sorted(s['outOfScope'].items()))} (refused only by "
           "layers the checker does not answer for: never a miss)"] if s.get("outOfScope") else []),
        f"- distinct findings: {len(s['findings'])}",
        *(["- baseline: " + _baseline_text(s["baseline"])] if s.get("baseline") else []),
        *([f"- cluster: `{run.get('cluster')}`"] if run.get("cluster") else []),
        *([f"- **lost workers:** {_lost(s)}"] if s["lostWorkers"] else []),
        *([f"- **start-up:** {s['startupAdvice']}"] if s["startupAdvice"] else []),
        *([f"- **exit status:** {s['exitAdvice']}"] if s.get("exitAdvice") else []),
        *([f"- time: {_time_line(s)}"] if _time_line(s) else []),
        *([f"- **not reached:** {s['coverageAdvice']}"] if s["coverageAdvice"] else []),
        *([f"- rules never fired: {' '.join(s['rulesNeverFired'])}"] if s["rulesNeverFired"] else []),
        *([f"- official refusal sites reached: {s['officialReach']['reached']} of {s['officialReach']['reachable']}"]
          if s.get("officialReach") else []),
        *([f"- checker lines exercised: {s['checkerCoverage']['exercised']} of {s['checkerCoverage']['statements']} "
           f"({s['checkerCoverage']['percent']}%)"] if s.get("checkerCoverage") else []),
        "",
        "## Findings",
        "",
    ]
    explained: set[str] = set()
    if not summary.findings:
        out.append("None: the checker agreed with every judge on every log.")
    for i, (f, entry) in enumerate(zip(summary.findings, s["findings"]), 1):
        meaning = _explained(f.kind, explained)
        out += [
            f"### {i}. {f.kind}{' (unconfirmed)' if f.confirmed is False else ''} — `{f.signature}`",
            "",
            *([f"*{f.kind}: {meaning}.*", ""] if meaning else []),
            *([f"*unconfirmed: {UNCONFIRMED_MEANING}. {f.confirmation}*", ""] if f.confirmed is False else []),
            *([f"- confirmed: {f.confirmation}"] if f.confirmed else []),
            f"- seen {entry['count']}×, first after {entry['foundAfterSeconds']:.0f} s; witness {f.events_found} → "
            f"{f.events_minimal} events, {STAGE_MEANING.get(f.stage, f.stage)}",
            f"- reached by: {_reached(entry)}",
            f"- reproduce: `{entry['reproduce']}`",
            f"- detail: {f.detail}",
            f"- checker reported: {', '.join(f.checker_rules) or 'nothing'}; expected: "
            f"{', '.join(f.expected_rules) or '—'}",
            "- official: " + (", ".join(
                f"{k} accepts" if v.get("ok") else f"{k} refuses ({_refusal_text(v)})" for k, v in f.official.items()
            ) or "not consulted"),
            f"- witness: `{_witness_name(i, f.compression)}`",
            "",
            "```",
            _log_text(f.data, f.compression)[:_MAX_INLINE_LOG],
            "```",
            "",
        ]
    out += ["## Scorecard per rule", "", "| rule | status | " + " | ".join(SCORE_COLUMNS) + " | witness |",
            "| --- | --- |" + " ---: |" * len(SCORE_COLUMNS) + " --- |"]
    for row in s["scorecard"]:
        cells = " | ".join(str(row[c]) for c in SCORE_COLUMNS)
        out.append(f"| {row['rule']} | {row['status']} | {cells} | {row['witness'] or '—'} |")
    out += [""]
    out += ["## Mutator recall", "", "| mutator | logs | recall |", "| --- | ---: | ---: |"]
    for name, n in sorted(summary.mutator_examples.items()):
        out.append(f"| {name} | {n} | {_pct(summary.recall(name))} |")
    out.append("")
    if s.get("officialReach"):
        out += reach_markdown(s["officialReach"])
    if s.get("checkerCoverage"):
        out += checker_reach_markdown(s["checkerCoverage"])
    return "\n".join(out)


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:80em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:24em}
h2{margin-top:1.6em}.run td{text-align:left}.ok{color:#171}.bad{color:#b21}
.heat td,.heat th{padding:1px 3px;font-size:12px;min-width:1.6em}.heat th.r{writing-mode:vertical-rl}
.heat td.exp{outline:2px solid #124;outline-offset:-2px}details{margin:.6em 0}summary{cursor:pointer}
.legend span{display:inline-block;width:1.4em;height:.9em;vertical-align:middle;margin:0 .2em}
.scroll{overflow:auto;max-width:100%;max-height:40em}.heat th{position:sticky;top:0;background:#fff;z-index:1}
.heat td:first-child,.heat th:first-child{position:sticky;left:0;background:#fff;z-index:2}
td.why{text-align:left}code{overflow-wrap:anywhere}table.score{display:block;overflow-x:auto;max-width:100%}
"""


def _heat(n: int, total: int) -> str:
    if not total or not n:
        return ""
    alpha = 0.15 + 0.85 * min(1.0, n / total)
    return f"background:rgba(200,60,40,{alpha:.2f})"


def _heatmap(summary: CampaignSummary) -> str:
    """Mutator rows × rule columns; a cell's shade is the share of that mutator's logs on
    which the checker reported the rule, and the rules the mutator declares are outlined."""
    e = html.escape
    rules = sorted(summary.rules_fired | {r for rs in summary.expected.values() for r in rs}, key=rule_order)
    head = "".join(f"<th class=r>{e(r)}</th>" for r in rules)
    rows = []
    for mutator, n in sorted(summary.mutator_examples.items()):
        fired: Mapping[str, int] = summary.coverage.get(mutator, {})
        expected = summary.expected.get(mutator, set())
        cells = []
        for r in rules:
            count = fired.get(r, 0)
            cls = " class=exp" if r in expected else ""
            tip = f"{mutator} × {r}: {count} of {n} logs" + (" (declared)" if r in expected else "")
            cells.append(f"<td{cls} style='{_heat(count, n)}' title='{e(tip)}'>{count or ''}</td>")
        recall = summary.recall(mutator)
        klass = "" if recall is None else " class=ok" if recall == 1 else " class=bad"
        rows.append(f"<tr><td>{e(mutator)}</td><td>{n}</td><td{klass}>{_pct(recall)}</td>{''.join(cells)}</tr>")
    legend = ("<p class=legend>shade: share of the mutator's logs on which the rule fired "
              f"<span style='{_heat(1, 10)}'></span>10% <span style='{_heat(1, 2)}'></span>50% "
              f"<span style='{_heat(1, 1)}'></span>100%; outlined: the rules the mutator declares; recall: "
              "the share of its logs on which every declared rule fired.</p>")
    # the heatmap is wider than a page: it scrolls in its own box, its header row and mutator column sticky
    return (f"{legend}<div class=scroll><table class=heat><tr><th>mutator</th><th>logs</th><th>recall</th>{head}</tr>"
            f"{''.join(rows)}</table></div>")


def _throughput_svg(summary: CampaignSummary) -> str:
    """Logs judged per second over time (one point per bucket), each distinct finding a red
    mark at the moment it was found. Plain SVG: no script, no network."""
    e = html.escape
    s = summary.to_json()
    bucket: float = s["bucketSeconds"]
    elapsed: float = max(s["elapsedSeconds"], bucket)
    points = []
    for p in s["throughput"]:
        width = min(bucket, max(elapsed - p["t"], 1e-9))
        points.append((p["t"] + width / 2, p["examples"] / width))
    if not points:
        return "<p>No log judged.</p>"
    w, h, left, bottom, top = 720, 200, 48, 28, 10
    peak: float = max(rate for _, rate in points) or 1.0

    def x(t: float) -> float:
        return left + (w - left - 10) * t / elapsed

    def y(r: float) -> float:
        return top + (h - top - bottom) * (1 - r / peak)

    line = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in points)
    area = f"{x(points[0][0]):.1f},{y(0):.1f} {line} {x(points[-1][0]):.1f},{y(0):.1f}"
    ticks = []
    for i in range(5):
        t = elapsed * i / 4
        ticks.append(f"<text x='{x(t):.1f}' y='{h - 8}' text-anchor='middle'>{t:.0f}s</text>")
        r = peak * i / 4
        ticks.append(f"<text x='{left - 6}' y='{y(r) + 4:.1f}' text-anchor='end'>{r:.0f}</text>"
                     f"<line x1='{left}' x2='{w - 10}' y1='{y(r):.1f}' y2='{y(r):.1f}' stroke='#eee'/>")
    marks = "".join(
        f"<line x1='{x(summary.since_start(f.at)):.1f}' x2='{x(summary.since_start(f.at)):.1f}' y1='{top}' "
        f"y2='{y(0):.1f}' stroke='#c33' stroke-dasharray='3 2'><title>{e(f.signature)} after "
        f"{summary.since_start(f.at):.0f}s</title></line>"
        for f in summary.findings
    )
    return (
        f"<svg width='{w}' height='{h}' font-size='11' role='img' "
        f"aria-label='logs judged per second over time'>{''.join(ticks)}"
        f"<polygon points='{area}' fill='rgba(70,150,110,.25)'/>"
        f"<polyline points='{line}' fill='none' stroke='#3a7' stroke-width='2'/>{marks}"
        f"<line x1='{left}' x2='{w - 10}' y1='{y(0):.1f}' y2='{y(0):.1f}' stroke='#888'/></svg>"
        f"<p>logs judged per second, in {bucket:.0f}-second buckets; dashed red: a distinct finding, when found "
        f"(mean {s['examplesPerSecond']:.1f}/s).</p>"
    )


def _refusal_text(verdict: dict[str, Any]) -> str:
    error = verdict.get("error")
    if not isinstance(error, dict):
        return ""
    seq = f" (seq {error['seq']})" if error.get("seq") is not None else ""
    return f"{error.get('name', '')}: {str(error.get('message', ''))[:300]}{seq}"


def _finding_html(index: int, f: DisagreementFound, entry: dict[str, Any], explained: set[str]) -> str:
    e = html.escape
    verdicts = "".join(
        f"<tr><td>{e(layer)}</td><td class={'ok' if v.get('ok') else 'bad'}>{'accepts' if v.get('ok') else 'refuses'}"
        f"</td><td class=why>{e(_refusal_text(v))}</td></tr>"
        for layer, v in f.official.items()
    )
    official = f"<table><tr><th>official layer</th><th>verdict</th><th>why</th></tr>{verdicts}</table>" if verdicts else ""
    meaning = _explained(f.kind, explained)
    return (
        f"<details open id=finding-{index}><summary><b>{index}. {e(f.kind)}</b>"
        f"{' (unconfirmed)' if f.confirmed is False else ''} <code>{e(f.signature)}</code></summary>"
        + (f"<p><i>{e(f.kind)}: {e(meaning)}.</i></p>" if meaning else "")
        + (f"<p><i>unconfirmed: {e(UNCONFIRMED_MEANING)}. {e(f.confirmation)}</i></p>" if f.confirmed is False else "")
        + (f"<p>confirmed: {e(f.confirmation)}</p>" if f.confirmed else "")
        + f"<p>seen {entry['count']}×, first after {entry['foundAfterSeconds']:.0f} s; witness {f.events_found} → "
        f"{f.events_minimal} events, {e(STAGE_MEANING.get(f.stage, f.stage))}; "
        f"<code>{e(entry.get('witness', ''))}</code>.</p>"
        f"<p>reached by: {e(_reached(entry))}</p>"
        f"<p>reproduce: <code>{e(entry.get('reproduce', ''))}</code></p>"
        f"<p>{e(f.detail)}</p>"
        f"<p>checker reported: {e(', '.join(f.checker_rules) or 'nothing')}; expected: "
        f"{e(', '.join(f.expected_rules) or '—')}; reference oracle refused: "
        f"{e(', '.join(f.oracle_refusing) or 'nothing')}</p>{official}"
        f"<pre>{e(_log_text(f.data, f.compression)[:_MAX_INLINE_LOG])}</pre></details>"
    )


def render_html(summary: CampaignSummary, run_dir: Path | None = None) -> str:
    """The whole report as one self-contained page (inline CSS and SVG, no script)."""
    s = _payload(summary, run_dir)
    run = s["run"] or {}
    e = html.escape
    title = f"dshfuzz campaign {e(str(run.get('id', '')))}"
    defects = len(summary.checker_defects)
    verdict = (f"<span class=bad>{defects} checker finding{'' if defects == 1 else 's'}</span>" if defects
               else "<span class=ok>no disagreement: the checker agreed with every judge on every log</span>")
    planned = len(summary.planned_mutators)
    facts = [
        ("checker", f"<code>{e(str(run.get('checker')))}</code>"),
        ("judges", "checker, reference oracle" + (", official layers" if run.get("official") else "")),
        ("seed / workers", f"{run.get('seed')} / {run.get('workers')}"),
        ("stopped by", f"{e(str(s['stop']))} after {s['elapsedSeconds']:.1f} s"),
        ("logs judged", f"{s['examples']} ({s['mutants']} mutants), {s['examplesPerSecond']:.1f}/s, "
                        f"mean {s['meanEvents']} events"),
        ("mutators reached", f"{s['mutatorsReached']}" + (f" of {planned}" if planned else "")),
        ("rules fired", f"{len(s['rulesFired'])}: {e(' '.join(s['rulesFired']))}"),
        ("rounds cut at their time cap", e(", ".join(f"{k} {v}" for k, v in s["roundsCut"].items())) or "none"),
        ("official refusals", e(", ".join(f"{k} {v}" for k, v in sorted(s["officialRefusals"].items()))) or "none"),
        *([("out of scope", e(", ".join(f"{k} {v}" for k, v in sorted(s["outOfScope"].items())))
            + " (refused only by layers the checker does not answer for: never a miss)")]
          if s.get("outOfScope") else []),
        *([("start-up", e(s["startupAdvice"]))] if s["startupAdvice"] else []),
        *([("exit status", e(s["exitAdvice"]))] if s.get("exitAdvice") else []),
        *([("time", e(_time_line(s) or ""))] if _time_line(s) else []),
        *([("not reached", e(s["coverageAdvice"]))] if s["coverageAdvice"] else []),
        *([("rules never fired", e(" ".join(s["rulesNeverFired"])))] if s["rulesNeverFired"] else []),
        *([("official sites reached", f"{s['officialReach']['reached']} of {s['officialReach']['reachable']}")]
          if s.get("officialReach") else []),
        *([("checker lines exercised", f"{s['checkerCoverage']['exercised']} of {s['checkerCoverage']['statements']}")]
          if s.get("checkerCoverage") else []),
        *([("cluster", f"<code>{e(str(run.get('cluster')))}</code>")] if run.get("cluster") else []),
        *([("lost workers", e(_lost(s)))] if s["lostWorkers"] else []),
        *([("baseline", e(_baseline_text(s["baseline"])))] if s.get("baseline") else []),
        ("verdict", verdict),
    ]
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    explained: set[str] = set()
    findings = "".join(
        _finding_html(i, f, entry, explained) for i, (f, entry) in enumerate(zip(summary.findings, s["findings"]), 1)
    )
    head = "".join(f"<th>{c}</th>" for c in ("rule", "status", *SCORE_COLUMNS, "witness"))
    score_rows = "".join(
        f"<tr><td>{e(r['rule'])}</td><td>{e(r['status'])}</td>"
        + "".join(f"<td>{r[c]}</td>" for c in SCORE_COLUMNS)
        + (f"<td>finding {r['witness']}</td>" if r["witness"] else "<td>—</td>")
        + "</tr>"
        for r in s["scorecard"]
    )
    scorecard = f"<table class=score><tr>{head}</tr>{score_rows}</table>" if score_rows else "<p>No rule met.</p>"
    errors = "".join(f"<pre>{e(w)}</pre>" for w in s["workerErrors"])
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title><style>{_CSS}</style></head>"
        f"<body><h1>{title}</h1><table class=run>{table}</table>"
        f"<h2>Findings</h2>{findings or '<p>None.</p>'}"
        + (f"<h2>Worker errors</h2>{errors}" if errors else "")
        + f"<h2>Scorecard per rule</h2>{scorecard}"
        + f"<h2>Throughput over time</h2>{_throughput_svg(summary)}"
        f"<h2>Kill matrix (mutator × rule fired)</h2>{_heatmap(summary)}"
        + (reach_html(s["officialReach"]) if s.get("officialReach") else "")
        + (checker_reach_html(s["checkerCoverage"]) if s.get("checkerCoverage") else "")
        + "</body></html>\n"
    )



def _time_line(s: dict[str, Any]) -> str | None:
    return time_line(s.get("timeBreakdown", []), s.get("harnessOverhead"), s.get("officialServerMsPerLog"))


def _baseline_text(baseline: dict[str, Any]) -> str:
    """The causes against ``--baseline`` in one line, naming the new and the gone ones."""
    parts = [f"{len(baseline['known'])} known, {len(baseline['new'])} new, {len(baseline['gone'])} gone "
             f"(baseline: {baseline['source']})"]
    parts += [f"{label}: {', '.join(baseline[label])}" for label in ("new", "gone") if baseline[label]]
    return "; ".join(parts)
