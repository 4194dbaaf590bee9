"""A kill matrix of some mutators answers for the rules those mutators expect."""

from __future__ import annotations

from dshfuzz.harness import load_checker
from dshfuzz.harness._matrix import build_matrix
from dshfuzz.mutators import MUTATORS


def test_a_matrix_of_chosen_mutators_reports_no_rule_outside_them_as_unkilled():
    chosen = ["duplicate-seq"]
    matrix = build_matrix(load_checker("builtin"), examples=2, seed=0, official=None, mutators=chosen)
    expected = {str(r) for r in MUTATORS["duplicate-seq"].expects}
    assert set(matrix.killed_by()) == expected
    assert matrix.unkilled == [], f"unkilled outside the chosen mutators: {matrix.unkilled}"
