"""The official layers' verdicts for a reader: ``dshfuzz oracle``'s table and JSON.

The bridge to the official layers (:mod:`dshfuzz.oracle.official`) returns a typed
:class:`~dshfuzz.oracle.official.CheckReport` per file and prints nothing; these render them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from dshfuzz.oracle.official import CheckReport

__all__ = ["official_verdicts_json", "render_official_verdicts"]

_READ_RAW = "readRaw"  # the pseudo-layer reported when a file's rows cannot be decoded


def _cells(verdicts: Mapping[str, CheckReport]) -> dict[str, dict[str, Any]]:
    """File -> layer -> ``{ok, error?}``; ``readRaw`` appears for a file whose rows did not decode."""
    report: dict[str, dict[str, Any]] = {}
    for path, result in verdicts.items():
        cells: dict[str, Any] = {}
        if result.decode_error is not None:
            cells[_READ_RAW] = {"ok": False, "error": result.decode_error.to_json()}
        cells.update({name: verdict.to_json() for name, verdict in result.layers.items()})
        report[path] = cells
    return report


def official_verdicts_json(verdicts: Mapping[str, CheckReport]) -> str:
    """``dshfuzz oracle --json``: ``{file: {layer: {ok, error?}}}`` (no final newline)."""
    return json.dumps(_cells(verdicts), indent=2, ensure_ascii=False)


def render_official_verdicts(verdicts: Mapping[str, CheckReport], layers: Sequence[str], console: Console) -> None:
    """One row per file: the layers that accept it, and each refusal with its reason.

    Three columns fit any terminal (a column per layer needed 160 to 220 whatever the
    width) and fold when piped. ``readRaw`` (the official reader decoding the rows for the
    event layers) runs on every file whatever the layers asked for, so every row shows it,
    accepted or refused, not only the rows it refuses."""
    from rich.table import Table
    from rich.text import Text

    from dshfuzz.oracle.official import EVENT_LAYERS

    from ._terminal import fit

    table = Table(
        title="official verdicts", show_lines=True, title_justify="left", caption_justify="left",
        caption=f"{_READ_RAW}: the official reader decoding the file's rows, which the event layers "
                f"({', '.join(sorted(EVENT_LAYERS))}) judge; when it refuses, they are not run",
    )
    for column in ("file", "accepted by", "refused by (why)"):
        table.add_column(column)
    for path, cells in _cells(verdicts).items():
        ran = {_READ_RAW: {"ok": True}, **cells}  # readRaw ran on every file; it is reported only when it refuses
        accepted = [name for name in [_READ_RAW, *layers] if ran.get(name, {}).get("ok")]
        refused = Text()
        for name in [*([_READ_RAW] if _READ_RAW in cells else []), *layers]:
            cell = cells.get(name)
            if cell is None or cell["ok"]:
                continue
            error = cell["error"]
            message = (error.get("message") or "").splitlines()[0] if error.get("message") else ""
            refused.append(f"{name}: ", "bold red").append(f"{error.get('class', 'Error')}: {message}\n")
        skipped = [name for name in layers if name not in cells]
        if skipped:
            refused.append(f"not run (the rows did not decode): {', '.join(skipped)}", "dim")
        refused.rstrip()
        table.add_row(path, Text(", ".join(accepted) or "—", "green" if accepted else "dim"), refused or Text("—", "dim"))
    console.print(fit(table, console.width))
