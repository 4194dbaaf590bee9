"""The pre-flight check: everything a campaign needs, checked before its first example.

A campaign that cannot run says so in one line (:class:`CampaignSetupError`) before it spends any
of its budget: a mutator name no one registered, official layers that are not installed, a report
folder it cannot create, a checker spec it cannot run or whose output it cannot read.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ._config import CampaignConfig, CampaignSetupError, checker_kw
from ._judges import PARSABLE_REPORT, CheckerUnderTest, CheckerVerdict

__all__ = ["preflight"]


def preflight(config: CampaignConfig) -> None:
    """Everything a campaign needs, checked before its first example: the mutator names,
    the official layers when they judge, the report folder, and the checker itself, run
    once on a valid log (a spec it cannot run, or output it cannot parse, stops here).
    Raises :class:`CampaignSetupError`."""
    from ._judges import CheckerSpecError, load_checker
    from ._strategy import unknown_mutators

    if config.mutators is not None:
        unknown = unknown_mutators(config.mutators)
        if unknown:
            raise CampaignSetupError(
                f"unknown mutator{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; `dshfuzz mutators` lists them"
            )
    if config.official:
        from dshfuzz.oracle.official import unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            fix = "pass --no-official" if "make setup" in reason else "run `make setup`, or pass --no-official"
            raise CampaignSetupError(f"official layers unavailable: {reason}; {fix}")
    if config.database is not None:
        from ._database import DatabaseError, example_database

        try:
            example_database(config.database)
        except DatabaseError as exc:
            raise CampaignSetupError(str(exc)) from None
    if config.checker_coverage:
        from importlib.util import find_spec

        if find_spec("coverage") is None:
            raise CampaignSetupError("checker coverage needs coverage.py: pip install 'dshfuzz[coverage]'")
    try:
        config.run_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CampaignSetupError(f"cannot create the report folder {config.run_dir.parent}: {exc.strerror or exc}") from None
    try:
        with load_checker(config.checker, timeout=config.checker_timeout, **checker_kw(config)) as checker:
            start = getattr(checker, "start", None)  # a serve: checker's handshake fails here, in one line
            if start is not None:
                start()
            verdict = _probe(checker)
            if config.checker_coverage:
                from ._checker_coverage import coverage_for

                with tempfile.TemporaryDirectory(prefix="dshfuzz-coverage-probe-") as scratch:
                    coverage = coverage_for(checker, Path(scratch))
                if isinstance(coverage, str):
                    raise CampaignSetupError(f"cannot measure checker coverage: {coverage}")
    except CheckerSpecError as exc:
        raise CampaignSetupError(str(exc)) from None
    if verdict.failure is not None:
        lines = verdict.detail.strip().splitlines() or [""]
        # a status that came with a readable report: its first line names the flag that maps it
        detail = (lines[0] if PARSABLE_REPORT in lines[0] else lines[-1])[:200]
        how = "" if PARSABLE_REPORT in detail else "; a checker prints JSON with a 'findings' list"
        raise CampaignSetupError(
            f"the checker {config.checker} gave no usable report on a valid log ({verdict.failure}: {detail})"
            f"{how} (docs/CHECKER_PROTOCOL.md)"
        )


def _probe(checker: CheckerUnderTest) -> CheckerVerdict:
    """The checker's verdict on one small valid log."""
    from dshfuzz.generators import generate

    log = next(generate(1, 0, min_events=8, max_events=40))
    with tempfile.TemporaryDirectory(prefix="dshfuzz-probe-") as scratch:
        path = Path(scratch) / "probe.jsonl"
        path.write_bytes(log.to_jsonl())
        return checker.check(path)
