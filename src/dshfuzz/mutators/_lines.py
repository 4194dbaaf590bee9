"""Physical-line and storage-row incidents: damaged header and event lines, malformed or
overflowing chunk rows, lossy numbers, and rows from two writers interleaved."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L
from dshfuzz.contracts import MAX_SAFE_INTEGER
from dshfuzz.model import CHUNK_ROW_TYPES, JsonDecodeError, dumps, loads

from ._base import Level, mutator
from ._draft import Inapplicable, LineDraft, RowDraft, copy_json, type_of
from ._select import choose

_LOAD = (L.LOAD, L.LOAD_APP, L.RELEASED)

_GARBAGE = (b"<<<<<<< HEAD", b"undefined", b"NaN", b"{'type': 'turn/start'}", b"\x00\x00\x00\x00", b"}")


@mutator(
    "header-not-session",
    level=Level.LINE,
    expects=("H1",),
    official=_LOAD,
    incident="""The first line of the log is not a session header: it does not parse, parses
    to something other than an object, or is an object whose type is not "session" (a log
    whose head was overwritten, or an event file mistaken for a session). The whole session
    is unreadable.""",
)
def header_not_session(lines: LineDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: none. Replaces the header line with a drawn non-JSON text, a non-object
    JSON value, or the header object with a drawn non-"session" type (or none).
    Deterministic given its draws."""
    header = lines.frames[0][0]
    kind = data.draw(st.sampled_from(("not-json", "not-object", "wrong-type", "no-type")), label="kind")
    if kind == "not-json":
        cut = data.draw(st.integers(1, len(header) - 1), label="bytes kept")
        if defect:
            lines.frames[0][0] = header[:cut]
        return f"header line cut to {cut} bytes"
    try:
        value = loads(header)
    except JsonDecodeError:
        raise Inapplicable("the header line is not JSON already") from None
    if kind == "not-object":
        replacement = data.draw(st.sampled_from(([value], None, 0, "session", True)), label="value")
        if defect:
            lines.frames[0][0] = dumps(replacement).encode()
        return f"header line replaced by {dumps(replacement)[:40]}"
    if type(value) is not dict:
        raise Inapplicable("the header is not an object already")
    if kind == "no-type":
        if defect:
            value.pop("type", None)
            lines.frames[0][0] = dumps(value).encode()
        return "header type removed"
    wrong = data.draw(st.sampled_from(("header", "Session", "session ", "", "turn/start")), label="type")
    if defect:
        value["type"] = wrong
        lines.frames[0][0] = dumps(value).encode()
    return f"header type set to {wrong!r}"


@mutator(
    "non-json-line",
    level=Level.LINE,
    expects=("R1",),
    official=_LOAD,
    incident="""A line inside the committed region of the log does not parse as JSON: a
    half-written record followed by later appends, a merge-conflict marker, or stray bytes.
    The official reader refuses the log instead of skipping the line.""",
)
def non_json_line(lines: LineDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: at least one event row. Inserts, before a drawn event line, either a
    strict prefix of a drawn line or a drawn fixed piece of garbage; never an empty line
    (those are legal at frame boundaries). Deterministic given its draws."""
    count = lines.count
    if count < 2:
        raise Inapplicable("no event line")
    at = data.draw(st.integers(1, count - 1), label="insert before line")
    if data.draw(st.booleans(), label="garbage"):
        text = data.draw(st.sampled_from(_GARBAGE), label="text")
    else:
        frame, index = lines.locate(data.draw(st.integers(0, count - 1), label="source line"))
        source = lines.frames[frame][index]
        if len(source) < 2:
            raise Inapplicable("the drawn source line has no strict non-empty prefix")
        text = source[: data.draw(st.integers(1, len(source) - 1), label="bytes kept")]
    frame, index = lines.locate(at)
    if defect:
        lines.frames[frame].insert(index, text)
    return f"non-JSON line {text[:30]!r} inserted as line {at + 1}"


def _packed_rows(rows: RowDraft) -> list[tuple[int, int]]:
    return [
        (b, r)
        for b, batch in enumerate(rows.batches)
        for r, row in enumerate(batch)
        if type_of(row) in CHUNK_ROW_TYPES
    ]


_ROW_BREAKS = (
    "extra envelope key",
    "missing envelope key",
    "extra data key",
    "missing data key",
    "dt too long",
    "dt too short",
    "member not a string",
)


@mutator(
    "malformed-chunk-row",
    level=Level.ROW,
    expects=("R2",),
    official=_LOAD,
    incident="""A packed chunk row (text-chunks, reasoning-chunks, tool-call-chunks) no longer
    has the exact storage shape: a hand edit or a foreign writer added or dropped a key, or
    the time-gap list no longer matches the members. The whole run is lost and the load
    fails loudly; there is no skip.""",
)
def malformed_chunk_row(rows: RowDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a packed chunk row (a run of at least three chunk deltas). Breaks a
    drawn row in a drawn way (see ``_ROW_BREAKS``). Deterministic given its draws."""
    b, r = choose(data, _packed_rows(rows), "packed chunk row")
    row = rows.batches[b][r] if defect else copy_json(rows.batches[b][r])  # a twin breaks a copy
    how = data.draw(st.sampled_from(_ROW_BREAKS), label="break")
    payload = row["data"]
    members = "texts" if "texts" in payload else "args"
    if how == "extra envelope key":
        row["seq1"] = row["seq0"]
    elif how == "missing envelope key":
        del row[data.draw(st.sampled_from(("seq0", "time0", "data")), label="key")]
    elif how == "extra data key":
        payload["chunk"] = {"type": "text-delta"}
    elif how == "missing data key":
        del payload[data.draw(st.sampled_from(("turn", "step", "index", "dt", members)), label="key")]
    elif how == "dt too long":
        payload["dt"].append(0)
    elif how == "dt too short":
        payload["dt"].pop()
    else:
        i = data.draw(st.integers(0, len(payload[members]) - 1), label="member")
        payload[members][i] = data.draw(st.sampled_from((None, 0, ["x"], {"text": "x"})), label="value")
    return f"{row.get('type')} row at seq0 {row.get('seq0')}: {how}"


@mutator(
    "chunk-row-overflow",
    level=Level.ROW,
    expects=("R3",),
    official=_LOAD,
    incident="""A packed chunk row whose expansion leaves the safe-integer range: seq0 plus
    the member count, or time0 plus the accumulated gaps, exceeds 2^53-1. The members'
    seqs or times would silently lose precision, so the row is refused.""",
)
def chunk_row_overflow(rows: RowDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a packed chunk row. Moves a drawn row's seq0 (or time0) so that its
    last member's seq (or time) is a drawn amount past 2^53-1. Deterministic given its draws."""
    b, r = choose(data, _packed_rows(rows), "packed chunk row")
    row = rows.batches[b][r]
    dt = row["data"]["dt"]
    if data.draw(st.booleans(), label="time"):
        if sum(dt) < 1:
            dt[-1] += 1 - sum(dt)
        past = data.draw(st.integers(1, sum(dt)), label="past the limit")
        time0 = MAX_SAFE_INTEGER - sum(dt) + past
        if defect:
            row["time0"] = time0
        return f"row at seq0 {row['seq0']}: time0 {time0} overflows with dt {dt}"
    past = data.draw(st.integers(1, len(dt)), label="past the limit")
    seq0 = MAX_SAFE_INTEGER - len(dt) + past
    if defect:
        row["seq0"] = seq0
    return f"row seq0 set to {seq0} with {len(dt) + 1} members"


_LOSSY = b"1e400"


def _number_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if type(value) in (int, float):
        return [path]
    if type(value) is dict:
        return [p for k, v in value.items() for p in _number_paths(v, (*path, k))]
    if type(value) is list:
        return [p for i, v in enumerate(value) for p in _number_paths(v, (*path, i))]
    return []


@mutator(
    "lossy-json",
    level=Level.LINE,
    expects=("E4",),
    official=(L.SEED, L.INVARIANTS),
    incident="""An event whose data holds a number JSON.parse cannot round-trip (1e400 becomes
    Infinity): a foreign writer serialised a non-finite or out-of-range value. The official
    append and seed paths snapshot every payload as lossless JSON and refuse it (the rc.8
    load path, measured, lets it through).""",
)
def lossy_json(lines: LineDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a plain event row with a number inside its data. Replaces a drawn
    numeric leaf of a drawn row's data by the literal ``1e400`` (or ``-1e400``).
    Deterministic given its draws."""
    candidates = []
    for f, frame in enumerate(lines.frames[1:], start=1):
        for i, text in enumerate(frame):
            try:
                row = loads(text)
            except JsonDecodeError:
                continue
            if type(row) is dict and type_of(row) not in CHUNK_ROW_TYPES and _number_paths(row.get("data")):
                candidates.append((f, i))
    f, i = choose(data, candidates, "event row with a number in its data")
    row = loads(lines.frames[f][i])
    path = choose(data, _number_paths(row["data"]), "numeric leaf")
    literal = data.draw(st.sampled_from((_LOSSY, b"-" + _LOSSY)), label="literal")
    marker = "\u2063dshfuzz-lossy\u2063"
    holder = row["data"]
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = marker
    if defect:
        lines.frames[f][i] = dumps(row).encode().replace(dumps(marker).encode(), literal)
    return f"seq {row.get('seq')} data{''.join(f'[{k!r}]' for k in path)} = {literal.decode()}"


@mutator(
    "interleaved-writers",
    level=Level.ROW,
    expects=("S9",),
    official=(L.FOLD, L.SEED, L.INVARIANTS, L.LOAD, L.LOAD_APP, L.RELEASED),
    incident="""2026-08-28: two host processes shared one session directory and appended
    concurrently; the file's physical order went backwards (large seq, small seq, larger
    seq), which one process serialising appends can never write. Sorting by seq hides it,
    but the loader reads in physical order and refuses.""",
)
def interleaved_writers(rows: RowDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: two rows in one batch, or two batches. Swaps two adjacent drawn blocks
    of rows inside a batch, or two adjacent batches, so that every seq is still present
    but the physical order regresses. Deterministic given its draws."""
    batches = [b for b, batch in enumerate(rows.batches) if len(batch) >= 2]
    whole = len(rows.batches) >= 2 and data.draw(st.booleans(), label="swap batches")
    if whole:
        b = data.draw(st.integers(0, len(rows.batches) - 2), label="batch")
        if defect:
            rows.batches[b], rows.batches[b + 1] = rows.batches[b + 1], rows.batches[b]
        return f"batches {b} and {b + 1} written in swapped order"
    b = choose(data, batches, "batch with two rows")
    batch = rows.batches[b]
    i = data.draw(st.integers(0, len(batch) - 2), label="first block start")
    j = data.draw(st.integers(i + 1, len(batch) - 1), label="second block start")
    k = data.draw(st.integers(j + 1, len(batch)), label="second block end")
    if defect:
        batch[i:k] = batch[j:k] + batch[i:j]
    return f"batch {b}: rows {j}..{k - 1} written before rows {i}..{j - 1}"
