"""E6 on the elements of a message's content: each is an object with a non-empty string ``type``.

``assertMessageEventShape`` (S:1246-1270) asks only that a message's content be an array, so
seed, invariants and the loader's shape check read past an element that is ``null``, a scalar,
an array, or an object without a usable ``type``. Other official readers do not:

- the released v0->v1 migration refuses every such element of a ``user/message`` or an
  ``assistant/message`` ("content[i] must be a JSON object", "content[i] type must be a
  non-empty string");
- a ``null`` element crashes every reader that asks an element for its ``type``: the token
  meter (whether or not the message is still on the surface), the request serializer (for a
  message on the final surface), and, for an ``assistant/message``, the loader's validation
  of the restored session (TypeError: Cannot read properties of null).

A text or reasoning block whose ``text`` is not a string is refused by released ("content[i] text
must be a string", or "lacks required member") and by the token meter, which measures the text's
length (a TypeError on null or nothing, a NaN token count on a number or an object).

Format 1 is restored without the migration's payload validation, and the loader does not read it,
so there only what the token meter refuses is reported: a null element, or a text that is not a
string; released's restore reads an assistant message's block types too, and a null element there
is a TypeError. Each is an error: nothing upgrades a format-1 message before those readers meet it,
and a warning never answers for a refusal.

A ``tool/result`` must hold exactly one tool-result block (the shape check itself, E6 in
:mod:`._persistence`), and the elements inside that block are P4's, so this walk reads user and
assistant messages only. A legacy pre-identity message is read as the loader upgrades it, since
its elements are carried over unchanged; a message the shape check already refuses for another
reason is left to that finding. Each message gets one finding, for its first bad element, as the
migration reports the first.

The walk keeps the findings of the bad messages only, and decides in ``finish()``, once the
wire's surface fold has published the final surface, whether the serializer reaches them:
this module is imported after :mod:`._wire`, so its walk finishes after that fold.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.contracts.rules import RuleId as R
from dshfuzz.model import MISSING, Event

from ._context import CheckContext
from ._finding import Finding
from ._persistence import _legacy_upgrade, message_shape_error
from ._run import rule_walk
from ._wire import FINAL_SURFACE, surface_indices

__all__ = ["ContentElements", "content_element_defect"]

_KINDS = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}


def content_element_defect(content: Any) -> tuple[int, str, bool] | None:
    """``(position, why, meter_refuses)`` of the first element of ``content`` that is not an object
    with a non-empty string ``type``, or a text or reasoning block whose ``text`` is not a string;
    ``None`` when there is none (also when ``content`` is not a list). ``meter_refuses``: the token
    meter refuses the element too (a null element, or a text it cannot measure)."""
    if content.__class__ is not list:
        return None
    for k, element in enumerate(content):
        if element.__class__ is dict:
            kind = element.get("type", MISSING)
            if kind.__class__ is str and kind:
                text = element.get("text", MISSING)
                if (kind == "text" or kind == "reasoning") and text.__class__ is not str:
                    # the meter prices the text's length: an array's is a number, the rest throw or
                    # price NaN, which its projection schema refuses (TM estimateContent)
                    return k, f"text must be a string (got {_kind(text)})", text.__class__ is not list
                continue
            return k, "type must be a non-empty string", False
        return k, f"must be a JSON object (got {_kind(element)})", element is None
    return None


def _kind(value: Any) -> str:
    return "nothing" if value is MISSING else _KINDS.get(value.__class__, "an object")


@rule_walk(R.E6, types=("user/message", "assistant/message"), reads=(FINAL_SURFACE,))
class ContentElements:
    """E6 for a content element that is not a typed object (see the module docstring).
    State: one pending finding per message with a bad element, and its log position."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.legacy = ctx.version == 0
        self.found: list[tuple[int, Finding, bool, bool, bool]] = []

    def visit(self, index: int, ev: Event) -> None:
        raw = ev.raw
        if raw.__class__ is not dict:
            return None
        t = raw.get("type")
        data = raw.get("data", MISSING)
        # a message without a bad element finds nothing whatever its shape (a legacy message's
        # upgrade carries its content over unchanged), so only a message with one has its shape read
        message = data if t == "user/message" or data.__class__ is not dict else data.get("message")
        if message.__class__ is dict and content_element_defect(message.get("content")) is None:
            return None
        if message_shape_error(t, data) is not None:
            upgraded = _legacy_upgrade(t, data) if self.legacy else None
            if upgraded is None or message_shape_error(t, upgraded) is not None:
                return None  # the shape check's own finding covers the message
            data = upgraded
        message = data if t == "user/message" else data.get("message")
        defect = content_element_defect(message.get("content"))
        if defect is None:
            return None
        k, why, null = defect
        if not (self.legacy or null):
            return None  # format 1: only the token meter reads the element (released restores it as it is)
        where = "content" if t == "user/message" else "message content"
        finding = self.ctx.finding(
            R.E6,
            f"{t} {where}[{k}] {why}",
            event=ev,
            context={"element": k},
        )
        element_null = why.startswith("must be a JSON object (got null")
        self.found.append((index, finding, null, t == "assistant/message", element_null))
        return None

    def finish(self) -> list[Finding] | None:
        if not self.found:
            return None
        visible = set(surface_indices(self.ctx))
        out = []
        for index, finding, null, assistant, element_null in self.found:
            layers: list[L] = []
            if null:
                if assistant and element_null and self.legacy:
                    layers.append(L.LOAD)
                layers.append(L.METER)
            if self.legacy or (assistant and element_null):  # released's v1 restore asks a block for its type
                layers.append(L.RELEASED)
            if element_null and self.legacy and index in visible:  # the serializer reads format 0 only
                layers.append(L.WIRE)
            out.append(replace(finding, refused_by=tuple(layers)))
        return out
