"""Issue 22's Why list, one test per bullet not pinned elsewhere, each named after it.

Every test runs the installed ``dshfuzz`` script as a user does (a subprocess), exit
code included. The bullets pinned by other files: fuzz's pre-flight
(test_preflight_cli.py), the corpus workflow (test_corpus_cli.py), plain JSONL named
.zstd, recover, mutate --out, check --bogus and "1 warning" (test_cli_messages.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "data" / "valid-v0.jsonl"
HEADER = '{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
# the installed console script beside this interpreter, as `make setup` installs it
DSHFUZZ = Path(sys.executable).with_name("dshfuzz")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def dshfuzz(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [str(DSHFUZZ)] if DSHFUZZ.exists() else [sys.executable, "-m", "dshfuzz"]
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def _official_or_skip() -> None:
    from dshfuzz.oracle.official import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"official layers unavailable under CI: {reason}")
        pytest.skip(f"official layers unavailable ({reason}); run `make setup` first")


def _column(table: str, index: int) -> str:
    """The words of one column of a printed table, top to bottom."""
    cells = [line.split("│")[index] for line in table.splitlines() if line.startswith("│")]
    return " ".join(" ".join(cells).split())


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


# Why 1 -------------------------------------------------------------------------------


@pytest.mark.slow
def test_make_test_fails_on_a_fresh_clone(tmp_path):
    """The four modules that failed or did not collect on a clone without ../shared pass
    (or skip, saying why) in a real clone beside which there is no shared/ folder."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    assert not (tmp_path / "shared").exists()
    modules = ["tests/unit/test_stream.py", "tests/unit/test_checker_registry.py",
               "tests/unit/test_checker_cli.py", "tests/unit/test_checker_robustness.py"]
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-rs", *modules],
                          cwd=clone, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "error" not in proc.stdout.splitlines()[-1], proc.stdout[-2000:]
    skips = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("place the shared/ folder beside the clone" in line for line in skips), skips


# Why 2 -------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "env", "says"), [
    (["--mutators", "nope", "--no-official"], {}, "unknown mutator nope; `dshfuzz mutators` lists them"),
    ([], {"DSHFUZZ_NODE": "/nonexistent/node"}, "official layers unavailable"),
    (["--checker", "nope", "--no-official"], {}, "unknown checker 'nope'"),
    (["--checker", "py:tests.broken_checkers.plain_text:check", "--no-official"], {}, "gave no usable report"),
], ids=["mutator", "node", "checker-spec", "checker-output"])
def test_no_pre_flight(tmp_path, args, env, says):
    """matrix, like fuzz, checks before any work: one line naming what and the fix, exit 2,
    no traceback, nothing written."""
    out = tmp_path / "matrix"
    proc = dshfuzz("matrix", "--examples", "1", "--out", str(out), *args, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dshfuzz matrix: ") and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stdout == ""
    assert not out.exists()
    if "official" in says:
        assert "--no-official" in lines[0]


def test_no_pre_flight_for_matrix_out_that_is_a_file(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    proc = dshfuzz("matrix", "--examples", "1", "--no-official", "--out", str(taken))
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f"dshfuzz matrix: --out {taken}: not a folder; pass a folder for matrix.json and matrix.md"), proc.stderr
    assert taken.read_text() == "mine\n"


# Why 3 -------------------------------------------------------------------------------


def test_coverage_holes_are_silent(tmp_path):
    """A campaign too short to reach every mutator names the ones it missed and how to reach
    them, and the rules that never fired; a checker that skips a rule shows it as a
    below-100% matrix row, in colour, with the legend saying what the numbers mean."""
    proc = dshfuzz("fuzz", "--budget", "20examples", "--workers", "1", "--no-official", "--no-minimise",
                   "--out", str(tmp_path / "run"), env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not reached" in proc.stdout and "--mutators" in proc.stdout, proc.stdout
    assert "rules never fired" in proc.stdout, proc.stdout
    matrix = dshfuzz("matrix", "--examples", "2", "--no-official", "--checker", "builtin:-W3",
                     "--mutators", "user-text-between", env={"FORCE_COLOR": "1", "COLUMNS": "120"})
    assert matrix.returncode == 1, matrix.stdout + matrix.stderr
    [row] = [line for line in matrix.stdout.splitlines() if "user-text-between" in line]
    assert "\x1b[31m" in row and "0%" in ANSI.sub("", row), repr(row)  # red: below full recall
    plain = ANSI.sub("", matrix.stdout)
    assert "recall: the share of a row's mutants" in plain and "precision: the share of a row's logs" in plain


# Why 5 -------------------------------------------------------------------------------


def test_random_bytes_named_zstd_are_not_called_empty(tmp_path):
    noise = tmp_path / "noise.jsonl.zstd"
    noise.write_bytes(bytes(range(256)) * 40)
    proc = dshfuzz("check", str(noise))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the file is empty" not in proc.stdout and "H1" in proc.stdout, proc.stdout
    assert "looks like plain JSONL" not in proc.stderr


def test_a_100_mb_line_is_refused_without_an_extra_no_events_finding(tmp_path):
    big = tmp_path / "big.jsonl"
    with big.open("w") as out:
        out.write(HEADER)
        out.write('{"type":"x","pad":"' + "a" * (100 * 1024 * 1024) + '"}\n')
    proc = dshfuzz("check", "--json", str(big))
    assert proc.returncode == 1, proc.stderr
    rules = {f["rule"] for f in json.loads(proc.stdout)["findings"]}
    assert rules == {"L2"}, rules


def test_messages_say_format_unknown_and_one_append_batch(tmp_path):
    not_a_header = tmp_path / "garbage.jsonl"
    not_a_header.write_text("garbage\n")
    check = dshfuzz("check", str(not_a_header))
    assert check.returncode == 1 and "format unknown" in check.stdout and "vNone" not in check.stdout, check.stdout
    header_only = tmp_path / "empty.jsonl.zstd"
    generated = dshfuzz("generate", "--count", "1", "--events", "0..0", "--zstd", "--out", str(tmp_path / "gen"))
    assert generated.returncode == 0, generated.stderr
    shutil.copy(tmp_path / "gen" / "0000.jsonl.zstd", header_only)
    mutate = dshfuzz("mutate", str(header_only), "--mutator", "torn-tail-frame", "--out", str(tmp_path / "m.jsonl.zstd"))
    assert mutate.returncode == 2, mutate.stdout + mutate.stderr
    assert "needs 1 append batch" in mutate.stderr and "batches" not in mutate.stderr, mutate.stderr


def test_output_files_are_written_with_the_users_umask_not_0600(tmp_path):
    out = tmp_path / "gen"
    proc = subprocess.run(
        ["sh", "-c", f'umask 022 && exec "$@"', "sh", *([str(DSHFUZZ)] if DSHFUZZ.exists() else
                                                         [sys.executable, "-m", "dshfuzz"]),
         "generate", "--count", "1", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "0000.jsonl").stat().st_mode & 0o777 == 0o644


# Why 6 -------------------------------------------------------------------------------

COMMANDS = ["fuzz", "check", "recover", "oracle", "generate", "contracts", "mutators", "mutate", "matrix", "corpus",
            "corpus list", "corpus replay", "corpus add", "corpus minimise", "corpus mark-fixed", "atheris"]


def test_help_lacks_seed_and_corpus_and_no_subcommand_states_its_exit_codes():
    for command in COMMANDS:
        proc = dshfuzz(*command.split(), "--help", env={"COLUMNS": "100"})
        assert proc.returncode == 0, (command, proc.stderr)
        assert "\nexit status:\n  0 " in proc.stdout and "\n  2 " in proc.stdout, (command, proc.stdout)
    fuzz = dshfuzz("fuzz", "--help", env={"COLUMNS": "100"}).stdout
    assert re.search(r"--seed SEED\s+the campaign's seed", fuzz) and re.search(r"--corpus CORPUS\s+where --save", fuzz)
    assert re.search(r"--seed SEED\s+seed of the generated logs", dshfuzz("matrix", "--help").stdout)


def test_mutators_has_no_header_or_descriptions_and_hides_perturbations_and_transforms():
    from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS

    for width in ("80", "160"):
        proc = dshfuzz("mutators", env={"COLUMNS": width})
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout
        assert _widest(text) <= int(width), width
        for title in ("incident mutators", "metamorphic transforms", "robustness perturbations"):
            assert re.search(rf"^{title} \(\d+\)", text, re.M), (title, text[:500])
        assert "level" in text and "expects" in text and "official" in text and "…" not in text.split("incident")[0]
        flat = re.sub(r"[│┃\s]+", " ", text)
        for name in [*MUTATORS, *METAMORPHIC, *PERTURBATIONS]:
            assert f" {name} " in flat, (width, name)
        assert "The host died" in text  # torn-tail-frame's incident, in one line


def test_matrix_precision_is_explained_nowhere_and_piped_output_cuts_row_names():
    proc = dshfuzz("matrix", "--examples", "1", "--no-official", env={"COLUMNS": "80"})
    assert proc.returncode in (0, 1), proc.stderr
    assert _widest(proc.stdout) <= 80 and "…" not in proc.stdout, proc.stdout
    rows = [line.split("│")[1].strip() for line in proc.stdout.splitlines() if line.startswith("│")]
    assert "metamorphic:skippable-frames" in rows and "metamorphic:rename-ids" in rows, rows
    said = " ".join(proc.stdout.split())
    assert "precision: the share of a row's logs on which no error-level root finding fired" in said, said
    assert "stray roots (what costs precision):" in said, said


@pytest.mark.parametrize("width", [80, 120])
def test_the_oracle_table_ignores_the_terminal_width_and_its_read_raw_column_comes_and_goes(tmp_path, width):
    _official_or_skip()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    proc = dshfuzz("oracle", str(FIXTURE), str(bad), env={"COLUMNS": str(width)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _widest(proc.stdout) <= width, proc.stdout
    accepted, refused = (_column(proc.stdout, i) for i in (2, 3))
    assert "readRaw, fold" in accepted, "readRaw accepts the valid log, so it is listed in its row too"
    assert "readRaw: Error: physical line 1 is not JSON" in refused
    assert "readRaw: the official reader decoding the file's rows" in " ".join(proc.stdout.split())


def test_the_live_views_progress_bar_has_no_line_break(tmp_path):
    """On a terminal (a pseudo-terminal here), each finding is a line of its own, never
    glued onto the budget bar."""
    pty = pytest.importorskip("pty")
    import select

    master, slave = pty.openpty()
    command = [str(DSHFUZZ)] if DSHFUZZ.exists() else [sys.executable, "-m", "dshfuzz"]
    proc = subprocess.Popen(
        [*command, "fuzz", "--checker", "builtin:-S5", "--mutators", "partial-coverage", "--budget", "300examples",
         "--workers", "1", "--no-official", "--stop-after", "1", "--seed", "1", "--out", str(tmp_path / "run")],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
        env={**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm"},
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.communicate(timeout=300)
    os.close(master)
    assert proc.returncode == 1
    screen = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    lines = re.split(r"[\r\n]+", screen)
    assert any("% of budget" in line for line in lines), screen[-2000:]
    found = [line for line in lines if "rule-id|expected|S5|" in line]
    assert found and all(line.startswith("rule-id ") for line in found), found
    assert not any("━" in line and "miss|" in line for line in lines)
