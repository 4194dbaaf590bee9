"""The DSH session-log model and its lossless codecs (public surface).

Data flows one way through dshfuzz: model -> generators -> mutators ->
(checker | oracle | official) -> harness -> report. Everything downstream reads
and writes logs through the names exported here.
"""

from ._json import JsonDecodeError, dumps, loads
from ._types import (
    CHUNK_ROW_TYPES,
    ENVELOPE_KEYS,
    MISSING,
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

__all__ = [
    "CHUNK_ROW_TYPES",
    "ENVELOPE_KEYS",
    "MISSING",
    "SURFACE_TYPES",
    "Compression",
    "Diagnostic",
    "Event",
    "Frame",
    "JsonDecodeError",
    "JsonValue",
    "Line",
    "Row",
    "SessionHeader",
    "SessionLog",
    "TornTail",
    "dumps",
    "loads",
]
