"""``dshfuzz mutators`` and ``dshfuzz mutate``, and the generated docs/MUTATORS.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshfuzz.cli import main
from dshfuzz.report import mutators_markdown as render_markdown
from dshfuzz.model import parse_log
from dshfuzz.mutators import METAMORPHIC, MUTATORS, PERTURBATIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "MUTATORS.md"


def test_committed_mutators_doc_matches_the_registry() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/MUTATORS.md drifted from the registry; regenerate: dshfuzz mutators --markdown > docs/MUTATORS.md"
    )


def test_mutators_json_lists_every_mutator_transform_and_perturbation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutators", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in doc["mutators"]] == list(MUTATORS)
    assert {m["name"] for m in doc["metamorphic"]} == set(METAMORPHIC)
    assert {p["name"] for p in doc["perturbations"]} == set(PERTURBATIONS)
    assert all(set(m) >= {"level", "expects", "official", "incident"} for m in doc["mutators"])


def test_mutate_writes_a_seeded_mutant_and_leaves_the_input_alone(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = fixtures_dir / "valid-v0.jsonl.zstd"
    before = source.read_bytes()
    outs = [tmp_path / f"m{i}.jsonl.zstd" for i in range(2)]
    for out in outs:
        assert main(["mutate", str(source), "--mutator", "seq-gap", "--seed", "5", "--out", str(out), "--json"]) == 0
    meta = json.loads(capsys.readouterr().out.splitlines()[0])
    assert meta["mutator"] == "seq-gap" and meta["expects"] == ["C1", "E2"] and meta["compression"] == "zstd"
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert source.read_bytes() == before
    assert len(parse_log(outs[0].read_bytes()).events) == 75


def test_mutate_container_follows_the_output_name(fixtures_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    assert main(["mutate", str(fixtures_dir / "valid-v0.jsonl.zstd"), "--mutator", "non-json-line", "--out", str(out)]) == 0
    assert parse_log(out.read_bytes()).compression == "none"


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--mutator", "no-such-mutator"], "unknown mutator"),
        (["--mutator", "torn-tail-frame"], "zstd logs only"),
        (["--mutator", "system-message-source"], "format v3 only"),
    ],
)
def test_mutate_refuses_with_exit_2_and_a_reason(
    argv: list[str], reason: str, fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.jsonl"
    assert main(["mutate", str(fixtures_dir / "valid-v0.jsonl"), *argv, "--out", str(out)]) == 2
    assert reason in capsys.readouterr().err
    assert not out.exists()


def test_mutate_reports_an_unreadable_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutate", str(tmp_path / "missing.jsonl"), "--mutator", "seq-gap", "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
