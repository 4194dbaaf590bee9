"""Two values the checker once read unlike JavaScript, judged by the official layers.

- ``assertToolResultRewrite`` (S:369-396) compares masked copies built with object spread and
  indexing: a string or array first entry spreads into index keys, and a string content is
  indexed (its first character) where any other non-null content reads as undefined. The
  checker took every non-object first entry as ``{}`` and every non-array content as a throw,
  so it missed the fold's refusal of two rewrites and refused two the fold accepts (S7).
- The token meter's ``estimateContent`` (TM:23-38) iterates a tool-result block's content with
  ``for...of``: a string is iterable (its characters are priced as unknown blocks). The checker
  took every non-array content as not iterable and refused a cited block-end the meter prices (T2).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dshfuzz.checker import RuleId, check_path
from dshfuzz.generators import generate
from dshfuzz.harness._judge import official_layers_for
from dshfuzz.mutators import Inapplicable, Level, apply_seeded, incident_weights
from dshfuzz.mutators._draft import EventDraft, copy_json
from dshfuzz.mutators._perturb import Perturbation
from dshfuzz.mutators._select import data_of, surface_at

pytestmark = pytest.mark.official


@cache
def _logs() -> tuple[Any, ...]:
    return tuple(generate(20, seed=51, turns=(1, 3), max_events=100, weights=incident_weights(), format_version=0))


def _mutant(tmp_path: Path, name: str, edit: Callable[[EventDraft], None]) -> Path:
    pinned = Perturbation(name, name, Level.EVENT, lambda draft, data: edit(draft) or name, must_find=False)
    for i, log in enumerate(_logs()):
        try:
            mutant = apply_seeded(pinned, log, i)
        except Inapplicable:
            continue
        path = tmp_path / f"{name}{mutant.suffix}"
        path.write_bytes(mutant.data)
        return path
    raise AssertionError(f"{name} applied to no sample log")


def _rewrite(original: Any, replacement: Any) -> Callable[[EventDraft], None]:
    """Before the last turn/end, a tool/result replacing the last current tool/result node with a
    copy of its data; the node's message content set to ``original``, the copy's to ``replacement``."""
    def edit(draft: EventDraft) -> None:
        ends = [i for i, e in enumerate(draft.events) if type(e) is dict and e.get("type") == "turn/end"]
        if not ends:
            raise Inapplicable("no turn/end")
        at = ends[-1]
        nodes = [n for n in surface_at(draft, at) if type(n) is int and draft.events[n].get("type") == "tool/result"
                 and draft.events[n].get("surfaceOp") == "append"]
        if not nodes:
            raise Inapplicable("no tool/result node")
        node = nodes[-1]
        data_of(draft.events[node])["message"]["content"] = copy_json(original)
        data = copy_json(data_of(draft.events[node]))
        data["message"]["content"] = copy_json(replacement)
        draft.insert(at, {"type": "tool/result", "time": draft.events[at - 1]["time"], "data": data,
                          "sourceEventSeqs": [node], "surfaceOp": {"op": "replace", "start": node, "end": node}})
    return edit


_REWRITES = {
    "string-entries-differ": (["ab"], ["cd"]),
    "array-entries-differ": ([["a"]], [["b"]]),
    "string-contents-share-first-character": ("ab", "ac"),
    "number-content-and-bare-block": ([{"content": [{"type": "text", "text": "x"}]}], 5),
}


@pytest.mark.parametrize("name", sorted(_REWRITES))
def test_the_rewrite_comparison_refuses_exactly_where_the_fold_does(official: Any, tmp_path: Path, name: str) -> None:
    path = _mutant(tmp_path, name, _rewrite(*_REWRITES[name]))
    fold = official.check(path=path.resolve(), layers=official_layers_for(0))["fold"]
    fold_refuses = not fold.ok and "may change only content" in (fold.error.message if fold.error else "")
    assert fold.ok or fold_refuses, fold.error
    s7 = [f for f in check_path(path).findings if f.rule is RuleId.S7]
    assert bool(s7) == fold_refuses, (name, fold.error, [f.message for f in s7])


def _cited_tool_result_end(content: Any) -> Callable[[EventDraft], None]:
    """A cited block-end whose block is a tool-result with ``content``."""
    def edit(draft: EventDraft) -> None:
        for event in draft.events:
            sources = event.get("sourceEventSeqs") if type(event) is dict and event.get("type") == "assistant/message" else None
            for s in sources if type(sources) is list else ():
                chunk = data_of(draft.events[s]).get("chunk")
                if type(chunk) is dict and chunk.get("type") == "block-end":
                    chunk["block"] = {"type": "tool-result", "toolCallId": "call_x", "content": copy_json(content),
                                      "isError": False}
                    return
        raise Inapplicable("no cited block-end")
    return edit


@pytest.mark.parametrize(("content", "iterable"), [("ok", True), ("", True), (5, False), ({"a": 1}, False)])
def test_a_cited_tool_result_content_is_iterated_as_the_meter_does(
    official: Any, tmp_path: Path, content: Any, iterable: bool
) -> None:
    path = _mutant(tmp_path, "cited-end", _cited_tool_result_end(content))
    meter = official.check(path=path.resolve(), layers=official_layers_for(0))["meter"]
    assert meter.ok is iterable, meter.error
    t2 = [f for f in check_path(path).findings if f.rule is RuleId.T2]
    assert bool(t2) is not iterable, [f.message for f in t2]
