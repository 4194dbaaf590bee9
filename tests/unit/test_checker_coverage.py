"""The checker's own coverage, as a campaign measures it.

Specification: the built-in checker's measured source is its check path (no recovery,
pre-write, --serve or output module); a ``py:`` checker's is its function's folder; a
checker in another process is refused in one line; only the lines run while the checker
judges count, each once per worker; unexercised lines read as coverage.py prints them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("coverage", reason="checker coverage needs coverage.py: pip install -e '.[dev]' (make setup)")

from dshfuzz.generators import generate  # noqa: E402
from dshfuzz.harness import Example, Judge  # noqa: E402
from dshfuzz.harness._checker_coverage import CHECK_PATH_EXCLUDED, CheckerCoverage, checker_sources  # noqa: E402
from dshfuzz.harness._judges import load_checker  # noqa: E402
from dshfuzz.report._reach import CheckerReach, line_ranges  # noqa: E402


def test_the_builtin_checker_is_measured_on_its_check_path() -> None:
    sources = checker_sources(load_checker("builtin"))
    assert not isinstance(sources, str)
    root, files = sources
    names = {f.name for f in files}
    assert "_released.py" in names and "_turnstep.py" in names
    assert not names & CHECK_PATH_EXCLUDED
    assert all(f.relative_to(root).parts[0] == "checker" for f in files)


def test_a_py_checker_is_measured_in_its_own_folder() -> None:
    sources = checker_sources(load_checker("py:tests.broken_checkers.miss_rule:check"))
    assert not isinstance(sources, str)
    root, files = sources
    assert {f.parent.name for f in files} == {"broken_checkers"} and root.name == "tests"


def test_a_checker_in_another_process_is_refused_in_one_line() -> None:
    why = checker_sources(load_checker("cmd:true {log}"))
    assert isinstance(why, str) and "in-process Python checkers" in why and "\n" not in why


def test_only_lines_run_while_the_checker_judges_count_and_each_once() -> None:
    checker = load_checker("builtin")
    sources = checker_sources(checker)
    assert not isinstance(sources, str)
    coverage = CheckerCoverage(*sources)
    statements = coverage.statements()
    assert sum(map(len, statements.values())) > 1000
    with Judge(checker, checker_coverage=coverage) as judge:
        logs = list(generate(3, 0, min_events=8, max_events=40))
        first = judge.judge(Example(logs[0].to_jsonl(), "none"))
        assert first.checker_lines, "judging a log runs checker lines"
        assert all(line in statements[file] for file, line in first.checker_lines)
        again = judge.judge(Example(logs[0].to_jsonl(), "none"))
        assert not set(again.checker_lines) & set(first.checker_lines), "a line counted twice"
        fresh = judge.unreported_coverage()
        assert [line for f in fresh for line in f.checker_lines] == [*first.checker_lines, *again.checker_lines]
        assert judge.unreported_coverage() == []
    for log in logs[1:]:  # the checker run outside a judgement: not measured
        checker.check_data(log.to_jsonl(), "none")
        checker.check_data(b"{}\n{not json", "none")
    assert coverage.fresh() == ()


def test_unexercised_lines_read_as_ranges() -> None:
    assert line_ranges([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"
    assert line_ranges([]) == ""
    reach = CheckerReach()
    reach.mapped({"checker/a.py": (1, 2, 3, 7)})
    reach.reached((("checker/a.py", 2), ("checker/a.py", 99)))  # 99 is no statement: never counted
    assert reach.to_json() == {"exercised": 1, "statements": 4, "percent": 25.0, "offPathLines": 0, "percentOnPath": 25.0,
                               "byFile": [{"file": "checker/a.py", "statements": 4, "exercised": 1,
                                           "unexercised": "1, 3, 7", "offPath": "", "notReached": "1, 3, 7"}],
                               "offPathEntries": [], "listedButRun": []}


def test_lines_listed_off_a_campaigns_path_stay_unexercised_and_are_shown_apart() -> None:
    """A listed line still counts against the percentage; the report says which unexercised
    lines are listed (with why) and which no log reached yet, and names a listed line a log ran."""
    from dshfuzz.harness import OffPathLines

    reach = CheckerReach()
    listed = (OffPathLines("checker/a.py", "f", None, "api", "a library entry point", (3, 4, 5)),
              OffPathLines("checker/a.py", "g", "raise", "defensive", "a guard", (2,)))
    reach.mapped({"checker/a.py": (1, 2, 3, 7)}, listed)
    reach.reached((("checker/a.py", 2),))
    got = reach.to_json()
    assert (got["exercised"], got["percent"], got["offPathLines"], got["percentOnPath"]) == (1, 25.0, 1, 33.3)
    assert got["byFile"][0] | {} == {"file": "checker/a.py", "statements": 4, "exercised": 1, "unexercised": "1, 3, 7",
                                     "offPath": "3", "notReached": "1, 7"}
    assert got["offPathEntries"] == [{"where": "checker/a.py: f", "reason": "api", "why": "a library entry point",
                                      "lines": "3"}]
    assert got["listedButRun"] == ["checker/a.py:2"]
    from dshfuzz.report._reach import checker_reach_html, checker_reach_markdown

    markdown = "\n".join(checker_reach_markdown(got))
    assert "1 of the unexercised lines are listed" in markdown and "a library entry point" in markdown
    assert "the list is wrong there" in markdown and "checker/a.py:2" in markdown
    assert "a library entry point" in checker_reach_html(got) and "checker/a.py:2" in checker_reach_html(got)


def test_the_builtin_checkers_off_path_list_resolves_and_is_used_only_for_the_whole_checker(tmp_path: Path) -> None:
    """Every entry of checker-off-path.json names code that is there (an entry whose function or
    statement moved raises, naming it), each resolves to lines coverage measures, and only the
    whole built-in checker's coverage carries the list (with rules off, other lines idle)."""
    from dshfuzz.harness import off_path_lines
    from dshfuzz.harness._checker_coverage import coverage_for

    coverage = coverage_for(load_checker("builtin"), tmp_path)
    assert isinstance(coverage, CheckerCoverage)
    statements = coverage.statements()
    entries = coverage.off_path()
    assert entries and entries == off_path_lines(coverage.root)
    for entry in entries:
        assert set(entry.lines) & set(statements[entry.file]), f"{entry.where} lists no measured statement"
    without = coverage_for(load_checker("builtin:-S5"), tmp_path)
    assert isinstance(without, CheckerCoverage) and without.off_path() == ()


def test_an_off_path_entry_whose_code_is_gone_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from dshfuzz.harness import _off_path

    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "m.py").write_text("def f():\n    if x:\n        raise ValueError\n    return 1\n")
    listing = tmp_path / "list.json"
    monkeypatch.setattr(_off_path, "OFF_PATH_FILE", listing)
    entry = {"file": "checker/m.py", "function": "f", "statement": "if x", "reason": "defensive", "why": "w"}
    listing.write_text(json.dumps({"format": "dshfuzz-checker-off-path/1", "entries": [entry]}))
    assert _off_path.off_path_lines.__wrapped__(tmp_path)[0].lines == (3,)  # an if lists its body
    listing.write_text(json.dumps({"format": "dshfuzz-checker-off-path/1", "entries": [{**entry, "function": "g"}]}))
    with pytest.raises(ValueError, match="entry 1: checker/m.py has no function 'g'.*moved or is gone"):
        _off_path.off_path_lines.__wrapped__(tmp_path)
    listing.write_text(json.dumps({"format": "dshfuzz-checker-off-path/1", "entries": [{**entry, "reason": "hard"}]}))
    with pytest.raises(ValueError, match="reason 'hard' is not one of api, defensive, limit"):
        _off_path.off_path_lines.__wrapped__(tmp_path)


def test_the_scratch_folder_is_not_measured(tmp_path: Path) -> None:
    coverage = CheckerCoverage(tmp_path, [])
    with coverage.measuring():
        sum(range(10))
    assert coverage.fresh() == ()


def test_a_node_checker_is_measured_by_v8_in_its_script_folder(tmp_path: Path) -> None:
    from dshfuzz.harness._checker_coverage import NodeCheckerCoverage, coverage_for, node_script

    checker = load_checker("serve:'node examples/node-checker/checker.mjs'")
    script = node_script(checker)
    assert script is not None and script.name == "checker.mjs"
    coverage = coverage_for(checker, tmp_path / "v8")
    assert isinstance(coverage, NodeCheckerCoverage)
    assert coverage.env == {"NODE_V8_COVERAGE": str(tmp_path / "v8")}
    assert "node-checker/checker.mjs" in coverage.statements()
    assert node_script(load_checker("cmd:'python3 checker.py {log}'")) is None


def test_js_statements_are_the_lines_holding_code() -> None:
    from dshfuzz.harness._checker_coverage import _code_lines

    source = "// a comment\n\nconst a = '😀'; /* x */\n/* block\n still */ b();\n  /* only */\n  é(); // after\n"
    # offsets in UTF-16 units, as V8 counts them: the emoji is two, so line 5's code is one further on
    assert _code_lines(source) == [(3, 14), (5, 57), (7, 77)]


def test_a_line_ran_when_its_innermost_v8_range_ran() -> None:
    from dshfuzz.harness._checker_coverage import _ran

    ranges = [{"startOffset": 0, "endOffset": 100, "count": 1}, {"startOffset": 40, "endOffset": 60, "count": 0}]
    assert _ran(ranges, 10) and not _ran(ranges, 45) and _ran(ranges, 60) and not _ran(ranges, 100)


def test_what_runs_at_import_is_no_statement_of_the_check_path(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text('"""doc"""\nimport os\nX = 1\n\n\n@staticmethod\ndef f(a):\n    if a:\n        return 1\n'
                      '    return 2\n\n\nclass C:\n    y = 2\n\n    def g(self):\n        return os.sep\n')
    coverage = CheckerCoverage(tmp_path, [source])
    assert coverage.statements() == {"mod.py": (8, 9, 10, 17)}


def test_a_node_checkers_scripts_are_its_entry_and_the_local_modules_it_imports(tmp_path) -> None:
    """A tool's script beside the checker (a mutation-testing wrapper, say) is not the checker's code,
    nor is a package under node_modules: only what the entry script imports by relative path."""
    from dshfuzz.harness._checker_coverage import _local_scripts

    (tmp_path / "lib").mkdir()
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "checker.mjs").write_text('import { a } from "./lib/a.mjs";\nimport fs from "node:fs";\n')
    (tmp_path / "lib" / "a.mjs").write_text('const b = require("../b.cjs");\nawait import("../node_modules/x.mjs");\n')
    (tmp_path / "b.cjs").write_text("module.exports = 1;\n")
    (tmp_path / "node_modules" / "x.mjs").write_text("export default 1;\n")
    (tmp_path / "wrapper.mjs").write_text('import "./checker.mjs";\n')
    found = _local_scripts((tmp_path / "checker.mjs").resolve(), tmp_path.resolve())
    assert [p.relative_to(tmp_path.resolve()).as_posix() for p in found] == ["b.cjs", "checker.mjs", "lib/a.mjs"]
