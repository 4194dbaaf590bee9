"""Framing incidents: torn tails, corrupted frames, re-compressed logs, empty sessions."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.layers import OfficialLayer as L
from dshfuzz.model import FrameDecodeError, compress_frame, decode_frame

from ._base import Level, mutator
from ._draft import EventDraft, FrameDraft, Inapplicable, LineDraft
from ._select import choose

_LOAD = (L.LOAD, L.LOAD_APP, L.RELEASED)


def _first_block_payload(frame: bytes) -> range:
    """Byte offsets of the first block's payload inside one zstd frame."""
    descriptor = frame[4]
    fcs_flag, single = descriptor >> 6, bool(descriptor & 0x20)
    dict_bytes = (0, 1, 2, 4)[descriptor & 3]
    fcs_bytes = (1 if single else 0) if fcs_flag == 0 else 1 << fcs_flag
    start = 5 + (0 if single else 1) + dict_bytes + fcs_bytes
    block = int.from_bytes(frame[start : start + 3], "little")
    size = 1 if (block >> 1) & 3 == 1 else block >> 3
    return range(start + 3, start + 3 + size)


@mutator(
    "torn-tail-frame",
    level=Level.FRAME,
    compression="zstd",
    expects=("Z1",),
    incident="""The host died (or the disk filled) while the last append batch was being
    written: the file ends inside a zstd frame. The official reader treats the incomplete
    final frame as a torn tail, recovers what it can and truncates back to the frame start.""",
)
def torn_tail_frame(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: at least one append batch. Cuts the final frame after a drawn number
    of bytes (at least one, never all). Deterministic given its draws."""
    last = frames.frames[-1]
    keep = data.draw(st.integers(1, len(last) - 1), label="bytes kept")
    if defect:
        frames.frames[-1] = last[:keep]
    return f"frame {len(frames.frames) - 1} cut to {keep} of {len(last)} bytes"


@mutator(
    "torn-tail-line",
    level=Level.LINE,
    compression="none",
    expects=("Z1",),
    incident="""A plain JSONL log whose writer was interrupted mid-record: the last line is a
    strict prefix of an event row, with no terminating newline. The official loader keeps
    the committed prefix and appends interrupted-turn closers.""",
)
def torn_tail_line(lines: LineDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: at least one event row. Keeps a drawn strict, non-empty prefix of the
    last line and drops its newline. Deterministic given its draws."""
    frame = lines.frames[-1]
    last = frame[-1]
    keep = data.draw(st.integers(1, len(last) - 1), label="bytes kept")
    if defect:
        frame[-1] = last[:keep]
        lines.torn = True
    return f"line {lines.count} cut to {keep} of {len(last)} bytes, newline dropped"


@mutator(
    "corrupt-frame",
    level=Level.FRAME,
    compression="zstd",
    min_batches=2,
    expects=("Z2",),
    official=_LOAD,
    incident="""Bit rot or a torn concurrent write flipped a byte inside a complete, non-final
    zstd frame. Its checksum (or its block structure) no longer validates, and one damaged
    frame makes the whole session unreadable.""",
)
def corrupt_frame(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: two append batches (a complete frame before the last). Flips a drawn
    byte of the first block's payload of a drawn middle frame; rejects the rare flip that
    still decodes to the same bytes. Deterministic given its draws."""
    index = choose(data, range(1, len(frames.frames) - 1), "complete non-final frame")
    frame = bytearray(frames.frames[index])
    offset = choose(data, _first_block_payload(bytes(frame)), "payload byte")
    mask = data.draw(st.integers(1, 255), label="xor mask")
    original = decode_frame(frames.frames[index])
    frame[offset] ^= mask
    try:
        if decode_frame(bytes(frame)) == original:
            raise Inapplicable("the flipped byte does not change the frame's content")
    except FrameDecodeError:
        pass
    if defect:
        frames.frames[index] = bytes(frame)
    return f"frame {index} byte {offset} xor 0x{mask:02x}"


@mutator(
    "bad-magic",
    level=Level.FRAME,
    compression="zstd",
    expects=("Z2",),
    official=_LOAD,
    incident="""A frame after the header frame no longer starts with the zstd magic number
    (a partial overwrite, or bytes spliced in by a non-zstd writer). The official frame scan
    stops with "invalid frame magic" and the session cannot be read.""",
)
def bad_magic(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: one append batch. XORs a drawn non-zero mask into one of the four magic
    bytes of a drawn non-header frame. Deterministic given its draws."""
    index = choose(data, range(1, len(frames.frames)), "non-header frame")
    byte = data.draw(st.integers(0, 3), label="magic byte")
    mask = data.draw(st.integers(1, 255), label="xor mask")
    if defect:
        frame = bytearray(frames.frames[index])
        frame[byte] ^= mask
        frames.frames[index] = bytes(frame)
    return f"frame {index} magic byte {byte} xor 0x{mask:02x}"


@mutator(
    "header-batch-merged",
    level=Level.FRAME,
    compression="zstd",
    min_batches=2,
    expects=("Z4",),
    official=_LOAD,
    incident="""A tool rewrote a session by compressing the header together with the first
    append batch(es) into one frame. The host requires the first frame to be exactly the
    header line and throws while listing artifacts, so the whole client fails to start.""",
)
def header_batch_merged(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: two append batches (so that at least one frame stays separate).
    Re-compresses the header frame with a drawn number of following batches as one frame.
    Deterministic given its draws."""
    count = data.draw(st.integers(1, len(frames.frames) - 2), label="batches merged")
    if defect:
        merged = b"".join(decode_frame(f) for f in frames.frames[: count + 1])
        frames.frames[: count + 1] = [compress_frame(merged)]
    return f"header frame merged with the next {count} batch frame(s)"


@mutator(
    "single-frame",
    level=Level.FRAME,
    compression="zstd",
    expects=("Z4", "Z5"),
    official=_LOAD,
    incident="""2026-09-16: someone re-compressed a whole session log into a single zstd frame
    and wrote it back. The first frame is no longer the header line alone, and the host
    refused to start.""",
)
def single_frame(frames: FrameDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: one append batch. Re-compresses the whole log as one frame (no draws).
    Deterministic."""
    count = len(frames.frames)
    if defect:
        merged = b"".join(decode_frame(f) for f in frames.frames)
        frames.frames[:] = [compress_frame(merged)]
    return f"{count} frames re-compressed as one"


@mutator(
    "empty-session",
    level=Level.EVENT,
    expects=("Z3",),
    incident="""A session was created and then nothing reached the disk (a client crashed
    before its first append, or writes never flushed): a header and zero events. No
    content rule covers the empty state, so it must be reported on its own.""",
)
def empty_session(draft: EventDraft, data: Any, *, defect: bool = True) -> str:
    """Precondition: none. Drops every event and the header's seedLength (no draws).
    Deterministic."""
    count = len(draft.events)
    if defect:
        draft.events.clear()
        draft.cuts.clear()
        if type(draft.header) is dict:
            draft.header.pop("seedLength", None)
    return f"all {count} events removed"
