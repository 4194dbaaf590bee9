"""The zstd inflation budget: how much plaintext a log's frames may inflate to.

One budget serves every reader of a zstd log (the model's reader, the minimiser), so that
each stops a zstd bomb at the same byte: per frame the least of the frame limit and the
frame's ratio allowance, and in all the least of the file limit and the file's ratio
allowance (:meth:`Limits.frame_allowance`). A frame over it is never decoded past the limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._limits import LimitHit, LimitKind, Limits
from ._zstd import FrameLayout, FrameLimitError, decode_frame

__all__ = ["InflationBudget"]


@dataclass(frozen=True, slots=True)
class _Bound:
    """One bound on a frame's plaintext: ``allowed`` bytes from here, under the
    ``kind`` limit of ``limit`` bytes (over ``compressed`` input bytes for a ratio);
    a ``whole_file`` bound also counts the plaintext of the frames before."""

    allowed: int
    kind: LimitKind
    limit: int
    compressed: int | None = None
    whole_file: bool = False


class InflationBudget:
    """The plaintext the frames of one zstd file of ``file_size`` bytes may still produce.

    Invariant: ``produced`` is the plaintext of the frames inflated through :meth:`inflate`
    so far, in file order; a frame the budget refused spent nothing."""

    __slots__ = ("file_size", "limits", "produced")

    def __init__(self, limits: Limits, file_size: int) -> None:
        self.limits = limits
        self.file_size = file_size
        self.produced = 0

    def inflate(
        self, data: bytes | memoryview, compressed: int, declared: int | None,
        decode: Callable[[bytes | memoryview, int], bytes] = decode_frame,
    ) -> bytes:
        """``decode(data, allowed)`` for a frame of ``compressed`` bytes that declares
        ``declared`` bytes of plaintext (``None``: no size in its header), its plaintext spent.

        Raises :class:`FrameLimitError` when the frame declares more than the budget allows
        (``declared`` set: nothing was decoded) or inflates past it; ``decode``'s own errors
        pass through."""
        allowed = self.limits.frame_allowance(compressed, self.file_size, self.produced)
        if declared is not None and declared > allowed:
            raise FrameLimitError(declared, allowed, declared=True)
        content = decode(data, allowed)
        self.produced += len(content)
        return content

    def bounds(self, lay: FrameLayout) -> tuple[_Bound, _Bound]:
        """The tightest frame-level bound and the tightest file-level bound on ``lay``."""
        limits = self.limits
        by_ratio = limits.inflation_allowed(lay.size)
        file_ratio = limits.inflation_allowed(self.file_size)
        frame = min(
            _Bound(limits.frame_bytes, "frame-bytes", limits.frame_bytes),
            _Bound(by_ratio, "ratio", by_ratio, lay.size),
            key=lambda b: b.allowed,
        )
        whole = min(
            _Bound(limits.file_bytes - self.produced, "file-bytes", limits.file_bytes, None, True),
            _Bound(file_ratio - self.produced, "ratio", file_ratio, self.file_size, True),
            key=lambda b: b.allowed,
        )
        return frame, whole

    def hit(self, lay: FrameLayout, index: int, refused: FrameLimitError) -> LimitHit:
        """The limit frame ``index`` (laid out as ``lay``) hit when :meth:`inflate` refused it:
        the frame's own bound when that alone refuses it, else the file's."""
        observed, exact = refused.produced, refused.declared
        frame, whole = self.bounds(lay)
        if observed > frame.allowed:
            return LimitHit(frame.kind, frame.limit, observed, exact, None, index, lay.offset, frame.compressed)
        total = observed + self.produced
        return LimitHit(whole.kind, whole.limit, total, exact, None, index, lay.offset, whole.compressed, True)
