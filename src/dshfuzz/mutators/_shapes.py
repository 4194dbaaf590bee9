"""Shapes a strict official reader refuses although a lenient one reads past them.

Each mutator here makes every variant of one malformed shape that some official
layer refuses and that a checker reading the log's lines or messages loosely can
miss: a first zstd frame that is not exactly the header line (the loader's
``assertZstdHeaderFrame`` checks bytes, not lines), and a message content element that is
not a typed object (the shape check reads the array, not its elements; the released
migration reads each, and a ``null`` one crashes every reader that asks it for its type).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L
from dshfuzz.model import JsonValue, compress_frame, decode_frame

from ._base import Level, mutator
from ._draft import EventDraft, FrameDraft, Inapplicable, copy_json
from ._select import choose, message_of

_LOAD = (L.LOAD, L.LOAD_APP, L.RELEASED)

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
def header_frame_shape(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: one append batch (for two lines: a first batch of two lines or more).
    Moves bytes between the header frame and the first batch frame so that their joined
    plaintext is unchanged, in a drawn shape: the header's newline moved to the start of
    the next frame; a drawn number of the first batch's lines moved into the header frame;
    a drawn prefix (at least one byte, never its newline) of the first batch's first line
    moved into it; or an empty frame inserted before it. Deterministic given its draws."""
    shape = data.draw(st.sampled_from(_HEADER_FRAME_SHAPES), label="shape")
    if shape == "empty frame":
        if defect:
            frames.frames.insert(0, compress_frame(b""))
        return "an empty zstd frame inserted before the header frame"
    head, batch = decode_frame(frames.frames[0]), decode_frame(frames.frames[1])
    if shape == "no newline":
        if defect:
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
    if defect:
        frames.frames[:2] = [compress_frame(head + batch[:moved]), compress_frame(batch[moved:])]
    return what


_MESSAGE_TYPES = ("user/message", "assistant/message", "tool/result")
_BAD_ELEMENTS: tuple[JsonValue, ...] = (None, 0, "text", [], {}, {"text": "x"}, {"type": ""}, {"type": 7}, {"type": None, "text": "x"})


@mutator(
    "content-element-shape",
    level=Level.EVENT,
    expects=("E6",),
    official=(L.RELEASED,),
    formats=frozenset({0}),  # format 1 is restored without the payload check: no layer refuses a non-null element
    incident="""A plugin or a hand edit left a message whose content array holds an element
    that is not a typed block: null (a serialiser writing a hole), a bare string or number,
    a nested array, or an object without a non-empty string type; in an assistant message
    it may be the tool-call block itself that was nulled. The host's shape check reads the
    array but not its elements, so the session seeds and mostly loads; the released
    migration refuses the element, and a null one crashes the token meter, the request
    serializer and, in an assistant message, the loader's validation.""",
)
def content_element_shape(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: a user/message, assistant/message or tool/result whose message content
    is an array. Inserts a drawn malformed element at a drawn position of a drawn such
    message, or replaces a drawn existing element (a tool-call or tool-result block among
    them) by it. Deterministic given its draws."""
    candidates = [i for i in draft.of_type(*_MESSAGE_TYPES) if type(message_of(draft.events[i]).get("content")) is list]
    i = choose(data, candidates, "message with a content array")
    content = message_of(draft.events[i] if defect else copy_json(draft.events[i]))["content"]  # a twin: a copy
    bad = data.draw(st.sampled_from(_BAD_ELEMENTS), label="element")
    bad = bad.copy() if isinstance(bad, (dict, list)) else bad
    if content and data.draw(st.booleans(), label="replace"):
        k = data.draw(st.integers(0, len(content) - 1), label="element replaced")
        content[k] = bad
        how = "replaced by"
    else:
        k = data.draw(st.integers(0, len(content)), label="element inserted")
        content.insert(k, bad)
        how = "inserted:"
    return f"seq {i} {draft.events[i]['type']} content[{k}] {how} {bad!r}"
