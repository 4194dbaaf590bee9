"""The layering is a contract: ``lint-imports`` checks the import contracts in pyproject.toml.

``dshfuzz.contracts`` sits below every other package and imports only the standard library;
import-linter sees only dshfuzz's own modules, so that half is checked here by reading the
package's imports. The command line is a face over the packages' public surfaces: it
imports no private module (a ``_`` name) of another package. Import-linter's module
expressions match whole name segments only, so no contract can name "every private module";
that is checked here too, by reading the cli's imports. The types are a contract too:
``mypy --strict`` passes over ``src`` (its configuration, ``[tool.mypy]``, is in pyproject.toml).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / "src" / "dshfuzz" / "contracts"
CLI = ROOT / "src" / "dshfuzz" / "cli"

_LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def test_the_import_contracts_hold() -> None:
    run = subprocess.run([sys.executable, "-c", _LINT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"lint-imports failed:\n{run.stdout}{run.stderr}"
    assert "0 broken" in run.stdout, run.stdout


def test_the_sources_pass_mypy_strict() -> None:
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"mypy --strict failed:\n{run.stdout}{run.stderr}"
    assert "Success: no issues found" in run.stdout, run.stdout


def test_the_contracts_package_imports_only_the_standard_library() -> None:
    outside = []
    for path in sorted(CONTRACTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            outside += [f"{path.name}:{node.lineno} {name}" for name in names
                        if name.partition(".")[0] not in sys.stdlib_module_names | {"__future__"}]
    assert not outside, f"dshfuzz.contracts imports beyond the standard library: {outside}"


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The dotted names an import statement in ``package`` binds, made absolute: the module
    itself for ``import``, each ``module.name`` for ``from module import name``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([base] if base else [])])
    return [f"{base}.{alias.name}" for alias in node.names]


def private_imports(path: Path, package: str = "dshfuzz.cli") -> list[str]:
    """Each import in ``path`` that reaches a private name of a dshfuzz package other than
    ``package``: a segment after ``dshfuzz`` that starts with ``_`` and is no dunder."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for name in _imported(node, package):
            parts = name.split(".")
            if parts[0] != "dshfuzz" or name == package or name.startswith(package + "."):
                continue
            if any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts[1:]):
                found.append(f"{path.name}:{node.lineno} {name}")
    return found


def test_the_command_line_imports_only_public_names() -> None:
    private = [hit for path in sorted(CLI.glob("*.py")) for hit in private_imports(path)]
    assert not private, f"dshfuzz.cli imports private modules of other packages: {private}"


def test_the_private_import_check_sees_every_spelling(tmp_path: Path) -> None:
    probe = tmp_path / "_probe.py"
    probe.write_text(
        "from dshfuzz.harness._matrix import build_matrix\n"
        "from .. import _atomic\n"
        "from ..generators._stats import real_shapes\n"
        "import dshfuzz.checker._serve\n"
        "from dshfuzz import __version__\n"
        "from . import explain\n"
        "from dshfuzz.harness import load_checker\n",
        encoding="utf-8",
    )
    assert [hit.split(" ")[1] for hit in private_imports(probe)] == [
        "dshfuzz.harness._matrix.build_matrix",
        "dshfuzz._atomic",
        "dshfuzz.generators._stats.real_shapes",
        "dshfuzz.checker._serve",
    ]


# the fuzzer, the oracle and the edits, and tempfile: checking writes no file
_HEAVY = ("hypothesis", "dshfuzz.harness", "dshfuzz.oracle", "dshfuzz.generators", "dshfuzz.mutators", "tempfile")


def test_check_loads_only_the_checker_and_its_renderer(tmp_path: Path) -> None:
    """``dshfuzz check`` imports what checking and rendering a report need, nothing of the
    fuzzer: the command line imports each command's library inside the command."""
    from dshfuzz.generators import generate

    log = tmp_path / "valid.jsonl"
    log.write_bytes(next(iter(generate(1, 0))).to_jsonl())
    loaded = {}
    for flags in ([], ["--json"]):
        code = ("import contextlib, io, sys\nfrom dshfuzz.cli import main\n"
                f"with contextlib.redirect_stdout(io.StringIO()):\n    status = main(['check', *{flags!r}, {str(log)!r}])\n"
                f"print(status, sorted(m for m in {(*_HEAVY, 'rich')!r} if m in sys.modules))")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        loaded[" ".join(flags) or "text"] = run.stdout.strip() or run.stderr
    assert loaded == {"text": "0 ['rich']", "--json": "0 []"}, loaded
