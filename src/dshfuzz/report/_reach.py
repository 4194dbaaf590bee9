"""Official reach: which refusal sites of the official packages a campaign's logs reached.

Folded from :class:`OfficialSitesMapped` (the site table, once per worker) and each
:class:`ExampleJudged`'s ``official_sites`` (what that log reached first on its worker).
Invariant: a site counts once, for the stratum (a mutator, or ``valid``) whose log reached
it first in the event stream; the reach is counted against the sites not listed
unreachable (:func:`dshfuzz.oracle.official.unreachable_sites`), and a listed site that a
log did reach is reported as such, never hidden.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from dshfuzz.harness import OffPathLines
    from dshfuzz.oracle.official import RefusalSite, UnreachableSite

__all__ = [
    "CheckerReach",
    "OfficialReach",
    "checker_reach_html",
    "checker_reach_markdown",
    "line_ranges",
    "reach_html",
    "reach_markdown",
    "render_checker_reach",
    "render_reach",
]


@dataclass(slots=True)
class OfficialReach:
    """The campaign's official reach so far: ``sites`` the table, ``first`` each reached site
    with the stratum that reached it first and when (seconds after the start), ``code`` the
    official code units (``granularity``: functions or blocks) reached, summed over workers (a
    unit two workers reach counts twice)."""

    sites: tuple[RefusalSite, ...] = ()
    unreachable: Mapping[str, UnreachableSite] = field(default_factory=dict)
    first: dict[str, tuple[str, float]] = field(default_factory=dict)
    code: int = 0
    granularity: str = "function"

    def mapped(self, sites: tuple[RefusalSite, ...], granularity: str) -> None:
        if not self.sites:
            from dshfuzz.oracle.official import unreachable_sites

            self.sites = sites
            self.granularity = granularity
            self.unreachable = unreachable_sites()

    def reached(self, sites: tuple[str, ...], code: int, stratum: str, after: float) -> None:
        self.code += code
        for site in sites:
            self.first.setdefault(site, (stratum, after))

    def _reachable(self) -> list[RefusalSite]:
        return [s for s in self.sites if s.id not in self.unreachable]

    @property
    def reachable(self) -> int:
        """Sites a log can reach: the table less the listed unreachable ones."""
        return len(self._reachable())

    @property
    def reached_count(self) -> int:
        """Reachable sites some log reached."""
        return sum(1 for s in self._reachable() if s.id in self.first)

    def unreached(self) -> list[RefusalSite]:
        """Reachable sites no log reached, in package and source order."""
        return [s for s in self._reachable() if s.id not in self.first]

    def listed_but_reached(self) -> list[RefusalSite]:
        """Sites listed unreachable that a log reached: the list is wrong about them."""
        return [s for s in self.sites if s.id in self.unreachable and s.id in self.first]

    def by_package(self) -> list[dict[str, Any]]:
        """Per package: its sites, those listed unreachable, the reachable ones reached."""
        total: Counter[str] = Counter(s.package for s in self.sites)
        listed: Counter[str] = Counter(s.package for s in self.sites if s.id in self.unreachable)
        reached: Counter[str] = Counter(s.package for s in self._reachable() if s.id in self.first)
        return [
            {"package": p, "sites": total[p], "unreachable": listed[p], "reachable": total[p] - listed[p],
             "reached": reached[p]}
            for p in dict.fromkeys(s.package for s in self.sites)
        ]

    @property
    def headline(self) -> str:
        return f"official refusal sites reached: {self.reached_count} of {self.reachable}"

    def to_json(self) -> dict[str, Any]:
        return {
            "reached": self.reached_count,
            "reachable": self.reachable,
            "sites": len(self.sites),
            "listedUnreachable": len(self.sites) - self.reachable,
            "code": self.code,
            "granularity": self.granularity,
            "byPackage": self.by_package(),
            "unreached": [
                {"id": s.id, "package": s.package, "file": s.file, "line": s.line, "message": s.message}
                for s in self.unreached()
            ],
            "reachedFirstBy": {
                site: {"stratum": stratum, "afterSeconds": round(after, 3)}
                for site, (stratum, after) in sorted(self.first.items(), key=lambda kv: kv[1][1])
            },
            "listedButReached": [s.id for s in self.listed_but_reached()],
        }


def reach_markdown(reach: Mapping[str, Any]) -> list[str]:
    """The "Official reach" section of ``report.md`` (and ``dshfuzz coverage``), from
    :meth:`OfficialReach.to_json`: the per-package table, then every unreached site."""
    out = [
        "## Official reach",
        "",
        f"Official refusal sites reached: **{reach['reached']} of {reach['reachable']}** (the `throw` statements of the "
        f"packages a log passes through, less {reach['listedUnreachable']} listed unreachable, each with its reason); "
        f"official code reached: {reach['code']} {reach['granularity']}s (summed over workers).",
        "",
        "| package | sites | listed unreachable | reachable | reached |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(f"| {p['package']} | {p['sites']} | {p['unreachable']} | {p['reachable']} | {p['reached']} |"
          for p in reach["byPackage"]),
        "",
    ]
    if reach.get("listedButReached"):
        out += [f"**Listed unreachable, yet reached** (the list is wrong about them): "
                f"{', '.join(f'`{i}`' for i in reach['listedButReached'])}", ""]
    if reach["unreached"]:
        out += ["### Unreached refusal sites", "", "| site | message template |", "| --- | --- |"]
        out += [f"| `{u['id']}` | `{_cell(u['message'])}` |" for u in reach["unreached"]]
        out.append("")
    return out


def reach_html(reach: Mapping[str, Any]) -> str:
    """The "Official reach" section of ``report.html``, from :meth:`OfficialReach.to_json`."""
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(p['package'])}</td><td>{p['sites']}</td><td>{p['unreachable']}</td><td>{p['reachable']}</td>"
        f"<td>{p['reached']}</td></tr>" for p in reach["byPackage"]
    )
    unreached = "".join(
        f"<tr><td><code>{e(u['id'])}</code></td><td class=why><code>{e(u['message'])}</code></td></tr>"
        for u in reach["unreached"]
    )
    wrong = (f"<p class=bad>Listed unreachable, yet reached: {e(', '.join(reach['listedButReached']))}</p>"
             if reach.get("listedButReached") else "")
    return (
        f"<h2>Official reach</h2><p>Official refusal sites reached: <b>{reach['reached']} of {reach['reachable']}</b> "
        f"(less {reach['listedUnreachable']} listed unreachable); official code reached: {reach['code']} "
        f"{e(reach['granularity'])}s (summed over workers).</p>"
        "<table><tr><th>package</th><th>sites</th><th>listed unreachable</th><th>reachable</th><th>reached</th></tr>"
        f"{rows}</table>{wrong}"
        + (f"<details><summary>{len(reach['unreached'])} unreached refusal sites</summary>"
           f"<table><tr><th>site</th><th>message template</th></tr>{unreached}</table></details>" if unreached else "")
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def render_reach(reach: Mapping[str, Any], console: Console, *, all_unreached: bool = True) -> None:
    """``dshfuzz coverage``'s tables, from :meth:`OfficialReach.to_json`: per package, then
    every unreached site (with ``all_unreached``; else a count)."""
    from rich.table import Table

    console.print(f"official refusal sites reached: {reach['reached']} of {reach['reachable']} "
                  f"({reach['listedUnreachable']} more listed unreachable); official code reached: {reach['code']} "
                  f"{reach['granularity']}s", highlight=False)
    table = Table(title="official reach per package", title_justify="left")
    table.add_column("package", no_wrap=True)
    for column in ("sites", "listed unreachable", "reachable", "reached"):
        table.add_column(column, justify="right")
    for p in reach["byPackage"]:
        table.add_row(p["package"], str(p["sites"]), str(p["unreachable"]), str(p["reachable"]), str(p["reached"]))
    console.print(table)
    if reach.get("listedButReached"):
        console.print(f"listed unreachable, yet reached (the list is wrong about them): {', '.join(reach['listedButReached'])}",
                      style="yellow", highlight=False)
    if not reach["unreached"]:
        return
    if not all_unreached:
        console.print(f"{len(reach['unreached'])} unreached sites (drop --no-unreached to list them)", highlight=False)
        return
    unreached = Table(title="unreached official refusal sites", title_justify="left")
    unreached.add_column("site")
    unreached.add_column("message template", overflow="fold")
    for u in reach["unreached"]:
        unreached.add_row(u["id"], u["message"])
    console.print(unreached)


@dataclass(slots=True)
class CheckerReach:
    """The checker's own lines the campaign ran (checker coverage on): ``statements`` per file
    (from the first worker's map), ``run`` the lines some log ran, summed over workers."""

    statements: dict[str, frozenset[int]] = field(default_factory=dict)
    run: dict[str, set[int]] = field(default_factory=dict)
    off_path: tuple[OffPathLines, ...] = ()
    """The lines listed as off a campaign's path (the built-in checker's): still counted as
    unexercised, and shown apart from the lines no log reached yet."""

    def mapped(self, statements: Mapping[str, tuple[int, ...]], off_path: tuple[OffPathLines, ...] = ()) -> None:
        if not self.statements:
            self.statements = {f: frozenset(lines) for f, lines in statements.items()}
            self.off_path = off_path

    def reached(self, lines: tuple[tuple[str, int], ...]) -> None:
        for file, line in lines:
            self.run.setdefault(file, set()).add(line)

    def _exercised(self, file: str) -> set[int]:
        return self.run.get(file, set()) & self.statements[file]

    @property
    def total(self) -> int:
        return sum(len(s) for s in self.statements.values())

    @property
    def exercised(self) -> int:
        return sum(len(self._exercised(f)) for f in self.statements)

    def _listed(self, entry: OffPathLines) -> frozenset[int]:
        return self.statements.get(entry.file, frozenset()).intersection(entry.lines)

    def _off_path_by_file(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for entry in self.off_path:
            out.setdefault(entry.file, set()).update(self._listed(entry))
        return out

    def to_json(self) -> dict[str, Any]:
        """``unexercised`` lists every statement no log ran; ``offPath`` the part of them the
        checker's list says no campaign runs (``offPathEntries`` says why), and ``listedButRun``
        the listed lines a log ran after all (the list is wrong there)."""
        total, exercised = self.total, self.exercised
        listed = self._off_path_by_file()
        off = {f: lines - self._exercised(f) for f, lines in listed.items()}
        run_listed = {f: sorted(lines & self._exercised(f)) for f, lines in listed.items()}
        off_count = sum(len(v) for v in off.values())
        return {
            "exercised": exercised,
            "statements": total,
            "percent": round(100 * exercised / total, 1) if total else None,
            "offPathLines": off_count,
            "percentOnPath": round(100 * exercised / (total - off_count), 1) if total - off_count else None,
            "byFile": [
                {"file": f, "statements": len(lines), "exercised": len(self._exercised(f)),
                 "unexercised": line_ranges(sorted(lines - self._exercised(f))),
                 "offPath": line_ranges(sorted(off.get(f, ()))),
                 "notReached": line_ranges(sorted(lines - self._exercised(f) - off.get(f, set())))}
                for f, lines in sorted(self.statements.items())
            ],
            "offPathEntries": [
                {"where": e.where, "reason": e.reason, "why": e.why,
                 "lines": line_ranges(sorted(self._listed(e) - self._exercised(e.file)))}
                for e in self.off_path if self._listed(e) - self._exercised(e.file)
            ],
            "listedButRun": [f"{f}:{line_ranges(lines)}" for f, lines in sorted(run_listed.items()) if lines],
        }


def line_ranges(lines: list[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3-5, 9"``: unexercised lines as coverage.py prints them."""
    out: list[str] = []
    for n in lines:
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _off_path_sentence(reach: Mapping[str, Any]) -> str:
    """What the listed lines change, in one sentence ("" when the checker has no list)."""
    off = reach.get("offPathLines") or 0
    if not off:
        return ""
    return (f" {off} of the unexercised lines are listed as off a campaign's path (an API it does not call, a guard "
            f"only a broken checker trips, a bound past its logs); of the other lines, {reach['exercised']} of "
            f"{reach['statements'] - off} ({reach['percentOnPath']}%).")


def _not_reached(f: Mapping[str, Any]) -> str:
    return str(f.get("notReached", f["unexercised"]))


def checker_reach_markdown(reach: Mapping[str, Any]) -> list[str]:
    """The "Checker coverage" section of ``report.md``, from :meth:`CheckerReach.to_json`."""
    out = [
        "## Checker coverage",
        "",
        f"Checker lines exercised: **{reach['exercised']} of {reach['statements']}** ({reach['percent']}%)."
        + _off_path_sentence(reach),
        "",
        "| file | statements | exercised | not reached yet | listed off a campaign's path |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    out += [f"| `{f['file']}` | {f['statements']} | {f['exercised']} | {_not_reached(f) or '—'} | {f.get('offPath') or '—'} |"
            for f in reach["byFile"]]
    if reach.get("offPathEntries"):
        out += ["", "### Lines off a campaign's path", "", "| where | reason | why | lines |", "| --- | --- | --- | --- |"]
        out += [f"| `{e['where']}` | {e['reason']} | {e['why']} | {e['lines']} |" for e in reach["offPathEntries"]]
    if reach.get("listedButRun"):
        out += ["", "Listed as off a campaign's path, but a log ran them (the list is wrong there): "
                + ", ".join(f"`{x}`" for x in reach["listedButRun"]) + "."]
    return [*out, ""]


def checker_reach_html(reach: Mapping[str, Any]) -> str:
    """The "Checker coverage" section of ``report.html``, from :meth:`CheckerReach.to_json`."""
    e = html.escape
    rows = "".join(
        f"<tr><td><code>{e(f['file'])}</code></td><td>{f['statements']}</td><td>{f['exercised']}</td>"
        f"<td class=why>{e(_not_reached(f)) or '—'}</td><td class=why>{e(f.get('offPath') or '') or '—'}</td></tr>"
        for f in reach["byFile"]
    )
    listed = "".join(
        f"<tr><td><code>{e(x['where'])}</code></td><td>{e(x['reason'])}</td><td class=why>{e(x['why'])}</td>"
        f"<td>{e(x['lines'])}</td></tr>" for x in reach.get("offPathEntries") or ()
    )
    wrong = reach.get("listedButRun") or ()
    return (
        f"<h2>Checker coverage</h2><p>Checker lines exercised: <b>{reach['exercised']} of {reach['statements']}</b> "
        f"({reach['percent']}%).{e(_off_path_sentence(reach))}</p><table><tr><th>file</th><th>statements</th>"
        f"<th>exercised</th><th>not reached yet</th><th>listed off a campaign's path</th></tr>{rows}</table>"
        + (f"<h3>Lines off a campaign's path</h3><table><tr><th>where</th><th>reason</th><th>why</th><th>lines</th></tr>"
           f"{listed}</table>" if listed else "")
        + (f"<p>Listed as off a campaign's path, but a log ran them (the list is wrong there): "
           f"{e(', '.join(wrong))}.</p>" if wrong else "")
    )


def render_checker_reach(reach: Mapping[str, Any], console: Console) -> None:
    """``dshfuzz coverage``'s checker table, from :meth:`CheckerReach.to_json`."""
    from rich.table import Table

    console.print(f"checker lines exercised: {reach['exercised']} of {reach['statements']} ({reach['percent']}%)."
                  + _off_path_sentence(reach), highlight=False)
    table = Table(title="checker coverage per file", title_justify="left")
    table.add_column("file", no_wrap=True)
    table.add_column("statements", justify="right")
    table.add_column("exercised", justify="right")
    table.add_column("not reached yet", overflow="fold")
    table.add_column("listed off path", overflow="fold")
    for f in reach["byFile"]:
        table.add_row(f["file"], str(f["statements"]), str(f["exercised"]), _not_reached(f) or "—", f.get("offPath") or "—")
    console.print(table)
    if reach.get("offPathEntries"):
        listed = Table(title="lines off a campaign's path", title_justify="left")
        for column in ("where", "reason", "why", "lines"):
            listed.add_column(column, overflow="fold")
        for x in reach["offPathEntries"]:
            listed.add_row(x["where"], x["reason"], x["why"], x["lines"])
        console.print(listed)
    if reach.get("listedButRun"):
        console.print("listed as off a campaign's path, but a log ran them (the list is wrong there): "
                      + ", ".join(reach["listedButRun"]), highlight=False)
