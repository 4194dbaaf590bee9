"""Differential campaigns, minimisation and the corpus (public surface)."""

from ._campaign import CampaignConfig, default_workers, parse_budget, run_campaign
from ._classify import Disagreement, Truth, classify
from ._corpus import CORPUS_FORMAT, Corpus, CorpusEntry, CorpusFormatError
from ._events import (
    CampaignEvent,
    CampaignFinished,
    CampaignStarted,
    DisagreementFound,
    ExampleJudged,
    RoundCut,
    WorkerFailed,
)
from ._judge import Example, Judge, JudgedExample
from ._judges import CHECKER_SPEC_HELP, CheckerUnderTest, CheckerVerdict, ReportedFinding, load_checker, verdict_from_json
from ._minimise import ddmin, minimise
from ._replay import ReplayResult, ReplayStatus, replay, replay_entry

__all__ = [
    "CHECKER_SPEC_HELP",
    "CORPUS_FORMAT",
    "CampaignConfig",
    "CampaignEvent",
    "CampaignFinished",
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
    "Judge",
    "JudgedExample",
    "ReplayResult",
    "ReplayStatus",
    "ReportedFinding",
    "RoundCut",
    "Truth",
    "WorkerFailed",
    "classify",
    "ddmin",
    "default_workers",
    "load_checker",
    "minimise",
    "parse_budget",
    "replay",
    "replay_entry",
    "run_campaign",
    "verdict_from_json",
]
