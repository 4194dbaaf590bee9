"""The layering is a contract: ``lint-imports`` checks the import contracts in pyproject.toml.

``dshfuzz.contracts`` sits below every other package and imports only the standard library;
import-linter sees only dshfuzz's own modules, so that half is checked here by reading the
package's imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / "src" / "dshfuzz" / "contracts"

_LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def test_the_import_contracts_hold() -> None:
    run = subprocess.run([sys.executable, "-c", _LINT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"lint-imports failed:\n{run.stdout}{run.stderr}"
    assert "0 broken" in run.stdout, run.stdout


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
