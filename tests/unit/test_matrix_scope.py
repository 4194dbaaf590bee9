"""A kill matrix of some mutators answers for the rules those mutators expect."""

from __future__ import annotations

from dshfuzz.harness import build_matrix, load_checker
from dshfuzz.mutators import MUTATORS


def test_a_matrix_of_chosen_mutators_reports_no_rule_outside_them_as_unkilled():
    chosen = ["duplicate-seq"]
    matrix = build_matrix(load_checker("builtin"), examples=2, seed=0, official=None, mutators=chosen)
    expected = {str(r) for r in MUTATORS["duplicate-seq"].expects}
    assert set(matrix.killed_by()) == expected
    assert matrix.unkilled == [], f"unkilled outside the chosen mutators: {matrix.unkilled}"


def test_the_matrix_is_perfect_only_at_full_recall_with_every_rule_killed_and_no_false_alarm():
    from dshfuzz.harness import MatrixConfig, run_matrix

    whole = run_matrix(MatrixConfig(examples=2, mutators=("duplicate-seq",), official=False))
    assert whole.perfect, whole.to_json()
    blind = run_matrix(MatrixConfig(checker="builtin:-W3", examples=2, mutators=("user-text-between",), official=False))
    assert not blind.perfect and blind.unkilled == ["W3"]
