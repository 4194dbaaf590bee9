"""Hypothesis strategies for the codec tests: event lists rich in chunk runs.

The events are "valid-ish": contiguous seqs and the official envelope, with
chunk runs that the packer must pack and variations it must leave verbatim
(extra keys, fractional times, ``ignorable``, seq jumps, index changes, an
unnamed tool call). Texts include lone surrogates, which ``JSON.stringify``
escapes and ``JSON.parse`` restores.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

texts = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.sampled_from("\n\r\t\"\\\x00\x1f\u2028"),
    ),
    max_size=12,
)

_KINDS = ("text-delta", "reasoning-delta", "tool-call-delta", "tool-call-delta-unnamed", "other")
_VARIATIONS = (None, None, None, None, "extra-key", "float-time", "ignorable", "seq-jump", "index", "turn")


def _chunk(kind: str, index: int, text: str, call: str) -> dict[str, Any]:
    if kind in ("text-delta", "reasoning-delta"):
        return {"type": kind, "index": index, "text": text}
    if kind == "tool-call-delta":
        return {"type": kind, "index": index, "id": call, "name": "read", "argumentsDelta": text}
    return {"type": "tool-call-delta", "index": index, "id": call, "argumentsDelta": text}


@st.composite
def event_lists(draw: st.DrawFn, *, max_runs: int = 6, max_run: int = 6) -> list[dict[str, Any]]:
    """A list of events whose seqs count from 0 (unless a ``seq-jump`` variation skips one)."""
    events: list[dict[str, Any]] = []
    seq = 0
    time = draw(st.integers(0, 2**41))
    for _ in range(draw(st.integers(0, max_runs))):
        kind = draw(st.sampled_from(_KINDS))
        index = draw(st.integers(0, 3))
        call = draw(st.sampled_from(["call_1", "call_2"]))
        for _ in range(draw(st.integers(1, max_run))):
            time += draw(st.integers(-5, 40))
            variation = draw(st.sampled_from(_VARIATIONS))
            if kind == "other":
                event: dict[str, Any] = {"type": "step/start", "seq": seq, "time": time, "data": {"turn": 1, "step": 1}}
            else:
                chunk = _chunk(kind, index + (variation == "index"), draw(texts), call)
                data = {"turn": 1 + (variation == "turn"), "step": 1, "chunk": chunk}
                event = {"type": "assistant/chunk", "seq": seq, "time": time, "data": data}
            if variation == "extra-key":
                event["x"] = draw(texts)
            elif variation == "float-time":
                event["time"] = time + 0.5
            elif variation == "ignorable":
                event["ignorable"] = True
            elif variation == "seq-jump":
                seq += 1
                event["seq"] = seq
            events.append(event)
            seq += 1
    return events


@st.composite
def batched(draw: st.DrawFn, events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split ``events`` into append batches (each non-empty), as the writer flushes them."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(events) - 1)), max_size=4))) if len(events) > 1 else []
    bounds = [0, *cuts, len(events)]
    return [events[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


HEADER = {"type": "session", "version": 0, "id": "codec-test", "createdAt": 1767000000000, "cwd": "/tmp/x", "delegationDepth": 0}
