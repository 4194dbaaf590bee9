"""Coverage-guided fuzzing of dshfuzz's byte-level entry points with atheris (libFuzzer).

The targets (``TARGETS``) are the JSONL and zstd readers, the chunk-row decoder
and the whole checker on both containers; each must return on any input. The
runner fuzzes them in a child process with a structure-aware custom mutator
that applies dshfuzz's own edits, and turns every crash, hang or memory blow-up
into a minimised corpus witness that replays as a regression test. A run returns an
:class:`AtherisSummary` and prints nothing; ``dshfuzz.report`` renders and writes it.
"""

from ._findings import (
    HANG_SECONDS,
    RSS_LIMIT_MB,
    Finding,
    TargetFailure,
    replay_witness,
    save_finding,
    witness_signature,
)
from ._libfuzzer import FuzzStats, OutputParser
from ._mutator import StructuredMutator, edits
from ._runner import AtherisConfig, AtherisError, StatusCallback, fuzz_target, run_atheris
from ._seeds import SeedSources, write_seeds
from ._summary import SUMMARY_FORMAT, AtherisSummary, TargetSummary
from ._targets import TARGETS, CheckerInternalError, Target, atheris_targets, resolve_target

__all__ = [
    "HANG_SECONDS",
    "RSS_LIMIT_MB",
    "SUMMARY_FORMAT",
    "TARGETS",
    "AtherisConfig",
    "AtherisError",
    "AtherisSummary",
    "CheckerInternalError",
    "Finding",
    "FuzzStats",
    "OutputParser",
    "SeedSources",
    "StatusCallback",
    "StructuredMutator",
    "Target",
    "TargetFailure",
    "TargetSummary",
    "atheris_targets",
    "edits",
    "fuzz_target",
    "replay_witness",
    "resolve_target",
    "run_atheris",
    "save_finding",
    "witness_signature",
    "write_seeds",
]
