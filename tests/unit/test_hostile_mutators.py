"""The hostile-input mutators cross exactly one reader limit, and the kill matrix knows
which limit has no mutator and why.

``frame-over-limit`` (L1) appends a final zstd frame declaring just over the per-frame
limit; ``nesting-over-limit`` (L3) nests one request/header's tool schema just past the
depth limit; ``lines-over-limit`` (L4, with R1 for its first empty line) appends bare
newlines past the line-count limits. Each mutant fires its rule and no other error, where the same log without
the edit is clean; the read stops at the offending frame or line with everything before
it read. L2 (a line over 32 MiB) is exempt from the mutator gates by the registry.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import RULES, CheckOptions, RuleId, check_log
from dshfuzz.generators import GeneratedLog
from dshfuzz.harness import KillMatrix, MatrixRow
from dshfuzz.model import DEFAULT_LIMITS, SessionLog, decode_frame, json_depth, parse_log, scan_frames
from dshfuzz.mutators import MUTATORS, DrawAdapter, Mutant, logs_for

HOSTILE = {"frame-over-limit": {RuleId.L1}, "nesting-over-limit": {RuleId.L3}, "lines-over-limit": {RuleId.L4, RuleId.R1}}


def error_rules(log: SessionLog) -> set[RuleId]:
    return {f.rule for f in check_log(log, CheckOptions(strict=True)).findings if f.is_error}


def twin(log: GeneratedLog, mutant: Mutant) -> bytes:
    """The generated log in the mutant's container, without the edit."""
    return log.to_zstd() if mutant.compression == "zstd" else log.to_jsonl()


@st.composite
def mutate(draw: Any, name: str) -> tuple[GeneratedLog, Mutant]:
    """A log the mutator applies to, and its mutant."""
    log = draw(logs_for(name))
    return log, MUTATORS[name].apply(log, DrawAdapter(draw))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_mutator_names_its_limit_rule(name: str) -> None:
    assert MUTATORS[name].expects == HOSTILE[name]


@given(st.sampled_from(sorted(HOSTILE)).flatmap(mutate))
def test_the_mutant_fires_exactly_its_limit_rule_and_its_twin_nothing(
    pair: tuple[GeneratedLog, Mutant],
) -> None:
    log, mutant = pair
    read = parse_log(mutant.data)
    assert error_rules(read) == set(mutant.expects), mutant.description
    assert not error_rules(parse_log(twin(log, mutant))), f"the twin of {mutant.description} is not clean"


@given(mutate("frame-over-limit"))
def test_the_bomb_frame_is_refused_by_its_declared_size_after_every_real_event(
    pair: tuple[GeneratedLog, Mutant],
) -> None:
    log, mutant = pair
    read = parse_log(mutant.data)
    hit = read.limit
    assert hit is not None and hit.exact and hit.frame == len(read.frames) - 1
    assert DEFAULT_LIMITS.frame_bytes < hit.observed <= DEFAULT_LIMITS.frame_bytes + 128 * 1024
    assert len(mutant.data) < len(twin(log, mutant)) + 4096  # a few KiB of RLE blocks
    assert len(read.events) == len(log.events)


@given(mutate("nesting-over-limit"))
def test_the_nested_schema_is_json_just_past_the_depth_limit(pair: tuple[GeneratedLog, Mutant]) -> None:
    log, mutant = pair
    read = parse_log(mutant.data)
    hit = read.limit
    assert hit is not None and hit.kind == "depth"
    assert len(read.events) < len(log.events)  # the read stopped at the request/header
    assert hit.observed == DEFAULT_LIMITS.depth + 1 and not hit.exact
    deep = next(
        line for line in _lines(mutant) if json_depth(line, DEFAULT_LIMITS.depth) > DEFAULT_LIMITS.depth
    )
    assert json_depth(deep, DEFAULT_LIMITS.depth + 64) <= DEFAULT_LIMITS.depth + 64  # at most 64 levels past
    assert orjson.loads(deep)["type"] == "request/header"  # valid JSON the official parser takes whole


def _lines(mutant: Mutant) -> list[bytes]:
    if mutant.compression == "none":
        return mutant.data.split(b"\n")
    return b"".join(decode_frame(mutant.data[f.offset : f.end]) for f in scan_frames(mutant.data)).split(
        b"\n"
    )


def test_only_the_line_limit_is_exempt_from_mutators_and_says_why() -> None:
    exempt = {r for r, rule in RULES.items() if rule.unmutated}
    assert exempt == {RuleId.L2}
    assert not any(RuleId.L2 in m.expects for m in MUTATORS.values())


def test_the_kill_matrix_reports_an_exempt_rule_apart_from_the_unkilled() -> None:
    row = MatrixRow(
        "kills-a-and-c", frozenset({"A1", "C1"}), fired=Counter(("A1", "C1")), killed=Counter(("A1", "C1"))
    )
    matrix = KillMatrix("probe", 1, rows={row.name: row}, registry_rules=("A1", "B1", "C1"),
                        unmutated={"B1": "too slow", "C1": "too big"})
    assert matrix.unkilled == []
    assert matrix.exempt == {"B1": "too slow"}  # C1 was killed after all: not exempt
    data: dict[str, Any] = matrix.to_json()
    assert data["unkilledRules"] == [] and data["unmutatedRules"] == {"B1": "too slow"}
    assert replace(matrix, unmutated={}).unkilled == ["B1"]


def test_the_matrix_judges_each_mutant_by_its_own_expectations(tmp_path):
    """A mutator whose mutants expect different rules: a rule is killed when it fired on a
    mutant that expected it, whatever the row's last mutant expected (issue 20, item 7)."""
    from dshfuzz.harness import CheckerVerdict, Example, ReportedFinding
    from dshfuzz.harness._matrix import MatrixRow, _judge_into

    class FiresOnFirst:
        name = "fires-on-first"

        def check(self, path):  # noqa: ANN001, ANN201 - a path; a verdict
            first = path.read_bytes() == b"first\n"
            return CheckerVerdict((ReportedFinding("G2"),) if first else ())

    row = MatrixRow("mixed")
    row = _judge_into(row, Example(b"first\n", "none", "mixed", frozenset({"G2"})), FiresOnFirst(), None, tmp_path)
    row = _judge_into(row, Example(b"second\n", "none", "mixed", frozenset({"E3"})), FiresOnFirst(), None, tmp_path)
    matrix = KillMatrix("fires-on-first", 2, registry_rules=("E3", "G2"), rows={"mixed": row})
    assert matrix.killed_by() == {"E3": [], "G2": ["mixed"]}
    assert matrix.unkilled == ["E3"]
    assert row.expects == {"E3", "G2"} and row.recall == 0.5
