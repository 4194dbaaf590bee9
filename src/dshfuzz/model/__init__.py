"""The DSH session-log model and its lossless codecs (public surface).

The model sits on :mod:`dshfuzz.contracts` and below everything else: the generators,
the mutators, the reference oracle and the checker each read and write logs through
the names exported here (the import contracts in ``pyproject.toml`` hold the layering).
The judges (the checker, the reference oracle and the official layers behind the Node
bridge) read a log each on their own: none imports another's models or verdicts, so
that the harness's differentials between them can disagree.
"""

from dshfuzz._atomic import write_atomic
from dshfuzz.contracts import MISSING

from ._budget import InflationBudget
from ._file import FileBytes, FileChangedError
from ._json import JsonDecodeError, dumpb, dumps, js_number, loads, may_hold_lossy_number
from ._limits import DEFAULT_LIMITS, LimitHit, LimitKind, Limits, json_depth
from ._reader import compression_by_name, parse_events, parse_log, read_log, sniff_compression, stream_log
from ._stream import RowConsumer, StreamedLog
from ._rows import (
    MIN_RUN,
    ChunkPacker,
    RowDecodeError,
    decode_storage_record,
    is_safe_integer,
    pack_chunk_runs,
    unpack_rows,
)
from ._types import (
    CHUNK_ROW_TYPES,
    ENVELOPE_KEYS,
    SURFACE_TYPES,
    Compression,
    Diagnostic,
    Event,
    Frame,
    JsonValue,
    Line,
    Row,
    SessionHeader,
    SessionLog,
    TornTail,
)
from ._writer import batch_text, encode_jsonl, encode_log, encode_zstd, header_text
from ._zstd import (
    ZSTD_MAGIC,
    BlockMode,
    FrameDecodeError,
    FrameLayout,
    FrameLimitError,
    compress_frame,
    decode_frame,
    frame_compressor,
    recover_torn_frame,
    repeat_frame,
    scan_frames,
    skippable_frame,
)

__all__ = [
    "CHUNK_ROW_TYPES",
    "DEFAULT_LIMITS",
    "ENVELOPE_KEYS",
    "MIN_RUN",
    "MISSING",
    "SURFACE_TYPES",
    "ZSTD_MAGIC",
    "BlockMode",
    "ChunkPacker",
    "Compression",
    "Diagnostic",
    "Event",
    "FileBytes",
    "FileChangedError",
    "Frame",
    "FrameDecodeError",
    "FrameLayout",
    "FrameLimitError",
    "InflationBudget",
    "JsonDecodeError",
    "JsonValue",
    "LimitHit",
    "LimitKind",
    "Limits",
    "Line",
    "Row",
    "RowConsumer",
    "RowDecodeError",
    "SessionHeader",
    "SessionLog",
    "StreamedLog",
    "TornTail",
    "batch_text",
    "compress_frame",
    "compression_by_name",
    "decode_frame",
    "decode_storage_record",
    "dumpb",
    "dumps",
    "encode_jsonl",
    "encode_log",
    "encode_zstd",
    "frame_compressor",
    "header_text",
    "is_safe_integer",
    "js_number",
    "json_depth",
    "loads",
    "may_hold_lossy_number",
    "pack_chunk_runs",
    "parse_events",
    "parse_log",
    "read_log",
    "recover_torn_frame",
    "repeat_frame",
    "scan_frames",
    "skippable_frame",
    "sniff_compression",
    "stream_log",
    "unpack_rows",
    "write_atomic",
]
