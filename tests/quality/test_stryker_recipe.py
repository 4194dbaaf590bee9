"""The StrykerJS recipe (docs/MUTATION.md) on ``examples/node-checker``: Stryker plants mutants in
two lines of ``checker.mjs``, each judged by a dshfuzz campaign with the unmutated checker's as
its baseline, and its report holds a score.

Line 30 is H1's finding: its rule, its severity and the object itself mutated must each be
killed. Line 19 is what ``parses`` answers for a line that is not JSON: ``ok: true`` there must
be killed (R1 silenced), while ``{}`` is equivalent (``ok`` undefined is as false) and must
survive; a recipe that killed every mutant for another reason (a campaign that cannot run exits
2, which Stryker reads as a kill) fails here.

The recipe's npm packages are installed only where it runs (``make stryker-setup``, which ``make
nightly`` runs first): the test is ``nightly``, deselected in ``make test``; under the nightly
profile without that set-up it is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "node-checker"
STRYKER = EXAMPLE / "node_modules" / "@stryker-mutator" / "core" / "bin" / "stryker.js"
RECIPE = ("checker.mjs", "dshfuzz-test.mjs", "stryker.config.json", "package.json")

pytestmark = [pytest.mark.slow, pytest.mark.nightly]

MUTATE = ("checker.mjs:19-19", "checker.mjs:30-30")

EXPECTED = {  # (line, column, Stryker's mutator, replacement): status
    (19, 12, "ObjectLiteral", "{}"): "Survived",  # equivalent: { ok: undefined } reads as { ok: false }
    (19, 18, "BooleanLiteral", "true"): "Killed",  # every line parses: R1 never reported
    (30, 19, "ObjectLiteral", "{}"): "Killed",  # a finding with no rule
    (30, 27, "StringLiteral", '""'): "Killed",  # H1 reported under the rule ""
    (30, 43, "StringLiteral", '""'): "Killed",  # H1 reported with the severity "": not an error
}


def test_stryker_scores_mutants_of_the_node_checker(node24: Path, tmp_path: Path) -> None:
    if not STRYKER.is_file():
        pytest.skip("the StrykerJS recipe's npm packages are not installed: run `make stryker-setup` "
                    "(npm ci in examples/node-checker)")
    from dshfuzz.oracle.official import unavailable_reason

    if (reason := unavailable_reason()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"official layers unavailable under CI: {reason}")
        pytest.skip(f"official layers unavailable ({reason}); run `make setup` first")
    # a copy: Stryker writes its sandbox and reports beside the checker
    project = tmp_path / "node-checker"
    project.mkdir()
    for name in RECIPE:
        (project / name).write_bytes((EXAMPLE / name).read_bytes())
    (project / "node_modules").symlink_to(EXAMPLE / "node_modules", target_is_directory=True)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DSHFUZZ_BUDGET", "DSHFUZZ_SEED", "DSHFUZZ_ARGS")},
        "PATH": f"{node24.parent}{os.pathsep}{os.environ.get('PATH', '')}",  # the command runs `node`
        "DSHFUZZ_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])),
    }
    run = subprocess.run(
        [str(node24), str(STRYKER), "run", "--mutate", ",".join(MUTATE), "--reporters", "json,clear-text",
         "--concurrency", "1"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((project / "reports" / "mutation" / "mutation.json").read_text())
    status = {
        (m["location"]["start"]["line"], m["location"]["start"]["column"], m["mutatorName"], m["replacement"]): m["status"]
        for m in report["files"]["checker.mjs"]["mutants"]
    }
    assert status == EXPECTED, run.stdout[-3000:]
    # Stryker's score: detected over valid mutants, on its table's line for the file
    table = [line.split("|") for line in run.stdout.splitlines() if re.match(r"\s*checker\.mjs\s*\|", line)]
    assert [cells[1].strip() for cells in table] == [f"{100 * 4 / 5:.2f}"], run.stdout[-3000:]
