"""The campaign summary: one fold over the event stream that every reporter renders.

Invariant: the summary is a pure function of the events seen so far, so the live
terminal view, ``summary.json``, ``report.md`` and ``report.html`` can never
disagree about a number.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from dshfuzz.harness._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    ExampleJudged,
    RoundCut,
    WorkerFailed,
)

__all__ = ["SUMMARY_FORMAT", "CampaignSummary", "rule_order"]

SUMMARY_FORMAT = "dshfuzz-campaign-summary/1"
_BUCKET_SECONDS = 5.0


def rule_order(rule: str) -> tuple[str, int, str]:
    """Sort key of rule ids by letter, then number: E2 before E10."""
    head = rule.rstrip("0123456789")
    tail = rule[len(head):]
    return (head, int(tail) if tail else -1, rule)


@dataclass(slots=True)
class CampaignSummary:
    started: CampaignStarted | None = None
    finished: CampaignFinished | None = None
    examples: int = 0
    mutants: int = 0
    events_total: int = 0
    signature_counts: Counter[str] = field(default_factory=Counter)
    findings: list[DisagreementFound] = field(default_factory=list)
    coverage: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    mutator_examples: Counter[str] = field(default_factory=Counter)
    recall_hits: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    throughput: Counter[int] = field(default_factory=Counter)
    expected: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    round_cuts: Counter[str] = field(default_factory=Counter)
    worker_errors: list[WorkerFailed] = field(default_factory=list)

    def add(self, event: CampaignEvent) -> None:
        if isinstance(event, CampaignStarted):
            self.started = event
        elif isinstance(event, ExampleJudged):
            self._judged(event)
        elif isinstance(event, DisagreementFound):
            # workers hunt independently: the first witness of a signature is the one reported
            if all(f.signature != event.signature for f in self.findings):
                self.findings.append(event)
        elif isinstance(event, RoundCut):
            self.round_cuts[event.stratum or "valid"] += 1
        elif isinstance(event, WorkerFailed):
            self.worker_errors.append(event)
        elif isinstance(event, CampaignFinished):
            self.finished = event

    def _judged(self, event: ExampleJudged) -> None:
        self.examples += 1
        self.events_total += event.events
        name = event.mutator or "valid"
        self.mutator_examples[name] += 1
        if event.mutator is not None:
            self.mutants += 1
            self.expected[name].update(event.expected_rules)
            if event.expected_rules <= event.checker_rules:
                self.recall_hits[name] += 1
        for rule in event.checker_rules:
            self.coverage[name][rule] += 1
        for layer in event.refusing_layers:
            self.refusals[layer] += 1
        self.signature_counts.update(event.signatures)
        if self.started is not None:
            self.throughput[int((event.at - self.started.started_at) // _BUCKET_SECONDS)] += 1

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
        return [f for f in self.findings if f.kind not in ("official-disagreement", "oracle-crash")]

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
        n = self.mutator_examples.get(mutator, 0)
        return self.recall_hits[mutator] / n if n and mutator != "valid" else None

    def to_json(self) -> dict[str, Any]:
        started = self.started
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
                    "count": self.signature_counts.get(f.signature, 1),
                    "eventsFound": f.events_found,
                    "eventsMinimal": f.events_minimal,
                    "checkerRules": list(f.checker_rules),
                    "expectedRules": list(f.expected_rules),
                    "official": f.official,
                    "compression": f.compression,
                    "foundAfterSeconds": round(self.since_start(f.at), 3),
                }
                for f in self.findings
            ],
            "signatureCounts": dict(self.signature_counts.most_common()),
            "coverage": {m: dict(c) for m, c in sorted(self.coverage.items())},
            "recall": {m: self.recall(m) for m in sorted(self.mutator_examples) if m != "valid"},
            "expectedRules": {m: sorted(r, key=rule_order) for m, r in sorted(self.expected.items())},
            "mutatorsPlanned": list(self.planned_mutators),
            "mutatorsReached": self.mutators_reached,
            "rulesFired": sorted(self.rules_fired, key=rule_order),
            "officialRefusals": dict(self.refusals),
            "roundsCut": dict(self.round_cuts.most_common()),
            "bucketSeconds": _BUCKET_SECONDS,
            "throughput": [
                {"t": b * _BUCKET_SECONDS, "examples": n} for b, n in sorted(self.throughput.items())
            ],
            "workerErrors": [w.error for w in self.worker_errors],
        }
