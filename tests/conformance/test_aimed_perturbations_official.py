"""The aimed perturbation families (``aimed-*``, :mod:`dshfuzz.mutators._aimed`), judged by the
official layers.

Each variant aims at one check of one official layer: pinned to that variant, every mutant it
makes on sample logs is refused, and some official layer refuses it with the check's own
message (the table below says which message each one must draw), bar the variants aimed at a
checker branch with a valid rare form (``ACCEPTED_BY_EVERY_LAYER``), whose every mutant every
layer accepts, and the few whose logs of one format every layer accepts (``ACCEPTED_IN_FORMAT``).
The tables name exactly the variants the families draw among, so a new variant comes with its
expected refusal or its acceptance.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dshfuzz.generators import generate
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.harness._strategy import CAMPAIGN_PERTURBATIONS
from dshfuzz.mutators import PERTURBATIONS, Inapplicable, Level, Mutant, apply_seeded, incident_weights
from dshfuzz.mutators._aimed import AIMED_FAMILIES, AIMS
from dshfuzz.mutators._perturb import Perturbation

pytestmark = pytest.mark.official

_LEGACY = "contains malformed pre-react-loop"
EXPECTED: dict[str, dict[str, str]] = {
    "retry": {
        "retry-over-max": "retry exceeds maxRetries",
        "always-with-max": "always mode must omit maxRetries",
        "delay-negative": "delayMs must be non-negative",
        "delay-past-timer": "delayMs exceeds the timer range",
        "retry-zero": "retry must be positive",
        "delay-not-number": "delayMs must be a finite number",
        "status-out-of-range": "status must be 100 through 599",
        "retry-after-zero": "providerRetryAfterMs must be positive",
        "chain-skips": "llm/retry must use retry 1",
        "chain-changes-id": "must preserve retryId across one policy chain",
        "id-across-chains": "reuses retryId",
        "started-elsewhere": "does not match its scheduled turn and step",
        "started-twice": "repeats one scheduled attempt",
    },
    "schedule": {
        "every-under-five-minutes": "everySeconds must be at least 300",
        "unknown-kind": "has unknown schedule kind",
        "id-whitespace": "must not have surrounding whitespace",
        "instant-without-millis": "must be a canonical UTC instant",
        "dispatch-instant": "acceptedAt must be a canonical UTC instant",
        "blocked-reason-unblocked": "blockedReason requires blocked phase",
        "legacy-goal-message": "legacy goal (source round must be 0|source does not match|content does not match)",
        "plan-mode-not-boolean": "active must be a boolean",
        "hook-duration-negative": "durationMs must be non-negative",
        "hook-duration-not-number": "durationMs must be a finite number",
    },
    "subagent": {
        "unpaired-agent-route": "agentProvider and agentModel must be paired",
        "empty-tool-filter": "toolFilter requires allow or deny",
        "repeated-route": "repeats route",
        "no-routes": "allowedModels must be non-empty",
        "search-two-blocks": "content must contain one text block",
        "search-no-message": "messages must contain one user message",
        "search-no-tool": "tools must contain one web search tool",
        "sections-not-snapshot": "sections require snapshot form",
        "summary-not-notice": "summary requires notice form",
    },
    "reference": {
        "counts-inconsistent": "message counts are inconsistent",
        "truncated-disagrees": "truncated disagrees with omitted content",
        "input-index": "inputIndex must match reference position",
        "repeated-session": "repeats sessionId",
        "no-references": "references must be non-empty",
        "assistant-source": "must be model source",
        "tool-result-shape": "must be tool source|must contain exactly one tool-result block",
        "title-repeats-seq": "messageSeqs repeats seq 0",
        "title-request-no-seqs": "messageSeqs must be non-empty",
    },
    "command": {
        "run-twice": "command/run repeats commandId",
        "done-without-run": "has no prior command/run",
        "done-error-with-source": "has invalid sourceEventSeq",
        "start-overlaps": "compaction/start overlaps an open compaction",
        "end-changes-turn": "compaction/end changes its owner turn",
        "summary-twice": "compaction/summary repeats",
        "end-without-summary": "successful compaction/end requires one summary",
        "turn-crosses-compaction": "turn/start crosses an open compaction",
        "stream-call-without-output": "llmStreamCall requires rawOutput",
        "prune-range-ends": "shadowedRange must match shadowedSeqs endpoints",
        "prune-off-surface": "shadowedSeqs do not name an exact current surface span",
        "prune-claim-elsewhere": "has no adjacent shadow price",
    },
    "dispatch": {
        "outside-turn": "tool/code-dispatch-start is outside an open turn",
        "changes-root": "tool/code-dispatch changes its rootCallId",
        "foreign-parent": "parentCallId does not belong to rootCallId",
        "start-twice": "tool/code-dispatch-start repeats subCallId",
        "no-start": "tool/code-dispatch has no unique start",
        "unlike-start": "tool/code-dispatch does not match its start",
        "header-outside-turn": "request/header is outside an open turn",
        "context-outside-turn": "request/context is outside an open turn",
        "turn-end-over-step": "crosses an open step",
        "turn-end-zero": f"{_LEGACY} turn/end",
        "legacy-error-failure": f"{_LEGACY} turn/end",
        "legacy-error-message": f"{_LEGACY} turn/end",
        "legacy-turn-start": f"{_LEGACY} turn/start",
    },
    "loader": {
        "mode-set": "unsupported legacy mode/set event",
        "steering-not-object": f"{_LEGACY} steering/message",
        "steering-shape": f"{_LEGACY} steering/message",
        "cwd-empty": "cwd",
        "retired-policy": "retired policy baseline fields",
        "cwd-array": "cwd",
        "cwd-number": "cwd",
        "id-empty": "identity mismatch",
        "id-object": "id",
        "adapter-defaults": "has invalid adapterDefaults",
        "message-prefix": "malformed request/header messagePrefix",
        "replace-two-nodes": "must rewrite exactly one current node",
        "replace-user-node": "must target a current tool/result",
        "repeated-advertised-call": "repeats advertised tool call",
        "title-request-text": "session/title-llm-request messages",
        "foreign-delivery-marker": "current-generation delivery marker names the wrong Session",
        "type-not-string": "7",
    },
    "turns": {
        "end-text-missing": r"Cannot read properties of undefined \(reading 'length'\)",
        "end-call-unnamed": r"Cannot read properties of undefined \(reading 'length'\)",
        "end-result-not-list": "is not iterable",
        "end-result-null-block": r"Cannot read properties of null \(reading 'type'\)",
        "end-result-nested": r"Cannot read properties of undefined \(reading 'length'\)",
        "finish-blocks-null": r"Cannot read properties of null \(reading 'length'\)",
        "finish-blocks-null-descending": r"Cannot read properties of null \(reading 'length'\)",
        "second-finish-blocks-null": r"Cannot read properties of null \(reading 'length'\)",
        "incomplete-block": 'cannot assemble incomplete block of type "image"',
        "cites-earlier-step": r"source seq \d+ belongs to another step",
        "turn-start-over-chunk": r"turn/start \d+ while turn \d+ is still open",
        "crowded-refusals": "request/context is outside an open turn",
        "crowded-waiting-citation": r"source seq \d+ is not assistant/chunk",
        "sources-own-then-negative": "sourceEventSeqs must densely contain non-negative safe integers",
        "sources-off-surface": "is not surface-eligible and cannot carry sourceEventSeqs",
        "replace-without-sources": "sourceEventSeqs must include every shadowed surface node",
        "rewrite-message-text": r"Cannot read properties of undefined \(reading '0'\)",
        "rewrite-content-null": r"Cannot read properties of null \(reading '0'\)",
        "type-number-off-seq": "not contiguous|seq gap",
        "legacy-flat-content": "message content must be an array",
        "legacy-flat-call-id": "message must have tool source",
    },
    "released": {
        "error-no-step": "error step must be a non-negative safe integer",
        "error-failure-extra": 'failure has unexpected member "retryable"',
        "error-failure-empty": "reason error message must be a non-empty string",
        "error-failure-string": "failure must be a JSON object",
        "error-no-message": 'reason lacks required member "message"',
        "error-message-empty": "reason error message must be a non-empty string",
        "reason-string": "reason must be a JSON object",
        "aborted-extra": 'reason has unexpected member "note"',
        "aborted-cause-extra": 'reason has unexpected member "note"',
        "aborted-cause-string": "reason abort cause must be a JSON object",
        "error-extra": 'reason has unexpected member "step"',
        "error-no-code": 'reason error lacks required member "code"',
        "error-status": "status must be 100 through 599",
        "error-retry-after": "providerRetryAfterMs must be positive",
        "error-request-id": "requestId must be a non-empty string",
        "prune-range-array": "shadowedRange must be a JSON object",
        "splice-null": "inserted message must be a JSON object",
        "negative-seed": "seedLength must be a non-negative safe integer",
        "exit-code-fraction": "exitCode must be a safe integer",
        "image-original-height": "attachment original height must be positive",
        "instant-day-overflow": "scheduledAt must be a canonical UTC instant",
        "splice-outcome": "outcome must be one of canceled",
        "call-arguments-object": "arguments must be a string",
        "turn-start-null": r"turn/start \d+ data must be a JSON object",
        "steering-message": "user/message requires a surfaceOp marker",
        "steering-content": "user/message requires a surfaceOp marker",
        "steering-append": 'session event "steering/message" is not surface-eligible and cannot carry surfaceOp',
        "retry-without-id": "retry exceeds maxRetries",
        "compaction-without-ids": "successful compaction/end requires one summary",
        "compact-message-without-id": "successful compaction/end requires one summary",
        "legacy-user-message": "lacks an identified message",
        "legacy-assistant-message": "lacks an identified message",
        "hook-claude-dialect": "dialect must be one of claude-code, codex",
        "many-null-steps": r"step/end at seq \d+ has no matching step/start event",
        "many-null-steps-last": r"step/end at seq \d+ has no matching step/start event",
        "many-null-steps-waiting": r"Cannot read properties of undefined \(reading 'type'\)",
        "cite-past-end": r"Cannot read properties of undefined \(reading 'type'\)",
    },
    "storage": {
        "header-extra-member": 'released v0 physical header has unexpected member "title"',
        "header-nested-past-limit": 'released v0 physical header has unexpected member "title"',
        "retired-hook-dialect": "dialect must be one of",
        "legacy-user-message": "message has invalid source",
        "legacy-assistant-message": "message must have model source",
        "legacy-tool-result": "message must have tool source",
        "legacy-upgraded-message": "lacks an identified message",
        "unpriced-tool-call": 'lacks required member "arguments"',
        "header-system-null": "header system must be",
        "header-tools-string": "header tools must be|every is not a function",
        "request-header-data-null": "request/header \\d+ data must be a JSON object",
        "gap-after-last-turn": "seq gap|not contiguous",
        "row-seq0-negative": "text-chunks row \\d+ seq0 must be a non-negative safe integer",
        "row-data-not-object": "text-chunks row \\d+ data must be a JSON object",
        "row-data-array": "text-chunks row \\d+ data must be a JSON object",
        "row-id-not-string": "tool-call-chunks row \\d+ id and optional name must be strings",
        "row-turn-not-number": "reasoning-chunks row \\d+ turn must be a non-negative safe integer",
        "row-dt-not-integers": "text-chunks row \\d+ dt member must be a safe integer",
        "big-lossless-numbers": 'unknown historical event type "retrace/marker"',
    },
    "meter": {
        "tools-null": "header tools must be an array",
        "tools-kept": "header tools must be an array",
        "tools-dropped": "header tools must be an array",
        "tools-length-coerced": "header tools must be an array",
        "tools-after-anchor": "header (tools|stop) must be an array",
        "stop-not-array": "header stop must be an array",
        "legacy-message": "lacks an identified message",
        "legacy-message-bad-text": "text must be a string",
        "result-output-blocks": r"tool/result \d+ message content\[0\] content\[[01]\]",
        "result-beside-text": "text must be a string",
    },
    "migration": {
        "v1-marker-foreign": 'current-generation delivery marker names the wrong Session|unexpected member "sessionFormatVersion"',
        "legacy-compact-types": 'unknown to this harness and not marked ignorable|unknown required event type "compact/start"',
        "title-seqs-string": "messageSeqs must be an array|messageSeqs must cite earlier human user/message events",
        "title-seq-object": r"messageSeqs\[0\] must be a non-negative safe integer|messageSeqs must cite earlier human",
        "title-source-string": r"session/title \d+ source must be a JSON object",
        "title-cites-later": "must identify an earlier event|messageSeqs must cite earlier human user/message events",
        "call-without-id": r'content\[\d+\] lacks required member "id"',
        "tool-result-error-string": r"tool/result \d+ error must be a JSON object",
        "command-id-array": "commandId must be a non-empty string|has no prior command/run",
        "lossy-tool-parameters": "not losslessly JSON-serializable",
        "lossy-unknown-block": "not losslessly JSON-serializable",
        "lossy-nested-block": "not losslessly JSON-serializable",
        "lossy-replay-state": "not losslessly JSON-serializable",
        "lossy-turn-end-reason": "not losslessly JSON-serializable",
        "lossy-unknown-source": "not losslessly JSON-serializable",
        "lossy-data": "not losslessly JSON-serializable",
        "lossy-content-element": "not losslessly JSON-serializable",
    },
}
"""Each variant's expected refusal: a regular expression some refusing layer's message matches."""

ACCEPTED_BY_EVERY_LAYER: dict[str, set[str]] = {
    # a cited tool-result block whose content is a string: the meter iterates its characters
    "turns": {"end-result-text"},
    # the migration's legacy forms it rewrites (V01:2090, 2037), which the loader upgrades too
    "released": {"turn-start-trigger", "message-prefix-array"},
    # a log cut inside a step after tool calls: the loader closes them with synthetic results
    "meter": {"crash-after-call", "crash-after-two-calls"},
    # the migration completes a compaction's or a retry's missing id (V01:1951-2018); a seed boundary
    # leaves a compaction open, which released allows
    "migration": {"compaction-without-ids", "checkpoint-without-id", "retry-without-id", "seed-leaves-compaction-open"},
}
"""Variants aimed at a checker branch with a valid rare form: every layer accepts their logs."""


ACCEPTED_IN_FORMAT: dict[str, dict[str, set[int]]] = {
    "migration": {"call-without-id": {1}},
}
"""Variants of :data:`EXPECTED` whose logs of these formats every layer accepts: a format-1 restore
validates no payload, and its unresolved-call check passes a first advert without an id
(V01:2513-2515); the format-0 payload check refuses the advert."""

def test_the_table_names_every_variant_and_every_family_is_a_campaign_stratum() -> None:
    named = {f: sorted({*EXPECTED.get(f, ()), *ACCEPTED_BY_EVERY_LAYER.get(f, ())}) for f in {*EXPECTED, *ACCEPTED_BY_EVERY_LAYER}}
    assert named == {f: sorted(v) for f, v in AIMS.items()}
    assert not any(set(EXPECTED.get(f, ())) & vs for f, vs in ACCEPTED_BY_EVERY_LAYER.items())
    for family, variants in ACCEPTED_IN_FORMAT.items():
        for variant, formats in variants.items():
            assert variant in EXPECTED[family] and formats < set(AIMED_FAMILIES[family])
    assert set(AIMED_FAMILIES) == set(AIMS)
    for family in AIMS:
        assert f"aimed-{family}" in CAMPAIGN_PERTURBATIONS and f"aimed-{family}" in PERTURBATIONS


@cache
def _logs(format_version: int) -> tuple[Any, ...]:
    return tuple(generate(40, seed=51 + format_version, turns=(1, 3), max_events=100, weights=incident_weights(),
                          format_version=format_version))


def _mutants(family: str, variant: str, format_version: int, most: int = 2) -> list[Mutant]:
    fn = AIMS[family][variant]
    pinned = Perturbation(f"aimed-{family}:{variant}", variant, Level.EVENT, lambda draft, data: fn(draft, data),
                          must_find=False)
    made: list[Mutant] = []
    for i, log in enumerate(_logs(format_version)):
        try:
            made.append(apply_seeded(pinned, log, i))
        except Inapplicable:
            continue
        if len(made) == most:
            break
    return made


@pytest.mark.parametrize(("family", "variant"), [(f, v) for f, vs in EXPECTED.items() for v in vs])
def test_each_aimed_variant_draws_its_refusal(official: Any, tmp_path: Path, family: str, variant: str) -> None:
    """Every mutant of the variant, in each format its family draws, is refused by some layer with
    the check's own message."""
    pattern = re.compile(EXPECTED[family][variant])
    accepted = ACCEPTED_IN_FORMAT.get(family, {}).get(variant, set())
    for format_version in AIMED_FAMILIES[family]:
        mutants = _mutants(family, variant, format_version)
        assert mutants, f"{family}:{variant} applied to none of the v{format_version} sample logs"
        for mutant in mutants:
            messages = _refusals(official, tmp_path, mutant, format_version)
            if format_version in accepted:
                assert not messages, f"{mutant.description} (v{format_version}): refused: {messages}"
                continue
            assert any(pattern.search(m) for m in messages.values()), (
                f"{mutant.description} (v{format_version}): no layer refused with /{pattern.pattern}/: {messages}"
            )


@pytest.mark.parametrize(("family", "variant"), [(f, v) for f, vs in ACCEPTED_BY_EVERY_LAYER.items() for v in sorted(vs)])
def test_each_valid_rare_form_is_accepted_by_every_layer(official: Any, tmp_path: Path, family: str, variant: str) -> None:
    """Every mutant of a variant aimed at a valid rare form, in each format its family draws, is
    accepted by every official layer."""
    for format_version in AIMED_FAMILIES[family]:
        mutants = _mutants(family, variant, format_version)
        assert mutants, f"{family}:{variant} applied to none of the v{format_version} sample logs"
        for mutant in mutants:
            refused = _refusals(official, tmp_path, mutant, format_version)
            assert not refused, f"{mutant.description} (v{format_version}): refused by {refused}"


def _refusals(official: Any, tmp_path: Path, mutant: Mutant, format_version: int) -> dict[str, str]:
    """The message of each layer that refuses ``mutant`` (of those that judge its format)."""
    path = tmp_path / f"mutant{mutant.suffix}"
    path.write_bytes(mutant.data)
    verdicts = official.check(path=path.resolve(), layers=official_layers_for(format_version))
    return {layer: v.error.message if v.error is not None else "refused" for layer, v in verdicts.items() if not v.ok}
