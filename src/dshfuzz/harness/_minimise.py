"""Shrink a failing log to a 1-minimal log with the same signature.

Hypothesis has already shrunk the *plan* that produced the log; this stage works
on the log itself, so it also minimises logs that came from elsewhere (corpus,
user files). Order of attack, each step kept only when the signature survives:

1. a ``.jsonl.zstd`` log whose defect survives decompression becomes plain JSONL;
   otherwise whole append frames are removed (framing defects live in frames);
2. packed chunk rows are unpacked into one line per event (verdict-preserving);
3. delta debugging (ddmin) over event lines, the header line always kept. Removing
   lines renumbers the survivors by *shifting* — each integer seq drops by the
   number of removed events before it — so a deliberate gap or duplicate in the
   input stays a gap or duplicate, and every seq reference (``sourceEventSeqs``,
   replace ranges, compaction spans, title ``messageSeqs``, ``seedLength``) is
   shifted the same way, references to removed events being dropped;
4. a final pass removes single lines until none can go (1-minimality).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ._judge import Example

__all__ = ["ddmin", "minimise"]

Predicate = Callable[[Example], bool]


def ddmin(items: Sequence[Any], test: Callable[[Sequence[Any]], bool]) -> list[Any]:
    """Zeller's ddmin: a 1-minimal subsequence of ``items`` for which ``test`` holds.

    ``test(items)`` must hold on entry. Complements are tried before subsets, which
    removes large chunks first on the long logs campaigns produce.
    """
    current = list(items)
    n = 2
    while len(current) >= 2:
        chunk = max(1, len(current) // n)
        subsets = [current[i : i + chunk] for i in range(0, len(current), chunk)]
        progressed = False
        for i in range(len(subsets)):
            complement = [x for j, s in enumerate(subsets) if j != i for x in s]
            if complement and test(complement):
                current, n, progressed = complement, max(n - 1, 2), True
                break
        if not progressed:
            if n >= len(current):
                break
            n = min(len(current), n * 2)
    i = 0
    while i < len(current) and len(current) > 1:
        candidate = current[:i] + current[i + 1 :]
        if test(candidate):
            current = candidate
        else:
            i += 1
    return current


def _shift_refs(value: Any, removed: list[int]) -> Any:
    """Map one seq reference through the removal; ``None`` when it pointed at a removed event."""
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    k = bisect.bisect_left(removed, value)
    if k < len(removed) and removed[k] == value:
        return None
    return value - k


def _shift_list(values: Any, removed: list[int]) -> Any:
    if not isinstance(values, list):
        return _shift_refs(values, removed)
    out = []
    for v in values:
        mapped = _shift_refs(v, removed)
        if mapped is not None:
            out.append(mapped)
    return out


def _renumber(event: Any, removed: list[int]) -> Any:
    """Shift an event's own seq and every seq it cites (see the module docstring)."""
    if not isinstance(event, dict) or not removed:
        return event
    ev = dict(event)
    seq = ev.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool):
        ev["seq"] = seq - bisect.bisect_left(removed, seq)
    if "sourceEventSeqs" in ev:
        ev["sourceEventSeqs"] = _shift_list(ev["sourceEventSeqs"], removed)
    op = ev.get("surfaceOp")
    if isinstance(op, dict):
        op = dict(op)
        for key in ("start", "end"):
            if key in op:
                mapped = _shift_refs(op[key], removed)
                op[key] = op[key] if mapped is None else mapped
        ev["surfaceOp"] = op
    data = ev.get("data")
    if isinstance(data, dict):
        data = dict(data)
        for key in ("shadowedSeqs", "messageSeqs"):
            if key in data:
                data[key] = _shift_list(data[key], removed)
        rng = data.get("shadowedRange")
        if isinstance(rng, dict):
            data["shadowedRange"] = {
                k: (v if _shift_refs(v, removed) is None else _shift_refs(v, removed)) for k, v in rng.items()
            }
        ev["data"] = data
    return ev


def _lines_of(data: bytes) -> tuple[str, list[str], bool]:
    text = data.decode("utf-8", errors="surrogateescape")
    lines = text.split("\n")
    terminated = lines[-1] == ""
    if terminated:
        lines.pop()
    return (lines[0] if lines else ""), lines[1:], terminated


def _encode_lines(header: str, lines: Sequence[str], terminated: bool) -> bytes:
    text = "\n".join([header, *lines]) + ("\n" if terminated else "")
    return text.encode("utf-8", errors="surrogateescape")


def _event_lines_with_removal(lines: Sequence[str], keep: Sequence[int]) -> list[str]:
    """The kept lines, renumbered for the removed event lines."""
    from dshfuzz.model import JsonDecodeError, dumps, loads

    kept = set(keep)
    removed: list[int] = []
    parsed: list[Any] = []
    for i, line in enumerate(lines):
        try:
            value = loads(line)
        except JsonDecodeError:
            value = None
        parsed.append(value)
        seq = value.get("seq") if isinstance(value, dict) else None
        if i not in kept and isinstance(seq, int) and not isinstance(seq, bool):
            removed.append(seq)
    removed.sort()
    out = []
    for i in keep:
        value = parsed[i]
        out.append(dumps(_renumber(value, removed)) if isinstance(value, dict) and removed else lines[i])
    return out


def _plain(example: Example) -> bytes | None:
    """The decoded content of a zstd log as plain JSONL, when every frame decodes."""
    from dshfuzz.model import parse_log

    log = parse_log(example.data, compression="zstd")
    if any(f.status not in ("complete", "skippable") for f in log.frames):
        return None
    return b"".join(f.content for f in log.frames)


def _unpacked(data: bytes) -> bytes:
    from dshfuzz.model import JsonDecodeError, RowDecodeError, decode_storage_record, dumps, loads

    header, lines, terminated = _lines_of(data)
    out: list[str] = []
    for line in lines:
        try:
            value = loads(line)
            members = decode_storage_record(value)
        except (JsonDecodeError, RowDecodeError):
            out.append(line)
            continue
        if isinstance(value, dict) and value.get("type") in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
            out.extend(dumps(m) for m in members)
        else:
            out.append(line)
    return _encode_lines(header, out, terminated)


def minimise(example: Example, still_fails: Predicate) -> bytes:
    """The smallest log (bytes) for which ``still_fails`` holds, by the steps above."""
    current = example
    if current.compression == "zstd":
        plain = _plain(current)
        candidate = replace(current, data=plain, compression="none") if plain is not None else None
        if candidate is not None and still_fails(candidate):
            current = candidate
        else:
            return _minimise_frames(current, still_fails)
    unpacked = replace(current, data=_unpacked(current.data))
    if unpacked.data != current.data and still_fails(unpacked):
        current = unpacked
    header, lines, terminated = _lines_of(current.data)

    def test(keep: Sequence[int]) -> bool:
        return still_fails(replace(current, data=_encode_lines(header, _event_lines_with_removal(lines, keep), terminated)))

    keep = ddmin(range(len(lines)), test) if lines and test(range(len(lines))) else list(range(len(lines)))
    if keep and test([]):
        keep = []
    return _encode_lines(header, _event_lines_with_removal(lines, keep), terminated)


def _minimise_frames(example: Example, still_fails: Predicate) -> bytes:
    """Drop whole append frames of a zstd log (header frame kept), bytes otherwise untouched."""
    from dshfuzz.model import parse_log

    log = parse_log(example.data, compression="zstd")
    spans = [(f.offset, f.offset + f.size) for f in log.frames]
    if len(spans) <= 1:
        return example.data
    tail = example.data[spans[-1][1] :]
    head, rest = spans[0], spans[1:]

    def build(keep: Sequence[int]) -> bytes:
        return example.data[head[0] : head[1]] + b"".join(example.data[rest[i][0] : rest[i][1]] for i in keep) + tail

    def test(keep: Sequence[int]) -> bool:
        return still_fails(replace(example, data=build(keep)))

    keep = ddmin(range(len(rest)), test) if test(range(len(rest))) else list(range(len(rest)))
    return build(keep)
