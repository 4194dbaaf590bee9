"""The built-in checker's lines a campaign does not run, each with its reason: ``checker-off-path.json``.

A campaign with checker coverage on counts the built-in checker's check path line by line.
Some of those lines no campaign runs, whatever its logs: an entry point it does not call
(``check_log`` on a whole model, the report's JSON), a guard only a broken checker trips (a
crashing walk, a rule registered twice), a bound no campaign log comes near. Each is written
down here, so that the report can tell "not reached yet" (a log shape to add) from "not on a
campaign's path" (with why). The percentage stays over every line: listing a line never
counts it as exercised.

Reasons:

- ``api``: an entry point or helper a campaign does not call (it checks a log's bytes with
  ``check_stream``, every rule on, and reads the findings);
- ``defensive``: runs only when the checker itself is broken (a walk or pass crashes, reads
  state before it is published, reports a rule it does not declare, a registration is wrong);
- ``limit``: a bound past anything a campaign's logs produce.

Invariant: an entry names a function by its qualified name in a file of the checker, and
optionally the first words of the statements in it that it lists (``"raise ValueError"``, an
``except Exception`` handler, an ``if`` whose body it lists); an entry that no longer resolves to a line raises
``ValueError`` naming it, so a test flags an entry whose code moved or disappeared.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

__all__ = ["OFF_PATH_FILE", "OFF_PATH_REASONS", "OffPathLines", "off_path_lines"]

OFF_PATH_FILE = Path(__file__).resolve().parent / "checker-off-path.json"
OFF_PATH_FORMAT = "dshfuzz-checker-off-path/1"

OffPathReason = Literal["api", "defensive", "limit"]
OFF_PATH_REASONS: tuple[OffPathReason, ...] = ("api", "defensive", "limit")


@dataclass(frozen=True, slots=True)
class OffPathLines:
    """The lines of one entry: ``file`` (as reports name it, ``checker/_run.py``), the
    ``function`` and ``statement`` it names, its ``reason`` and one-line ``why``, and the
    source ``lines`` it resolves to (statements and their bodies; a report intersects them with
    the lines coverage measures)."""

    file: str
    function: str
    statement: str | None
    reason: OffPathReason
    why: str
    lines: tuple[int, ...]

    @property
    def where(self) -> str:
        return f"{self.file}: {self.function}" + (f" ({self.statement})" if self.statement else "")


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                yield from visit(child, name + ".")

    yield from visit(tree, "")


def _resolve(source: str, function: str, statement: str | None) -> tuple[int, ...]:
    """The lines ``function`` (or its statements starting with ``statement``) spans, or ``()``."""
    found = dict(_functions(ast.parse(source)))
    node = found.get(function)
    if node is None:
        return ()
    if statement is None:
        return tuple(range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1))
    text = source.splitlines()
    lines: set[int] = set()
    for inner in ast.walk(node):
        if isinstance(inner, (ast.stmt, ast.ExceptHandler)) and inner is not node \
                and text[inner.lineno - 1].strip().startswith(statement):
            # an if or loop lists its body: its own line runs whenever the code around it does
            first = inner.body[0].lineno if isinstance(inner, (ast.If, ast.For, ast.While, ast.With)) else inner.lineno
            lines.update(range(first, (inner.end_lineno or inner.lineno) + 1))
    return tuple(sorted(lines))


@functools.cache
def off_path_lines(root: Path) -> tuple[OffPathLines, ...]:
    """Every entry of the file, resolved against the sources under ``root`` (the folder that
    holds ``checker/``). A malformed file, or an entry that resolves to no line, raises
    ``ValueError`` naming the entry."""
    data = json.loads(OFF_PATH_FILE.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != OFF_PATH_FORMAT:
        raise ValueError(f"{OFF_PATH_FILE}: not a {OFF_PATH_FORMAT} file")
    out: list[OffPathLines] = []
    sources: dict[str, str] = {}
    for n, entry in enumerate(data.get("entries", []), 1):
        fields = ("file", "function", "reason", "why")
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in fields)
                and isinstance(entry.get("statement", ""), str)):
            raise ValueError(f"{OFF_PATH_FILE}: entry {n} needs string fields {', '.join(fields)} (and maybe statement)")
        if entry["reason"] not in OFF_PATH_REASONS:
            raise ValueError(f"{OFF_PATH_FILE}: entry {n} ({entry['function']}): reason {entry['reason']!r} is not one "
                             f"of {', '.join(OFF_PATH_REASONS)}")
        file = entry["file"]
        if file not in sources:
            try:
                sources[file] = (root / file).read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"{OFF_PATH_FILE}: entry {n}: {file}: {exc.strerror or exc}") from None
        statement = entry.get("statement")
        lines = _resolve(sources[file], entry["function"], statement)
        if not lines:
            raise ValueError(f"{OFF_PATH_FILE}: entry {n}: {file} has no function {entry['function']!r}"
                             + (f" with a statement starting {statement!r}" if statement else "")
                             + ": the code moved or is gone; update the entry")
        out.append(OffPathLines(file, entry["function"], statement, cast(OffPathReason, entry["reason"]),
                                entry["why"], lines))
    return tuple(out)
