"""``dshfuzz mutants`` on the built-in checker's plugin rules: faults planted in P1-P5 are killed by
short campaigns, and reviewed equivalent mutants survive and are reported as equivalent.

Ten mutants of ``dshfuzz.checker._plugin``, each judged by a campaign of 40 examples (an example
budget: the verdicts do not depend on the machine's load) drawn from the five incidents the
plugin rules answer for, without the official layers. The planted faults remove a rule's walk,
negate its test, or skip its findings' loop; each must be killed. The shipped example ``py:``
checker's planted faults are killed too, and judged on a Dask cluster (``--cluster``: a
``LocalCluster`` on 127.0.0.1 started by the test) they get the verdicts local processes give them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("cosmic_ray", reason="dshfuzz[mutation] is not installed")

from dshfuzz.harness import MutantsFinished, MutationConfig, run_mutants, summarise_mutants  # noqa: E402

pytestmark = pytest.mark.slow

MODULE = "dshfuzz.checker._plugin"

PLANTED = {
    f"{MODULE}:RemoveDecorator:68f8f1b6adf2:0": "P1/P2's walk never registered",
    f"{MODULE}:ReplaceUnaryOperator_Delete_Not:65b6a8bef609:0": "P1 refuses the known marker prefixes instead",
    f"{MODULE}:RemoveDecorator:06073b8a3280:0": "P3's walk never registered",
    f"{MODULE}:AddNot:fe25fd6e9efb:0": "P3 keeps only the calls already answered",
    f"{MODULE}:ZeroIterationForLoop:faa3d810b28e:0": "P3 reports no unanswered call",
    f"{MODULE}:AddNot:845525c2a137:0": "P4 judges only the results with nothing wrong",
    f"{MODULE}:AddNot:75b5492ec65c:0": "P4 reports nothing when something is malformed",
    f"{MODULE}:ZeroIterationForLoop:1aa5f85efbdf:0": "P5 reports no ledger refusal",
}

EQUIVALENT = {
    f"{MODULE}:ReplaceComparisonOperator_Is_Eq:0d7526707e27:0",  # type(value) == dict
    f"{MODULE}:ReplaceComparisonOperator_Gt_LtE:5720be4d07c5:0",  # a message's plural
}

MUTATORS = ("unknown-marker-prefix", "self-shadowing-marker", "orphan-tool-call", "unparsable-tool-result",
            "id-positions-disagree")


def test_planted_faults_are_killed_and_equivalents_survive(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[2] / "src" / "dshfuzz" / "checker" / "_plugin.py"
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    config = MutationConfig(checker="builtin", modules=(MODULE,), only=(*PLANTED, *EQUIVALENT), seed=0,
                            budget_seconds=None, budget_examples=40, jobs=2, official=False, mutators=MUTATORS,
                            out=tmp_path / "mutants")
    finished = list(run_mutants(config))[-1]
    assert isinstance(finished, MutantsFinished)
    status = {r.mutant.id: r for r in finished.results}
    assert set(status) == set(PLANTED) | EQUIVALENT
    survivors = {i: f"{r.status}: {r.how}" for i, r in status.items() if i in PLANTED and r.status != "killed"}
    assert not survivors, {i: (PLANTED[i], why) for i, why in survivors.items()}
    summary = summarise_mutants(finished, config)
    assert {s.result.mutant.id: s.verdict for s in summary.survivors} == dict.fromkeys(EQUIVALENT, "equivalent")
    assert summary.overall.score == 1.0 and summary.overall.equivalent == len(EQUIVALENT)
    assert {"P1,P2", "P3", "P4", "P5"} <= set(summary.rules)
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before  # the checker's own file never changes


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python-checker"

EXAMPLE_PLANTED = {
    "checker:ReplaceUnaryOperator_Delete_Not:58c6d0feaf66:1": "H1 refuses every well-formed header",
    "checker:ReplaceUnaryOperator_USub_Not:49d9839e6a2b:0": "R1 reads no line at all (lines[1:False])",
}


def test_a_py_checker_is_mutated_in_a_copy_and_its_planted_faults_killed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped example checker, named as ``py:checker:check`` from its own folder (where the
    original shadows any copy unless the judging process runs in the copy's folder)."""
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    before = hashlib.sha256((EXAMPLE / "checker.py").read_bytes()).hexdigest()
    config = MutationConfig(checker="py:checker:check", checker_rules=("H1", "R1"), only=tuple(EXAMPLE_PLANTED),
                            seed=0, budget_seconds=None, budget_examples=150, jobs=2, official=False,
                            out=tmp_path / "mutants")
    finished = list(run_mutants(config))[-1]
    assert isinstance(finished, MutantsFinished)
    verdicts = {r.mutant.id: f"{r.status}: {r.how}" for r in finished.results}
    assert all(v.startswith("killed") for v in verdicts.values()), verdicts
    assert set(verdicts) == set(EXAMPLE_PLANTED)
    assert hashlib.sha256((EXAMPLE / "checker.py").read_bytes()).hexdigest() == before


@pytest.fixture
def example_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A LocalCluster of 2 single-threaded worker processes on 127.0.0.1, started in the example
    checker's folder (so ``py:checker:check`` imports there as in a local run), stopped after."""
    import logging

    distributed = pytest.importorskip("distributed",
                                      reason="the cluster extra: pip install 'dshfuzz[cluster]'")
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster


def test_mutants_judged_on_a_cluster_get_the_verdicts_they_get_locally(
        example_cluster: Any, tmp_path: Path) -> None:
    """``--cluster``: the same two mutants, judged as tasks on a Dask cluster (as many at once as
    it has threads), get the statuses and causes the same run judged by local processes gets, and
    the coordinator's results file records them."""
    base = {"checker": "py:checker:check", "checker_rules": ("H1", "R1"), "only": tuple(EXAMPLE_PLANTED),
            "seed": 0, "budget_seconds": None, "budget_examples": 150, "official": False}
    verdicts = {}
    for where, cluster in (("local", None), ("cluster", example_cluster.scheduler_address)):
        config = MutationConfig(**base, jobs=2 if cluster is None else 0, cluster=cluster,
                                out=tmp_path / where)
        finished = list(run_mutants(config))[-1]
        assert isinstance(finished, MutantsFinished)
        verdicts[where] = {r.mutant.id: (r.status, r.how, r.cause) for r in finished.results}
    assert set(verdicts["cluster"]) == set(EXAMPLE_PLANTED)
    assert verdicts["cluster"] == verdicts["local"]
    # each mutant was a task the cluster ran to its end, not a thread of this process
    ran = {key for key, _, finish, *_ in example_cluster.scheduler.transition_log if finish == "memory"}
    assert all(any(str(key).endswith(mutant_id) for key in ran) for mutant_id in EXAMPLE_PLANTED), ran
    records = [json.loads(line) for line in (tmp_path / "cluster" / "results.jsonl").read_text().splitlines()]
    assert {r["mutant"]["id"]: r["status"] for r in records if "mutant" in r} == {
        mutant_id: status for mutant_id, (status, _, _) in verdicts["cluster"].items()}


def test_the_unmutated_checkers_own_causes_come_with_their_witnesses(tmp_path: Path) -> None:
    """A checker that misses S5 before any mutant: the baseline's cause is no mutant's doing, so the
    run keeps its witness (named by its content's hash) and the summary names it, for the user to
    read and fix. The checker lives in a namespace package (``tests`` has no ``__init__.py``): its
    original files load beside the copy all the same."""
    from dshfuzz.harness import load_checker

    spec = "py:tests.broken_checkers.miss_rule:check"
    config = MutationConfig(checker=spec, sample=1, seed=1, budget_seconds=None, budget_examples=60, jobs=1,
                            official=False, mutators=("partial-coverage",), out=tmp_path / "mutants")
    finished = list(run_mutants(config))[-1]
    assert isinstance(finished, MutantsFinished)
    assert not [r for r in finished.results if r.status == "error"], finished.results
    summary = summarise_mutants(finished, config).to_json()["baseline"]
    assert summary["causes"] == ["rule-id|expected|S5"]
    [witness] = summary["witnesses"]
    path = tmp_path / "mutants" / witness["file"]
    assert path.name.startswith(hashlib.sha256(path.read_bytes()).hexdigest()[:16])
    with load_checker("builtin") as builtin:
        builtin_rules = {f.rule for f in builtin.check(path).findings}
    with load_checker(spec) as checker:
        its_rules = {f.rule for f in checker.check(path).findings}
    assert "S5" in builtin_rules and "S5" not in its_rules, path.read_text()
