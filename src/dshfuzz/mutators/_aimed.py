"""Aimed perturbations: one event (or a short run of them) written just outside one released
validator's or relation check's domain, inserted where the agent loop writes its kind.

The generic schema families (:mod:`._schema`) perturb whatever a drawn log holds, and the
event types whose validators draw the finest lines (retry policies, schedules, subagent
descriptors, compactions, code dispatches) are in a few logs in a hundred: a minute's
campaign perturbs each of their fields a handful of times at most. These families bring
the event with them instead: each variant writes a payload that is valid but for one
member, or a pair of events that is valid but for one relation, at a place of the drawn
log where the loop writes that kind (between turns, inside an open step, inside a turn
between its steps). So every variant refuses the log at one official check whatever log
it is drawn on, and the families are strata of their own so that each variant is drawn in
every campaign.

The families of :mod:`._aimed_checker` (``released``, ``turns``, ``storage``, ``meter``,
``migration``) aim at the built-in checker's own rarer branches instead, and :data:`AIMS`
holds both kinds; :mod:`._aimed_places` has the places and payload templates they share.

Like the schema families they declare no rule (``must_find=False``): the official layers
judge each log, and a checker must agree with each layer. Payload validators run on the
migration of a v0 log only (V01:1918), and the families mix payload and relation variants, so
they draw v0 logs (the relation checks of a v1 restore, V01:2270, are the same walk); the
``migration`` family, aimed at the checker's model of the migration and its relation walk, draws
both formats. Each variant's entry in :data:`AIMS` names the check it aims at (V01:LINE, SP, SPJ
or S for the other packages) or the checker branch.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from ._aimed_checker import CHECKER_AIMED_FAMILIES, CHECKER_AIMS
from ._aimed_places import (
    Aim, _at_gap, _at_turn, _between, _descriptor, _dispatch, _DROP, _FAILURE, _goal, _header, _hook,
    _in_step, _in_turn, _kind, _own_event, _put, _reference, _references, _request_header_member, _retries,
    _ROUTE, _schedule, _search, _seed_end, _settled, _splice, _turn_end_field, _user,
)
from ._base import Level
from ._draft import EventDraft, Inapplicable, copy_json
from ._perturb import perturbation
from ._select import choose, data_of, surface_at

__all__ = ["AIMS", "AIMED_FAMILIES", "aim"]


# --- the aims ------------------------------------------------------------------------------------


def _copy_out_of_turn(kind: str) -> Aim:
    """A copy of the log's own ``kind`` event (a request/header or request/context) between turns."""
    def edit(draft: EventDraft, data: Any) -> str:
        own = [j for j in draft.of_type(kind) if j >= _seed_end(draft)]
        j = choose(data, own, kind)
        copy = copy_json(draft.events[j])
        copy.pop("sourceEventSeqs", None)
        i = _between(draft, data)
        _put(draft, i, copy)
        return f"seq {i}: a copy of seq {j} ({kind}) between turns"
    return edit


def _open_step_at_turn_end(draft: EventDraft, data: Any) -> str:
    """The last step/end of a turn removed: the turn/end closes the turn over its open step (V01:2315)."""
    first = _seed_end(draft)
    ends = [i for i in draft.of_type("turn/end") if i > first + 1 and _kind(draft.events[i - 1]) == "step/end"]
    i = choose(data, ends, "turn/end right after a step/end")
    draft.remove(i - 1)
    return f"seq {i - 1}: the step/end before turn/end removed"


def _legacy_turn_start(draft: EventDraft, data: Any) -> str:
    """A legacy turn/start (with a trigger) whose turn is 0 (SP:572, V01:2090)."""
    starts = [i for i in draft.of_type("turn/start") if i >= _seed_end(draft)]
    i = choose(data, starts, "turn/start")
    kind = choose(data, ("", "user"), "trigger kind")
    draft.events[i]["data"] = {"turn": 0 if kind else data_of(draft.events[i]).get("turn"), "trigger": {"kind": kind}}
    return f"seq {i}: legacy turn/start {draft.events[i]['data']}"


def _compaction_span(draft: EventDraft, data: Any, twice: bool) -> str:
    """compaction/start, a summary of a current surface span, and (``twice``) the summary again, between turns."""
    i = _between(draft, data)
    nodes = [n for n in surface_at(draft, i) if type(n) is int]
    if not nodes:
        raise Inapplicable("an empty surface")
    a = data.draw(st.integers(0, len(nodes) - 1), label="span start")
    b = data.draw(st.integers(a, len(nodes) - 1), label="span end")
    span = nodes[a:b + 1]
    summary: dict[str, Any] = {"compactionId": "compaction-aimed", "summary": [{"type": "text", "text": "The earlier conversation."}],
               "shadowedRange": {"start": span[0], "end": span[-1]}, "shadowedSeqs": span, "shadowedTokenCount": 120,
               "provider": "deepseek-official", "model": "deepseek-v4-flash"}
    start: dict[str, Any] = {"compactionId": "compaction-aimed", "turn": None}
    events: list[tuple[str, dict[str, Any]]] = [("compaction/start", start), ("compaction/summary", summary)]
    if twice:
        events.append(("compaction/summary", copy.deepcopy(summary)))
    else:
        events.append(("compaction/end", {"compactionId": "compaction-aimed", "turn": 1}))
    _put(draft, i, *events)
    return f"seq {i}: {', '.join(t for t, _ in events)} over seqs {span} between turns"


def _prune(draft: EventDraft, data: Any, mismatch: bool) -> str:
    """compaction/prune in an open step: its range ends differ from its seqs (V01:1146), or it names seqs that are no
    current surface span (V01:2582)."""
    i, _turn, _step = _in_step(draft, data)
    nodes = set(surface_at(draft, i))
    if mismatch:
        seqs = sorted(nodes & set(range(i)))[:2]
        if len(seqs) < 2:
            raise Inapplicable("fewer than two surface nodes")
        rng = {"start": seqs[0], "end": seqs[0]}
    else:
        off = [s for s in range(i) if s not in nodes]
        s = choose(data, off, "seq off the surface")
        seqs, rng = [s], {"start": s, "end": s}
    _put(draft, i, ("compaction/prune", {"shadowedRange": rng, "shadowedSeqs": seqs, "shadowedTokenCount": 25}))
    return f"seq {i}: compaction/prune shadowedSeqs {seqs} range {rng}"


def _message_source(draft: EventDraft, data: Any, kind: str) -> str:
    """An assistant/message whose source is not the model's (V01:773), or a tool/result whose message has two
    result blocks or a non-tool source (V01:738, 774)."""
    own = [i for i in draft.of_type(kind) if i >= _seed_end(draft) and draft.events[i].get("surfaceOp") == "append"]
    i = choose(data, own, kind)
    message = data_of(draft.events[i]).get("message")
    if type(message) is not dict:
        raise Inapplicable("no message")
    if kind == "assistant/message":
        message["source"] = {"kind": "user"}
        return f"seq {i}: assistant/message source kind user"
    if data.draw(st.booleans(), label="two blocks"):
        if type(message.get("content")) is not list or not message["content"]:
            raise Inapplicable("no content")
        message["content"].append(copy_json(message["content"][0]))
        return f"seq {i}: tool/result message with its result block twice"
    message["source"] = {"kind": "user"}
    return f"seq {i}: tool/result message source kind user"


def _goal_message(draft: EventDraft, data: Any) -> str:
    """The legacy goal message (V01:745-769) with its round, its goal ref or its content off."""
    change = _goal()
    text = "<goal_state>" + json.dumps({k: change[k] for k in ("goal", "roundsStarted", "createdAt", "updatedAt")},
                                       separators=(",", ":")) + "</goal_state>"
    source = {"kind": "goal", "goalId": "goal-aimed", "revision": 1, "round": 0, "change": change}
    variant = choose(data, ("round", "goal", "content"), "legacy goal defect")
    if variant == "round":
        source["round"] = 1
    elif variant == "goal":
        source["goalId"] = "goal-other"
    else:
        text = "<goal_state>{}</goal_state>"
    i = _between(draft, data)
    _put(draft, i, _splice(_user(source, text)))
    return f"seq {i}: a legacy goal message, its {variant} off"


def _repeated_call(draft: EventDraft, data: Any) -> str:
    """An assistant/message advertising one tool call twice (V01:2339)."""
    def calls(e: dict[str, Any]) -> list[Any]:
        content = data_of(e).get("message", {}).get("content") if type(data_of(e).get("message")) is dict else None
        return [b for b in content if type(b) is dict and b.get("type") == "tool-call"] if type(content) is list else []
    i = _own_event(draft, data, "assistant/message", lambda e: bool(calls(e)))
    content = data_of(draft.events[i])["message"]["content"]
    block = calls(draft.events[i])[0]
    content.insert(content.index(block) + 1, copy.deepcopy(block))
    return f"seq {i}: assistant/message advertises {block.get('id')!r} twice"


def _tool_result_replace(draft: EventDraft, data: Any, two: bool) -> str:
    """A tool/result replacing two surface nodes (S:371) or one that is no tool/result (S:374), in an open turn."""
    j = _own_event(draft, data, "tool/result", lambda e: e.get("surfaceOp") == "append")
    i, _turn = _in_turn(draft, data)
    if i <= j:
        raise Inapplicable("the turn's end comes before the tool/result")
    nodes = [n for n in surface_at(draft, i) if type(n) is int]
    if two:
        k = choose(data, [k for k in range(len(nodes) - 1)], "two adjacent nodes")
        start, end = nodes[k], nodes[k + 1]
    else:
        users = [n for n in nodes if _kind(draft.events[n]) == "user/message"]
        start = end = choose(data, users, "a user/message node")
    event = {"type": "tool/result", "data": copy.deepcopy(data_of(draft.events[j])),
             "sourceEventSeqs": sorted({start, end}), "surfaceOp": {"op": "replace", "start": start, "end": end}}
    _put(draft, i, event)
    return f"seq {i}: tool/result replacing seqs {start}..{end} (a copy of seq {j}'s data)"


def _title_request(draft: EventDraft, data: Any) -> str:
    """A session/title-llm-request citing a human message with two request messages (V01:2565) or one whose text
    is not that message's (V01:2567)."""
    def human(e: dict[str, Any]) -> bool:
        source = data_of(e).get("source")
        return e.get("surfaceOp") == "append" and type(source) is dict and source.get("kind") == "user"
    j = _own_event(draft, data, "user/message", human)
    i = _between(draft, data)
    if i <= j:
        raise Inapplicable("no human message before the place")
    prompt = "Generate the session title from this JSON array of human messages:\n[]"
    message = {"id": "1e8bbf1b-6934-48ba-aead-466e6c5ae912", "role": "user", "content": [{"type": "text", "text": prompt}],
               "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"}}
    two = data.draw(st.booleans(), label="two messages")
    _put(draft, i, ("session/title-llm-request", {
        "titleProvider": "deepseek-official", "messageSeqs": [j], "route": dict(_ROUTE),
        "system": "Write a short title for this session.",
        "messages": [message, {**message, "id": "2e8bbf1b-6934-48ba-aead-466e6c5ae912"}] if two else [message],
        "maxTokens": 32}))
    return f"seq {i}: session/title-llm-request for seq {j} " + ("with two messages" if two else "whose text names no message")


def _type_not_string(draft: EventDraft, data: Any) -> str:
    """An event of the log's own part whose type is a number (V01:1524)."""
    i = choose(data, [i for i in draft.objects() if i >= _seed_end(draft)], "event")
    draft.events[i]["type"] = 7
    return f"seq {i}: type = 7"


def _prune_claim_elsewhere(draft: EventDraft, data: Any) -> str:
    """A compaction/prune moved to another current surface node while the tool/result replace after it
    still replaces the node it shadowed: the meter's armed claim covers another range (TM:139)."""
    places = []
    for i in draft.of_type("compaction/prune"):
        seqs, nxt = data_of(draft.events[i]).get("shadowedSeqs"), draft.events[i + 1] if i + 1 < len(draft.events) else None
        if type(seqs) is list and seqs and type(nxt) is dict and type(nxt.get("surfaceOp")) is dict:
            places.append(i)
    i = choose(data, places, "prune before its replace")
    d = data_of(draft.events[i])
    others = [n for n in surface_at(draft, i) if type(n) is int and n not in d["shadowedSeqs"]]
    other = choose(data, others, "another surface node")
    d["shadowedSeqs"], d["shadowedRange"] = [other], {"start": other, "end": other}
    return f"seq {i}: compaction/prune moved to seq {other}"


AIMS: dict[str, dict[str, Aim]] = {
    "retry": {
        # V01:382-386, 583, 587, 633, 635: the llm/retry payload
        "retry-over-max": _retries({"retry": 4}),
        "always-with-max": _retries({"mode": "always"}),
        "delay-negative": _retries({"delayMs": -1}),
        "delay-past-timer": _retries({"delayMs": 2147483648}),
        "retry-zero": _retries({"retry": 0}),
        "delay-not-number": _retries({"delayMs": "250"}),
        "status-out-of-range": _retries({"failure": {**_FAILURE, "status": 600}}),
        "retry-after-zero": _retries({"failure": {**_FAILURE, "providerRetryAfterMs": 0}}),
        # V01:2506-2508, 2416, 2418: retry chains and their starts
        "chain-skips": _retries({"retry": 2}),
        "chain-changes-id": _retries({}, {"retry": 2, "retryId": "retry-aimed-2"}),
        "id-across-chains": _retries({}, {"policyKey": "rate-limit"}),
        "started-elsewhere": _retries({}, started=({"step": lambda turn, step: step + 1},)),
        "started-twice": _retries({}, started=({}, {})),
    },
    "schedule": {
        # V01:1260-1271: schedule/change
        "every-under-five-minutes": _at_gap(("schedule/change", _schedule(everySeconds=299))),
        "unknown-kind": _at_gap(("schedule/change", _schedule(kind="cron"))),
        "id-whitespace": _at_gap(("schedule/change", _schedule(id=" sched-aimed"))),
        "instant-without-millis": _at_gap(("schedule/change", _schedule(scheduledAt="2025-12-29T17:01:34Z"))),
        "dispatch-instant": _at_gap(("schedule/change", {"version": 1, "operation": "dispatch", "id": "sched-aimed",
                                                         "acceptedAt": "2025-12-29 17:01:34.624Z"})),
        # V01:1213, 745-769: goals
        "blocked-reason-unblocked": _at_gap(("goal/change", _goal(blockedReason={"code": "x", "message": "y"}))),
        "legacy-goal-message": _goal_message,
        # V01:573, 371, 587: booleans and durations
        "plan-mode-not-boolean": _at_gap(("plan/mode", {"active": "yes"})),
        "hook-duration-negative": _at_turn(lambda turn: [("hook/result", _hook(turn, durationMs=-1))]),
        "hook-duration-not-number": _at_turn(lambda turn: [("hook/result", _hook(turn, durationMs="1"))]),
    },
    "subagent": {
        # V01:1309-1326: descriptors and model-selection policies
        "unpaired-agent-route": _at_gap(("subagent/descriptor", _descriptor(agentModel=_DROP))),
        "empty-tool-filter": _at_gap(("subagent/descriptor", _descriptor(toolFilter={}))),
        "repeated-route": _at_gap(("subagent/model-selection-policy", {"allowedModels": [_ROUTE, _ROUTE]})),
        "no-routes": _at_gap(("subagent/model-selection-policy", {"allowedModels": []})),
        # V01:1415-1426: web search request bodies
        "search-two-blocks": _at_turn(lambda turn: [("web/deepseek-search-llm-request", _search(messages=[
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]))]),
        "search-no-message": _at_turn(lambda turn: [("web/deepseek-search-llm-request", _search(messages=[]))]),
        "search-no-tool": _at_turn(lambda turn: [("web/deepseek-search-llm-request", _search(tools=[]))]),
        # V01:947, 949: plugin sources
        "sections-not-snapshot": _at_gap(_splice(_user({"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt",
                                                         "form": "notice", "summary": "s",
                                                         "sections": [{"name": "n", "text": "t"}]}))),
        "summary-not-notice": _at_gap(_splice(_user({"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt",
                                                     "form": "snapshot", "summary": "s",
                                                     "sections": [{"name": "n", "text": "t"}]}))),
    },
    "reference": {
        # V01:990-997: session-reference sources
        "counts-inconsistent": _at_gap(_splice(_user(_references(_reference(retainedMessages=5))))),
        "truncated-disagrees": _at_gap(_splice(_user(_references(_reference(truncated=True))))),
        "input-index": _at_gap(_splice(_user(_references(_reference(inputIndex=1))))),
        "repeated-session": _at_gap(_splice(_user(_references(_reference(), _reference(inputIndex=1))))),
        "no-references": _at_gap(_splice(_user(_references()))),
        # V01:738, 773, 774: a message's source and blocks for its role
        "assistant-source": lambda d, x: _message_source(d, x, "assistant/message"),
        "tool-result-shape": lambda d, x: _message_source(d, x, "tool/result"),
        # V01:617, 620: seq lists
        "title-repeats-seq": _at_gap(("session/title", {"title": "t", "messageSeqs": [0, 0], "source": {"kind": "user"}})),
        "title-request-no-seqs": _at_gap(("session/title-llm-request", {
            "titleProvider": "deepseek-official", "messageSeqs": [], "route": _ROUTE, "system": "Write a short title.",
            "messages": [], "maxTokens": 32})),
    },
    "command": {
        # V01:2428-2438: commands
        "run-twice": _at_gap(("command/run", {"commandId": "cmd-aimed", "name": "model", "source": {"kind": "user"}}),
                             ("command/run", {"commandId": "cmd-aimed", "name": "model", "source": {"kind": "user"}})),
        "done-without-run": _at_gap(("command/done", {"commandId": "cmd-aimed", "kind": "success"})),
        "done-error-with-source": _at_gap(
            ("command/run", {"commandId": "cmd-aimed", "name": "title", "source": {"kind": "user"}}),
            ("command/done", {"commandId": "cmd-aimed", "kind": "error", "sourceEventSeq": 0})),
        # V01:2448-2472, 2290, 339: compactions
        "start-overlaps": _at_gap(("compaction/start", {"compactionId": "compaction-aimed", "turn": None}),
                                  ("compaction/start", {"compactionId": "compaction-aimed-2", "turn": None})),
        "end-changes-turn": lambda d, x: _compaction_span(d, x, twice=False),
        "summary-twice": lambda d, x: _compaction_span(d, x, twice=True),
        "end-without-summary": _at_gap(("compaction/start", {"compactionId": "compaction-aimed", "turn": None}),
                                       ("compaction/end", {"compactionId": "compaction-aimed", "turn": None})),
        "turn-crosses-compaction": _at_gap(("compaction/start", {"compactionId": "compaction-aimed", "turn": None}),
                                           last=False),
        "stream-call-without-output": _at_gap(("compaction/start", {"compactionId": "compaction-aimed", "turn": None}),
                                              ("compaction/summary", {
                                                  "compactionId": "compaction-aimed", "llmStreamCall": True,
                                                  "summary": [{"type": "text", "text": "s"}],
                                                  "shadowedRange": {"start": 0, "end": 0}, "shadowedSeqs": [0],
                                                  "shadowedTokenCount": 1, "provider": "deepseek-official",
                                                  "model": "deepseek-v4-flash"})),
        "prune-range-ends": lambda d, x: _prune(d, x, mismatch=True),
        "prune-off-surface": lambda d, x: _prune(d, x, mismatch=False),
        # TM:139: the meter's shadow price
        "prune-claim-elsewhere": _prune_claim_elsewhere,
    },
    "dispatch": {
        # V01:2378-2397: programmatic tool-call dispatches
        "outside-turn": _at_gap(("tool/code-dispatch-start", _dispatch("call_aimed", "call_aimed", "call_aimed.1"))),
        "changes-root": _at_turn(lambda turn: [
            ("tool/code-dispatch-start", _dispatch("call_aimed", "call_aimed", "call_aimed.1")),
            ("tool/code-dispatch", _settled(_dispatch("call_other", "call_other", "call_aimed.1")))]),
        "foreign-parent": _at_turn(lambda turn: [
            ("tool/code-dispatch-start", _dispatch("call_aimed", "call_other", "call_aimed.1"))]),
        "start-twice": _at_turn(lambda turn: [
            ("tool/code-dispatch-start", _dispatch("call_aimed", "call_aimed", "call_aimed.1")),
            ("tool/code-dispatch-start", _dispatch("call_aimed", "call_aimed", "call_aimed.1"))]),
        "no-start": _at_turn(lambda turn: [
            ("tool/code-dispatch", _settled(_dispatch("call_aimed", "call_aimed", "call_aimed.1")))]),
        "unlike-start": _at_turn(lambda turn: [
            ("tool/code-dispatch-start", _dispatch("call_aimed", "call_aimed", "call_aimed.1")),
            ("tool/code-dispatch", _settled(_dispatch("call_aimed", "call_aimed", "call_aimed.1", name="write")))]),
        # V01:2370, 2374, 2315, 2100, 2090, 2155, 2166: turns
        "header-outside-turn": _copy_out_of_turn("request/header"),
        "context-outside-turn": _copy_out_of_turn("request/context"),
        "turn-end-over-step": _open_step_at_turn_end,
        "turn-end-zero": _turn_end_field(lambda d: {**d, "turn": 0}, "turn 0"),
        "legacy-error-failure": _turn_end_field(
            lambda d: {"turn": d["turn"], "reason": {"kind": "error", "step": 1, "failure": {"message": 1, "code": "E"}}},
            "legacy error reason, failure message a number"),
        "legacy-error-message": _turn_end_field(
            lambda d: {"turn": d["turn"], "reason": {"kind": "error", "step": 1, "message": "m", "code": 5}},
            "legacy error reason, code a number"),
        "legacy-turn-start": _legacy_turn_start,
    },
    "loader": {
        # SP:505, 543, 554: the v0 loader's legacy records
        "mode-set": _at_gap(("mode/set", {"mode": "plan"})),
        "steering-not-object": _at_turn(lambda turn: [("steering/message", "steer")]),  # type: ignore[list-item]
        "steering-shape": _at_turn(lambda turn: [("steering/message", {"turn": turn})]),
        # SPJ:107, 56, 1352, 1354; SP:1130; S:1118: the header
        "cwd-empty": _header("cwd", "", "''"),
        "retired-policy": _header("approvalPolicy", "on-request", "'on-request'"),
        "cwd-array": _header("cwd", ["x"], "['x']"),
        "cwd-number": _header("cwd", 5, "5"),
        "id-empty": _header("id", "", "''"),
        "id-object": _header("id", {"id": "x"}, "an object"),
        # S:1241, V01:2037: request headers
        "adapter-defaults": _request_header_member("adapterDefaults", 5),
        "message-prefix": _request_header_member("messagePrefix", "x"),
        # S:371, 374: tool/result surface replacements
        "replace-two-nodes": lambda d, x: _tool_result_replace(d, x, two=True),
        "replace-user-node": lambda d, x: _tool_result_replace(d, x, two=False),
        # V01:2339, 2565, 1949, 1524
        "repeated-advertised-call": _repeated_call,
        "title-request-text": _title_request,
        "foreign-delivery-marker": _at_gap({"type": "session-log-deepseek/delivery-accepted",
                                             "data": {"sessionId": "7b95d36a-9f8e-47ab-8f66-7a71e6637f9e",
                                                      "throughSeq": 0}, "ignorable": True}),
        "type-not-string": _type_not_string,
    },
    **CHECKER_AIMS,
}
"""The aimed families and their variants (see the module docstring)."""

AIMED_FAMILIES: dict[str, tuple[int, ...]] = {
    "retry": (0,), "schedule": (0,), "subagent": (0,), "reference": (0,), "command": (0,), "dispatch": (0,),
    "loader": (0,), **CHECKER_AIMED_FAMILIES,
}
"""Each family's format versions: payload checks run on a v0 log's migration only (a v1 log would
reach a payload variant's relation check instead, or none). The migration family draws both: its
checks (the relation walk, title sources, where released reads a lossy number) differ by format."""


def aim(family: str) -> Aim:
    """The edit of the ``aimed-<family>`` perturbation: a drawn variant of ``AIMS[family]``."""
    variants = AIMS[family]

    def edit(draft: EventDraft, data: Any) -> str:
        name = data.draw(st.sampled_from(sorted(variants)), label="variant")
        return f"{name}: {variants[name](draft, data)}"

    edit.__doc__ = (f"Draws a variant of ``AIMS[{family!r}]`` and applies it to the drawn log: each variant inserts "
                    "its event(s) where the loop writes that kind (or edits the log's own event or header) so that "
                    ":class:`Inapplicable` only follows from a log without such a place. Deterministic given the draws.")
    return edit


for _family, _variants in AIMS.items():
    perturbation(
        f"aimed-{_family}",
        f"one event, a pair or a header member written just outside one official check's domain, or a rare "
        f"form a checker branch reads ({_family}): "
        + ", ".join(sorted(_variants)),
        Level.EVENT,
        must_find=False,
        formats=AIMED_FAMILIES[_family],
    )(aim(_family))
