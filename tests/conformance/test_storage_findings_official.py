"""Storage-layer findings the ``aimed-storage`` perturbations reached, judged by the official layers.

Each case is a shape the checker once described wrongly (issue 32, the checker's own coverage):

- a packed chunk row whose data is an array: ``validateRow``'s ``isRecord`` is ``typeof ===
  "object"``, so an array passes it and fails ``hasExactKeys`` (S:932, 961); the checker said
  "data must be an object";
- a zstd log whose header line nests past the reader's depth limit: the limit stops the read
  inside the header frame, whose lines the reader never records, and the checker read that
  as an empty header frame (Z4, "load refuses"), which the loader reads whole;
- a plain log with a seq gap after its last turn/end: the jsonl loader keeps the log up to
  the gap as a torn tail (SPJ:285-294), so the loader accepts; E2 said so, but C1 (the note
  summing up E2 and S9) claimed the loader refuses, and Z1 said the last line has no newline
  where every line ends on one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders

from checker_logs import ev, header, minimal_events  # noqa: E402

from dshfuzz.checker import CheckOptions, check_path  # noqa: E402
from dshfuzz.model import compress_frame, dumps  # noqa: E402
from dshfuzz.oracle.official import OfficialRefusal  # noqa: E402

pytestmark = pytest.mark.official


def _jsonl(path: Path, head: Any, events: list[Any]) -> Path:
    path.write_text("".join(dumps(x) + "\n" for x in [head, *events]), encoding="utf-8")
    return path


def _refusals(official: Any, path: Path) -> dict[str, str]:
    return {name: v.error.message if v.error else "refused" for name, v in official.check(path=path).items() if not v.ok}


def test_a_packed_row_whose_data_is_an_array_draws_the_official_message(official: Any, tmp_path: Path) -> None:
    events = minimal_events()
    row = {"type": "text-chunks", "seq0": len(events), "time0": events[-1]["time"], "data": ["a"]}
    path = _jsonl(tmp_path / "row.jsonl", header(), [*events, row])
    with pytest.raises(OfficialRefusal) as refused:  # the rc.8 decoder's validateRow, on the row alone
        official.unpack([row])
    raw = refused.value.error.message
    assert raw == "malformed text-chunks storage row: data must be exactly {turn, step, index, dt, texts}", raw
    mine = [f.message for f in check_path(path, CheckOptions(strict=True)).findings if str(f.rule) == "R2"]
    assert mine == [raw], mine


def test_a_header_past_the_depth_limit_says_nothing_of_the_header_frame(official: Any, tmp_path: Path) -> None:
    nested: Any = []
    for _ in range(599):
        nested = [nested]
    head = {**header(), "title": nested}  # the loader reads the header whole (released refuses the member)
    path = tmp_path / "deep.jsonl.zstd"
    path.write_bytes(compress_frame(dumps(head).encode() + b"\n")
                     + compress_frame("".join(dumps(e) + "\n" for e in minimal_events()).encode()))
    refused = _refusals(official, path)
    assert "load" not in refused and "unexpected member" in refused["released"], refused
    findings = check_path(path, CheckOptions(strict=True)).findings
    assert {str(f.rule) for f in findings} == {"L3"}, [(str(f.rule), f.message) for f in findings]


def test_a_gap_after_the_last_turn_end_is_no_refusal_of_the_loader(official: Any, tmp_path: Path) -> None:
    events = minimal_events()
    events.append(ev(len(events) + 1, "plan/mode", {"active": False}))  # seq len(events) is never written
    path = _jsonl(tmp_path / "gap.jsonl", header(), events)
    refused = _refusals(official, path)
    assert "load" not in refused and "released" in refused, refused
    findings = {str(f.rule): f for f in check_path(path, CheckOptions(strict=True)).findings}
    assert "load" not in {str(x) for x in findings["C1"].refused_by}, findings["C1"].refused_by
    assert path.read_bytes().endswith(b"\n") and "no newline" not in findings["Z1"].message, findings["Z1"].message
