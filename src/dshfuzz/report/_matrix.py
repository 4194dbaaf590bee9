"""The kill matrix rendered: a terminal table, ``matrix.md`` and ``matrix.json``.

Every renderer reads one :class:`~dshfuzz.harness.KillMatrix` through its JSON form
(``KillMatrix.to_json``), so the table, the Markdown and the JSON always say the same thing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshfuzz._atomic import write_atomic

if TYPE_CHECKING:
    from rich.console import Console

    from dshfuzz.harness import KillMatrix

__all__ = ["MATRIX_LEGEND", "matrix_json", "matrix_markdown", "matrix_out_problem", "matrix_progress",
           "render_matrix", "write_matrix"]

MATRIX_LEGEND = (
    "recall: the share of a row's mutants on which every rule the mutant expects fired (a miss lowers it).",
    "precision: the share of a row's logs on which no error-level root finding fired beyond what the log "
    "expects; a finding marked as following from another (causedBy) restates its root and is not counted "
    "(on valid and metamorphic rows, a false alarm lowers it). stray roots: the rules that cost precision.",
)


def _shortfall_style(row: dict[str, Any]) -> str:
    """Red for a row that misses incidents, yellow for one that reports more than it should."""
    if row["recall"] is not None and row["recall"] < 1:
        return "red"
    if row["precision"] is not None and row["precision"] < 1:
        return "yellow"
    return ""


def _per_row(data: dict[str, Any]) -> str:
    n = data["examplesPerMutator"]
    return f"{n} example{'' if n == 1 else 's'} per row"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.0f}%"


def _stray(row: dict[str, Any]) -> str:
    return ", ".join(f"{r}×{n}" for r, n in row.get("strayRootRules", {}).items())


def matrix_json(matrix: KillMatrix) -> str:
    """The matrix as ``dshfuzz matrix --json`` prints it and ``matrix.json`` holds it (no final newline)."""
    return json.dumps(matrix.to_json(), indent=1)


def matrix_markdown(matrix: KillMatrix) -> str:
    """``matrix.md``: one table row per matrix row, the legend, and what no mutator kills."""
    data = matrix.to_json()
    lines = [
        f"# Kill matrix — checker `{data['checker']}`, {_per_row(data)}",
        "",
        "| row | n | recall | precision | stray roots | expects | rules fired | official refused |",
        "| --- | ---: | ---: | ---: | --- | --- | --- | --- |",
    ]
    for name, row in data["rows"].items():
        fired = ", ".join(f"{r}×{n}" for r, n in row["rules"].items())
        refused = ", ".join(f"{k}×{n}" for k, n in row["officialRefused"].items())
        lines.append(
            f"| {name} | {row['examples']} | {_pct(row['recall'])} | {_pct(row['precision'])} | "
            f"{_stray(row) or '—'} | {', '.join(row['expects']) or '—'} | {fired or '—'} | {refused or '—'} |"
        )
    lines += ["", *MATRIX_LEGEND[:1], "", *MATRIX_LEGEND[1:]]
    lines += ["", f"Rules no mutator kills: {', '.join(data['unkilledRules']) or 'none'}", ""]
    for rule, why in data["unmutatedRules"].items():
        lines += [f"Rule {rule} has no mutator by design: {why}", ""]
    lines.append(f"False alarms on valid/metamorphic logs: {data['falseAlarms'] or 'none'}")
    return "\n".join(lines) + "\n"


def render_matrix(matrix: KillMatrix, console: Console, *, official: bool) -> None:
    """The matrix as a table fitted to the console (an ``official refused`` column when the
    official layers judged), each row coloured by its shortfall, then the stray roots and the
    rules no mutator kills or exercises."""
    from rich.table import Table

    from ._terminal import fit

    data = matrix.to_json()
    table = Table(title=f"kill matrix — {data['checker']}, {_per_row(data)}",
                  caption="\n".join(MATRIX_LEGEND) + "\nred: below 100% recall; yellow: below 100% precision",
                  caption_justify="left")
    columns = ["row", "n", "recall", "precision", "rules fired"] + (["official refused"] if official else [])
    for col in columns:
        table.add_column(col, justify="right" if col in ("n", "recall", "precision") else "left")
    for name, row in data["rows"].items():
        cells = [name, str(row["examples"]), _pct(row["recall"]), _pct(row["precision"]),
                 ", ".join(f"{r}×{n}" for r, n in row["rules"].items()),
                 ", ".join(f"{k}×{n}" for k, n in row["officialRefused"].items())]
        table.add_row(*cells[: len(columns)], style=_shortfall_style(row))
    console.print(fit(table, console.width))
    stray = [f"{name}: {_stray(row)}" for name, row in data["rows"].items() if _stray(row)]
    console.print(f"stray roots (what costs precision): {'; '.join(stray) or 'none'}")
    console.print(f"rules no mutator kills: {', '.join(data['unkilledRules']) or 'none'}")
    console.print(f"rules no mutator exercises, by design: {', '.join(data['unmutatedRules']) or 'none'}")


@contextmanager
def matrix_progress(console: Console) -> Iterator[Callable[[str], None]]:
    """A spinner on ``console`` for the block; the callable it yields names the row being built."""
    with console.status("building the kill matrix") as status:
        yield lambda name: status.update(f"kill matrix: {name}")


def matrix_out_problem(out: Path) -> str | None:
    """Why ``matrix.json`` and ``matrix.md`` cannot be written under ``out``, or None. A missing
    folder is created (like fuzz's report folder): the last pre-flight step, so a failed
    check leaves nothing behind."""
    if out.exists() and not out.is_dir():
        return f"--out {out}: not a folder; pass a folder for matrix.json and matrix.md"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--out {out}: cannot create the folder ({exc.strerror or exc}); pass a folder you can write"
    if not os.access(out, os.W_OK | os.X_OK):
        return f"--out {out}: the folder is not writable; pass one you can write"
    return None


def write_matrix(out: Path, matrix: KillMatrix) -> tuple[Path, Path]:
    """Write ``matrix.json`` and ``matrix.md`` into ``out`` (atomically); raises OSError."""
    return (write_atomic(out / "matrix.json", matrix_json(matrix) + "\n"),
            write_atomic(out / "matrix.md", matrix_markdown(matrix)))
