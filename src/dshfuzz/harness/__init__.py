"""Differential campaigns, the kill matrix, minimisation, the corpus and coverage-guided
fuzzing (public surface).

The coverage-guided fuzzer's names (``AtherisConfig`` … ``run_atheris``) are imported on first
use: the fuzzer loads Hypothesis, the generators and the mutators, which importing the
harness does not.
"""

from typing import TYPE_CHECKING

from dshfuzz._lazy import lazy_attributes

from ._campaign import run_campaign
from ._config import CampaignConfig, CampaignSetupError, default_workers, parse_budget
from ._preflight import preflight
from ._classify import Disagreement, Truth, classify
from ._corpus import CORPUS_FORMAT, Corpus, CorpusEntry, CorpusFormatError, FindingRecorder
from ._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    CheckerLinesMapped,
    CoverageReached,
    DisagreementFound,
    ExampleJudged,
    OfficialSitesMapped,
    RoundCut,
    TimeSpent,
    WorkerFailed,
    WorkerLost,
)
from ._baseline import Baseline, BaselineComparison, BaselineError, load_baseline
from ._judge import Example, Judge, JudgedExample, PendingJudgement
from ._judges import (
    CHECKER_SPEC_HELP,
    CheckerSpecError,
    CheckerUnderTest,
    CheckerVerdict,
    ReportedFinding,
    load_checker,
    parse_checker_exits,
    parse_checker_layers,
    parse_checker_rules,
    verdict_from_json,
)
from ._matrix import KillMatrix, MatrixConfig, MatrixRow, MatrixSetupError, build_matrix, matrix_preflight, run_matrix
from ._minimise import StillFails, ddmin, minimise
from ._off_path import OffPathLines, off_path_lines
from ._replay import ReplayResult, ReplayStatus, load_entry_checker, replay, replay_entry

if TYPE_CHECKING:
    from ._atheris import AtherisConfig, AtherisError, AtherisSummary, SeedSources, atheris_targets, run_atheris
    from ._mutation import Mutant, MutationSetupError
    from ._mutation_run import (
        MutantJudged,
        MutantResult,
        MutantsFinished,
        MutantsPlanned,
        MutationConfig,
        MutationEvent,
        run_mutants,
    )
    from ._mutation_summary import MutationSummary, summarise_mutants

__getattr__ = lazy_attributes(__name__, {
    **dict.fromkeys(
        ["AtherisConfig", "AtherisError", "AtherisSummary", "SeedSources", "atheris_targets", "run_atheris"], "_atheris"),
    # mutation analysis: its library (dshfuzz[mutation]) is imported only when a run starts
    **dict.fromkeys(["Mutant", "MutationSetupError"], "_mutation"),
    **dict.fromkeys(["MutantJudged", "MutantResult", "MutantsFinished", "MutantsPlanned", "MutationConfig",
                     "MutationEvent", "run_mutants"], "_mutation_run"),
    **dict.fromkeys(["MutationSummary", "summarise_mutants"], "_mutation_summary"),
})
from ._witness import Polished, add_witness, keep_minimised, minimise_entry

__all__ = [
    "AtherisConfig",
    "AtherisError",
    "AtherisSummary",
    "Baseline",
    "BaselineComparison",
    "BaselineError",
    "CHECKER_SPEC_HELP",
    "CORPUS_FORMAT",
    "CampaignConfig",
    "CampaignEvent",
    "CampaignFinished",
    "CampaignSetupError",
    "CampaignStarted",
    "CheckerLinesMapped",
    "CoverageReached",
    "CheckerSpecError",
    "CheckerUnderTest",
    "CheckerVerdict",
    "Corpus",
    "CorpusEntry",
    "CorpusFormatError",
    "Disagreement",
    "DisagreementFound",
    "Example",
    "ExampleJudged",
    "OffPathLines",
    "OfficialSitesMapped",
    "FindingRecorder",
    "Judge",
    "JudgedExample",
    "PendingJudgement",
    "KillMatrix",
    "MatrixConfig",
    "MatrixRow",
    "MatrixSetupError",
    "Mutant",
    "MutantJudged",
    "MutantResult",
    "MutantsFinished",
    "MutantsPlanned",
    "MutationConfig",
    "MutationEvent",
    "MutationSetupError",
    "MutationSummary",
    "Polished",
    "ReplayResult",
    "ReplayStatus",
    "ReportedFinding",
    "RoundCut",
    "SeedSources",
    "StillFails",
    "TimeSpent",
    "Truth",
    "WorkerFailed",
    "WorkerLost",
    "add_witness",
    "atheris_targets",
    "build_matrix",
    "classify",
    "ddmin",
    "default_workers",
    "keep_minimised",
    "load_baseline",
    "load_checker",
    "load_entry_checker",
    "matrix_preflight",
    "minimise",
    "minimise_entry",
    "off_path_lines",
    "parse_budget",
    "parse_checker_exits",
    "parse_checker_layers",
    "parse_checker_rules",
    "preflight",
    "replay",
    "replay_entry",
    "run_atheris",
    "run_campaign",
    "run_matrix",
    "run_mutants",
    "summarise_mutants",
    "verdict_from_json",
]
