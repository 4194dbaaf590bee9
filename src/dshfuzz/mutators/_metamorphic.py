"""Metamorphic transforms: rewrite a log without changing what it means.

A checker's verdict on a transformed log must equal its verdict on the original,
except that a transform marked ``framing_only`` (a framing the official reader
refuses, such as skippable frames) may change framing verdicts and nothing else.
The transforms cover re-framing (batch boundaries, block types, checksums,
content sizes, skippable frames), packing and unpacking chunk runs, consistent
renaming of ids, JSON key order and insignificant whitespace.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hypothesis import strategies as st

from dshfuzz.model import (
    CHUNK_ROW_TYPES,
    JsonDecodeError,
    JsonValue,
    compress_frame,
    decode_frame,
    dumps,
    loads,
    skippable_frame,
    unpack_rows,
)

from ._base import CompressionPolicy, DrawAdapter, Edit, Level, Mutant, MutateFn
from ._draft import EventDraft, FrameDraft, LineDraft, RowDraft, type_of

__all__ = ["METAMORPHIC", "Transform", "variants"]


@dataclass(frozen=True, slots=True)
class Transform(Edit):
    """One meaning-preserving rewrite at one :class:`Level`."""

    name: str
    summary: str
    level: Level
    fn: MutateFn = field(repr=False, compare=False)
    framing_only: bool = False
    compression: CompressionPolicy = "any"


_TRANSFORMS: list[Transform] = []


def transform(name: str, summary: str, level: Level, *, framing_only: bool = False,
              compression: CompressionPolicy = "any") -> Callable[[MutateFn], MutateFn]:
    def wrap(fn: MutateFn) -> MutateFn:
        _TRANSFORMS.append(Transform(name, summary, level, fn, framing_only, compression))
        return fn

    return wrap


@transform("rebatch", "move append-batch boundaries (one zstd frame per batch)", Level.EVENT)
def rebatch(draft: EventDraft, data: Any) -> str:
    """Redraws the batch cuts anywhere between events."""
    n = len(draft.events)
    cuts = data.draw(st.sets(st.integers(1, n - 1), max_size=min(n - 1, 24)), label="cuts") if n > 1 else set()
    draft.cuts = sorted(cuts | ({n} if n else set()))
    return f"{len(draft.cuts)} batches"


_BLOCKS = st.tuples(st.sampled_from(("compressed", "raw", "rle")), st.booleans(), st.booleans())


@transform("reblock", "re-encode frames with raw/RLE/compressed blocks, checksum and content size on or off",
           Level.FRAME, compression="zstd")
def reblock(frames: FrameDraft, data: Any) -> str:
    """Re-encodes every frame's content with a drawn block type, checksum flag and
    content-size flag."""
    styles = []
    for i, frame in enumerate(frames.frames):
        block, checksum, content_size = data.draw(_BLOCKS, label=f"frame {i}")
        frames.frames[i] = compress_frame(decode_frame(frame), checksum=checksum, content_size=content_size, block=block)
        styles.append(block)
    return "frames re-encoded: " + ",".join(styles)


@transform("skippable-frames", "insert skippable frames between frames (refused by the official reader)",
           Level.FRAME, framing_only=True, compression="zstd")
def skippable_frames(frames: FrameDraft, data: Any) -> str:
    """Inserts one to three skippable frames with drawn payloads after the header frame."""
    count = data.draw(st.integers(1, 3), label="count")
    for _ in range(count):
        at = data.draw(st.integers(1, len(frames.frames)), label="position")
        payload = data.draw(st.binary(max_size=16), label="payload")
        frames.frames.insert(at, skippable_frame(payload, nibble=data.draw(st.integers(0, 15), label="nibble")))
    return f"{count} skippable frame(s) inserted"


@transform("unpack-chunks", "store a drawn subset of packed chunk rows as their member events", Level.ROW)
def unpack_chunks(rows: RowDraft, data: Any) -> str:
    """Expands each packed chunk row with a drawn probability into its member events."""
    count = 0
    for b, batch in enumerate(rows.batches):
        out: list[JsonValue] = []
        for row in batch:
            packed = type_of(row) in CHUNK_ROW_TYPES
            if packed and data.draw(st.booleans(), label="unpack"):
                out.extend(unpack_rows([row]))
                count += 1
            else:
                out.append(row)
        rows.batches[b] = out
    return f"{count} packed row(s) unpacked"


_ID_KEYS = frozenset({"id", "callId", "toolCallId", "compactionId", "sourceCommandId", "messageId",
                      "goalId", "commandId", "rootCallId", "parentCallId", "subCallId", "ownerId", "targetId"})
"""Every key whose value is an id the events name or cite: each is renamed with the others, so that
a reference (a legacy goal source's ``goalId``, a team task's ``ownerId``) still names its object.
Not ``sessionId``: it names the header's session, which the rename leaves as it is."""


def _rename(value: JsonValue, mapping: Callable[[str], str]) -> None:
    if type(value) is dict:
        for key, item in value.items():
            if key in _ID_KEYS and type(item) is str:
                value[key] = mapping(item)
            else:
                _rename(item, mapping)
    elif type(value) is list:
        for item in value:
            _rename(item, mapping)


@transform("rename-ids", "rename message, call and compaction ids consistently (prefixes kept)", Level.EVENT)
def rename_ids(draft: EventDraft, data: Any) -> str:
    """Appends one drawn suffix to every id in every event, so that equal ids stay equal,
    distinct ids stay distinct and known prefixes (``retrace-`` ...) survive."""
    suffix = data.draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6), label="suffix")
    # an id some text quotes (a legacy goal message's content renders its change, goal id and all)
    # stays as it is: renaming it would need the text rewritten in that text's own format
    texts = "\0".join(_texts(draft.events))
    quoted = {value for value in _id_values(draft.events) if value in texts}

    def renamed(old: str) -> str:
        if old in quoted:
            return old
        repair = _REPAIR_ID.fullmatch(old)
        if repair is not None:  # the loader's repair message names its call: renamed with it
            return f"interrupted-tool-result-{renamed(repair.group(1))}-{repair.group(2)}"
        return f"{old}-{suffix}"

    for event in draft.events:
        _rename(event, renamed)
    return f"ids suffixed with -{suffix}" + (f" ({len(quoted)} quoted in a text kept)" if quoted else "")


def _id_values(value: JsonValue) -> Iterator[str]:
    if type(value) is dict:
        for key, item in value.items():
            if key in _ID_KEYS and type(item) is str:
                yield item
            else:
                yield from _id_values(item)
    elif type(value) is list:
        for item in value:
            yield from _id_values(item)


def _texts(value: JsonValue) -> Iterator[str]:
    """Every string of ``value`` that is not an id (keys included: a key can quote an id too)."""
    if type(value) is dict:
        for key, item in value.items():
            yield key
            if not (key in _ID_KEYS and type(item) is str):
                yield from _texts(item)
    elif type(value) is list:
        for item in value:
            yield from _texts(item)
    elif type(value) is str:
        yield value


_REPAIR_ID = re.compile(r"interrupted-tool-result-(.+)-(\d+)")
"""The id of the tool result the official loader's crash repair writes for an unanswered
call (``interruptedTurnClosers``): it embeds the call's id and the result's seq."""


_SEEDS = st.integers(0, 2**32 - 1)
"""One drawn seed per transform: the per-token choices would otherwise be thousands of draws."""


def _shuffled(value: JsonValue, rnd: random.Random, texts: str) -> JsonValue:
    if type(value) is dict:
        if texts and value and dumps(value) in texts:
            return value  # a text renders this object, keys in order (a legacy goal message its goal)
        keys = list(value)
        rnd.shuffle(keys)
        return {k: _shuffled(value[k], rnd, texts) for k in keys}
    if type(value) is list:
        return [_shuffled(v, rnd, texts) for v in value]
    return value


@transform("shuffle-keys", "reorder the keys of every JSON object (but one a text renders)", Level.ROW)
def shuffle_keys(rows: RowDraft, data: Any) -> str:
    """Shuffles every object's keys (header and rows) with a drawn random generator, but for an
    object some string of the log renders as JSON: its order is part of that text."""
    rnd = random.Random(data.draw(_SEEDS, label="order"))
    texts = "\0".join(s for row in [rows.header, *(r for batch in rows.batches for r in batch)]
                       for s in _texts(row) if "{" in s)
    rows.header = _shuffled(rows.header, rnd, texts)
    rows.batches = [[_shuffled(row, rnd, texts) for row in batch] for batch in rows.batches]
    return "object keys shuffled"


_WS = (" ", "\t", "  ", " \t")


def _spaced(value: JsonValue, rnd: random.Random) -> str:
    def ws() -> str:
        return rnd.choice(_WS) if rnd.random() < 0.5 else ""

    if type(value) is dict:
        items = [f"{ws()}{dumps(k)}{ws()}:{ws()}{_spaced(v, rnd)}{ws()}" for k, v in value.items()]
        return "{" + ",".join(items) + ws() + "}"
    if type(value) is list:
        return "[" + ",".join(f"{ws()}{_spaced(v, rnd)}{ws()}" for v in value) + ws() + "]"
    return dumps(value)


@transform("whitespace", "insert insignificant JSON whitespace (spaces, tabs) inside lines", Level.LINE)
def whitespace(lines: LineDraft, data: Any) -> str:
    """Re-serialises every line with drawn spaces and tabs between tokens and at both ends."""
    rnd = random.Random(data.draw(_SEEDS, label="whitespace"))
    for frame in lines.frames:
        for i, text in enumerate(frame):
            try:
                value = loads(text)
            except JsonDecodeError:
                continue
            lead, trail = rnd.choice(("", " ", "\t")), rnd.choice(("", " ", "\t"))
            frame[i] = f"{lead}{_spaced(value, rnd)}{trail}".encode()
    return "whitespace inserted"


METAMORPHIC: Mapping[str, Transform] = MappingProxyType({t.name: t for t in _TRANSFORMS})


def variants(transform_: Transform | str, logs: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, Mutant]]:
    """Pairs ``(log, transformed)`` of logs drawn from ``logs``."""
    t = METAMORPHIC[transform_] if isinstance(transform_, str) else transform_

    @st.composite
    def pair(draw: Callable[[st.SearchStrategy[Any]], Any]) -> tuple[Any, Mutant]:
        log = draw(logs)
        return log, t.apply(log, DrawAdapter(draw))

    return pair()
