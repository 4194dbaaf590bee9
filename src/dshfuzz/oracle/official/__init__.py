"""The official DSH packages (rc.8 set, Node 24) as a ground-truth oracle.

:class:`OfficialOracle` runs a long-lived Node server over the official layers
and returns typed verdicts; see :mod:`._client` for the guarantees and
``js/server.mjs`` for the protocol. Importing this package starts nothing and
imports nothing heavy; the server starts on the first call.

    with OfficialOracle() as oracle:
        verdicts = oracle.check(path="log.jsonl.zstd")   # {layer: LayerVerdict}
"""

from ._client import COVERAGE_GRANULARITIES, CheckReport, CoverageGranularity, Flight, OfficialOracle, RawLog
from ._layers import EVENT_LAYERS, FILE_LAYERS, LAYERS, MANIFEST_LAYER_NAMES
from ._server import unavailable_reason
from ._unreachable import UNREACHABLE_REASONS, UnreachableSite, unreachable_sites
from ._verdict import (
    LayerVerdict,
    OfficialError,
    OfficialRefusal,
    OracleCrashed,
    OracleError,
    OracleProtocolError,
    OracleTimeout,
    OracleUnavailable,
    ReachedFirst,
    RefusalSite,
    Reply,
    normalise_message,
    parse_coordinates,
)

__all__ = [
    "COVERAGE_GRANULARITIES",
    "EVENT_LAYERS",
    "FILE_LAYERS",
    "LAYERS",
    "MANIFEST_LAYER_NAMES",
    "UNREACHABLE_REASONS",
    "CheckReport",
    "CoverageGranularity",
    "Flight",
    "LayerVerdict",
    "OfficialError",
    "OfficialOracle",
    "OfficialRefusal",
    "OracleCrashed",
    "OracleError",
    "OracleProtocolError",
    "OracleTimeout",
    "OracleUnavailable",
    "RawLog",
    "ReachedFirst",
    "RefusalSite",
    "Reply",
    "UnreachableSite",
    "normalise_message",
    "parse_coordinates",
    "unavailable_reason",
    "unreachable_sites",
]
