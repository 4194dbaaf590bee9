"""Judging one mutant (or the unmutated baseline) by a short campaign, in its own process.

The parent (:mod:`._mutation_run`) starts ``python -c`` with the copy's folder first on
``PYTHONPATH`` and the job as JSON; :func:`judge_child` runs the campaign through the public
harness calls (:func:`run_campaign`, :class:`CampaignConfig`) and prints one result line,
prefixed :data:`RESULT_MARK`. One process per mutant: imported modules cannot collide, and a
mutant that hangs or crashes the interpreter takes nothing else down.

* Baseline mode (``known`` is ``None``): the whole budget, every cause of a checker defect
  kept, and (with coverage.py, when ``reach`` is set) the lines of the copy that ran and
  the copy's modules that were imported at all.
* Mutant mode: killed at the first checker defect whose cause the baseline does not know
  (a miss of declared rules only once a second mutant confirmed it), or by a pre-flight
  failure (the mutant crashed on the pre-flight log, or would not import). The kill also
  needs the mutant's verdict on the witness to differ from the unmutated checker's (the
  real ``dshfuzz.checker`` beside the copy; a ``py:`` checker's original files loaded under
  another name): a cause the baseline's run merely did not reach is then learnt, not counted.

The pre-flight check and the official layers' start-up come before the campaign, so that a
short budget is spent fuzzing (a fresh process would otherwise spend seconds of it starting
Node).
"""

from __future__ import annotations

import base64
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["RESULT_MARK", "judge_child"]

RESULT_MARK = "DSHFUZZ-MUTANT-RESULT "

NOT_DEFECTS = ("official-disagreement", "oracle-crash")
"""Finding kinds that are not the checker's defects (as a baseline reads a summary)."""


def judge_child(job_text: str) -> int:
    """Run the job; print its result line; the process's status (0 even for a kill)."""
    job = json.loads(job_text)
    try:
        result = _judge(job)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as this mutant's error
        import traceback

        result = {"status": "error", "how": f"{type(exc).__name__}: {str(exc)[:200]}",
                  "detail": traceback.format_exc(limit=6)}
    sys.stdout.write(RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


def _judge(job: dict[str, Any]) -> dict[str, Any]:
    from . import CampaignConfig, CampaignSetupError, preflight

    known: set[str] | None = None if job["known"] is None else set(job["known"])
    config = CampaignConfig(
        checker=job["entry"], seed=job["seed"], workers=0, budget_examples=job["examples"],
        budget_seconds=None if job["examples"] is not None else job["budget"], official=job["official"],
        checker_timeout=job["timeout"], checker_rules=None if job["rules"] is None else tuple(job["rules"]),
        out=Path(job["out"]), run_id="campaign", mutators=None if job["mutators"] is None else tuple(job["mutators"]),
    )
    coverage = _start_coverage(job["copy"]) if known is None and job["reach"] else None  # import time counts
    started = time.monotonic()
    try:
        preflight(config)  # the checker imported and run on the pre-flight log, before the budget starts
    except CampaignSetupError as exc:
        if known is None:
            return {"status": "error", "how": "the unmutated checker failed the pre-flight check", "detail": str(exc)}
        return {"status": "killed", "how": "pre-flight: the mutant failed on the pre-flight log",
                "detail": str(exc)[:500], "seconds": time.monotonic() - started}
    official = None
    if config.official:
        from dshfuzz.oracle.official import OfficialOracle

        official = OfficialOracle(coverage=config.official_coverage)
        official.ping()  # the Node server started now: the budget is the campaign's, not its start-up's
    causes: set[str] = set()
    examples = [0]
    witnesses: dict[str, Any] = {}
    try:
        result = _hunt(job, config, official, known, started, causes, examples, witnesses)
    finally:
        if official is not None:
            official.close()
    if result is not None:
        return result
    seconds = time.monotonic() - started
    out: dict[str, Any] = {"status": "baseline", "causes": sorted(causes), "examples": examples[0], "seconds": seconds,
                           "imported": sorted(name for name in sys.modules if name.split(".")[0] == job["copy_name"])}
    out["reach"] = None if coverage is None else _reach(coverage, Path(job["copy"]))
    out["witnesses"] = [
        {"cause": cause, "signature": event.signature, "stage": event.stage, "detail": event.detail[:500],
         "compression": event.compression, "data": base64.b64encode(event.data).decode("ascii")}
        for cause, event in sorted(witnesses.items())
    ]
    return out


def _hunt(job: dict[str, Any], config: Any, official: Any, known: set[str] | None, started: float,
          causes: set[str], examples: list[int], witnesses: dict[str, Any]) -> dict[str, Any] | None:
    """The campaign: a mutant's result as soon as it is killed (or at the end, survived); for the
    baseline, ``None``. Every cause found goes into ``causes``, the examples judged into ``examples[0]``,
    and (baseline) each cause's latest witness, its most minimised, into ``witnesses``."""
    from . import CampaignFinished, DisagreementFound, WorkerFailed, run_campaign
    from ._baseline import cause_of

    events = run_campaign(config, official=official)
    try:
        for event in events:
            if isinstance(event, CampaignFinished):
                examples[0] = event.examples
            if isinstance(event, WorkerFailed):
                return {"status": "error", "how": "the campaign's worker failed", "detail": str(event.error)[-2000:]}
            if not isinstance(event, DisagreementFound) or event.kind in NOT_DEFECTS or event.confirmed is False:
                continue
            cause = cause_of(event.signature)
            causes.add(cause)
            if known is None:
                witnesses[cause] = event
                continue
            if cause in known:
                continue
            if not _verdicts_differ(job, event):
                known.add(cause)  # the unmutated checker says the same on this log: not the mutant's doing
                continue
            return {"status": "killed", "how": "a new cause", "cause": cause, "detail": event.detail[:500],
                    "seconds": time.monotonic() - started}
    finally:
        events.close()
    if known is not None:
        return {"status": "survived", "how": f"no new cause in {examples[0]} examples",
                "seconds": time.monotonic() - started}
    return None


def _start_coverage(copy: str) -> Any:
    """coverage.py measuring the copy's lines (``None`` when coverage.py is not installed)."""
    try:
        import coverage
    except ImportError:
        return None
    pattern = os.path.join(copy, "*") if os.path.isdir(copy) else copy  # a package, or a single-file module
    measure = coverage.Coverage(data_file=None, include=[pattern], branch=False)
    measure.start()
    return measure


def _reach(measure: Any, copy: Path) -> dict[str, list[int]]:
    """The copy's executed lines: path relative to the copy's folder (a single-file module: its
    file name) -> sorted lines."""
    measure.stop()
    data = measure.get_data()
    out = {}
    root = copy.resolve()
    for name in data.measured_files():
        path = Path(name).resolve()
        if path == root:
            out[root.name] = sorted(data.lines(name) or ())
            continue
        try:
            rel = path.relative_to(root)
        except ValueError:
            continue
        out[str(rel)] = sorted(data.lines(name) or ())
    return out


def _verdicts_differ(job: dict[str, Any], event: Any) -> bool:
    """Whether the mutant (``job["entry"]``, the copy) and the unmutated checker judge the witness
    (and a metamorphic finding's original) differently: findings with their severities, seqs,
    layers and causes, the exit status, a failure's kind, the events counted."""
    from ._judges import PythonChecker

    mutant = PythonChecker(job["entry"][3:], _callable(job["entry"][3:]), timeout=job["timeout"])
    original = PythonChecker("original", _original(job), timeout=job["timeout"])
    logs = [(event.data, event.compression)]
    if event.original is not None:
        logs.append((event.original, event.original_compression))
    with tempfile.TemporaryDirectory(prefix="dshfuzz-mutant-witness-") as scratch:
        for at, (data, compression) in enumerate(logs):
            path = Path(scratch) / f"w{at}.jsonl{'.zstd' if compression == 'zstd' else ''}"
            path.write_bytes(data)
            if _key(mutant.check(path)) != _key(original.check(path)):
                return True
    return False


def _key(verdict: Any) -> object:
    return (verdict.findings, verdict.failure, verdict.exit_code, verdict.assessable, verdict.events)


def _callable(target: str) -> Callable[[str], Any]:
    module, _, name = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    function: Callable[[str], Any] = obj
    return function


def _original(job: dict[str, Any]) -> Callable[[str], Any]:
    """The unmutated checker's function, beside the copy that shadows its name: the built-in
    checker is ``dshfuzz.checker`` itself; a ``py:`` checker's original files are loaded under
    another top-level name (its relative imports stay among the originals)."""
    if job["original"] is None:
        from dshfuzz.checker import check_path

        def builtin(path: str) -> Any:
            report = check_path(path)
            if report.internal_errors:  # as the copy's entry does
                raise RuntimeError(report.internal_errors[0])
            return report

        return builtin
    root = Path(job["original"])
    alias = f"_dshfuzz_original_{job['copy_name']}"
    if alias not in sys.modules:
        spec: importlib.machinery.ModuleSpec | None
        if root.is_dir() and not (root / "__init__.py").exists():  # a namespace package: only its folder
            spec = importlib.machinery.ModuleSpec(alias, None, is_package=True)
            spec.submodule_search_locations = [str(root)]
        elif root.is_dir():
            spec = importlib.util.spec_from_file_location(alias, root / "__init__.py",
                                                          submodule_search_locations=[str(root)])
        else:
            spec = importlib.util.spec_from_file_location(alias, root)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module
        if spec.loader is not None:
            spec.loader.exec_module(module)
    target = job["entry"][3:]
    return _callable(alias + target[len(job["copy_name"]):])
