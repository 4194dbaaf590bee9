"""Migration pre-checks G1-G4: each fires on a minimal broken log and stays silent on its
near twin; G1 and G2 run on format-0 files only, G3 and G4 on format 0 and 1."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from agent_loop_logs import PROVIDER, Builder
from checker_logs import assert_fires_only_on_broken, build_twins, check, fired

from dshfuzz.checker import RuleId
from dshfuzz.model import dumps


def _descriptor(version: Any) -> Callable[[Builder], None]:
    return lambda b: b.push("subagent/descriptor", {"mode": "one-shot", "version": version, "provider": "deepseek-official"})


def _unknown(ignorable: bool) -> Callable[[Builder], None]:
    return lambda b: b.push("x-vendor/custom", {}, **({"ignorable": True} if ignorable else {}))


def _title(seqs: Any, kind: str = "provider") -> Callable[[Builder], None]:
    def build(b: Builder) -> None:
        cited = [s(b) if callable(s) else s for s in seqs] if isinstance(seqs, list) else seqs
        source = {"kind": kind, "provider": "deepseek-official"} if kind == "provider" else {"kind": kind}
        b.push("session/title", {"title": "t", "messageSeqs": cited, "source": source})
    return build


def _title_request(framed: Callable[[str], str]) -> Callable[[Builder], None]:
    """A session/title-llm-request citing the first user message, its framing text edited by ``framed``."""
    def build(b: Builder) -> None:
        first = _first_user(b)
        text = b.events[first]["data"]["content"][0]["text"]
        frame = "Generate the session title from this JSON array of human messages:\n" + dumps([{"seq": first, "text": text}])
        b.push("session/title-llm-request", {
            "titleProvider": "deepseek-official", "messageSeqs": [first],
            "route": {"provider": "deepseek-official", "model": "deepseek-v4-flash"},
            "system": "Write a short title for this session.",
            "messages": [{"id": "msg-title-1", "role": "user", "content": [{"type": "text", "text": framed(frame)}],
                          "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"}}],
            "maxTokens": 32})
    return build


def _first_user(b: Builder) -> int:
    return next(e["seq"] for e in b.events if e["type"] == "user/message")


def _first_assistant(b: Builder) -> int:
    return next(e["seq"] for e in b.events if e["type"] == "assistant/message")


CASES = [
    (RuleId.G1, "descriptor version 2", _descriptor(2), _descriptor(3)),
    (RuleId.G2, "unknown type even when ignorable", _unknown(True), lambda b: None),
    (RuleId.G3, "title citing an assistant message", _title([_first_assistant]), _title([_first_user])),
    (RuleId.G3, "user title with cited messages", _title([_first_user], kind="user"), _title([], kind="user")),
    (RuleId.G3, "title citing a future seq", _title([999]), _title([_first_user])),
    (RuleId.G3, "messageSeqs not an array", _title("4"), _title([_first_user])),
    (RuleId.G3, "a title request whose framing misquotes the cited message",
     _title_request(lambda frame: frame.replace("hello", "hullo")), _title_request(lambda frame: frame)),
]


def _later_title(b: Builder) -> None:
    """A provider title citing the human message of the turn after it."""
    _title([0])(b)
    title = b.events[-1]
    b.text_turn()
    title["data"]["messageSeqs"] = [max(e["seq"] for e in b.events if e["type"] == "user/message")]


V1_CASES = [
    (RuleId.G3, "v1 title citing an assistant message", _title([_first_assistant]), _title([_first_user])),
    (RuleId.G3, "v1 provider title citing nothing", _title([]), _title([_first_user])),
    (RuleId.G3, "v1 title request citing an assistant message",
     lambda b: (_title_request(lambda frame: frame)(b), b.events[-1]["data"].update(messageSeqs=[_first_assistant(b)])),
     _title_request(lambda frame: frame)),
]
"""Format-1 files: released restores them through the relation walk alone (no payload check)."""


def _relations_log() -> Builder:
    """A turn whose first attempt is retried once (llm/retry, llm/retry-started), then a
    compaction between turns over the whole surface."""
    b = Builder()
    b.open_step()
    b.push("llm/retry", {"retryId": "retry-1", "turn": b.turn, "step": b.step, "provider": PROVIDER, "mode": "normal",
                         "policyKey": "transient", "retry": 1, "maxRetries": 3, "delayMs": 100,
                         "failure": {"message": "overloaded", "code": "overloaded"}})
    b.push("llm/retry-started", {"retryId": "retry-1", "turn": b.turn, "step": b.step, "retry": 1})
    b.assistant([{"type": "text", "text": "hi"}])
    b.step_end()
    b.turn_end()
    b.compaction(b.surface[0], b.surface[-1])
    return b


def _edit(kind: str, **data: Any) -> Callable[[Builder], None]:
    """Update the data of the first ``kind`` event (a value ``DROP`` removes the member)."""
    def build(b: Builder) -> None:
        target = next(e["data"] for e in b.events if e["type"] == kind)
        target.update(data)
        for key in [k for k, v in target.items() if v is DROP]:
            del target[key]
    return build


DROP = object()


def _legacy_compaction(b: Builder) -> None:
    """No compactionId anywhere: the migration names the compaction after its start's seq."""
    for kind in ("compaction/start", "compaction/summary", "compaction/end"):
        _edit(kind, compactionId=DROP)(b)
    checkpoint = next(e for e in b.events if e["type"] == "user/message" and e["data"]["source"]["kind"] == "plugin")
    del checkpoint["data"]["source"]["compactionId"]


def _legacy_retry(b: Builder) -> None:
    """No retryId on the llm/retry: the migration names its chain after the retry's seq."""
    _edit("llm/retry", retryId=DROP)(b)
    seq = next(e["seq"] for e in b.events if e["type"] == "llm/retry")
    _edit("llm/retry-started", retryId=f"legacy-retry:{b.header['id']}:{seq}")(b)


G4_CASES = [
    (RuleId.G4, "llm/retry naming another step", _edit("llm/retry", step=2), _edit("llm/retry", step=1)),
    (RuleId.G4, "llm/retry naming another provider", _edit("llm/retry", provider="elsewhere"),
     _edit("llm/retry", provider=PROVIDER)),
    (RuleId.G4, "llm/retry starting its chain at retry 2", _edit("llm/retry", retry=2),
     _edit("llm/retry", retry=1)),
    (RuleId.G4, "llm/retry-started pairing no scheduled attempt", _edit("llm/retry-started", retry=2),
     _edit("llm/retry-started", retry=1)),
    (RuleId.G4, "compaction/end naming another compaction", _edit("compaction/end", compactionId="cmp-other"),
     lambda b: None),
    (RuleId.G4, "compaction/start claiming a closed turn", _edit("compaction/start", turn=1),
     _edit("compaction/start", turn=None)),
    (RuleId.G4, "a legacy retry (no retryId) naming another provider",
     lambda b: (_legacy_retry(b), _edit("llm/retry", provider="elsewhere")(b)), _legacy_retry),
    (RuleId.G4, "a legacy compaction (no compactionId) whose summary names another",
     lambda b: (_legacy_compaction(b), _edit("compaction/summary", compactionId="cmp-other")(b)), _legacy_compaction),
]
"""Format-0 logs: the released relation walk after the migration's legacy normalisation."""


def _text_turn(version: int = 0) -> Builder:
    b = Builder(version=version)
    b.text_turn()
    return b


def twins() -> list[tuple[RuleId, str, Builder, Builder]]:
    """Every format-0 case as built logs: (rule, why, broken, twin); the official conformance test reuses them."""
    return build_twins(CASES, _text_turn) + build_twins(G4_CASES, _relations_log)


def v1_twins() -> list[tuple[RuleId, str, Builder, Builder]]:
    """The format-1 cases, which only the released layer reads (the rc.8 layers refuse format 1)."""
    return build_twins(V1_CASES, lambda: _text_turn(1))


@pytest.mark.parametrize(("rule", "why", "broken", "twin"), twins() + v1_twins(),
                         ids=[f"{c[0]}-{c[1]}" for c in CASES + G4_CASES + V1_CASES])
def test_rule_fires_on_broken_log_and_not_on_its_twin(rule: RuleId, why: str, broken: Builder, twin: Builder) -> None:
    assert_fires_only_on_broken(rule, why, broken, twin)


@pytest.mark.parametrize("rule", [RuleId.G1, RuleId.G2])
def test_inventory_rules_are_errors_only_for_format_0(rule: RuleId) -> None:
    """The released migration refuses them in a format-0 file alone: the harness cannot migrate it."""
    b = Builder(version=1)
    b.text_turn()
    _descriptor(2)(b)
    _unknown(True)(b)
    assert rule not in fired(check(b.header, b.events))
    v0 = [f for f in check({**b.header, "version": 0}, b.events).findings if f.rule is rule]
    assert v0 and all(str(f.severity) == "error" for f in v0)


def test_g3_checks_a_later_cited_message_in_format_0_only() -> None:
    """The migration's payload check refuses a later seq; a format-1 restore accepts a later human message."""
    b = Builder(version=1)
    b.text_turn()
    _later_title(b)
    assert RuleId.G3 not in fired(check(b.header, b.events))
    v0 = [f for f in check({**b.header, "version": 0}, b.events).findings if f.rule is RuleId.G3]
    assert v0 and all(str(f.severity) == "error" for f in v0)
    assert "must identify an earlier event" in v0[0].message


def test_g4_refuses_a_compaction_checkpoint_with_no_compaction_record() -> None:
    """A log with no compaction or retry record still reaches G4 through a compact-plugin
    checkpoint: released asks for its owner (V01:2480) and finds none."""
    broken, twin = _text_turn(), _text_turn()
    for b in (broken, twin):
        b.compaction(b.surface[0], b.surface[-1])
    broken.events[:] = [e for e in broken.events if not e["type"].startswith("compaction/")]
    assert_fires_only_on_broken(RuleId.G4, "an orphan compaction checkpoint", broken, twin)
