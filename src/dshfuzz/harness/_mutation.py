"""Mutation analysis of Python checkers: which mutants exist, where they sit, and their copies.

The mutants are cosmic-ray's (its argument-less operators, its enumeration of positions and
its ``mutate_code``): dshfuzz writes no mutation engine of its own. A mutant is identified
stably, by its module, its operator and a hash of its source line, with an index among the
mutants sharing all three (:attr:`Mutant.id`): an edit elsewhere in the module leaves the id
of every unedited line's mutants as it was, so results files and the reviewed equivalents
file survive unrelated edits.

Nothing the user owns is modified: each mutant is a *copy* of the checker's package (or
module) in a temporary folder (:func:`materialise`), with the one mutated file written over.

* The built-in checker is copied under another package name (``dshfuzz_mutant_checker``):
  the campaign's reference checker is the real ``dshfuzz.checker``, which must stay unmutated
  (a mutant that also changed the reference would be masked by it).
* A ``py:module:function`` checker's top-level package (or single-file module) is copied
  under its own name and put first on the judging process's path, so that it shadows the
  original there and nowhere else.

Mutants that cannot change a log's verdict are skipped before any campaign, each with its
reason (:func:`static_skip`): type annotations (never evaluated under postponed annotations;
evaluated once at import otherwise, where a mutant could only fail the import, not change a
verdict), ``if TYPE_CHECKING:`` blocks, ``__all__`` and logging calls.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import json
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "BUILTIN_COPY",
    "EQUIVALENTS_FILE",
    "EQUIVALENTS_FORMAT",
    "Mutant",
    "MutationSetupError",
    "MutationTarget",
    "enumerate_mutants",
    "load_equivalents",
    "materialise",
    "mutant_diff",
    "mutated_source",
    "mutation_library_missing",
    "resolve_target",
]

BUILTIN_COPY = "dshfuzz_mutant_checker"
"""The package name of the built-in checker's copies (never ``dshfuzz.checker``: see above)."""

ENTRY_MODULE = "_dshfuzz_mutant_entry"
"""The module written into a copy of the built-in checker: its ``check(path)`` is the py: entry."""

EQUIVALENTS_FILE = Path(__file__).with_name("mutation-equivalents.json")
"""The reviewed equivalent mutants of the built-in checker."""

EQUIVALENTS_FORMAT = "dshfuzz-mutation-equivalents/1"

INSTALL_HINT = "pip install 'dshfuzz[mutation]'"

_ENTRY_SOURCE = '''"""The py: entry of a mutant copy of the built-in checker (written by dshfuzz mutants)."""

from . import check_path


def check(path):
    report = check_path(path)
    if report.internal_errors:  # `dshfuzz check` exits 2 on a crashed pass: a crash, as a checker run
        raise RuntimeError("a rule pass crashed:\\n" + report.internal_errors[0])
    return report
'''

_LOG_NAMES = frozenset({"log", "logger", "logging", "_log", "_logger", "LOG", "LOGGER"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


class MutationSetupError(ValueError):
    """A mutation run that cannot start: one line naming what and why."""


def mutation_library_missing() -> str | None:
    """Why the mutation library cannot be used (one line with the install command), or ``None``."""
    if importlib.util.find_spec("cosmic_ray") is None:
        return f"dshfuzz mutants needs cosmic-ray: {INSTALL_HINT}"
    return None


@dataclass(frozen=True, slots=True)
class MutationTarget:
    """What is mutated and how each copy is judged.

    ``root`` is the folder (a package) or file (a single-file module) copied for each mutant,
    as ``copy_name`` in the copy's folder; ``files`` maps each mutable module's dotted name to
    its file's path relative to ``root`` (``""`` for a single-file module); ``entry`` is the
    ``py:`` spec that judges a copy once the copy's folder is first on the path."""

    checker: str
    root: Path
    copy_name: str
    files: Mapping[str, str]
    entry: str
    builtin: bool

    def source_path(self, module: str) -> Path:
        rel = self.files[module]
        return self.root / rel if rel else self.root


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutant: ``operator``'s ``occurrence``-th position in ``module``.

    ``id`` is stable across edits elsewhere (module, operator, hash of the line, index);
    ``rule`` is the rule whose code holds it (``engine`` for the built-in checker's code
    outside every rule, ``None`` for a checker with no registry); ``skip`` says why it is
    not judged (``None``: it is); ``span`` is the lines the mutated node covers and
    ``statement`` the first line of the statement holding it (what line coverage records)."""

    id: str
    module: str
    operator: str
    occurrence: int
    line: int
    column: int
    span: tuple[int, int]
    statement: int
    source_line: str
    rule: str | None
    skip: str | None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["span"] = list(self.span)
        return out


def resolve_target(checker: str, modules: Iterable[str] = ()) -> MutationTarget:
    """The target of ``checker`` (``builtin`` or ``py:module:function``), its mutable modules
    narrowed to ``modules`` when given. Raises :class:`MutationSetupError` for any other spec,
    an unknown module, or a module that is not Python source."""
    wanted = tuple(modules)
    if checker == "builtin":
        spec = importlib.util.find_spec("dshfuzz.checker")
        assert spec is not None and spec.origin is not None
        root = Path(spec.origin).parent
        files = {f"dshfuzz.checker.{p.stem}" if p.stem != "__init__" else "dshfuzz.checker": p.name
                 for p in sorted(root.glob("*.py"))}
        target = MutationTarget(checker, root, BUILTIN_COPY, files, f"py:{BUILTIN_COPY}.{ENTRY_MODULE}:check", True)
    elif checker.startswith("py:"):
        module, _, function = checker[3:].partition(":")
        if not module or not function:
            raise MutationSetupError(f"expected py:module:function, got {checker}")
        if module == "dshfuzz" or module.startswith("dshfuzz."):
            raise MutationSetupError(f"{checker}: dshfuzz's own modules are mutated as --checker builtin")
        target = _python_target(checker, module)
        wanted = wanted or (module,)
    else:
        raise MutationSetupError(
            f"dshfuzz mutants mutates Python checkers (builtin or py:module:function), not {checker!r}")
    if not wanted:
        return target
    unknown = [m for m in wanted if m not in target.files]
    if unknown:
        known = ", ".join(sorted(target.files))
        raise MutationSetupError(
            f"--module {', '.join(unknown)}: not a Python module of {checker} (its modules: {known})")
    return MutationTarget(target.checker, target.root, target.copy_name, {m: target.files[m] for m in wanted},
                          target.entry, target.builtin)


def _python_target(checker: str, module: str) -> MutationTarget:
    top = module.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError) as exc:
        raise MutationSetupError(f"{checker}: cannot find module {top}: {exc}") from None
    if spec is None:
        raise MutationSetupError(f"{checker}: no module named {top} (on the path, or in the current folder)")
    if spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        files = {".".join((top, *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"):
                 str(p.relative_to(root)) for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}
    elif spec.origin and spec.origin.endswith(".py"):
        root = Path(spec.origin)
        files = {top: ""}
    else:
        raise MutationSetupError(f"{checker}: {top} is not Python source ({spec.origin})")
    if module not in files:
        raise MutationSetupError(f"{checker}: {module} is not a Python source module of {top}")
    return MutationTarget(checker, root, top, files, checker, False)


def _operators() -> list[tuple[str, Any]]:
    """cosmic-ray's operators that take no arguments (its default set), by name, sorted."""
    import cosmic_ray.plugins

    out = []
    for name in sorted(cosmic_ray.plugins.operator_names()):
        cls = cosmic_ray.plugins.get_operator(name)
        if not cls.arguments():
            out.append((name, cls()))
    return out


def enumerate_mutants(target: MutationTarget, operators: Iterable[str] | None = None) -> Iterator[Mutant]:
    """Every mutant of the target's modules, in module, position and operator order; each
    with its rule and its static skip reason. ``operators`` narrows cosmic-ray's set."""
    from cosmic_ray.ast import ast_nodes, get_ast

    chosen = [(n, op) for n, op in _operators() if operators is None or n in set(operators)]
    rules = rule_lines(target)
    for module in sorted(target.files):
        code = target.source_path(module).read_text(encoding="utf-8")
        lines = code.splitlines()
        nodes = list(ast_nodes(get_ast(code)))
        found: list[Mutant] = []
        seen: dict[tuple[str, str], int] = {}
        for name, operator in chosen:
            occurrence = 0
            for node in nodes:
                for start, end in operator.mutation_positions(node):
                    text = lines[start[0] - 1].strip() if start[0] - 1 < len(lines) else ""
                    context = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
                    index = seen.get((name, context), 0)
                    seen[(name, context)] = index + 1
                    found.append(Mutant(
                        id=f"{module}:{name.removeprefix('core/')}:{context}:{index}",
                        module=module, operator=name, occurrence=occurrence, line=start[0], column=start[1],
                        span=(start[0], end[0]), statement=_statement_line(node), source_line=text,
                        rule=_rule_at(rules, module, start[0], target.builtin), skip=static_skip(node),
                    ))
                    occurrence += 1
        found.sort(key=lambda m: (m.line, m.column, m.operator, m.occurrence))
        yield from found


def _statement_line(node: Any) -> int:
    """The first line of the (simple or compound) statement holding ``node``."""
    current = node
    while current is not None:
        if current.type in ("simple_stmt", "if_stmt", "while_stmt", "for_stmt", "with_stmt", "try_stmt",
                            "funcdef", "classdef", "decorated", "return_stmt", "expr_stmt"):
            line: int = current.start_pos[0]
            return line
        current = current.parent
    start: int = node.start_pos[0]
    return start


def static_skip(node: Any) -> str | None:
    """Why a mutant at ``node`` cannot change any log's verdict, or ``None``."""
    if node.type == "if_stmt" and node.children[1].get_code().strip() == "TYPE_CHECKING":
        return "if TYPE_CHECKING: block (never run)"  # its condition negated would import at run time
    child, parent = node, node.parent
    while parent is not None:
        kind = parent.type
        if kind == "annassign" and len(parent.children) > 1 and child is parent.children[1]:
            return "type annotation (no verdict depends on it)"
        if kind == "tfpdef" and len(parent.children) > 2 and child is parent.children[2]:
            return "type annotation (no verdict depends on it)"
        if kind in ("param", "funcdef") and child is getattr(parent, "annotation", None):
            return "type annotation (no verdict depends on it)"
        if kind == "if_stmt" and parent.children[1].get_code().strip() == "TYPE_CHECKING":
            return "if TYPE_CHECKING: block (never run)"
        if kind == "expr_stmt" and parent.children[0].type == "name" and parent.children[0].value == "__all__":
            return "__all__ (names exported, no verdict)"
        if kind in ("atom_expr", "power") and _is_logging_call(parent):
            return "logging call"
        child, parent = parent, parent.parent
    return None


def _is_logging_call(node: Any) -> bool:
    """``logger.info(...)`` and the like: a logger's name, then one of the logging methods
    (a name alone is not enough: ``log`` is as often a session log)."""
    first, *rest = node.children
    if first.type != "name" or first.value not in _LOG_NAMES or not rest:
        return False
    trailer = rest[0]
    return trailer.type == "trailer" and len(trailer.children) == 2 and trailer.children[0].value == "." \
        and trailer.children[1].value in _LOG_METHODS


def rule_lines(target: MutationTarget) -> dict[str, list[tuple[int, int, str]]]:
    """Module -> the line ranges of each rule's code and the rule ids it reports (the built-in
    checker's registry, :func:`dshfuzz.checker.implementations`); empty for other checkers."""
    if not target.builtin:
        return {}
    return _builtin_rule_lines()


@cache
def _builtin_rule_lines() -> dict[str, list[tuple[int, int, str]]]:
    from dshfuzz.checker import implementations

    owners: dict[tuple[str, str], set[str]] = {}
    for rule, names in implementations().items():
        for name in names:
            owners.setdefault(tuple(name.rsplit(".", 1)), set()).add(str(rule))  # type: ignore[arg-type]
    out: dict[str, list[tuple[int, int, str]]] = {}
    for (module, attr), rules in owners.items():
        qualified = f"dshfuzz.checker.{module}"
        obj = getattr(importlib.import_module(qualified), attr, None)
        if obj is None:
            continue
        try:
            source, start = inspect.getsourcelines(inspect.unwrap(obj))
        except (OSError, TypeError):
            continue
        out.setdefault(qualified, []).append((start, start + len(source) - 1, ",".join(sorted(rules))))
    package = Path(inspect.getsourcefile(implementations) or "").parent
    shared = _imported_names(package)
    for module, ranges in out.items():
        path = package / f"{module.rsplit('.', 1)[1]}.py"
        ranges.extend(_helper_ranges(path.read_text(encoding="utf-8"), ranges, shared.get(path.stem, set())))
    return out


def _imported_names(package: Path) -> dict[str, set[str]]:
    """Module stem -> the names other modules of the package import from it (``from .x import``)."""
    out: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                out.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return out


def _helper_ranges(code: str, ranges: list[tuple[int, int, str]], shared: set[str]) -> list[tuple[int, int, str]]:
    """The module's top-level functions that only one rule's code uses (named from that rule's
    walk or pass, or from another such function), as ranges of that rule: a helper of one rule
    is that rule's code. A function several rules (or none) use, or another module imports
    (``shared``), stays ``engine``."""
    tree = ast.parse(code)
    functions = {node.name: (node.lineno if not node.decorator_list else node.decorator_list[0].lineno,
                             node.end_lineno or node.lineno)
                 for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    users: dict[str, set[str]] = {name: set() for name in functions}  # function -> rules or functions naming it
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in functions:
            if node.id in shared:
                users[node.id].add("engine")
                continue
            line = node.lineno
            rule = next((ids for first, last, ids in ranges if first <= line <= last), None)
            caller = next((f for f, (first, last) in functions.items() if first <= line <= last), None)
            if rule is not None:
                users[node.id].add(f"rule:{rule}")
            elif caller is not None and caller != node.id:
                users[node.id].add(f"function:{caller}")
            else:
                users[node.id].add("engine")  # module-level code uses it
    owner: dict[str, str | None] = {}

    def rule_of(name: str, seen: frozenset[str]) -> str | None:
        if name in owner:
            return owner[name]
        rules = set()
        for user in users[name]:
            kind, _, what = user.partition(":")
            found = what if kind == "rule" else (None if kind == "engine" or what in seen
                                                 else rule_of(what, seen | {name}))
            rules.add(found)
        owner[name] = rules.pop() if len(rules) == 1 else None
        return owner[name]

    out = []
    for name, (first, last) in functions.items():
        rule = rule_of(name, frozenset({name}))
        if rule is not None:
            out.append((first, last, rule))
    return out


def _rule_at(rules: Mapping[str, list[tuple[int, int, str]]], module: str, line: int, builtin: bool) -> str | None:
    if not builtin:
        return None
    for first, last, ids in rules.get(module, ()):
        if first <= line <= last:
            return ids
    return "engine"


def mutated_source(target: MutationTarget, mutant: Mutant) -> str:
    """The mutant's module source (cosmic-ray's ``mutate_code`` of the original)."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    code = target.source_path(mutant.module).read_text(encoding="utf-8")
    mutated = mutate_code(code, cosmic_ray.plugins.get_operator(mutant.operator)(), mutant.occurrence)
    if mutated is None:
        raise MutationSetupError(f"mutant {mutant.id} no longer applies (the source changed since it was listed)")
    text: str = mutated
    return text


def mutant_diff(target: MutationTarget, mutant: Mutant) -> str:
    """The mutant as a unified diff of its module (paths relative to the checker's root)."""
    original = target.source_path(mutant.module).read_text(encoding="utf-8")
    name = target.files[mutant.module] or target.root.name
    return "".join(difflib.unified_diff(original.splitlines(keepends=True),
                                        mutated_source(target, mutant).splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}", n=1))


def materialise(target: MutationTarget, folder: Path, mutant: Mutant | None) -> Path:
    """Write a copy of the checker (``mutant`` applied, or none) into ``folder``, which is then
    the folder to put first on the judging process's path. Returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / (target.copy_name if target.root.is_dir() else target.root.name)
    if target.root.is_dir():
        shutil.copytree(target.root, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        shutil.copyfile(target.root, copy)
    if target.builtin:
        (copy / f"{ENTRY_MODULE}.py").write_text(_ENTRY_SOURCE, encoding="utf-8")
    if mutant is not None:
        rel = target.files[mutant.module]
        (copy / rel if rel else copy).write_text(mutated_source(target, mutant), encoding="utf-8")
    return folder


def load_equivalents(path: Path) -> dict[str, str]:
    """The reviewed equivalent mutants of ``path``: mutant id -> the one-line reason. A missing
    file is none; anything unreadable is a :class:`MutationSetupError`."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MutationSetupError(f"--equivalents {path}: cannot read it: {exc}") from None
    entries = data.get("equivalents") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != EQUIVALENTS_FORMAT or not isinstance(entries, list):
        raise MutationSetupError(f"--equivalents {path}: not a {EQUIVALENTS_FORMAT} file")
    out: dict[str, str] = {}
    for at, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("mutant"), str) \
                or not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise MutationSetupError(f"--equivalents {path}: entry {at} needs a mutant id and a one-line reason")
        out[entry["mutant"]] = entry["reason"]
    return out
