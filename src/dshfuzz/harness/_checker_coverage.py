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
* statements are coverage.py's own (the lines it can measure) inside function bodies: what
  runs at import (definitions, module and class bodies) ran before any log and says nothing
  about the logs, so it is left out.

coverage.py is an optional dependency (``pip install 'dshfuzz[coverage]'``, in the dev extra).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ._judges import CheckerUnderTest
    from ._off_path import OffPathLines

__all__ = ["CHECK_PATH_EXCLUDED", "CheckerCoverage", "CheckerLines", "NodeCheckerCoverage", "checker_sources", "coverage_for", "node_script"]

_JS_SUFFIXES = (".js", ".mjs", ".cjs")

CHECK_PATH_EXCLUDED = frozenset({"_recover.py", "_prewrite.py", "_serve.py", "_output.py"})
"""Modules of the built-in checker a campaign never calls, left out of its check path."""


class CheckerLines(Protocol):
    """What a campaign asks of a checker's coverage, however it is measured."""

    def statements(self) -> Mapping[str, tuple[int, ...]]:
        """Every measured file's statements, by the file's name in reports."""
        ...

    def measuring(self) -> contextlib.AbstractContextManager[None]:
        """Measure the checker's lines during the block (a no-op where its processes measure themselves)."""
        ...

    def fresh(self) -> tuple[tuple[str, int], ...]:
        """The statements run since the last call that no earlier call saw, as ``(file, line)``."""
        ...

    def off_path(self) -> tuple[OffPathLines, ...]:
        """The lines listed as off a campaign's path, with why (the built-in checker's; none for others)."""
        ...


def checker_sources(checker: CheckerUnderTest) -> tuple[Path, list[Path]] | str:
    """The checker's own source files, with the root their names are given from, or why the
    checker's coverage cannot be measured in process."""
    from ._judges import BuiltinChecker, PythonChecker

    if node_script(checker) is not None:
        return "a Node checker is measured by V8 (node_checker_coverage)"

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

    def __init__(self, root: Path, files: list[Path], *, off_path: tuple[OffPathLines, ...] = ()) -> None:
        import coverage

        self.root = root
        self.files = files
        self._off_path = off_path
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
                self._statements[path] = frozenset(statements) - _run_at_import(f)
        return self._statements

    def statements(self) -> Mapping[str, tuple[int, ...]]:
        """Every measured file's statements (the lines coverage.py can see run)."""
        return {self.name(path): tuple(sorted(lines)) for path, lines in self._by_path().items()}

    def off_path(self) -> tuple[OffPathLines, ...]:
        return self._off_path

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


def node_script(checker: CheckerUnderTest) -> Path | None:
    """The script a ``cmd:``/``serve:`` checker runs with Node (its command's first ``.js``,
    ``.mjs`` or ``.cjs`` argument after a ``node`` executable), or ``None``."""
    argv: list[str] = list(getattr(checker, "_argv", None) or ())
    if not argv or not Path(argv[0]).name.startswith("node"):
        return None
    script = next((a for a in argv[1:] if a.endswith(_JS_SUFFIXES)), None)
    return None if script is None else Path(script).resolve()


def coverage_for(checker: CheckerUnderTest, scratch: Path) -> CheckerCoverage | NodeCheckerCoverage | str:
    """The checker's coverage, measured in process (Python) or by V8 (Node), or why neither can."""
    script = node_script(checker)
    if script is not None:
        return NodeCheckerCoverage(script.parent, scratch, entry=script)
    from ._judges import BuiltinChecker
    from ._off_path import off_path_lines

    sources = checker_sources(checker)
    if isinstance(sources, str):
        return sources
    # the list is of the built-in checker's lines, whole: with rules switched off more of them idle
    listed = off_path_lines(sources[0]) if isinstance(checker, BuiltinChecker) and not checker.without else ()
    return CheckerCoverage(*sources, off_path=listed)


_LOCAL_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.{1,2}/[^"']+)["']""")
"""A relative module specifier in an import, a dynamic import or a require."""


def _local_scripts(entry: Path, root: Path) -> list[Path]:
    """``entry`` and the scripts under ``root`` it imports by relative specifier, transitively:
    the checker's own code (a tool's script beside it, a test wrapper say, is not)."""
    found, todo = {entry}, [entry]
    while todo:
        script = todo.pop()
        try:
            text = script.read_text("utf-8", errors="replace")
        except OSError:
            continue
        for spec in _LOCAL_IMPORT.findall(text):
            target = (script.parent / spec).resolve()
            if (target.suffix in _JS_SUFFIXES and target.is_file() and target not in found
                    and target.is_relative_to(root) and "node_modules" not in target.relative_to(root).parts):
                found.add(target)
                todo.append(target)
    return sorted(found)


class NodeCheckerCoverage:
    """V8's coverage of a Node checker's own scripts (its script and the local modules it imports,
    outside ``node_modules``), through ``NODE_V8_COVERAGE``: every checker process the campaign starts
    writes its coverage into ``directory`` when it exits (a ``cmd:`` checker after each log,
    a ``serve:`` checker when the campaign closes it), and :meth:`fresh` reads what is there.

    A line counts as a statement when it holds code (not blank, not only a comment), and as
    run when the innermost V8 range around its first code character ran.
    """

    def __init__(self, root: Path, directory: Path, *, entry: Path | None = None) -> None:
        self.root = root
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.files = _local_scripts(entry, root) if entry is not None else sorted(
            p for suffix in _JS_SUFFIXES for p in root.rglob(f"*{suffix}") if "node_modules" not in p.relative_to(root).parts)
        self._seen: dict[str, set[int]] = {}
        self._code: dict[str, list[tuple[int, int]]] = {}  # per file: (line, offset of its first code)

    @property
    def env(self) -> dict[str, str]:
        """What the checker's processes need in their environment to write their coverage."""
        return {"NODE_V8_COVERAGE": str(self.directory)}

    def name(self, path: Path) -> str:
        return path.relative_to(self.root.parent).as_posix()

    def _code_lines(self, path: Path) -> list[tuple[int, int]]:
        key = str(path)
        if key not in self._code:
            self._code[key] = _code_lines(path.read_text("utf-8", errors="replace"))
        return self._code[key]

    def statements(self) -> Mapping[str, tuple[int, ...]]:
        return {self.name(f): tuple(line for line, _ in self._code_lines(f)) for f in self.files}

    def off_path(self) -> tuple[OffPathLines, ...]:
        return ()

    @contextmanager
    def measuring(self) -> Iterator[None]:
        yield  # the checker's own processes measure themselves

    def fresh(self) -> tuple[tuple[str, int], ...]:
        """The statements the coverage files written since the last call ran first (each file
        is read once, then removed)."""
        import json

        out: list[tuple[str, int]] = []
        measured = {str(f): f for f in self.files}
        for report in sorted(self.directory.glob("coverage-*.json")):
            try:
                scripts = json.loads(report.read_text("utf-8")).get("result", [])
            except (OSError, ValueError):
                continue  # a file still being written is read next time
            report.unlink(missing_ok=True)
            for script in scripts:
                url = script.get("url", "")
                path = url.removeprefix("file://")
                if path not in measured:
                    continue
                ranges = [r for fn in script.get("functions", []) for r in fn.get("ranges", [])]
                seen = self._seen.setdefault(path, set())
                name = self.name(measured[path])
                for line, offset in self._code_lines(measured[path]):
                    if line not in seen and _ran(ranges, offset):
                        seen.add(line)
                        out.append((name, line))
        return tuple(out)


def _ran(ranges: list[dict[str, int]], offset: int) -> bool:
    inner = None
    for r in ranges:
        if r["startOffset"] <= offset < r["endOffset"] and (
            inner is None or r["endOffset"] - r["startOffset"] < inner["endOffset"] - inner["startOffset"]
        ):
            inner = r
    return inner is not None and inner["count"] > 0


def _code_lines(source: str) -> list[tuple[int, int]]:
    """Each line holding code, with the offset (in UTF-16 units, as V8 counts) of its first code
    character: blank lines and lines inside or made only of comments are no statements."""
    out: list[tuple[int, int]] = []
    offset = 0
    in_block = False
    for number, line in enumerate(source.split("\n"), 1):
        i, n = 0, len(line)
        first = None
        while i < n:
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = n
                    break
                in_block, i = False, end + 2
                continue
            if line[i].isspace():
                i += 1
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            elif line.startswith("//", i):
                break
            else:
                first = i
                break
        if first is not None:
            out.append((number, offset + len(line[:first].encode("utf-16-le")) // 2))
        offset += len(line.encode("utf-16-le")) // 2 + 1
    return out


def _run_at_import(path: Path) -> frozenset[int]:
    """The lines of statements outside every function body (module and class bodies, the
    ``def`` and decorator lines themselves): they run when the module is imported."""
    import ast

    try:
        tree = ast.parse(path.read_text("utf-8"))
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    lines: set[int] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            lines.add(node.lineno)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                lines.update(d.lineno for d in node.decorator_list)
            if isinstance(node, ast.ClassDef):
                visit(node.body)
            elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for field in ("body", "orelse", "finalbody", "handlers"):  # an if/try at module level
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        visit([n for n in inner if isinstance(n, ast.stmt)] +
                              [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body])

    visit(tree.body)
    return frozenset(lines)
