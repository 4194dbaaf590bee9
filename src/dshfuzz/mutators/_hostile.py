"""Hostile-input incidents: a log that asks the reader for more than its resource limits.

Each mutant crosses one limit of :data:`~dshfuzz.model.DEFAULT_LIMITS` by a small
drawn margin: the zstd bomb is a few KiB of RLE blocks declaring just over one
frame's limit, not the gigabytes a real bomb declares, because the official loader
inflates it whole (about 3 s per mutant across the campaign layers, measured); the
nesting is at most 64 levels past the depth limit; the bare newlines are at most 64
past the line-count limits. The line limit has no mutator: a line over 32 MiB costs
seconds per mutant to judge (``unmutated`` of rule L2).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L
from dshfuzz.model import DEFAULT_LIMITS, JsonDecodeError, dumps, loads, repeat_frame

from ._base import Level, mutator
from ._draft import FrameDraft, LineDraft, type_of
from ._select import choose

_RLE_BLOCK = 128 * 1024
_INFLATED = (0x20, 0x78, 0x00)
"""Space, ``x``, NUL. Not newline: 64 Mi empty lines keep the official layers busy past two
minutes (measured), for an incident that is about the frame, not its lines."""


@mutator(
    "frame-over-limit",
    level=Level.FRAME,
    compression="zstd",
    expects=("L1",),
    official=(L.LOAD, L.LOAD_APP),
    incident="""A writer bug, or a disk handing back foreign blocks, left a final zstd frame whose
    content-size field declares far more plaintext than any append batch could hold: a few KiB
    of RLE blocks that inflate to tens of megabytes of one repeated byte. A reader that decodes
    each frame whole allocates all of it before judging a single line; the official loader
    does, and then refuses the file only because that plaintext ends without a newline.""",
)
def frame_over_limit(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: one append batch. Appends, as the final frame, RLE blocks of a drawn byte
    (space, letter or NUL) whose declared content size is a drawn amount (up to one block)
    past the reader's per-frame limit. Deterministic given its draws."""
    byte = data.draw(st.sampled_from(_INFLATED), label="repeated byte")
    size = DEFAULT_LIMITS.frame_bytes + data.draw(st.integers(1, _RLE_BLOCK), label="bytes past the limit")
    index = len(frames.frames)
    if defect:
        frames.frames.append(repeat_frame(byte, size))
    return f"frame {index} declares {size} bytes of 0x{byte:02x} in RLE blocks"


_SCHEMA_LEVELS = 7
"""Containers around a tool's property schema on its line: the row, data, header, the
tools list, the tool, its parameters and their properties."""

_MARKER = "\u2063dshfuzz-nested\u2063"


def _headers_with_tools(lines: LineDraft) -> list[tuple[int, int, Any]]:
    """``(frame, index, row)`` of every request/header line advertising a tool with an object schema."""
    found = []
    for f, frame in enumerate(lines.frames[1:], start=1):
        for i, text in enumerate(frame):
            if b'"request/header"' not in text:
                continue
            try:
                row = loads(text)
            except JsonDecodeError:
                continue
            if type_of(row) == "request/header" and _schemas(row):
                found.append((f, i, row))
    return found


def _schemas(row: Any) -> list[dict[str, Any]]:
    """The ``properties`` objects of the tool schemas a request/header row advertises."""
    data = row.get("data")
    header = data.get("header") if type(data) is dict else None
    tools = header.get("tools") if type(header) is dict else None
    out = []
    for tool in tools if type(tools) is list else ():
        parameters = tool.get("parameters") if type(tool) is dict else None
        if type(parameters) is dict and type(parameters.get("properties", {})) is dict:
            out.append(parameters)
    return out


@mutator(
    "nesting-over-limit",
    level=Level.LINE,
    expects=("L3",),
    incident="""A hostile or buggy tool server advertised a parameter schema nested hundreds of
    levels deep (an array of arrays of arrays ...), and the agent logged it verbatim in its
    request/header. Parsing it is harmless, but every recursive walk over the value -- a
    serialiser, a validator, a deep copy -- risks the stack.""",
)
def nesting_over_limit(lines: LineDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a request/header advertising a tool with an object parameter schema. Adds
    to a drawn tool's schema a property whose schema nests ``{"type":"array","items":...}``
    so that the line's depth is a drawn amount (up to 64 levels) past the reader's depth
    limit. Deterministic given its draws. Its twin adds the same property, not nested."""
    f, i, row = choose(data, _headers_with_tools(lines), "request/header with a tool schema")
    parameters = choose(data, _schemas(row), "tool schema")
    depth = DEFAULT_LIMITS.depth + data.draw(st.integers(1, 64), label="levels past the limit")
    arrays = depth - _SCHEMA_LEVELS - 1 if defect else 0
    parameters.setdefault("properties", {})["nested"] = _MARKER
    nested = '{"type":"array","items":' * arrays + '{"type":"string"}' + "}" * arrays
    lines.frames[f][i] = dumps(row).replace(dumps(_MARKER), nested).encode()
    return f"seq {row.get('seq')}: a tool schema nested {depth} levels deep"


@mutator(
    "lines-over-limit",
    level=Level.LINE,
    expects=("L4", "R1"),
    official=(L.RELEASED,),
    incident="""A writer stuck in a retry loop flushed its line terminator again and again with
    nothing in front of it, leaving tens of thousands of bare newlines after the last record;
    compressed, the whole run is a few dozen bytes. Each empty line is a line that every
    reader scans and a row that a model of the log keeps, so a file of a few hundred bytes
    can cost seconds and hundreds of megabytes to read.""",
)
def lines_over_limit(lines: LineDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: none. Appends, as a final batch, a drawn number (up to 64) of empty lines
    past the reader's unreadable-line limit. In a JSONL log they cross that limit; in a zstd
    log, where the batch compresses to a few dozen bytes, the line ratio stops the read
    first unless the log before them is large. The first empty line is also R1's (the
    released migration refuses it: "physical line N is not JSON"); the loader drops
    them as an uncommitted tail. Deterministic given its draws."""
    count = DEFAULT_LIMITS.unreadable_lines + data.draw(st.integers(1, 64), label="empty lines past the limit")
    after = lines.count
    if defect:
        lines.frames.append([b""] * count)
    return f"{count} empty lines appended after line {after}"
