"""Writing logs the way the official backend writes them (SPJ:170-172, 1171-1183).

Plain JSONL is the header line followed by each append batch as
``eventLines(batch) + "\\n"`` (chunk runs packed, one ``JSON.stringify`` per row).
The zstd container holds the header line alone in frame 1 and one independent,
checksummed frame per batch. With default options both encoders reproduce the
official writer byte for byte; the options produce the other legal framings
that metamorphic tests need.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ._json import dumpb
from ._rows import pack_chunk_runs
from ._types import SessionLog
from ._zstd import BlockMode, compress_frame, skippable_frame

__all__ = ["batch_text", "encode_jsonl", "encode_log", "encode_zstd", "header_text"]


def header_text(header: Any) -> bytes:
    """The header record as given (``toHeaderLine`` is deliberately not applied) plus ``\\n``."""
    return dumpb(header) + b"\n"


def batch_text(batch: Sequence[Any], *, pack: bool = True) -> bytes:
    """Official ``eventLines(batch, pack) + "\\n"`` (an empty batch is a lone ``\\n``)."""
    rows = pack_chunk_runs(batch) if pack else batch
    return b"\n".join([dumpb(row) for row in rows]) + b"\n"


def encode_jsonl(header: Any, batches: Sequence[Sequence[Any]], *, pack: bool = True) -> bytes:
    """A plain ``.jsonl`` log: header line, then every batch's lines."""
    return header_text(header) + b"".join(batch_text(b, pack=pack) for b in batches)


def encode_zstd(
    header: Any,
    batches: Sequence[Sequence[Any]],
    *,
    pack: bool = True,
    checksum: bool = True,
    content_size: bool = False,
    block: BlockMode = "compressed",
    skippable_before: Collection[int] = (),
) -> bytes:
    """A ``.jsonl.zstd`` log: the header frame, then one frame per batch.

    ``skippable_before`` inserts an empty skippable frame before each listed frame
    index (0 is the header frame; ``len(batches) + 1`` appends one at the end):
    valid zstd that the official reader refuses.
    """
    texts = [header_text(header)] + [batch_text(b, pack=pack) for b in batches]
    out = []
    for index, text in enumerate(texts):
        if index in skippable_before:
            out.append(skippable_frame())
        out.append(compress_frame(text, checksum=checksum, content_size=content_size, block=block))
    if len(texts) in skippable_before:
        out.append(skippable_frame())
    return b"".join(out)


def encode_log(log: SessionLog) -> bytes:
    """The bytes a log was read from, rebuilt from its physical layer.

    zstd: the frames' own bytes, in order. Plain JSONL: the lines joined by ``\\n``,
    with a final ``\\n`` unless the last line is torn. Exact for every file whose
    plain text is valid UTF-8 (invalid bytes were read as U+FFFD).
    """
    if log.compression == "zstd":
        return b"".join(frame.data for frame in log.frames)
    if not log.lines:
        return b""
    text = "\n".join(line.text for line in log.lines)
    if log.lines[-1].terminated:
        text += "\n"
    return text.encode("utf-8")
