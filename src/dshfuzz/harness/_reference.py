"""The reference oracle as a judge: which official layer each failing model stands for.

Each pure-Python model of :mod:`dshfuzz.oracle` mirrors one official layer, so a
model's violation is evidence that layer refuses — independent evidence, written
to be believed, that a campaign can use with or without Node. The wire model
speaks for two moments: the request serialiser refusing to build the request
(``wire``) and the provider refusing the request it was sent (``provider``).
"""

from __future__ import annotations

from typing import Any

from dshfuzz.contracts.js import number_key
from dshfuzz.contracts.layers import OfficialLayer as L

__all__ = ["MODEL_LAYERS", "judges", "loader_closers", "reference_refusals"]

MODEL_LAYERS: dict[str, str] = {
    "fold_surface": str(L.FOLD),
    "check_enclosure": str(L.INVARIANTS),
    "check_meter": str(L.METER),
    "replay_inbox": str(L.INBOX),
    "check_lifecycle": str(L.RELEASED),
}
"""Reference model -> the official layer (registry name) it stands for."""


def judges(header: Any, format_version: Any, events: list[Any] | None = None) -> bool:
    """Whether the reference models speak for this log: format v0, with an object header, and
    (given its ``events``) no message event in a pre-identity shape.

    The models judge logical v0 events as stored; framing and byte-level defects, logs of later
    formats, and the legacy message shapes the loader and the released migration upgrade on
    read (SP:665-722: the released model would refuse what released upgrades and accepts) are
    the official layers' to judge."""
    return format_version == 0 and isinstance(header, dict) and not (
        events is not None and any(_legacy_message(e) for e in events))


_MESSAGE_TYPES = ("user/message", "assistant/message", "tool/result")


def _legacy_message(event: Any) -> bool:
    """A message event without its identified message: a user/message without ``id`` or
    ``role``, an assistant/message or tool/result without ``message`` (the pre-identity shapes,
    and the broken ones the upgrade refuses: which is which is the official layers' to say)."""
    if type(event) is not dict or event.get("type") not in _MESSAGE_TYPES or type(event.get("data")) is not dict:
        return False
    data = event["data"]
    return ("id" not in data or "role" not in data) if event["type"] == "user/message" else "message" not in data


def reference_refusals(events: list[Any], header: Any, format_version: Any) -> frozenset[str]:
    """The layers whose reference model refuses ``events`` (empty when :func:`judges` is false)."""
    if not judges(header, format_version, events):
        return frozenset()
    from dshfuzz import oracle

    refusing = set()
    for name, layer in MODEL_LAYERS.items():
        model = getattr(oracle, name)
        verdict = model(events) if name == "fold_surface" else model(events, header)
        if isinstance(verdict, oracle.Violation):
            refusing.add(layer)
    if L.FOLD not in refusing:  # the request is built on the surface: a fold failure is the fold's alone
        # the next request is built after a load, which closes an open tail turn's calls first
        wire = oracle.wire_stream([*events, *loader_closers(events)], header)
        if isinstance(wire, oracle.Violation):
            refusing.add(str(L.WIRE))
        elif wire.state.issues:
            refusing.add(str(L.PROVIDER))
    return frozenset(refusing)


def loader_closers(events: list[Any]) -> list[dict[str, Any]]:
    """The tool/result closers the official loader appends to a log whose last turn is open
    (``interruptedTurnClosers``, S:626-724, called by the persistence loader): one error result
    per call an assistant/message of the open turn advertised in a step no step/end closed and
    no tool/result answered, so that the request built after the load answers each. Its
    step/end and turn/end closers carry no message and are left out. A log the loop cannot walk
    (a property read on what is no object, which the loader throws on) gets none."""
    open_turn: Any = None
    pending: dict[Any, Any] = {}
    try:
        for event in events:
            kind = event.get("type") if type(event) is dict else None
            data: Any = event.get("data") if type(event) is dict else None
            if kind == "turn/start":
                open_turn, pending = data["turn"], {}
            elif kind == "turn/end":
                open_turn, pending = None, {}
            elif kind == "step/end":
                pending = {}
            elif kind == "assistant/message":
                for block in data["message"]["content"]:
                    if type(block) is dict and block.get("type") == "tool-call":
                        pending[number_key(block.get("id"))] = (block.get("id"), data.get("step"))
            elif kind == "tool/result":
                pending.pop(number_key(data["message"]["source"].get("callId")), None)
    except (KeyError, TypeError, AttributeError):
        return []
    if open_turn is None or not events:
        return []
    seq = len(events)
    closers = []
    for call_id, step in pending.values():
        message = {"id": f"interrupted-tool-result-{call_id}-{seq}", "role": "user",
                   "source": {"kind": "tool", "callId": call_id},
                   "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                                "content": [{"type": "text", "text": "The tool call was interrupted."}]}]}
        closers.append({"type": "tool/result", "seq": seq, "time": 0,
                        "data": {"turn": open_turn, "step": step, "message": message}, "surfaceOp": "append"})
        seq += 1
    return closers

