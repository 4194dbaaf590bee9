"""Replay corpus entries against a checker and say what became of each.

Replay re-runs the entry's checker on its witness and re-classifies the verdict
against the truth *recorded in the entry* (official verdicts, oracle refusals,
the mutator's declared rules), so it needs no Node and is deterministic; a
``wrong-place`` entry is judged against the built-in checker, as the campaign was.

Statuses:

* ``STILL FAILING`` — the recorded disagreement is still there (a known checker bug);
* ``FIXED`` — the checker now agrees with the truth on this log;
* ``HOLDS`` — a witness (no disagreement recorded) still gets the same verdict;
* ``CHANGED VERDICT`` — anything else: the checker now says something new.

Each entry is expected to behave as its meta records: a witness HOLDS, a known
bug whose meta names no fix is STILL FAILING, one whose meta names its fix
(``fixedBy``, set by ``dshfuzz corpus mark-fixed``) is FIXED. An entry that does
anything else *changed*: a fix nobody recorded, a recorded fix that no longer
holds, or a new verdict. ``corpus replay`` exits 1 exactly when an entry changed.

An entry's checker is its own spec; a ``py:`` spec that does not import from the
current directory is loaded from the corpus's project root (the folder holding
the corpus), so the project's test checkers (``py:tests.…``) replay wherever
replay runs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Literal

from ._classify import classify, signature_cause, truth_from
from ._corpus import Corpus, CorpusEntry
from ._judges import BuiltinChecker, CheckerSpecError, CheckerUnderTest, load_checker

__all__ = ["ReplayResult", "ReplayStatus", "load_entry_checker", "replay", "replay_entry"]


class ReplayStatus(StrEnum):
    STILL_FAILING = "STILL FAILING"
    FIXED = "FIXED"
    HOLDS = "HOLDS"
    CHANGED = "CHANGED VERDICT"
    NOT_REPLAYED = "NOT REPLAYED"
    """The entry's checker could not be loaded (the detail says why)."""


@dataclass(frozen=True, slots=True)
class ReplayResult:
    path: Path
    entry: CorpusEntry
    status: ReplayStatus
    rules_now: tuple[str, ...]
    detail: str

    @property
    def expected(self) -> ReplayStatus:
        """The status the entry's meta records: HOLDS for a witness, FIXED when it names
        its fix, else STILL FAILING."""
        return expected_status(self.entry)

    @property
    def as_recorded(self) -> bool:
        """The entry behaves as its meta records (nothing changed)."""
        return self.status is self.expected

    @property
    def reproduces(self) -> bool:
        """The same as :attr:`as_recorded` (the earlier name)."""
        return self.as_recorded

    @property
    def change(self) -> str:
        """What changed, in a few words for the user ("" when nothing did)."""
        if self.as_recorded:
            return ""
        if self.status is ReplayStatus.FIXED:
            return "fixed, but no fix is recorded"
        if self.status is ReplayStatus.STILL_FAILING and self.entry.fixed_by:
            return "failing again, though recorded as fixed"
        if self.status is ReplayStatus.NOT_REPLAYED:
            return "its checker cannot be loaded"
        return f"recorded as {self.expected}"


def expected_status(entry: CorpusEntry) -> ReplayStatus:
    """What replay should say of ``entry`` according to its meta."""
    if entry.kind == "witness":
        return ReplayStatus.HOLDS
    return ReplayStatus.FIXED if entry.fixed_by else ReplayStatus.STILL_FAILING


def load_entry_checker(spec: str, project_root: Path | None = None) -> CheckerUnderTest:
    """Load an entry's checker. A ``py:`` spec that does not import from the current
    directory is imported again from ``project_root`` (the folder holding the corpus),
    ahead of the current directory, which may have a package of the same name (its own
    ``tests``); the root stays on ``sys.path`` for the checker's later imports. Raises
    :class:`CheckerSpecError` naming both places when neither has it."""
    try:
        return load_checker(spec)
    except CheckerSpecError as exc:
        if not spec.startswith("py:") or project_root is None:
            raise
        first = exc
    root = str(Path(project_root).resolve())
    module_name = spec[3:].partition(":")[0]
    top = module_name.partition(".")[0]
    here = Path.cwd().resolve()
    if (Path(root) / top).is_dir() or (Path(root) / f"{top}.py").is_file():
        for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            if not _comes_from(sys.modules[name], Path(root)):
                del sys.modules[name]  # what the current directory gave under that name hides the project's
    saved = [p for p in sys.path if p != root]
    sys.path[:] = [root, *(p for p in saved if Path(p or ".").resolve() != here)]
    importlib.invalidate_caches()
    try:
        importlib.import_module(module_name)
    except ImportError:
        pass  # load_checker below says so
    except Exception as exc:  # noqa: BLE001 - the module itself fails: say which and how
        raise CheckerSpecError(f"cannot load {spec} from {root}: {type(exc).__name__}: {exc}") from None
    finally:
        sys.path[:] = [root, *saved]
    try:
        return load_checker(spec)
    except CheckerSpecError:
        where = f"neither from the current directory nor from the corpus's project root {root}"
        raise CheckerSpecError(f"{first} ({where})") from None


def _comes_from(module: object, root: Path) -> bool:
    places = [getattr(module, "__file__", None), *list(getattr(module, "__path__", ()))]
    return any(p is not None and Path(p).resolve().is_relative_to(root) for p in places)


def replay_entry(path: Path, entry: CorpusEntry, checker: CheckerUnderTest | None = None) -> ReplayResult:
    """Replay one entry against ``checker``, by default its own (resolved from the corpus's
    project root when need be: ``path`` is ``<root>/corpus/<signature>/<file>``)."""
    checker = checker or load_entry_checker(entry.checker, Path(path).resolve().parents[2])
    verdict = checker.check(path)
    rules_now = tuple(sorted({f.rule for f in verdict.findings}))
    official = {k: bool(v.get("ok")) for k, v in entry.official.items() if isinstance(v, dict)}
    reasons = {
        k: str((v.get("error") or {}).get("message") or "")
        for k, v in entry.official.items() if isinstance(v, dict) and isinstance(v.get("error"), dict)
    }
    from ._judge import loaded_events

    truth = truth_from(
        official,
        reasons=reasons,
        oracle_refusing=entry.expected.get("oracleRefusing", ()),
        expected=entry.expected.get("rules", ()),
        mutator=entry.mutator,
        format_version=entry.format_version if isinstance(entry.format_version, int) else None,
        loaded_events=loaded_events(entry.official),
    )
    # wrong-place is judged against the built-in checker, as the campaign judged it
    reference = BuiltinChecker().check(path) if entry.checker != "builtin" else None
    vocabulary = getattr(checker, "rules", None)
    found = classify(verdict, truth, reference=reference, vocabulary=vocabulary)
    if any(d.kind == "wrong-layer" for d in found):  # as the campaign judged it (see JudgeSet._judged)
        from ._judge import header_is_record

        compression: Literal["none", "zstd"] = "zstd" if str(path).endswith(".zstd") else "none"
        if not header_is_record(Path(path).read_bytes(), compression):
            truth = replace(truth, header_record=False)
            found = classify(verdict, truth, reference=reference, vocabulary=vocabulary)
    # causes, not signatures: a signature of an earlier format named the mutator, not the format
    signatures = {signature_cause(d.signature) for d in found if d.is_checker_defect}
    recorded = tuple(sorted(entry.actual.get("rules", ())))
    if entry.kind == "witness":
        same = rules_now == recorded and verdict.failure is None
        status = ReplayStatus.HOLDS if same else ReplayStatus.CHANGED
    elif signature_cause(entry.signature) in signatures:
        status = ReplayStatus.STILL_FAILING
    elif not signatures:
        status = ReplayStatus.FIXED
    else:
        status = ReplayStatus.CHANGED
    detail = f"rules now {list(rules_now)}, recorded {list(recorded)}"
    if verdict.failure is not None:
        detail = f"checker {verdict.failure}: {verdict.detail.splitlines()[-1] if verdict.detail else ''}"
    return ReplayResult(path, entry, status, rules_now, detail)


def replay(corpus: Corpus, checker: CheckerUnderTest | None = None) -> Iterator[ReplayResult]:
    """Replay every entry, against ``checker`` or else each entry's own (each spec loaded
    once and closed at the end). An entry whose checker cannot be loaded is NOT REPLAYED,
    and the others go on."""
    project_root = corpus.root.resolve().parent
    own: dict[str, CheckerUnderTest | CheckerSpecError] = {}
    try:
        for path, entry in corpus.entries():
            chosen = checker
            if chosen is None:
                if entry.checker not in own:
                    try:
                        own[entry.checker] = load_entry_checker(entry.checker, project_root)
                    except CheckerSpecError as exc:
                        own[entry.checker] = exc
                loaded = own[entry.checker]
                if isinstance(loaded, CheckerSpecError):
                    yield ReplayResult(path, entry, ReplayStatus.NOT_REPLAYED, (), str(loaded))
                    continue
                chosen = loaded
            yield replay_entry(path, entry, chosen)
    finally:
        for loaded in own.values():
            close = getattr(loaded, "close", None)
            if callable(close):
                close()
