"""Differential campaigns, minimisation and the corpus (public surface)."""

from ._campaign import CampaignConfig, CampaignSetupError, default_workers, parse_budget, preflight, run_campaign
from ._classify import Disagreement, Truth, classify
from ._corpus import CORPUS_FORMAT, Corpus, CorpusEntry, CorpusFormatError, FindingRecorder
from ._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    ExampleJudged,
    RoundCut,
    TimeSpent,
    WorkerFailed,
    WorkerLost,
)
from ._judge import Example, Judge, JudgedExample
from ._judges import (
    CHECKER_SPEC_HELP,
    CheckerUnderTest,
    CheckerVerdict,
    ReportedFinding,
    load_checker,
    parse_checker_rules,
    verdict_from_json,
)
from ._minimise import StillFails, ddmin, minimise
from ._replay import ReplayResult, ReplayStatus, replay, replay_entry

__all__ = [
    "CHECKER_SPEC_HELP",
    "CORPUS_FORMAT",
    "CampaignConfig",
    "CampaignEvent",
    "CampaignFinished",
    "CampaignSetupError",
    "CampaignStarted",
    "CheckerUnderTest",
    "CheckerVerdict",
    "Corpus",
    "CorpusEntry",
    "CorpusFormatError",
    "Disagreement",
    "DisagreementFound",
    "Example",
    "ExampleJudged",
    "FindingRecorder",
    "Judge",
    "JudgedExample",
    "ReplayResult",
    "ReplayStatus",
    "ReportedFinding",
    "RoundCut",
    "StillFails",
    "TimeSpent",
    "Truth",
    "WorkerFailed",
    "WorkerLost",
    "classify",
    "ddmin",
    "default_workers",
    "load_checker",
    "minimise",
    "parse_budget",
    "parse_checker_rules",
    "preflight",
    "replay",
    "replay_entry",
    "run_campaign",
    "verdict_from_json",
]
