"""``dshfuzz mutants``: plan, judge in parallel, and record mutants, resumably.

A run is a results file (``results.jsonl`` in the output folder): a header naming the run
(checker, modules, seed, budget, ...: what makes two runs' verdicts comparable), the
baseline (the unmutated checker's causes and reach), then one line per judged mutant,
each appended with one ``write`` and flushed to disk before the next mutant is recorded.
Re-running the same command reads it and judges only what it lacks: a stopped run
(Ctrl-C, a crash, a power cut) loses at most the mutants in flight, and a torn last line is
ignored. An ``error`` record (the judging itself failed) is judged again on a re-run.

The engine never prints: :func:`run_mutants` yields typed events.

A mutant on a line the baseline never executed (measured with coverage.py, when installed, by
a second campaign of as many examples as the baseline judged) is ``unreached``: with the same
seed its campaign could only differ by chance, so it is not run, and it counts as not killed,
like a survivor (the fuzzer's blind spot, not an equivalent). On a time budget that is an
approximation (a timed campaign's examples depend on the machine's load, and the mutants run
``jobs`` at a time while the baseline ran alone); it errs toward a lower score, never a
higher one, and an example budget (``--budget 60examples``) removes it. A module the baseline
never imported is not on the check path: its mutants are skipped, with that reason.

With ``cluster`` (``--cluster tcp://HOST:8786`` or ``local``) each mutant's judgement (the same
judging process, started the same way) runs as a task on a Dask ``distributed`` worker instead
of a thread of this process; the baseline, the plan, the results file and the events stay here.
The cluster's workers must run the same dshfuzz (with ``dshfuzz[mutation]``) and see the
checker's files at the same paths, and a ``py:`` checker's folder as their working folder, as a
local run does: a task whose worker sees other checker files records an ``error`` (judged again
on a re-run), never a verdict of other code.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections import Counter
from collections.abc import Generator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ._mutation import (
    EQUIVALENTS_FILE,
    Mutant,
    MutationSetupError,
    MutationTarget,
    enumerate_mutants,
    load_equivalents,
    materialise,
    mutated_source,
    mutation_library_missing,
    resolve_target,
)
from ._mutation_judge import RESULT_MARK

__all__ = [
    "RESULTS_FORMAT",
    "MutantJudged",
    "MutantResult",
    "MutantsFinished",
    "MutantsPlanned",
    "MutationBaseline",
    "MutationConfig",
    "MutationEvent",
    "run_mutants",
]

RESULTS_FORMAT = "dshfuzz-mutants-results/1"

Status = Literal["killed", "survived", "unreached", "invalid", "error"]
FINAL: frozenset[str] = frozenset({"killed", "survived", "unreached", "invalid"})
"""Verdicts a re-run keeps; an ``error`` is judged again. ``invalid``: the library's mutant does
not compile (an operator applied to a ``*`` or ``**`` marker), so no campaign can judge it."""

NOT_ON_PATH = "not on the check path (the baseline campaign never imported the module)"

CHILD_GRACE_SECONDS = 120.0
"""A judging process may take its budget plus this (start-up, pre-flight, the campaign's own
stop grace) before it is killed and the mutant recorded as an error."""

DEFAULT_TIMEOUT = 5.0
"""Seconds one checker run may take in a mutant's campaign: a mutant that loops is a timeout
finding (killed) well within a short budget."""

EXAMPLES_WALL_SECONDS = 600.0
"""What a campaign on an example budget may take before its process is killed (an error)."""

POLL_SECONDS = 1.0
"""A thread waiting on a mutant's cluster task looks this often whether the run is stopping."""

_BOOT = ("import sys; from dshfuzz.harness._mutation_judge import judge_child; "
         "sys.exit(judge_child(sys.argv[1]))")


@dataclass(frozen=True, slots=True)
class MutationConfig:
    """One mutation run. ``jobs`` mutants are judged at once, each by a campaign of
    ``budget_seconds`` (one worker thread in its own process), of ``mutators`` (``None``: all;
    a few focus short campaigns on the incidents a module's rules need); ``sample`` draws that
    many of the judgeable mutants with ``seed`` (also every campaign's seed); ``only`` judges
    exactly those mutant ids (a survivor's replay). ``equivalents`` is the reviewed file of
    equivalent mutants (``None``: the built-in checker's own, none for another checker)."""

    checker: str = "builtin"
    modules: tuple[str, ...] = ()
    sample: int | None = None
    seed: int = 0
    budget_seconds: float | None = 20.0
    budget_examples: int | None = None
    """An example budget instead of a time (``budget_seconds`` then ``None``): the campaigns'
    example sequences no longer depend on the machine's load, so a verdict replays exactly."""
    jobs: int = 1
    out: Path = Path("reports/mutants")
    timeout: float = DEFAULT_TIMEOUT
    official: bool = True
    only: tuple[str, ...] = ()
    operators: tuple[str, ...] | None = None
    mutators: tuple[str, ...] | None = None
    checker_rules: tuple[str, ...] | None = None
    """The rule ids a ``py:`` checker implements (``--checker-rules``); ``None``: the built-in
    checker's registry, or the catalog's ids for another checker."""
    equivalents: Path | None = None
    reach: bool = True
    cluster: str | None = None
    """A Dask scheduler's address (``tcp://HOST:8786``), or ``local`` for a ``LocalCluster`` of
    ``jobs`` single-threaded processes on 127.0.0.1 started for the run: the mutants are judged as
    tasks there, ``jobs`` at once (``0``: as many as the cluster has threads). ``None``: on local
    threads, each judging process a child of this one. Not part of :meth:`identity`: where a
    mutant is judged does not change its verdict."""

    def identity(self) -> dict[str, Any]:
        """What two runs must share for one's verdicts to stand for the other's."""
        return {"checker": self.checker, "modules": list(self.modules), "seed": self.seed,
                "budget": self.budget_text, "timeout": self.timeout, "official": self.official,
                "operators": None if self.operators is None else list(self.operators),
                "mutators": None if self.mutators is None else list(self.mutators),
                "checkerRules": None if self.checker_rules is None else list(self.checker_rules)}

    @property
    def budget_text(self) -> str:
        """The budget as ``--budget`` takes it (``20s``, ``60examples``)."""
        return f"{self.budget_examples}examples" if self.budget_examples is not None else f"{self.budget_seconds:g}s"

    def equivalents_path(self) -> Path | None:
        return self.equivalents if self.equivalents is not None else (
            EQUIVALENTS_FILE if self.checker == "builtin" else None)

    def replay_command(self, mutant_id: str) -> str:
        """The one line that judges ``mutant_id`` again, alone, in a folder of its own."""
        parts = ["dshfuzz", "mutants", "--checker", self.checker, "--module", mutant_id.split(":")[0],
                 "--only", mutant_id, "--seed", str(self.seed), "--budget", self.budget_text,
                 "--out", "reports/mutant-replay"]
        if self.timeout != DEFAULT_TIMEOUT:
            parts += ["--timeout", f"{self.timeout:g}"]
        if not self.official:
            parts.append("--no-official")
        if self.mutators is not None:
            parts += ["--mutators", ",".join(self.mutators)]
        if self.checker_rules is not None:
            parts += ["--checker-rules", ",".join(self.checker_rules)]
        return " ".join(shlex.quote(p) for p in parts)


@dataclass(frozen=True, slots=True)
class MutantResult:
    """A mutant's verdict: ``how`` says why in one line (a kill by pre-flight says so)."""

    mutant: Mutant
    status: Status
    how: str
    cause: str | None = None
    detail: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"mutant": self.mutant.to_json(), "status": self.status, "how": self.how, "cause": self.cause,
                "detail": self.detail, "seconds": round(self.seconds, 3)}


@dataclass(frozen=True, slots=True)
class MutationBaseline:
    """The unmutated checker's campaign: its causes, the copy's modules it imported, and its
    executed lines per copied file (``None``: not measured)."""

    causes: tuple[str, ...]
    imported: tuple[str, ...]
    reach: dict[str, list[int]] | None
    examples: int
    seconds: float
    cached: bool = False
    witnesses: tuple[tuple[str, str], ...] = ()
    """Each cause's witness: the file (relative to the run's folder) that shows it, so that a cause
    the unmutated checker already has can be read and fixed."""


@dataclass(frozen=True, slots=True)
class MutantsPlanned:
    """The plan, before any mutant is judged: ``total`` mutants of the target's modules,
    ``skipped`` by reason, ``planned`` to judge (after sampling), ``done`` of them already
    judged by an earlier run of the same command."""

    checker: str
    total: int
    skipped: dict[str, int]
    planned: int
    done: int
    baseline: MutationBaseline


@dataclass(frozen=True, slots=True)
class MutantJudged:
    """One mutant judged now (``done`` of ``planned`` so far, earlier runs' included)."""

    result: MutantResult
    done: int
    planned: int


@dataclass(frozen=True, slots=True)
class MutantsFinished:
    """The run is over: every planned mutant's result, earlier runs' included, in plan order,
    and the reviewed equivalents that apply to them."""

    results: tuple[MutantResult, ...]
    plan: MutantsPlanned
    target: MutationTarget
    equivalents: dict[str, str] = field(default_factory=dict)


MutationEvent = MutantsPlanned | MutantJudged | MutantsFinished


class _Store:
    """The results file: read (and checked) at start, appended one whole line at a time."""

    def __init__(self, path: Path, identity: dict[str, Any]) -> None:
        self.path = path
        self.baseline: dict[str, Any] | None = None
        self.results: dict[str, dict[str, Any]] = {}
        if path.exists():
            self._read(identity)
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MutationSetupError(f"cannot create {path.parent}: {exc.strerror or exc}") from None
            self.append({"format": RESULTS_FORMAT, "run": identity})

    def _read(self, identity: dict[str, Any]) -> None:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise MutationSetupError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        lines = data.split(b"\n")
        records = []
        kept = 0  # bytes of whole records: a torn tail past them is cut off before appending
        for at, line in enumerate(lines):
            if line.strip():
                try:
                    record = json.loads(line)
                    if not isinstance(record, dict):
                        raise ValueError("not an object")
                except ValueError:
                    if at == len(lines) - 1:  # a torn last line: the run was stopped while writing it
                        break
                    raise MutationSetupError(f"{self.path}: line {at + 1} is not a results record; "
                                             "move the file away to start over") from None
                records.append(record)
            kept += len(line) + 1
        if not records or records[0].get("format") != RESULTS_FORMAT:
            raise MutationSetupError(f"{self.path}: not a {RESULTS_FORMAT} file; move it away or pick another --out")
        if records[0].get("run") != identity:
            raise MutationSetupError(f"{self.path} holds another run ({json.dumps(records[0].get('run'))}); "
                                     "re-run it with the same arguments, or pick another --out")
        for record in records[1:]:
            if "baseline" in record:
                self.baseline = record["baseline"]
            elif isinstance(record.get("mutant"), dict) and isinstance(record["mutant"].get("id"), str):
                self.results[record["mutant"]["id"]] = record
            else:
                raise MutationSetupError(f"{self.path}: a record is neither the baseline nor a mutant's")
        if kept < len(data):
            os.truncate(self.path, kept)

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)  # one write of a whole line, in append mode: no interleaving
            os.fsync(fd)
        finally:
            os.close(fd)


def _sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    """``n`` of ``mutants`` drawn with ``seed`` (all when ``n`` is None or larger), in their order."""
    if n is None or n >= len(mutants):
        return list(mutants)
    picked = sorted(random.Random(f"dshfuzz-mutants:{seed}").sample(range(len(mutants)), n))
    return [mutants[i] for i in picked]


def _reached(mutant: Mutant, target: MutationTarget, reach: dict[str, list[int]] | None) -> bool:
    if reach is None:
        return True
    rel = target.files[mutant.module] or target.root.name
    lines = set(reach.get(rel, ()))
    return mutant.statement in lines or any(line in lines for line in range(mutant.span[0], mutant.span[1] + 1))


def _copy_module_name(target: MutationTarget, module: str) -> str:
    return target.copy_name + module.removeprefix("dshfuzz.checker") if target.builtin else module


class _Children:
    """The judging processes in flight, so that a stop kills each (its session: its Node too)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.procs: set[subprocess.Popen[bytes]] = set()
        self.stopping = False

    def kill_all(self) -> None:
        with self.lock:
            self.stopping = True
            procs = list(self.procs)
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _rules(target: MutationTarget, config: MutationConfig) -> list[str] | None:
    if config.checker_rules is not None:
        return list(config.checker_rules)
    if not target.builtin:
        return None
    from dshfuzz.checker import RULES

    return sorted(str(r) for r in RULES)


def _run_child(target: MutationTarget, config: MutationConfig, mutant: Mutant | None, known: list[str] | None,
               children: _Children) -> dict[str, Any]:
    """Materialise ``mutant`` (or the unmutated copy), judge it in a new process, return its result."""
    with tempfile.TemporaryDirectory(prefix="dshfuzz-mutant-") as scratch:
        folder = materialise(target, Path(scratch) / "copy", mutant)
        job = {"entry": target.entry, "seed": config.seed, "budget": config.budget_seconds,
               "examples": config.budget_examples,
               "timeout": config.timeout, "official": config.official, "rules": _rules(target, config),
               "out": str(Path(scratch) / "reports"), "known": known, "reach": config.reach,
               "copy": str(folder / (target.copy_name if target.root.is_dir() else target.root.name)),
               "copy_name": target.copy_name, "original": None if target.builtin else str(target.root),
               "mutators": None if config.mutators is None else list(config.mutators)}
        env = dict(os.environ)
        # the copy first, then the folder the command runs in (a py: checker's siblings), then the rest;
        # the process runs in the copy's folder, since `python -c` puts its working folder before all
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), os.getcwd(), env.get("PYTHONPATH", "")) if p)
        with children.lock:
            if children.stopping:
                return {"status": "error", "how": "stopped"}
            proc = subprocess.Popen([sys.executable, "-c", _BOOT, json.dumps(job)], env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, cwd=folder)
            children.procs.add(proc)
        try:
            timed = config.budget_examples is None and config.budget_seconds is not None
            wall = config.budget_seconds if timed and config.budget_seconds is not None else EXAMPLES_WALL_SECONDS
            out, err = proc.communicate(timeout=wall + CHILD_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"status": "error", "how": "the judging process did not finish in time"}
        finally:
            with children.lock:
                children.procs.discard(proc)
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its session's leftovers (a Node server)
            except (ProcessLookupError, PermissionError):
                pass
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith(RESULT_MARK):
            result: dict[str, Any] = json.loads(line[len(RESULT_MARK):])
            return result
    tail = err.decode("utf-8", "replace").strip().splitlines()[-5:]
    return {"status": "error", "how": f"the judging process exited {proc.returncode} without a result",
            "detail": "\n".join(tail)}


def _judge_mutant(target: MutationTarget, config: MutationConfig, mutant: Mutant, known: list[str],
                  children: _Children) -> dict[str, Any]:
    """:func:`_run_child` for one mutant; a failure to materialise or start it is its error record."""
    try:
        compile(mutated_source(target, mutant), mutant.module, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return {"status": "invalid", "how": f"the mutant does not compile: {exc.msg} (line {exc.lineno})"}
    except MutationSetupError as exc:
        return {"status": "error", "how": str(exc)}
    try:
        return _run_child(target, config, mutant, known, children)
    except (OSError, MutationSetupError, subprocess.SubprocessError) as exc:
        return {"status": "error", "how": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _fingerprint(target: MutationTarget) -> str:
    """A hash of the checker's files as a copy takes them (``materialise``): what a cluster worker
    must see the same as the coordinator for its verdicts to be of the same code."""
    digest = hashlib.sha256()
    root = target.root
    if root.is_dir():
        files = sorted(p for p in root.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    else:
        files = [root] if root.is_file() else []
    for path in files:
        digest.update(str(path.relative_to(root) if root.is_dir() else path.name).encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest() if files else "missing"


def _judge_remote(target: MutationTarget, config: MutationConfig, mutant: Mutant, known: list[str],
                  fingerprint: str) -> dict[str, Any]:
    """A mutant's judgement as a task on a Dask worker: :func:`_judge_mutant` there, its judging
    process a child of the worker, after checking that the worker sees the coordinator's checker
    files. A cancelled task's judging process is not killed (Dask does not interrupt a running
    task): it ends on its own, at its campaign's budget, or is killed at its deadline (the budget,
    or ``EXAMPLES_WALL_SECONDS`` for an example budget, plus ``CHILD_GRACE_SECONDS``)."""
    import socket

    try:
        here = _fingerprint(target)
    except OSError as exc:
        here = f"unreadable ({exc.strerror or exc})"
    if here != fingerprint:
        return {"status": "error",
                "how": f"the cluster worker on {socket.gethostname()} sees other checker files at "
                       f"{target.root} than the coordinator (the cluster's workers must see the same "
                       "checker at the same path)"}
    return _judge_mutant(target, config, mutant, known, _Children())


class _Remote:
    """The Dask cluster judging the mutants (``config.cluster``): connected (or a ``LocalCluster``
    started) at construction, which raises :class:`MutationSetupError` with one line when the
    cluster cannot be had. :meth:`judge` runs one mutant's judgement as a task and waits for it,
    on a thread of the coordinator's pool; :meth:`stop` cancels the tasks in flight."""

    def __init__(self, cluster: str, jobs: int) -> None:
        from ._cluster import close_local, connect
        from ._config import CampaignSetupError

        try:
            self.client, self._local, address = connect(cluster, jobs)
        except CampaignSetupError as exc:
            raise MutationSetupError(str(exc)) from None
        self._close_local = close_local
        try:
            threads = sum(self.client.nthreads().values())
        except Exception as exc:  # noqa: BLE001 - a scheduler that went away at once: one line
            self.close()
            raise MutationSetupError(f"the Dask scheduler at {address} stopped answering: {exc}") from None
        self.jobs = jobs or threads
        if self.jobs < 1:
            self.close()
            raise MutationSetupError(
                f"the Dask cluster at {address} has no workers yet; start some with `dask worker {address}`")
        self._prefix = f"dshfuzz-mutant-{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._futures: set[Any] = set()
        self._stopping = threading.Event()

    def judge(self, target: MutationTarget, config: MutationConfig, mutant: Mutant, known: list[str],
              fingerprint: str) -> dict[str, Any]:
        with self._lock:
            if self._stopping.is_set():
                return {"status": "error", "how": "stopped"}
            future = self.client.submit(_judge_remote, target, config, mutant, known, fingerprint,
                                        key=f"{self._prefix}-{mutant.id}", pure=False, retries=0)
            self._futures.add(future)
        try:
            while True:
                try:
                    result: dict[str, Any] = future.result(timeout=POLL_SECONDS)
                    return result
                except TimeoutError:
                    if self._stopping.is_set():
                        return {"status": "error", "how": "stopped"}
        except Exception as exc:  # noqa: BLE001 - a lost worker, a cancelled task: this mutant's error
            why = str(exc).splitlines()[0][:200] if str(exc) else ""
            return {"status": "error", "how": f"the cluster task failed: {type(exc).__name__}: {why}"}
        finally:
            with self._lock:
                self._futures.discard(future)

    def stop(self) -> None:
        """Cancel the tasks in flight; none is submitted after."""
        with self._lock:
            self._stopping.set()
            futures = list(self._futures)
        if futures:
            try:
                self.client.cancel(futures, force=True)
            except Exception:  # noqa: BLE001 - a scheduler already gone has nothing left to cancel
                pass

    def close(self) -> None:
        self.stop()
        try:
            self.client.close(timeout=10)
        except Exception:  # noqa: BLE001 - closing what may already be gone
            pass
        self._close_local(self._local)
        self._local = None


def _baseline(target: MutationTarget, config: MutationConfig, store: _Store, children: _Children) -> MutationBaseline:
    """The unmutated checker's campaign, as every mutant's is run (its causes), then, with
    coverage.py, its reach: a second campaign under coverage of as many examples as the first
    judged (coverage slows a campaign, so a time budget would judge fewer; the example budget
    replays about the same examples), whose causes are known too."""
    cached = store.baseline is not None
    record = store.baseline
    if record is None:
        record = _baseline_child(target, replace(config, reach=False), children)
        reach: dict[str, Any] = {}
        if config.reach and importlib.util.find_spec("coverage") is not None:
            examples = config.budget_examples or max(1, int(record.get("examples", 0)))
            reach = _baseline_child(target, replace(config, budget_seconds=None, budget_examples=examples), children)
        kept = _keep_witnesses([*record.pop("witnesses", ()), *reach.pop("witnesses", ())], config.out / "baseline")
        record = {**record, "causes": sorted({*record["causes"], *reach.get("causes", ())}),
                  "imported": sorted({*record["imported"], *reach.get("imported", ())}), "reach": reach.get("reach"),
                  "reachExamples": reach.get("examples"), "witnesses": kept}
        store.append({"baseline": record})
        store.baseline = record
    witnesses = tuple((str(w["cause"]), str(w["file"])) for w in record.get("witnesses", ())
                      if isinstance(w, dict) and "cause" in w and "file" in w)
    return MutationBaseline(tuple(record["causes"]), tuple(record["imported"]), record.get("reach"),
                            int(record.get("examples", 0)), float(record.get("seconds", 0.0)), cached, witnesses)


def _keep_witnesses(found: list[dict[str, Any]], folder: Path) -> list[dict[str, str]]:
    """Write each baseline cause's witness into ``folder``, named by its content's hash (the first
    campaign's witness of a cause is kept; the reach campaign's only for a cause the first lacked);
    the causes with their files, relative to the run's folder."""
    kept: dict[str, dict[str, str]] = {}
    for witness in found:
        cause = str(witness["cause"])
        if cause in kept:
            continue
        data = base64.b64decode(witness["data"])
        name = hashlib.sha256(data).hexdigest()[:16] + (".jsonl.zstd" if witness.get("compression") == "zstd" else ".jsonl")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        if not path.exists():
            scratch = path.with_name(path.name + ".tmp")
            scratch.write_bytes(data)
            os.replace(scratch, path)  # atomic: a stopped run leaves no half witness
        kept[cause] = {"cause": cause, "file": f"{folder.name}/{name}", "signature": str(witness.get("signature", "")),
                       "stage": str(witness.get("stage", "")), "detail": str(witness.get("detail", ""))}
    return [kept[c] for c in sorted(kept)]


def _baseline_child(target: MutationTarget, config: MutationConfig, children: _Children) -> dict[str, Any]:
    record = _run_child(target, config, None, None, children)
    if record.get("status") != "baseline":
        last = str(record.get("detail", "")).strip().splitlines()[-1:] or [""]
        raise MutationSetupError(f"the unmutated checker's campaign failed: {record.get('how')}: {last[0][:300]}")
    return record


def _plan(
    target: MutationTarget, config: MutationConfig, baseline: MutationBaseline
) -> tuple[list[Mutant], int, Counter[str]]:
    """The mutants to judge (sampled), how many there are in all, and the skipped by reason."""
    every = list(enumerate_mutants(target, config.operators))
    skipped: Counter[str] = Counter()
    judgeable = []
    imported = set(baseline.imported)
    for mutant in every:
        if config.only and mutant.id not in config.only:
            continue
        reason = mutant.skip or (None if _copy_module_name(target, mutant.module) in imported else NOT_ON_PATH)
        if reason is not None and not config.only:
            skipped[reason] += 1
            continue
        judgeable.append(mutant)
    if config.only:
        missing = sorted(set(config.only) - {m.id for m in judgeable})
        if missing:
            raise MutationSetupError(f"--only {', '.join(missing)}: no such mutant of {config.checker}")
    return _sample(judgeable, config.sample, config.seed), len(every), skipped


def run_mutants(config: MutationConfig) -> Generator[MutationEvent, None, None]:
    """Judge the run's mutants and yield its events; closing the iterator (or Ctrl-C) kills
    the judging processes in flight (on a cluster: cancels their tasks; see :func:`_judge_remote`),
    and everything judged before stays in the results file. Raises :class:`MutationSetupError`
    before the first event on bad input (an unreachable ``cluster`` too)."""
    missing = mutation_library_missing()
    if missing is not None:
        raise MutationSetupError(missing)
    target = resolve_target(config.checker, config.modules)
    equivalents_path = config.equivalents_path()
    equivalents = load_equivalents(equivalents_path) if equivalents_path is not None else {}
    if config.equivalents is not None and not config.equivalents.exists():
        raise MutationSetupError(f"--equivalents {config.equivalents}: no such file")
    remote = _Remote(config.cluster, config.jobs) if config.cluster is not None else None
    try:
        yield from _run(config, target, equivalents, remote)
    finally:
        if remote is not None:
            remote.close()


def _run(config: MutationConfig, target: MutationTarget, equivalents: dict[str, str],
         remote: _Remote | None) -> Generator[MutationEvent, None, None]:
    store = _Store(config.out / "results.jsonl", config.identity())
    children = _Children()
    baseline = _baseline(target, config, store, children)  # on this machine, with a cluster too
    mutants, total, skipped = _plan(target, config, baseline)
    results: dict[str, MutantResult] = {}
    for mutant in mutants:
        record = store.results.get(mutant.id)
        if record is not None and record.get("status") in FINAL:
            results[mutant.id] = MutantResult(mutant, record["status"], record.get("how", ""), record.get("cause"),
                                              record.get("detail", ""), float(record.get("seconds", 0.0)))
    plan = MutantsPlanned(config.checker, total, dict(skipped), len(mutants), len(results), baseline)
    yield plan
    pending = [m for m in mutants if m.id not in results]
    jobs = remote.jobs if remote is not None else config.jobs
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="dshfuzz-mutant")
    fingerprint = _fingerprint(target) if remote is not None else ""
    try:
        futures: dict[Future[dict[str, Any]], Mutant] = {}
        for mutant in pending:
            if not _reached(mutant, target, baseline.reach):
                result = MutantResult(mutant, "unreached", "not executed by the baseline campaign")
                store.append(result.to_json())
                results[mutant.id] = result
                yield MutantJudged(result, len(results), len(mutants))
                continue
            if remote is None:
                future = pool.submit(_judge_mutant, target, config, mutant, list(baseline.causes), children)
            else:
                future = pool.submit(remote.judge, target, config, mutant, list(baseline.causes), fingerprint)
            futures[future] = mutant
        while futures:
            done, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                mutant = futures.pop(future)
                raw = future.result()
                result = MutantResult(mutant, raw.get("status", "error"), str(raw.get("how", "")), raw.get("cause"),
                                      str(raw.get("detail", "")), float(raw.get("seconds", 0.0)))
                store.append(result.to_json())
                results[mutant.id] = result
                yield MutantJudged(result, len(results), len(mutants))
    finally:
        children.kill_all()
        if remote is not None:
            remote.stop()
        # the threads in flight end at once (their processes are killed or their tasks cancelled,
        # none starts after)
        pool.shutdown(wait=True, cancel_futures=True)
    ordered = tuple(results[m.id] for m in mutants if m.id in results)
    yield MutantsFinished(ordered, plan, target, equivalents)

