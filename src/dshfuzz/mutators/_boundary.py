"""Framing boundary perturbations: every way a record, a line or a zstd frame can end.

``framing-boundary`` declares no rule (``must_find=False``): the official reader says what
each variant is. Some are valid zstd the reader still refuses (a skippable frame), some are
accepted by every layer (a frame without checksum, a record split across two frames), and
some are corrupt (a reserved block type or frame-header bit, a wrong checksum); a checker
must agree with the reader on each. The incident mutators cover the torn tails and bit rot;
these cover the boundaries a writer or a tool other than the official one leaves behind.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dshfuzz.model import FrameDecodeError, compress_frame, decode_frame, skippable_frame

from ._base import Level
from ._draft import FrameDraft, Inapplicable
from ._perturb import perturbation

__all__ = ["BOUNDARIES", "PLAIN_BOUNDARIES", "ZSTD_BOUNDARIES", "boundary"]

PLAIN_BOUNDARIES = ("crlf-line", "lone-cr", "no-final-newline", "blank-line", "header-unterminated", "empty-file")
"""Line-terminator variants (either container: in zstd they are made inside a frame's text)."""

ZSTD_BOUNDARIES = ("reserved-block-type", "reserved-header-bit", "wrong-checksum", "no-checksum", "content-size",
                   "skippable", "empty-frame", "split-record", "unterminated-last-frame", "no-complete-frame")
"""Zstd frame variants (a plain log has no frames: drawn on zstd logs only)."""

BOUNDARIES = PLAIN_BOUNDARIES + ZSTD_BOUNDARIES


def _texts(frames: FrameDraft) -> list[bytes]:
    """Each frame's plaintext (for ``none`` the frames are text already)."""
    if frames.compression != "zstd":
        return list(frames.frames)
    try:
        return [decode_frame(f) for f in frames.frames]
    except FrameDecodeError:
        raise Inapplicable("a frame does not decode") from None


def _line_ends(text: bytes) -> list[int]:
    return [i for i, b in enumerate(text) if b == 0x0A]


def _descriptor(frame: bytes | bytearray) -> int:
    """Offset of the frame-header descriptor (after the 4-byte magic)."""
    if len(frame) < 6:
        raise Inapplicable("the frame is too short to carry a header")
    return 4


def _first_block(frame: bytes | bytearray) -> int:
    """Offset of the first block header in a frame (the magic, descriptor, window, dictionary id
    and content size skipped)."""
    d = frame[4]
    fcs_flag, single = d >> 6, bool(d & 0x20)
    fcs = (1 if single else 0) if fcs_flag == 0 else 1 << fcs_flag
    return 5 + (0 if single else 1) + (0, 1, 2, 4)[d & 3] + fcs


@perturbation(
    "framing-boundary",
    "a record, line or zstd frame boundary written another way: CRLF or a lone CR, no final newline, a blank "
    "line, an unterminated header, an empty file; a reserved block type or frame-header bit, a wrong or absent checksum, a "
    "content-size field, a skippable frame before, between or after, an empty frame, a record split across two "
    "frames, an unterminated last frame, no complete frame at all",
    Level.FRAME,
    must_find=False,
)
def framing_boundary(frames: FrameDraft, data: Any) -> str:
    """Draws a variant of :data:`BOUNDARIES` (zstd variants only on a zstd log) and a frame, and
    applies it there. Text variants re-encode the edited frame the way the writer does
    (checksummed, no content size); byte variants edit the encoded bytes, re-encoding the frame
    with raw blocks first where a block header must be found. Deterministic given the draws."""
    zstd = frames.compression == "zstd"
    variant = data.draw(st.sampled_from(BOUNDARIES if zstd else PLAIN_BOUNDARIES), label="variant")
    return boundary(frames, data, variant)


def boundary(frames: FrameDraft, data: Any, variant: str) -> str:
    """Applies ``variant`` of :data:`BOUNDARIES` to ``frames`` (see :func:`framing_boundary`);
    :class:`Inapplicable` for a zstd variant on a plain log."""
    zstd = frames.compression == "zstd"
    if variant not in BOUNDARIES:
        raise ValueError(f"unknown framing boundary {variant!r}")
    if variant in ZSTD_BOUNDARIES and not zstd:
        raise Inapplicable(f"{variant} needs zstd frames")
    texts = _texts(frames)
    n = len(texts)
    if variant in PLAIN_BOUNDARIES:
        if variant == "empty-file":  # a file created and never written: no header line, no frame
            frames.frames[:] = []
            return f"{variant}: every byte removed"
        if variant == "header-unterminated":
            texts[:] = [texts[0].rstrip(b"\n")]
            where = "the header line alone, unterminated"
        elif variant == "no-final-newline":
            if not texts[-1].endswith(b"\n"):
                raise Inapplicable("the log ends unterminated already")
            texts[-1] = texts[-1][:-1]
            where = "the last line unterminated"
        else:
            f = data.draw(st.integers(0, n - 1), label="frame")
            ends = _line_ends(texts[f])
            if not ends:
                raise Inapplicable("the frame holds no line end")
            at = ends[data.draw(st.integers(0, len(ends) - 1), label="line")]
            new = {"crlf-line": b"\r\n", "lone-cr": b"\r", "blank-line": b"\n\n"}[variant]
            texts[f] = texts[f][:at] + new + texts[f][at + 1:]
            where = f"frame {f} byte {at}: {new!r} as the line end"
        if zstd:
            frames.frames[:] = [compress_frame(t) for t in texts]
        else:
            frames.frames[:] = texts
        return f"{variant}: {where}"
    if variant == "skippable":
        at = data.draw(st.integers(0, n), label="position")
        payload = data.draw(st.binary(max_size=8), label="payload")
        frames.frames.insert(at, skippable_frame(payload, nibble=data.draw(st.integers(0, 15), label="nibble")))
        return f"skippable frame at position {at} of {n}"
    if variant == "empty-frame":
        at = data.draw(st.integers(1, n), label="position")
        frames.frames.insert(at, compress_frame(b""))
        return f"empty frame at position {at} of {n}"
    if variant == "no-complete-frame":
        whole = len(frames.frames[0])
        keep = data.draw(st.integers(0, whole - 1), label="bytes kept")
        frames.frames[:] = [frames.frames[0][:keep]]
        return f"the header frame cut to {keep} of {whole} bytes, nothing after"
    if variant == "unterminated-last-frame":
        if n < 2:
            raise Inapplicable("no frame after the header")
        frames.frames[-1] = compress_frame(texts[-1].rstrip(b"\n"))
        return "the last frame's last line unterminated"
    f = data.draw(st.integers(0, n - 1), label="frame")
    if variant == "split-record":
        text = texts[f]
        cuts = [i for i in range(1, len(text)) if text[i - 1] != 0x0A]
        if not cuts:
            raise Inapplicable("the frame has no byte inside a record")
        cut = cuts[data.draw(st.integers(0, len(cuts) - 1), label="cut")]
        frames.frames[f:f + 1] = [compress_frame(text[:cut]), compress_frame(text[cut:])]
        return f"frame {f} split at byte {cut} of {len(text)}"
    if variant == "no-checksum":
        frames.frames[f] = compress_frame(texts[f], checksum=False)
        return f"frame {f} without checksum"
    if variant == "content-size":
        raw = data.draw(st.booleans(), label="raw")
        frames.frames[f] = compress_frame(texts[f], content_size=True, block="raw" if raw else "compressed")
        return f"frame {f} with a content-size field ({'raw' if raw else 'compressed'} blocks)"
    frame = bytearray(frames.frames[f])
    if variant == "wrong-checksum":
        if not frame[_descriptor(frame)] & 0x04:
            raise Inapplicable("the frame carries no checksum")
        bit = data.draw(st.integers(0, 31), label="bit")
        frame[len(frame) - 4 + bit // 8] ^= 1 << (bit % 8)
        where = f"checksum bit {bit} flipped"
    elif variant == "reserved-header-bit":
        bit = data.draw(st.sampled_from((3, 4)), label="bit")
        frame[_descriptor(frame)] |= 1 << bit
        where = f"descriptor bit {bit} set"
    else:  # reserved-block-type: raw blocks make the first block header easy to find
        frame = bytearray(compress_frame(texts[f], block="raw"))
        frame[_first_block(frame)] |= 0b110
        where = "first block type 3"
    frames.frames[f] = bytes(frame)
    return f"frame {f}: {where}"
