"""The campaign summary: one fold over the event stream that every reporter renders.

Invariant: the summary is a pure function of the events seen so far, so the live
terminal view, ``summary.json``, ``report.md`` and ``report.html`` can never
disagree about a number.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from dshfuzz.harness._baseline import Baseline, BaselineComparison, cause_of
from dshfuzz.harness._judges import PARSABLE_REPORT
from ._reach import CheckerReach, OfficialReach
from dshfuzz.harness._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    CheckerLinesMapped,
    CoverageReached,
    ExampleJudged,
    OfficialSitesMapped,
    RoundCut,
    TimeSpent,
    WorkerFailed,
    WorkerLost,
)

__all__ = ["KIND_MEANING", "SUMMARY_FORMAT", "UNCONFIRMED_MEANING", "CampaignSummary", "cause_of", "reproduce_command", "rule_order"]

SUMMARY_FORMAT = "dshfuzz-campaign-summary/1"
_BUCKET_SECONDS = 5.0


KIND_MEANING = {
    "miss": "an official layer refuses the log and the checker reported no error (warnings never answer for "
            "a refusal), or a rule it declares did not fire where the mutator's incident needs it and it reported "
            "no error: it said the log is fine",
    "rule-id": "a rule the checker declares did not fire where the mutator's incident needs it, but the checker "
               "refused the log under other ids: caught, under the wrong name",
    "miss-model-only": "as a miss, but only dshfuzz's reference oracle speaks for this log (no official layer "
                       "reads its format): weigh it as our model's word",
    "false-alarm": "the checker reported an error where every official layer and the reference oracle accept",
    "wrong-place": "the checker reported the right rule at a seq where the reference checker puts none of it",
    "wrong-layer": "the checker's refusedBy is wrong: it names a layer that accepts the log (L:accepts), or a "
                   "layer refuses a log the checker refused for it and no finding names that layer (L:refuses)",
    "silent-loss": "the official loader accepts the log and recovers more events from it than the checker says it "
                   "judged (its report's \"events\"), and the checker reported nothing: it lost events without a word",
    "crash": "the checker failed without a report (keyed by its exception and innermost frames, else by its "
             "first words about the failure, else by its exit status)",
    "timeout": "the checker gave no answer within --timeout",
    "unparsable-output": "the checker's output is not a report dshfuzz can read",
    "metamorphic": "the checker's verdict changed under a rewrite that must not change it (a rewrite an official "
                   "layer refuses is judged as a log of its own); the witness is the pair, before and after",
    "oracle-crash": "dshfuzz's own reference oracle crashed: a bug of dshfuzz, not of the checker",
    "not-implemented": "expected rules outside the checker's declared rules: reported apart, never a miss",
    "attribution": "a layer refuses and the checker refused the log, under ids the registry maps elsewhere",
    "out-of-scope": "a layer the checker does not answer for (--checker-layers, its handshake's layers) refuses "
                    "the log: never a miss",
    "not-assessable": "the checker declined to judge the log (exit 3 or \"assessable\": false): no verdict",
}
"""One sentence per kind, shown where a kind first appears in a report."""

UNCONFIRMED_MEANING = (
    "a second, independently drawn mutant of the same mutator did not reproduce this miss of declared rules "
    "(or none was drawn in time): reported apart, it fails no campaign; replay its witness before acting on it"
)

STAGE_MEANING = {
    "found": "not minimised (the campaign ended first)",
    "minimising": "minimisation cut by the campaign's end: best so far",
    "minimal": "1-minimal",
    "cut": "minimisation cut at its time box: best so far (`dshfuzz corpus minimise` continues it)",
    "off": "not minimised",
}

_STARTUP_SHARE = 0.5
_STARTUP_SECONDS = 0.05


def reproduce_command(checker: str, witness: str) -> str:
    """One shell line that runs ``checker`` (a ``--checker`` spec) on ``witness``."""
    import shlex

    def unquoted(text: str) -> str:
        return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text

    quoted = shlex.quote(witness)
    if checker == "builtin" or checker.startswith("builtin:"):
        return f"dshfuzz check --json {quoted}"
    if checker.startswith("cmd:"):
        template = unquoted(checker[4:])
        return template.replace("{logs}", quoted).replace("{log}", quoted)
    if checker.startswith("serve:"):
        request = shlex.quote(json.dumps({"id": 1, "path": witness}))
        return f"echo {request} | {unquoted(checker[6:])}"
    if checker.startswith("py:"):  # the function called as the campaign calls it, its report printed
        call = ("import importlib, json, sys; m, f = sys.argv[1].rsplit(':', 1); "
                "print(json.dumps(getattr(importlib.import_module(m), f)(sys.argv[2]), default=str))")
        return f"python -c {shlex.quote(call)} {shlex.quote(checker[3:])} {quoted}"
    # a plugin: loaded by its entry point, as the campaign loads it, and its verdict printed
    call = ("import sys; from pathlib import Path; from dshfuzz.harness import load_checker; "
            "print(load_checker(sys.argv[1]).check(Path(sys.argv[2])))")
    return f"python -c {shlex.quote(call)} {shlex.quote(checker)} {quoted}"


def rule_order(rule: str) -> tuple[str, int, str]:
    """Sort key of rule ids by letter, then number: E2 before E10."""
    head = rule.rstrip("0123456789")
    tail = rule[len(head):]
    return (head, int(tail) if tail else -1, rule)


TIME_PARTS = (
    "drawing", "mutating", "checker", "reference checker", "official layers", "reference oracle", "files",
    "shrinking", "minimising", "other",
)
"""The parts of a worker's time (:class:`TimeSpent`), in the order reports show them."""

JUDGING_PARTS = ("checker", "reference checker", "official layers", "reference oracle", "files")
"""The judges' own parts while exploring: what the harness overhead divides by."""

def time_line(breakdown: list[dict[str, Any]], overhead: float | None, server_ms: float | None = None) -> str | None:
    """A time breakdown (``Summary.time_breakdown``, or summary.json's) in one line: milliseconds
    per judged log, largest parts first, the official server's own (it judges beside the
    worker, which waits only for the rest) and the harness overhead."""
    rows = [r for r in breakdown if r.get("msPerLog") is not None and r.get("seconds", 0) > 0]
    if not rows:
        return None
    shown = ", ".join(f"{r['part']} {r['msPerLog']:.1f}" for r in sorted(rows, key=lambda r: -r["seconds"]))
    notes = [f"official server {server_ms:.1f} beside the worker" if server_ms else "",
             f"harness overhead {overhead:.1f}x" if overhead else ""]
    said = "; ".join(n for n in notes if n)
    return f"ms per judged log: {shown}" + (f" ({said})" if said else "")


_KEYED_BY_REASON = frozenset({"miss", "miss-model-only"})
"""Kinds whose finding off the mutator's declaration (layer not ``expected``) carries the
refusing layer's fingerprint where other kinds carry rule ids."""


def _keyed_by_reason(f: DisagreementFound) -> bool:
    return f.kind in _KEYED_BY_REASON and f.layer != "expected"


def _ruleless(f: DisagreementFound) -> bool:
    """A finding that names no rule of the checker: its witness speaks for the rules it expected."""
    return not f.rules or _keyed_by_reason(f)


SCORE_COLUMNS = (
    "expected", "fired", "missed", "otherIds", "notImplemented", "outOfScope", "falseAlarms", "wrongPlace", "wrongLayer",
    "crashes",
)
_SCORE_COLUMNS = {
    "miss": "missed",
    "miss-model-only": "missed",
    "rule-id": "otherIds",
    "not-implemented": "notImplemented",
    "out-of-scope": "outOfScope",
    "false-alarm": "falseAlarms",
    "wrong-place": "wrongPlace",
    "wrong-layer": "wrongLayer",
    "crash": "crashes",
    "timeout": "crashes",
    "unparsable-output": "crashes",
}
_FAILURE_KINDS = frozenset({"crash", "timeout", "unparsable-output"})
_FOR_EXPECTED = _FAILURE_KINDS | {"out-of-scope"}
"""Kinds that name no rule of the checker (a failure, a refusal the checker does not answer
for): the scorecard counts them against the rules the log expected."""


@dataclass(slots=True)
class CampaignSummary:
    started: CampaignStarted | None = None
    finished: CampaignFinished | None = None
    examples: int = 0
    mutants: int = 0
    events_total: int = 0
    signature_counts: Counter[str] = field(default_factory=Counter)
    reached_by: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Per signature, the strata (a mutator, or ``valid``) whose logs showed it, with counts."""
    findings: list[DisagreementFound] = field(default_factory=list)
    coverage: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    mutator_examples: Counter[str] = field(default_factory=Counter)
    recall_hits: Counter[str] = field(default_factory=Counter)
    recall_asked: Counter[str] = field(default_factory=Counter)
    """Per mutator, its logs that expected a rule the checker answers for: recall's denominator."""
    refusals: Counter[str] = field(default_factory=Counter)
    out_of_scope: Counter[str] = field(default_factory=Counter)
    """Per official layer: logs it refused where the checker does not answer for it."""
    throughput: Counter[int] = field(default_factory=Counter)
    expected: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    round_cuts: Counter[str] = field(default_factory=Counter)
    worker_errors: list[WorkerFailed] = field(default_factory=list)
    lost_workers: list[WorkerLost] = field(default_factory=list)
    """Cluster workers that went away mid-campaign (their slots ran on elsewhere)."""
    checker_seconds: float = 0.0
    judge_seconds: float = 0.0
    score: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Per rule id: logs that expected it, fired it, missed it (the checker said the log is
    fine), refused under other ids, alarmed falsely, misplaced it, crashed the checker while
    expecting it, or expected it outside the vocabulary."""

    time_spent: Counter[str] = field(default_factory=Counter)
    """Seconds of worker time per part (:class:`TimeSpent`), summed over workers."""
    official_server: float = 0.0
    """Seconds the official servers spent judging explored logs, by their own clocks."""
    baseline: Baseline | None = None
    """The causes known before the campaign (``--baseline``): only a new one fails it."""
    official_reach: OfficialReach | None = None
    """Which official refusal sites the logs reached (official coverage on), else ``None``."""
    checker_reach: CheckerReach | None = None
    """Which of the checker's own lines the logs ran (checker coverage on), else ``None``."""

    def add(self, event: CampaignEvent) -> None:
        if isinstance(event, CampaignStarted):
            self.started = event
        elif isinstance(event, ExampleJudged):
            self._judged(event)
        elif isinstance(event, DisagreementFound):
            # the first worker to send a signature owns it; its later witnesses replace its earlier ones
            at = next((i for i, f in enumerate(self.findings) if f.signature == event.signature), None)
            if at is None:
                self.findings.append(event)
            elif self.findings[at].worker == event.worker:
                self.findings[at] = replace(event, at=self.findings[at].at)
        elif isinstance(event, RoundCut):
            self.round_cuts[event.stratum or "valid"] += 1
        elif isinstance(event, TimeSpent):
            self.time_spent.update(event.seconds)
            self.official_server += event.official_server
        elif isinstance(event, WorkerFailed):
            self.worker_errors.append(event)
        elif isinstance(event, WorkerLost):
            self.lost_workers.append(event)
        elif isinstance(event, OfficialSitesMapped):
            if self.official_reach is None:
                self.official_reach = OfficialReach()
            self.official_reach.mapped(event.sites, event.granularity)
        elif isinstance(event, CheckerLinesMapped):
            if self.checker_reach is None:
                self.checker_reach = CheckerReach()
            self.checker_reach.mapped(event.statements, event.off_path)
        elif isinstance(event, CoverageReached):
            if self.official_reach is not None:
                self.official_reach.reached(event.official_sites, event.official_code, event.mutator or "valid",
                                            self.since_start(event.at))
            if self.checker_reach is not None:
                self.checker_reach.reached(event.checker_lines)
        elif isinstance(event, CampaignFinished):
            self.finished = event

    def _judged(self, event: ExampleJudged) -> None:
        self.examples += 1
        self.checker_seconds += event.checker_seconds
        self.judge_seconds += event.judge_seconds
        for rule in event.expected_rules:
            self.score[rule]["expected"] += 1
        for rule in event.checker_rules:
            self.score[rule]["fired"] += 1
        for signature in set(event.signatures):
            kind, _, rest = signature.partition("|")
            column = _SCORE_COLUMNS.get(kind)
            if column is None:
                continue
            layer, _, rest_rules = rest.partition("|")
            rules = rest_rules.split("|")[0] if rest_rules else "-"
            if kind in _KEYED_BY_REASON and layer != "expected":
                continue  # the refusal's fingerprint names no rule of the checker
            if kind == "out-of-scope":
                self.out_of_scope[layer] += 1
            for rule in ((event.expected_rules or frozenset({"-"})) if kind in _FOR_EXPECTED else rules.split(",")):
                if rule != "-":
                    self.score[rule][column] += 1
        self.events_total += event.events
        name = event.mutator or "valid"
        self.mutator_examples[name] += 1
        if event.mutator is not None:
            self.mutants += 1
            # recall stays within the checker's vocabulary: a rule it does not claim is never demanded
            claimed = event.expected_rules if event.claimed_rules is None else event.claimed_rules
            self.expected[name].update(claimed)
            if claimed:
                self.recall_asked[name] += 1
                self.recall_hits[name] += claimed <= event.checker_rules
        for rule in event.checker_rules:
            self.coverage[name][rule] += 1
        for layer in event.refusing_layers:
            self.refusals[layer] += 1
        self.signature_counts.update(event.signatures)
        for signature in set(event.signatures):
            self.reached_by[signature][name] += 1
        if self.started is not None:
            self.throughput[int((event.at - self.started.started_at) // _BUCKET_SECONDS)] += 1

    def scorecard(self) -> list[dict[str, Any]]:
        """One row per rule id met in the campaign, in catalog-like order; ``witness`` is the
        index (from 1) of the first finding about the rule, if any."""
        rows = []
        for rule in sorted(self.score, key=rule_order):
            counts = self.score[rule]
            witness = next(
                (i for i, f in enumerate(self.findings, 1)
                 if rule in f.rules and not _keyed_by_reason(f) or (_ruleless(f) and rule in f.expected_rules)),
                None,
            )
            row: dict[str, Any] = {"rule": rule, **{c: counts.get(c, 0) for c in SCORE_COLUMNS}, "witness": witness}
            row["status"] = (
                "not implemented" if counts.get("notImplemented") and not counts.get("fired")
                else "defect" if any(counts.get(c) for c in ("missed", "falseAlarms", "wrongPlace", "wrongLayer", "crashes"))
                else "other ids" if counts.get("otherIds")
                else "ok"
            )
            rows.append(row)
        return rows

    @property
    def mutators_not_reached(self) -> list[str]:
        """Planned mutators no log of the campaign came from."""
        return sorted(m for m in self.planned_mutators if m not in self.mutator_examples)

    @property
    def rules_never_fired(self) -> list[str]:
        """Registry rules the checker reported on no log of the campaign."""
        from dshfuzz.checker import RULES

        return sorted((str(r) for r in RULES if str(r) not in self.rules_fired), key=rule_order)

    @property
    def coverage_advice(self) -> str | None:
        """How to reach what this campaign did not, or ``None`` when it reached every mutator."""
        missing = self.mutators_not_reached
        if not missing:
            return None
        shown = ",".join(missing[:12]) + (",…" if len(missing) > 12 else "")
        return (
            f"{len(missing)} mutator{'s' if len(missing) > 1 else ''} never ran: a longer --budget reaches them, "
            f"or aim at them with --mutators {shown}"
        )

    @property
    def exit_advice(self) -> str | None:
        """One sentence when every crash is one exit status that came with a report dshfuzz can
        read: the status is likely one of the checker's verdicts, and ``--checker-exit`` says so."""
        crashes = [f for f in self.findings if f.kind == "crash"]
        if not crashes or not all(f.detail.startswith("exit ") and PARSABLE_REPORT in f.detail for f in crashes):
            return None
        codes = {f.detail.split(" ", 2)[1] for f in crashes}
        if len(codes) != 1:
            return None
        code = codes.pop()
        return (f"every crash is exit {code} with a report dshfuzz can read: if {code} is one of the checker's verdicts, "
                f"say so with --checker-exit {code}=findings (or {code}=clean, {code}=not-assessable)")

    @property
    def startup_advice(self) -> str | None:
        """A sentence when a command checker's own time dominates judging (``cmd:``: a process
        per log, or per batch): which protocol to switch to."""
        checker = self.started.checker if self.started is not None else ""
        if not self.examples or not checker.startswith("cmd:"):
            return None
        mean = self.checker_seconds / self.examples
        if mean < _STARTUP_SECONDS or self.checker_seconds < _STARTUP_SHARE * self.judge_seconds:
            return None
        share = self.checker_seconds / self.judge_seconds if self.judge_seconds else 1.0
        if "{logs}" in checker:
            how, switch = "starts a process for every batch", "Switch to serve:'…' (one long-lived process)"
        else:
            how = "starts a process for every log"
            switch = "Switch to serve:'…' (one long-lived process) or cmd:'… {logs} …' (many logs per run)"
        return (
            f"the checker took {mean:.2f} s a log, {100 * share:.0f}% of judging, and {how}: "
            f"process start-up likely dominates. {switch}; see docs/CHECKER_PROTOCOL.md"
        )

    def time_breakdown(self) -> list[dict[str, Any]]:
        """Where the workers' time went, part by part in :data:`TIME_PARTS` order: seconds,
        milliseconds per judged log, and share of all worker time."""
        total = sum(self.time_spent.values())
        known = [p for p in TIME_PARTS if p in self.time_spent]
        rest = sorted(p for p in self.time_spent if p not in TIME_PARTS)
        return [
            {
                "part": part,
                "seconds": round(self.time_spent[part], 3),
                "msPerLog": round(1000 * self.time_spent[part] / self.examples, 2) if self.examples else None,
                "share": round(self.time_spent[part] / total, 4) if total else None,
            }
            for part in [*known, *rest]
        ]

    @property
    def harness_overhead(self) -> float | None:
        """Worker time per judged log over the judges' own time per judged log while
        exploring: how much the campaign spends around each judgement (1.0: nothing). The
        official layers' own time is their servers' (the worker only waits for the part of
        it that the other judges did not cover)."""
        judging: float = sum(self.time_spent[p] for p in JUDGING_PARTS)
        if self.official_server > 0:
            judging += self.official_server - self.time_spent["official layers"]
        total = sum(self.time_spent.values())
        return round(total / judging, 2) if judging > 0 else None

    def time_line(self) -> str | None:
        """The breakdown in one line (:func:`time_line`)."""
        server = 1000 * self.official_server / self.examples if self.examples else None
        return time_line(self.time_breakdown(), self.harness_overhead, server)

    @property
    def elapsed(self) -> float:
        if self.finished is not None:
            return self.finished.elapsed
        if self.started is None:
            return 0.0
        return time.time() - self.started.started_at

    @property
    def rate(self) -> float:
        return self.examples / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def checker_defects(self) -> list[DisagreementFound]:
        """The findings that count against the checker: not an unconfirmed miss of declared rules."""
        return [f for f in self.findings
                if f.kind not in ("official-disagreement", "oracle-crash") and f.confirmed is not False]

    @property
    def unconfirmed(self) -> list[DisagreementFound]:
        """Misses of declared rules a second mutant did not reproduce: reported apart."""
        return [f for f in self.findings if f.confirmed is False]

    @property
    def baseline_comparison(self) -> BaselineComparison | None:
        """The checker's causes against :attr:`baseline` (``None`` without one). A cause found
        together with a known one (their witnesses show each other's signatures) is known too:
        the baseline knew the defect under another of its signatures."""
        if self.baseline is None:
            return None
        defects = {id(f) for f in self.checker_defects}
        return self.baseline.compare(
            [cause_of(f.signature) for f in group if id(f) in defects] for group in self.causes().values()
        )

    @property
    def failing(self) -> bool:
        """Whether the campaign fails: a checker defect, or with a baseline a new cause."""
        comparison = self.baseline_comparison
        return bool(comparison.new) if comparison is not None else bool(self.checker_defects)

    def causes(self) -> dict[str, list[DisagreementFound]]:
        """The findings grouped by cause, in order found, keyed by the first one's cause: one
        defect that shows in several formats is one cause (the signature less its format
        version), and so are findings whose witnesses each show the other's signature (a log
        three layers refuse with three messages is one defect). Nothing is linked that the
        witnesses' own judgements do not confirm."""
        root = list(range(len(self.findings)))

        def find(i: int) -> int:
            while root[i] != i:
                root[i] = root[root[i]]
                i = root[i]
            return i

        first: dict[str, int] = {}
        for i, f in enumerate(self.findings):
            j = first.setdefault(cause_of(f.signature), i)
            root[find(i)] = find(j)
            for j, g in enumerate(self.findings[:i]):
                if f.signature in g.shows and g.signature in f.shows:
                    root[find(i)] = find(j)
        out: dict[str, list[DisagreementFound]] = {}
        groups: dict[int, list[DisagreementFound]] = {}
        for i, f in enumerate(self.findings):
            groups.setdefault(find(i), []).append(f)
        for group in sorted(groups.values(), key=lambda g: self.findings.index(g[0])):
            out[cause_of(group[0].signature)] = group
        return out

    @property
    def oracle_crashes(self) -> list[DisagreementFound]:
        return [f for f in self.findings if f.kind == "oracle-crash"]

    @property
    def planned_mutators(self) -> tuple[str, ...]:
        return self.started.mutators if self.started is not None else ()

    @property
    def mutators_reached(self) -> int:
        return sum(1 for m in self.mutator_examples if m != "valid")

    @property
    def rules_fired(self) -> frozenset[str]:
        return frozenset(r for c in self.coverage.values() for r in c)

    def since_start(self, at: float) -> float:
        """Seconds from the campaign's start to the wall-clock time ``at``."""
        return max(0.0, at - self.started.started_at) if self.started is not None else 0.0

    def low_recall(self, below: float = 1.0) -> list[tuple[str, float]]:
        """The mutators whose declared rules the checker did not always report, worst first."""
        out = [(m, r) for m in self.mutator_examples if (r := self.recall(m)) is not None and r < below]
        return sorted(out, key=lambda item: (item[1], item[0]))

    def recall(self, mutator: str) -> float | None:
        """The share of ``mutator``'s logs whose expected rules (those the checker claims) it
        all reported; ``None`` where no log expected one it claims."""
        n = self.recall_asked.get(mutator, 0)
        return self.recall_hits[mutator] / n if n and mutator != "valid" else None

    def to_json(self) -> dict[str, Any]:
        started = self.started
        at = {id(f): n for n, f in enumerate(self.findings)}
        causes = self.causes()
        # each later finding of a cause -> the index (from 1) of the cause's first finding
        same_cause = {at[id(g)]: at[id(group[0])] + 1 for group in causes.values() for g in group[1:]}
        return {
            "format": SUMMARY_FORMAT,
            "run": None if started is None else {
                "id": started.run_id,
                "checker": started.checker,
                "seed": started.seed,
                "workers": started.workers,
                "budgetSeconds": started.budget_seconds,
                "budgetExamples": started.budget_examples,
                "official": started.official,
                "startedAt": started.started_at,
                "cluster": started.cluster,
            },
            "stop": None if self.finished is None else self.finished.reason,
            "elapsedSeconds": round(self.elapsed, 3),
            "examples": self.examples,
            "mutants": self.mutants,
            "examplesPerSecond": round(self.rate, 2),
            "meanEvents": round(self.events_total / self.examples, 1) if self.examples else 0,
            "findings": [
                {
                    "signature": f.signature,
                    "kind": f.kind,
                    "layer": f.layer,
                    "rules": list(f.rules),
                    "mutator": f.mutator,
                    "detail": f.detail,
                    "stage": f.stage,
                    "cause": cause_of(f.signature),
                    "known": None if self.baseline is None else cause_of(f.signature) in self.baseline.causes,
                    "sameCauseAs": same_cause.get(n),
                    "shows": list(f.shows),
                    "confirmed": f.confirmed,
                    "confirmation": f.confirmation or None,
                    "minimised": f.stage in ("minimal", "off"),
                    "reachedBy": dict(self.reached_by.get(f.signature, Counter({f.mutator or "valid": 1})).most_common()),
                    "formatVersion": f.format_version,
                    "count": self.signature_counts.get(f.signature, 1),
                    "eventsFound": f.events_found,
                    "eventsMinimal": f.events_minimal,
                    "checkerRules": list(f.checker_rules),
                    "expectedRules": list(f.expected_rules),
                    "official": f.official,
                    "compression": f.compression,
                    "foundAfterSeconds": round(self.since_start(f.at), 3),
                }
                for n, f in enumerate(self.findings)
            ],
            "causes": len(causes),
            "signatureCounts": dict(self.signature_counts.most_common()),
            "scorecard": self.scorecard(),
            "startupAdvice": self.startup_advice,
            "exitAdvice": self.exit_advice,
            "timeBreakdown": self.time_breakdown(),
            "officialServerMsPerLog": round(1000 * self.official_server / self.examples, 2) if self.examples else None,
            "harnessOverhead": self.harness_overhead,
            "checkerSecondsPerLog": round(self.checker_seconds / self.examples, 4) if self.examples else None,
            "coverage": {m: dict(c) for m, c in sorted(self.coverage.items())},
            "recall": {m: self.recall(m) for m in sorted(self.mutator_examples) if m != "valid"},
            "expectedRules": {m: sorted(r, key=rule_order) for m, r in sorted(self.expected.items())},
            "mutatorsPlanned": list(self.planned_mutators),
            "mutatorsReached": self.mutators_reached,
            "mutatorsNotReached": self.mutators_not_reached,
            "rulesNeverFired": self.rules_never_fired,
            "coverageAdvice": self.coverage_advice,
            "rulesFired": sorted(self.rules_fired, key=rule_order),
            "officialRefusals": dict(self.refusals),
            "officialReach": None if self.official_reach is None else self.official_reach.to_json(),
            "checkerCoverage": None if self.checker_reach is None else self.checker_reach.to_json(),
            "outOfScope": dict(self.out_of_scope),
            "baseline": None if self.baseline is None else {
                "source": self.baseline.source, **(self.baseline_comparison or BaselineComparison((), (), ())).to_json()
            },
            "roundsCut": dict(self.round_cuts.most_common()),
            "bucketSeconds": _BUCKET_SECONDS,
            "throughput": [
                {"t": b * _BUCKET_SECONDS, "examples": n} for b, n in sorted(self.throughput.items())
            ],
            "workerErrors": [w.error for w in self.worker_errors],
            "lostWorkers": [
                {"worker": w.worker, "slots": list(w.slots), "afterSeconds": round(self.since_start(w.at), 3)}
                for w in self.lost_workers
            ],
        }
