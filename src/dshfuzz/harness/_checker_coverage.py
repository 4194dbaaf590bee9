"""The checker's own coverage: which lines of an in-process Python checker the campaign ran.

A checker bug hides in the branches no log exercises, so a campaign with checker coverage
on (``--checker-coverage``) measures the checker's lines with coverage.py while it judges
(only then: tracing is on around each checker call and off in between), steers Hypothesis
toward lines no log ran before, and lists the unexercised lines in its reports.

Invariants:

* only the checker's own source is measured (:func:`checker_sources`): for ``builtin`` the
  check path of :mod:`dshfuzz.checker` (not the modules a campaign never calls: recovery,
  the pre-write check, ``--serve`` and report output); for ``py:module:function`` the
  directory of the function's file;
* a line counts once per worker, the first time it runs (:meth:`CheckerCoverage.fresh`);
* statements are coverage.py's own (the lines it can measure), so "exercised N of M" means
  the same as ``coverage report`` on that source.

coverage.py is an optional dependency (``pip install 'dshfuzz[coverage]'``, in the dev extra).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._judges import CheckerUnderTest

__all__ = ["CHECK_PATH_EXCLUDED", "CheckerCoverage", "checker_sources"]

CHECK_PATH_EXCLUDED = frozenset({"_recover.py", "_prewrite.py", "_serve.py", "_output.py"})
"""Modules of the built-in checker a campaign never calls, left out of its check path."""


def checker_sources(checker: CheckerUnderTest) -> tuple[Path, list[Path]] | str:
    """The checker's own source files, with the root their names are given from, or why the
    checker's coverage cannot be measured in process."""
    from ._judges import BuiltinChecker, PythonChecker

    if isinstance(checker, BuiltinChecker):
        import dshfuzz.checker

        root = Path(dshfuzz.checker.__file__).resolve().parent
        return root.parent, sorted(p for p in root.glob("*.py") if p.name not in CHECK_PATH_EXCLUDED)
    if isinstance(checker, PythonChecker):
        try:
            source = inspect.getsourcefile(inspect.unwrap(checker.function))
        except TypeError:
            source = None
        if source is None:
            return f"{checker.name}: its function has no Python source file to measure"
        folder = Path(source).resolve().parent
        return folder.parent, sorted(folder.glob("*.py"))
    return (f"{getattr(checker, 'name', checker)}: checker coverage is measured for in-process Python checkers "
            "(builtin, py:module:function)")


class CheckerCoverage:
    """coverage.py over ``files``, switched on only while the checker runs (:meth:`measuring`)."""

    def __init__(self, root: Path, files: list[Path]) -> None:
        import coverage

        self.root = root
        self.files = files
        self._cov = coverage.Coverage(data_file=None, include=[str(f) for f in files], branch=False, config_file=False)
        self._seen: dict[str, set[int]] = {}
        self._statements: dict[str, frozenset[int]] | None = None  # by measured (absolute) path

    def name(self, path: str | os.PathLike[str]) -> str:
        """A measured file's name in reports: relative to the root."""
        return Path(path).resolve().relative_to(self.root).as_posix()

    def _by_path(self) -> dict[str, frozenset[int]]:
        if self._statements is None:
            self._statements = {}
            for f in self.files:
                path, statements, _, _, _ = self._cov.analysis2(str(f))
                self._statements[path] = frozenset(statements)
        return self._statements

    def statements(self) -> Mapping[str, tuple[int, ...]]:
        """Every measured file's statements (the lines coverage.py can see run)."""
        return {self.name(path): tuple(sorted(lines)) for path, lines in self._by_path().items()}

    @contextmanager
    def measuring(self) -> Iterator[None]:
        """Trace the checker's lines during the block (its threads started within included)."""
        if not self.files:  # coverage.py measures everything when nothing is included
            yield
            return
        self._cov.start()
        try:
            yield
        finally:
            self._cov.stop()

    def fresh(self) -> tuple[tuple[str, int], ...]:
        """The statements run since the last call that no earlier call saw, as ``(file, line)``
        (a module's docstring, run as it is imported, is no statement)."""
        if not self.files:
            return ()
        data: Any = self._cov.get_data()
        statements = self._by_path()
        out: list[tuple[str, int]] = []
        for measured in data.measured_files():
            lines = data.lines(measured) or ()
            seen = self._seen.setdefault(measured, set())
            counted = statements.get(measured, frozenset())
            new = [n for n in lines if n not in seen and n in counted]
            if new:
                seen.update(new)
                name = self.name(measured)
                out.extend((name, n) for n in sorted(new))
        return tuple(out)
