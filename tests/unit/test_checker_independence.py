"""The checker is judged against the reference oracle, so it imports nothing from it: the
JavaScript value semantics both read live below both, in :mod:`dshfuzz.contracts.js` (the
import contracts in ``pyproject.toml`` forbid the arrow too; this test names the line)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import dshfuzz.checker

CHECKER = Path(dshfuzz.checker.__file__).parent
ALLOWED: set[str] = set()


def _oracle_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        found += [(node.lineno, name) for name in names if name == "dshfuzz.oracle" or name.startswith("dshfuzz.oracle.")]
    return found


def test_no_checker_module_imports_an_oracle_model() -> None:
    offending = [f"{path.name}:{line} imports {name}" for path in sorted(CHECKER.glob("*.py"))
                 for line, name in _oracle_imports(path) if name not in ALLOWED]
    assert offending == [], offending


def test_checking_logs_loads_no_oracle_model(tmp_path: Path) -> None:
    """Every rule, G4 included, runs on a log with compactions, retries and titles, and none
    loads the oracle's walks."""
    probe = (
        "import sys\n"
        "from dshfuzz.checker import check_log\n"
        "from dshfuzz.generators import FeatureWeights, session_logs\n"
        "from dshfuzz.model import encode_jsonl, parse_log\n"
        "from hypothesis import HealthCheck, given, settings\n"
        "@settings(max_examples=20, database=None, deadline=None, suppress_health_check=list(HealthCheck))\n"
        "@given(session_logs(max_events=80, weights=FeatureWeights(compaction=0.8, retry=0.8, code_dispatch=0.5)))\n"
        "def run(g):\n"
        "    for version in (0, 1):\n"
        "        check_log(parse_log(encode_jsonl({**g.header, 'version': version}, [g.events])))\n"
        "run()\n"
        "print(sorted(m for m in sys.modules if m.startswith('dshfuzz.oracle.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert set(ast.literal_eval(out.stdout.strip().splitlines()[-1])) <= ALLOWED, out.stdout
