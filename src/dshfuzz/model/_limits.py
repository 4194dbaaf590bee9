"""The reader's resource limits: how much hostile input it agrees to materialise.

A session log arrives from crashed processes, half-written disks and other tools,
so the reader bounds what one file may cost before it has judged anything:

- ``frame_bytes``: decompressed bytes of one zstd frame. A frame's plaintext is
  held whole until its checksum validates (the official reader commits nothing
  from a frame that fails), so this bounds that transient buffer.
- ``file_bytes``: decompressed bytes of the whole file, the bound on work.
- ``ratio`` beyond ``ratio_floor``: decompressed over compressed bytes, for one
  frame and for the whole file. Output up to ``ratio_floor`` is always allowed
  (a header frame of 100 bytes may well inflate 5x). This is what stops a zstd
  bomb early: 32 KiB of RLE blocks may declare or inflate to 1 GiB, but the
  reader stops after ``max(ratio_floor, ratio * 32 KiB)`` bytes.
- ``line_bytes``: one line (split on ``\\n``). An over-long line is measured while
  it streams past, never joined into one buffer or parsed.
- ``depth``: JSON nesting of one line, found by an iterative pre-scan before any
  parser sees the line. orjson stops at 1024 levels and ``json`` recurses in
  Python (and so do the exact encoder and the rule passes that walk a value), so
  512 keeps a margin below the interpreter's recursion limit.
- ``unreadable_lines``: lines that hold no event (empty, not JSON, or a
  malformed packed row). Each still costs the model a line, a row and a
  diagnostic (about 400 bytes and 8 microseconds), so a megabyte of bare
  newlines would cost 400 MB; a file this damaged says nothing more after ten
  thousand of them.
- ``lines_per_byte`` beyond ``line_floor``: lines of a zstd file per compressed
  byte read so far, the ratio limit counted in lines. A line costs the model
  and the rules far more than its bytes do, and zstd packs tens of thousands of
  short lines into a few hundred bytes (measured: a 469-byte file, 493,599
  empty lines, 4 s to read); a log's lines differ at least in seq and time,
  which costs compressed bytes (the 200k synthetic log spends 100 per line,
  400 consecutive bare turn/start events still 2.2), so one line per byte
  leaves a wide margin.

The defaults admit every legitimate log in the repository with a wide margin:
the 1M-event synthetic log has 120 MB of plaintext in frames of at most 13 KB
(ratio 3.7, 4.9 for the densest frame) and no line over 3 KB; its 200k-event
sibling spends 100 compressed bytes per line, and every real session 100 or
more file bytes per line; no real session nests deeper than 30 levels or holds
more than 4 unreadable lines. When a limit is exceeded the reader stops there:
the model is the prefix before the offending frame or line, and
:attr:`SessionLog.limit` says which limit, where.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["DEFAULT_LIMITS", "LimitHit", "LimitKind", "Limits", "json_depth"]

_MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one read (see the module docstring for each bound)."""

    frame_bytes: int = 64 * _MIB
    file_bytes: int = 1024 * _MIB
    ratio: int = 64
    ratio_floor: int = 16 * _MIB
    line_bytes: int = 32 * _MIB
    depth: int = 512
    unreadable_lines: int = 10_000
    lines_per_byte: int = 1
    line_floor: int = 4096

    def inflation_allowed(self, compressed: int) -> int:
        """Decompressed bytes that ``compressed`` input bytes may produce under the ratio limit."""
        return max(self.ratio_floor, self.ratio * compressed)

    def frame_allowance(self, compressed: int, file_size: int, produced: int) -> int:
        """Plaintext that one frame of ``compressed`` bytes may inflate to, in a file of
        ``file_size`` bytes whose earlier frames produced ``produced``: the least of the
        frame limit, the frame's ratio allowance, and what is left of the file's allowance
        (its limit, or its ratio allowance when that is smaller)."""
        whole_file = min(self.file_bytes, self.inflation_allowed(file_size))
        return max(0, min(self.frame_bytes, self.inflation_allowed(compressed), whole_file - produced))

    def lines_allowed(self, compressed: int) -> int:
        """Lines that ``compressed`` bytes of a zstd file may hold under the line ratio."""
        return max(self.line_floor, self.lines_per_byte * compressed)


DEFAULT_LIMITS: Final = Limits()

LimitKind = Literal["frame-bytes", "file-bytes", "ratio", "line-bytes", "depth", "unreadable-lines", "line-ratio"]


@dataclass(frozen=True, slots=True)
class LimitHit:
    """The limit that stopped a read, and where.

    ``observed`` is what had been measured when reading stopped: a frame's
    declared content size, the plaintext produced so far (of the frame, or of the
    whole file for a ``whole_file`` bound), a line's length so far, a line's
    nesting depth (the scan stops one level past the limit), the count of
    unreadable lines, or the count of lines. ``exact`` is false when it is only a
    lower bound (decoding or measuring stopped at the limit). For ``ratio``,
    ``limit`` is the plaintext the ratio allowed from ``compressed`` input bytes;
    for ``line-ratio``, the lines it allowed. ``line`` is the 1-based line the
    offending text starts, ``frame`` the 0-based zstd frame, ``offset`` the byte
    offset of the frame in the file, or of the line in the file (plain JSONL) or
    in the frames' concatenated plaintext (zstd).
    """

    kind: LimitKind
    limit: int
    observed: int
    exact: bool
    line: int | None = None
    frame: int | None = None
    offset: int | None = None
    compressed: int | None = None
    whole_file: bool = False

    @property
    def code(self) -> str:
        return f"limit.{self.kind}"

    @property
    def message(self) -> str:
        stopped = "decoding" if self.frame is not None and self.line is None else "reading"
        amount = (
            str(self.observed)
            if self.exact
            else f"more than {self.limit} ({stopped} stopped after {self.observed})"
        )
        if self.kind == "depth":
            levels = self.observed if self.exact else f"more than {self.limit}"
            return f"line {self.line} nests {levels} levels deep, over the reader's limit of {self.limit}; reading stopped there"
        if self.kind == "line-bytes":
            return f"line {self.line} holds {amount} bytes, over the reader's limit of {self.limit} per line; reading stopped there"
        if self.kind == "unreadable-lines":
            return (f"line {self.line} is unreadable line number {self.observed} (empty, not JSON, or a malformed "
                    f"row), over the reader's limit of {self.limit} per file; reading stopped there")
        if self.kind == "line-ratio":
            return (f"line {self.line} takes the file past the line-ratio limit ({self.limit} lines from its first "
                    f"{self.compressed} compressed bytes); reading stopped there")
        frame = f"zstd frame {self.frame} at byte {self.offset}"
        if self.whole_file:
            what = f"{frame} takes the file's plaintext to {amount} bytes"
        else:
            what = f"{frame} {'declares' if self.exact else 'holds'} {amount} bytes of plaintext"
        if self.kind == "ratio":
            scope = "the file's" if self.whole_file else "its"
            bound = f"the compression-ratio limit ({self.limit} bytes from {scope} {self.compressed} compressed bytes)"
        else:
            bound = f"the reader's limit of {self.limit} per {'file' if self.whole_file else 'frame'}"
        return f"{what}, over {bound}; reading stopped there"


_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_SPAN = 256
"""Brackets per span of the running-depth scan: a span whose opening brackets cannot
lift the depth past the bound is skipped after two counts."""
_WINDOW = 1 << 18
"""Bytes of a line split on quotes at once: the pieces of one window are all that is
ever held (a regex cutting strings out of a 16 MiB line of ``["a",`` built 360 MB of them)."""


def _brackets_outside_strings(raw: bytes) -> Iterator[bytes]:
    """The brackets of ``raw`` that lie outside its strings, window by window.

    Escaped backslashes and escaped quotes are blanked first (left to right, as the
    text reads), so every remaining quote opens or closes a string: the text between
    the even-numbered quotes is outside, and a window's quote count says whether the
    next one starts inside a string.
    """
    text = raw.replace(b"\\\\", b"  ").replace(b'\\"', b"  ")
    inside = False
    for start in range(0, len(text), _WINDOW):
        pieces = text[start : start + _WINDOW].split(b'"')
        yield b"".join(pieces[1::2] if inside else pieces[0::2]).translate(None, _NOT_BRACKET)
        inside ^= len(pieces) % 2 == 0


def json_depth(raw: bytes, bound: int) -> int:
    """The nesting depth of the JSON text ``raw`` up to ``bound``, and ``bound + 1`` when
    it is deeper: so ``json_depth(raw, bound) > bound`` exactly when ``raw`` nests deeper
    than ``bound``. At or below the bound the answer is an upper bound.

    Iterative and linear: no recursion, whatever the depth. When ``raw`` holds at
    most ``bound`` brackets in all (almost every line) the answer is that count,
    found at memchr speed; otherwise the brackets outside strings (theirs are data)
    are scanned span by span: a span is walked bracket by bracket only when its
    opening brackets could lift the depth past the bound, and the scan stops as soon
    as they do. Sixteen million brackets then cost at most about 1.2 s, and a line
    deeper than the bound far less (measuring the exact depth of 16 MB of ``[[],``
    took 2.7 s, past the fuzzers' 2-second hang limit). Malformed text still gets a
    number; the parser judges it later.
    """
    brackets = raw.count(b"[") + raw.count(b"{")
    if brackets <= bound:
        return brackets
    depth = 0
    for structure in _brackets_outside_strings(raw):
        for start in range(0, len(structure), _SPAN):
            span = structure[start : start + _SPAN]
            opens = span.count(b"[") + span.count(b"{")
            if depth + opens > bound:
                for step in map(_STEP.__getitem__, span):
                    depth += step
                    if depth > bound:
                        return bound + 1
            else:
                depth += 2 * opens - len(span)
    return bound
