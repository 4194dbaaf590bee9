"""Shapes a strict official reader refuses although a lenient one reads past them.

Each mutator here makes every variant of one malformed shape that some official
layer refuses and that a checker reading the log's lines or messages loosely can
miss: a first zstd frame that is not exactly the header line (the loader's
``assertZstdHeaderFrame`` checks bytes, not lines).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.model import compress_frame, decode_frame

from ._base import Level, mutator
from ._draft import FrameDraft, Inapplicable

_LOAD = ("load", "loadApp", "released")

_HEADER_FRAME_SHAPES = ("no newline", "two lines", "header and part of an event", "empty frame")


@mutator(
    "header-frame-shape",
    level=Level.FRAME,
    compression="zstd",
    expects=("Z4",),
    official=_LOAD,
    incident="""A rewriting tool (or a writer flushing its header and first batch on other
    boundaries) left a first zstd frame that is not exactly the header line: the header
    without its newline (the newline opens the next frame), the header with whole event
    lines after it, the header with the start of an event line that the next frame
    finishes, or an empty frame before the header. Joined, the plaintext still reads as the
    same lines, so a reader that only splits lines sees nothing wrong; the official loader
    requires the first frame's only newline to be its last byte and refuses the session.""",
)
def header_frame_shape(frames: FrameDraft, data: Any) -> str:
    """Precondition: one append batch (for two lines: a first batch of two lines or more).
    Moves bytes between the header frame and the first batch frame so that their joined
    plaintext is unchanged, in a drawn shape: the header's newline moved to the start of
    the next frame; a drawn number of the first batch's lines moved into the header frame;
    a drawn prefix (at least one byte, never its newline) of the first batch's first line
    moved into it; or an empty frame inserted before it. Deterministic given its draws."""
    shape = data.draw(st.sampled_from(_HEADER_FRAME_SHAPES), label="shape")
    if shape == "empty frame":
        frames.frames.insert(0, compress_frame(b""))
        return "an empty zstd frame inserted before the header frame"
    head, batch = decode_frame(frames.frames[0]), decode_frame(frames.frames[1])
    if shape == "no newline":
        frames.frames[:2] = [compress_frame(head[:-1]), compress_frame(b"\n" + batch)]
        return "the header's newline moved to the start of frame 1"
    if shape == "two lines":
        lines = batch.split(b"\n")[:-1]  # the batch ends on its last newline
        if len(lines) < 2:
            raise Inapplicable("the first batch has a single line")
        count = data.draw(st.integers(1, len(lines) - 1), label="lines moved")
        moved = sum(len(line) + 1 for line in lines[:count])
        what = f"{count} line(s) of the first batch moved into the header frame"
    else:
        first = batch.index(b"\n")
        moved = data.draw(st.integers(1, first), label="bytes moved")
        what = f"the first {moved} of {first} bytes of line 2 moved into the header frame"
    frames.frames[:2] = [compress_frame(head + batch[:moved]), compress_frame(batch[moved:])]
    return what
