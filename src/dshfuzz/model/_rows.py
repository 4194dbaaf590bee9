"""The chunk-row storage codec: official ``packChunkRuns`` / ``decodeStorageRecord``.

A log does not store every ``assistant/chunk`` delta as its own line: each run of
at least three consecutive, uniform, whitelisted delta chunks is packed into one
``text-chunks`` / ``reasoning-chunks`` / ``tool-call-chunks`` row (dsh-session
S:727-1035). This module is a line-by-line port of that code, operating on
parsed JSON values with JavaScript's typing rules: ``typeof x === "number"`` is
an ``int`` or ``float`` that is not a ``bool``, and ``Number.isSafeInteger`` also
accepts an integral float. Row shapes and key order are the official ones, so
``dumps`` of a packed row is byte-identical to the official writer's line, and
every :class:`RowDecodeError` carries the official message.
"""

from __future__ import annotations

from itertools import accumulate
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from dshfuzz.contracts import MAX_SAFE_INTEGER, is_safe_integer

from ._types import CHUNK_ROW_TYPES, Event, JsonValue

__all__ = [
    "MIN_RUN",
    "ChunkPacker",
    "PackedMember",
    "PackedRun",
    "RowDecodeError",
    "decode_storage_record",
    "is_safe_integer",
    "pack_chunk_runs",
    "packed_head",
    "unpack_rows",
    "validate_storage_row",
]

MIN_RUN: Final = 3
"""Minimum members before a run packs (S:752)."""


class RowDecodeError(ValueError):
    """A chunk-row-tagged value that the official decoder refuses; ``str()`` is its message."""

    @property
    def message(self) -> str:
        return str(self.args[0])


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _has_exact_keys(value: dict[str, Any], keys: frozenset[str]) -> bool:
    return value.keys() == keys


_EVENT_KEYS = frozenset(("type", "seq", "time", "data"))
_DATA_KEYS = frozenset(("turn", "step", "chunk"))
_TEXT_CHUNK_KEYS = frozenset(("type", "index", "text"))
_CALL_CHUNK_KEYS = frozenset(("type", "index", "id", "argumentsDelta"))
_NAMED_CALL_CHUNK_KEYS = frozenset(("type", "index", "id", "name", "argumentsDelta"))


def _classify(event: Any) -> str | None:
    """The delta kind of a fully whitelisted chunk event, else ``None`` (stored verbatim)."""
    if type(event) is not dict or event.get("type") != "assistant/chunk":
        return None
    if not _has_exact_keys(event, _EVENT_KEYS):
        return None
    seq = event["seq"]
    if not is_safe_integer(seq) or seq < 0 or not is_safe_integer(event["time"]):
        return None
    data = event["data"]
    if type(data) is not dict or not _has_exact_keys(data, _DATA_KEYS):
        return None
    if not _is_number(data["turn"]) or not _is_number(data["step"]):
        return None
    chunk = data["chunk"]
    if type(chunk) is not dict or not _is_number(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind == "text-delta" or kind == "reasoning-delta":
        ok = _has_exact_keys(chunk, _TEXT_CHUNK_KEYS) and type(chunk["text"]) is str
        return kind if ok else None
    if kind == "tool-call-delta":
        shaped = _has_exact_keys(chunk, _CALL_CHUNK_KEYS) or (
            _has_exact_keys(chunk, _NAMED_CALL_CHUNK_KEYS) and type(chunk["name"]) is str
        )
        ok = shaped and type(chunk["id"]) is str and type(chunk["argumentsDelta"]) is str
        return kind if ok else None
    return None


def _continues(prev: dict[str, Any], nxt: dict[str, Any], kind: str) -> bool:
    if nxt["seq"] != prev["seq"] + 1:
        return False
    if not is_safe_integer(nxt["time"] - prev["time"]):
        return False
    pd, nd = prev["data"], nxt["data"]
    if nd["turn"] != pd["turn"] or nd["step"] != pd["step"]:
        return False
    a, b = pd["chunk"], nd["chunk"]
    if a["index"] != b["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    return a["id"] == b["id"] and ("name" in a) == ("name" in b) and a.get("name") == b.get("name")


def _build_row(kind: str, run: list[dict[str, Any]]) -> dict[str, Any]:
    first = run[0]
    fdata = first["data"]
    base = {
        "turn": fdata["turn"],
        "step": fdata["step"],
        "index": fdata["chunk"]["index"],
        "dt": [run[i + 1]["time"] - run[i]["time"] for i in range(len(run) - 1)],
    }
    if kind == "tool-call-delta":
        call = fdata["chunk"]
        data = {**base, "id": call["id"]}
        if "name" in call:
            data["name"] = call["name"]
        data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
        tag = "tool-call-chunks"
    else:
        data = {**base, "texts": [e["data"]["chunk"]["text"] for e in run]}
        tag = "text-chunks" if kind == "text-delta" else "reasoning-chunks"
    return {"type": tag, "seq0": first["seq"], "time0": first["time"], "data": data}


class ChunkPacker:
    """Official ``packChunkRuns`` one event at a time, for a writer that streams a batch: each
    :meth:`add` hands ``emit`` the rows it completes (a packed row, or an event stored verbatim),
    :meth:`close` the rest, in order. It holds the current run's events alone."""

    __slots__ = ("emit", "kind", "run")

    def __init__(self, emit: Callable[[JsonValue], object]) -> None:
        self.emit = emit
        self.kind: str | None = None
        self.run: list[dict[str, Any]] = []

    def add(self, event: JsonValue) -> None:
        k = _classify(event)
        if k is None:
            self.close()
            self.emit(event)
        elif k == self.kind and self.run and _continues(self.run[-1], event, k):
            self.run.append(event)
        else:
            self.close()
            self.kind, self.run = k, [event]

    def close(self) -> None:
        """End the current run: packed when it is long enough, else its events verbatim."""
        kind, run = self.kind, self.run
        if kind is not None and len(run) >= MIN_RUN:
            self.emit(_build_row(kind, run))
        else:
            for event in run:
                self.emit(event)
        self.kind, self.run = None, []


def pack_chunk_runs(events: Iterable[JsonValue]) -> list[JsonValue]:
    """Official ``packChunkRuns``: each run of >= :data:`MIN_RUN` uniform deltas becomes one row.

    Every other value passes through as the same object, in order. Pure.
    """
    out: list[JsonValue] = []
    packer = ChunkPacker(out.append)
    for event in events:
        packer.add(event)
    packer.close()
    return out


def _malformed(tag: str, why: str) -> RowDecodeError:
    return RowDecodeError(f"malformed {tag} storage row: {why}")


_INT_ONLY = frozenset({int})
_STR_ONLY = frozenset({str})


def _all_ints(values: list[Any]) -> bool:
    """Every value an ``int`` (not a bool, not a float), decided without a Python step per value."""
    return not values or set(map(type, values)) == _INT_ONLY


def _all_safe(values: list[Any]) -> bool:
    if _all_ints(values):
        return not values or (-MAX_SAFE_INTEGER <= min(values) and max(values) <= MAX_SAFE_INTEGER)
    return all(is_safe_integer(x) for x in values)


def _validate_run_data(tag: str, data: dict[str, Any], payload_key: str) -> list[str]:
    if not (_is_number(data["turn"]) and _is_number(data["step"]) and _is_number(data["index"])):
        raise _malformed(tag, "turn/step/index must be numbers")
    payload = data[payload_key]
    if type(payload) is not list or not payload or set(map(type, payload)) != _STR_ONLY:
        raise _malformed(tag, f"{payload_key} must be a non-empty string array")
    dt = data["dt"]
    if type(dt) is not list or not _all_safe(dt):
        raise _malformed(tag, "dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise _malformed(tag, f"dt length {len(dt)} does not match {len(payload)} members")
    return payload


_ROW_KEYS = frozenset(("type", "seq0", "time0", "data"))
_CALL_ROW_DATA = frozenset(("turn", "step", "index", "id", "dt", "args"))
_NAMED_CALL_ROW_DATA = frozenset(("turn", "step", "index", "id", "name", "dt", "args"))
_TEXT_ROW_DATA = frozenset(("turn", "step", "index", "dt", "texts"))


def _validate_row(value: dict[str, Any], tag: str) -> tuple[list[str], list[int]]:
    """Official ``validateRow``; returns the member payloads and the member times."""
    if not _has_exact_keys(value, _ROW_KEYS):
        raise _malformed(tag, "envelope must be exactly {type, seq0, time0, data}")
    seq0 = value["seq0"]
    if not is_safe_integer(seq0) or seq0 < 0:
        raise _malformed(tag, "seq0 must be a non-negative safe integer")
    if not is_safe_integer(value["time0"]):
        raise _malformed(tag, "time0 must be a safe integer")
    data = value["data"]
    # A JS array is an object too: it passes this check and fails the exact-key one below.
    if type(data) is not dict and type(data) is not list:
        raise _malformed(tag, "data must be an object")
    if tag == "tool-call-chunks":
        with_name = type(data) is dict and _has_exact_keys(data, _NAMED_CALL_ROW_DATA)
        if type(data) is not dict or not (with_name or _has_exact_keys(data, _CALL_ROW_DATA)):
            raise _malformed(tag, "data must be exactly {turn, step, index, id, name?, dt, args}")
        if type(data["id"]) is not str or (with_name and type(data["name"]) is not str):
            raise _malformed(tag, "id (and name when present) must be strings")
        payload = _validate_run_data(tag, data, "args")
    else:
        if type(data) is not dict or not _has_exact_keys(data, _TEXT_ROW_DATA):
            raise _malformed(tag, "data must be exactly {turn, step, index, dt, texts}")
        payload = _validate_run_data(tag, data, "texts")
    if not is_safe_integer(seq0 + len(payload) - 1):
        raise _malformed(tag, "member seqs must stay safe integers")
    # Validated seqs and times are safe integers; members carry them as Python ints.
    dt = data["dt"]
    times = list(accumulate(dt if _all_ints(dt) else [int(g) for g in dt], initial=int(value["time0"])))
    if max(times) > MAX_SAFE_INTEGER or min(times) < -MAX_SAFE_INTEGER:
        raise _malformed(tag, "member times must stay safe integers")
    return payload, times


def _expand_row(row: dict[str, Any], tag: str, members: list[str], times: list[int]) -> list[dict[str, Any]]:
    seqs = range(int(row["seq0"]), int(row["seq0"]) + len(members))
    data = row["data"]
    return [_member(tag, data, s, t, m) for s, t, m in zip(seqs, times, members)]


def _member(tag: str, data: dict[str, Any], seq: int, time: int, payload: str) -> dict[str, Any]:
    """One ``assistant/chunk`` member of a validated row, in the official key order."""
    if tag == "tool-call-chunks":
        chunk = {"type": "tool-call-delta", "index": data["index"], "id": data["id"]}
        if "name" in data:
            chunk["name"] = data["name"]
        chunk["argumentsDelta"] = payload
    else:
        delta = "text-delta" if tag == "text-chunks" else "reasoning-delta"
        chunk = {"type": delta, "index": data["index"], "text": payload}
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk}}


def _member_raw(packed: dict[str, Any], k: int) -> dict[str, Any]:
    """The event at position ``k`` of the validated chunk row ``packed``, exactly as
    :func:`decode_storage_record` gives it, built alone."""
    data = packed["data"]
    payload = data["args" if packed["type"] == "tool-call-chunks" else "texts"][k]
    time = int(packed["time0"]) + sum(int(g) for g in data["dt"][:k])
    return _member(packed["type"], data, int(packed["seq0"]) + k, time, payload)


def packed_head(packed: dict[str, Any], line: int | None, row: int | None, frame: int | None) -> Event:
    """The first member of the validated chunk row ``packed``, built at once as an ordinary
    :class:`Event` (see :class:`PackedMember` for why)."""
    return Event(_member_raw(packed, 0), line, row, 0, frame)


class PackedMember(Event):
    """Member ``member`` (after the first) of a packed chunk row, whose ``raw`` is built
    from the row when first read (and kept from then on, so it may be mutated like any
    event's).

    The reader validates a chunk row whole and builds only its head, at once and as an
    ordinary :class:`Event`: every consumer decides a run from its head (the reader's own
    scan first), and reads it often, where a member's ``raw`` is a property call (and a
    second class of event at every site reading one). The other members of a long log are
    never built, which is most of its memory. ``raw`` is exactly what
    :func:`decode_storage_record` gives at that position; ``packed`` is the row's value,
    which that function expands whole.
    """

    __slots__ = ("packed", "_built")
    member: int  # a packed row's member always has its position

    def __init__(self, packed: dict[str, Any], member: int, line: int | None, row: int | None, frame: int | None) -> None:
        self.packed = packed
        self._built: dict[str, Any] | None = None
        self.line = line
        self.row = row
        self.member = member
        self.frame = frame

    @property
    def raw(self) -> JsonValue:
        built = self._built
        if built is None:
            built = self._built = _member_raw(self.packed, self.member)
        return built

    @raw.setter
    def raw(self, value: JsonValue) -> None:
        self._built = value


class PackedRun(Sequence[Event]):
    """The members of one packed row as a streamed read hands them over: each built when first
    read and kept (so a member read twice is the same object), the head at once. A consumer
    decides most runs from their head, so a streamed read builds almost no other member; a
    slice builds the members it holds from one expansion of the row."""

    __slots__ = ("packed", "length", "line", "row", "frame", "built")

    def __init__(self, packed: dict[str, Any], count: int, line: int | None, row: int | None, frame: int | None) -> None:
        self.packed = packed
        self.length = count
        self.line = line
        self.row = row
        self.frame = frame
        self.built: dict[int, Event] = {0: packed_head(packed, line, row, frame)}

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            wanted, built = range(*index.indices(self.length)), self.built
            if any(k not in built for k in wanted):
                raws = decode_storage_record(self.packed)  # the row expanded once, not member by member
                for k in wanted:
                    if k not in built:
                        built[k] = fresh = PackedMember(self.packed, k, self.line, self.row, self.frame)
                        fresh.raw = raws[k]
            return [built[k] for k in wanted]
        member = self.built.get(index)
        if member is None:
            if not (index.__class__ is int and 0 <= index < self.length):
                raise IndexError(f"member {index!r} of a run of {self.length}")
            member = self.built[index] = PackedMember(self.packed, index, self.line, self.row, self.frame)
        return member


def validate_storage_row(value: dict[str, Any]) -> int:
    """Official ``validateRow`` of a chunk-row-tagged dict: its member count, or
    :class:`RowDecodeError` (official message) for a malformed row."""
    return len(_validate_row(value, value["type"])[0])


def decode_storage_record(value: JsonValue) -> list[JsonValue]:
    """Official ``decodeStorageRecord``: expand a chunk row, pass anything else through as one event.

    Raises :class:`RowDecodeError` (official message) for a malformed chunk row.
    """
    if type(value) is not dict:
        return [value]
    tag = value.get("type")
    if type(tag) is not str or tag not in CHUNK_ROW_TYPES:
        return [value]
    return _expand_row(value, tag, *_validate_row(value, tag))


def unpack_rows(rows: Iterable[JsonValue]) -> list[JsonValue]:
    """Expand a sequence of stored rows into events (the inverse of :func:`pack_chunk_runs`)."""
    events: list[JsonValue] = []
    for row in rows:
        events.extend(decode_storage_record(row))
    return events
