"""The persistence, surface and framing rules name the official moments that really refuse.

Every minimal mutant of the unit tests (the event, header and surface cases of
``test_checker_persistence`` and ``test_checker_surface``) is written as a JSONL
file and judged by every official layer. For each finding of the mutated rule,
every harness layer its ``refused_by`` lists must refuse the mutant (``provider``
is the real endpoint, which no offline layer stands for) and accept the
unmutated twin; and every layer that refuses the mutant but not its twin must be
named by some finding.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' log builders and mutants

import test_checker_persistence  # noqa: E402
import test_checker_surface  # noqa: E402
from checker_logs import header, minimal_events  # noqa: E402

from dshfuzz.checker import CheckOptions, OfficialLayer, RuleId, check_path  # noqa: E402
from dshfuzz.model import batch_text, compress_frame, dumps, header_text, loads, parse_log  # noqa: E402

FOLDED = {"loadApp": "load"}
OFFLINE = {str(x) for x in OfficialLayer} - {"provider"}


def _cases():
    for rule, breaks, keeps in test_checker_persistence.EVENT_CASES + test_checker_surface.CASES:
        bad, good = minimal_events(), minimal_events()
        breaks(bad)
        keeps(good)
        yield rule, header(), test_checker_surface._clean(bad), header(), test_checker_surface._clean(good)
    for rule, bad_head, good_head in test_checker_persistence.HEADER_CASES:
        yield rule, bad_head, minimal_events(), good_head, minimal_events()


CASES = list(_cases())


def _write(tmp_path: Path, name: str, head, events) -> Path:
    path = tmp_path / name
    path.write_text("".join(dumps(x) + "\n" for x in [head, *events]), encoding="utf-8")
    return path


def _refusals(official, path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, verdict in official.check(path=path).items():
        if not verdict.ok and name != "wire":
            out[FOLDED.get(name, name)] = verdict.error.message if verdict.error else "refused"
    return out


@pytest.mark.official
@pytest.mark.parametrize(("rule", "bad_head", "bad", "good_head", "good"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_refused_by_names_exactly_the_layers_that_refuse(official, tmp_path: Path, rule: RuleId, bad_head, bad, good_head, good) -> None:
    bad_path, good_path = _write(tmp_path, "bad.jsonl", bad_head, bad), _write(tmp_path, "good.jsonl", good_head, good)
    report = check_path(bad_path, CheckOptions(strict=True))
    refused, twin_refused = _refusals(official, bad_path), _refusals(official, good_path)
    mine = [f for f in report.findings if f.rule is rule]
    assert mine, f"{rule} did not fire"
    claimed = {str(layer) for f in mine for layer in f.refused_by} & OFFLINE
    assert claimed <= set(refused), f"{rule} claims {sorted(claimed - set(refused))} refuse, but they accept; refusals: {refused}"
    assert not (claimed & set(twin_refused)), f"the twin is refused by a claimed layer too: {twin_refused}"
    named = {str(layer) for f in report.findings for layer in f.refused_by}
    unexplained = set(refused) - set(twin_refused) - named
    assert not unexplained, f"official {sorted(unexplained)} refuse ({refused}) but no finding names them"


def _fixture_events(fixtures_dir: Path) -> tuple[dict, list[dict]]:
    lines = [loads(x) for x in (fixtures_dir / "valid-v0.unpacked.jsonl").read_text().splitlines()]
    return lines[0], lines[1:]


def _file_mutants(fixtures_dir: Path) -> dict[str, tuple[RuleId, str, bytes]]:
    """Byte-level mutants of the valid fixture: (rule, file suffix, bytes)."""
    head, events = _fixture_events(fixtures_dir)
    jsonl = (fixtures_dir / "valid-v0.jsonl").read_bytes()
    zstd = (fixtures_dir / "valid-v0.jsonl.zstd").read_bytes()
    lines = jsonl.split(b"\n")
    garbage_mid = b"\n".join(lines[:10] + [b"{not json"] + lines[10:])
    at = next(i for i, x in enumerate(lines) if x.startswith(b'{"type":"text-chunks"'))
    row = loads(lines[at])
    bad_row = dumps({**row, "data": {**row["data"], "dt": row["data"]["dt"][:-1]}}).encode()
    malformed_row = b"\n".join(lines[:at] + [bad_row] + lines[at + 1 :])
    log = parse_log(zstd)
    frame = log.frames[2]
    corrupt = bytearray(zstd)
    corrupt[frame.offset + frame.size // 2] ^= 0xFF
    one_frame = compress_frame(jsonl)
    batches = [events[:30], events[30:]]
    header_with_batch = compress_frame(header_text(head) + batch_text(batches[0])) + compress_frame(batch_text(batches[1]))
    return {
        "R1 garbage line before a turn/end": (RuleId.R1, ".jsonl", garbage_mid),
        "R2 chunk row with a short dt": (RuleId.R2, ".jsonl", malformed_row),
        "Z2 corrupt middle frame": (RuleId.Z2, ".jsonl.zstd", bytes(corrupt)),
        "Z5 whole log in one frame": (RuleId.Z5, ".jsonl.zstd", one_frame),
        "Z4 header and first batch in one frame": (RuleId.Z4, ".jsonl.zstd", header_with_batch),
        "Z1 torn last frame": (RuleId.Z1, ".jsonl.zstd", zstd[:-7]),
    }


FILE_MUTANTS = ["R1 garbage line before a turn/end", "R2 chunk row with a short dt", "Z2 corrupt middle frame",
                "Z5 whole log in one frame", "Z4 header and first batch in one frame", "Z1 torn last frame"]


@pytest.mark.official
@pytest.mark.parametrize("name", FILE_MUTANTS)
def test_file_level_rules_name_the_layers_that_refuse(official, fixtures_dir: Path, tmp_path: Path, name: str) -> None:
    rule, suffix, data = _file_mutants(fixtures_dir)[name]
    path = tmp_path / f"session{suffix}"
    path.write_bytes(data)
    report = check_path(path, CheckOptions(strict=True))
    refused = _refusals(official, path)
    mine = [f for f in report.findings if f.rule is rule]
    assert mine, f"{rule} did not fire; findings: {[(str(f.rule), f.message) for f in report.findings]}"
    claimed = {str(layer) for f in mine for layer in f.refused_by} & OFFLINE
    assert claimed <= set(refused), f"{rule} claims {sorted(claimed - set(refused))} refuse, but they accept; refusals: {refused}"
    named = {str(layer) for f in report.findings if f.is_error for layer in f.refused_by}
    assert set(refused) <= named, f"official {sorted(set(refused) - named)} refuse ({refused}) but no error names them"
