"""A campaign finds each planted defect behind every checker protocol, once, with a small
witness: per log (``cmd:'… {log}'``), batch (``cmd:'… {logs}'``) and persistent
(``serve:'…'``), in Python and in Node. And it never blames a checker for what it did
not claim: whole-log findings without a seq, "not assessable" answers and refusals under
another id produce no wrong-place or miss finding; a checker that prints text stops the
campaign before it starts.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dshfuzz.contracts.layers import OfficialLayer
from dshfuzz.harness import CampaignConfig, CampaignSetupError, DisagreementFound, ExampleJudged, run_campaign
from dshfuzz.harness._events import SETTLED
from dshfuzz.model import parse_log
from dshfuzz.report._summary import cause_of

REPO = Path(__file__).resolve().parents[2]
BROKEN = REPO / "tests" / "broken_checkers"
PYTHON = shlex.quote(sys.executable)
MAX_MINIMAL_EVENTS = 12


def _script(name: str, *args: str) -> str:
    return " ".join([PYTHON, shlex.quote(str(BROKEN / name)), *args])


@pytest.fixture(scope="module")
def node(node24: Path) -> str:
    return shlex.quote(str(node24))


def _planted(kind: str, rule: str | None = None) -> Callable[[DisagreementFound], bool]:
    """The planted defect; a false alarm as format 0 shows it: a later format's log needs more
    events to stay clean for every judge (a false alarm's witness must), so its 1-minimal
    witness is larger."""

    def matches(found: DisagreementFound) -> bool:
        if kind == "false-alarm" and found.format_version not in (0, None):
            return False
        return found.kind == kind and (rule is None or rule in found.rules)

    return matches


CASES = {
    # (spec, official layers judging, the planted defect, the checker's timeout)
    "per-log python, crashes": (
        lambda node: f"cmd:'{PYTHON} -m tests.broken_checkers.crashes {{log}}'", False, _planted("crash"), 20.0
    ),
    "batch python, misses S5": (
        lambda node: f"cmd:'{_script('batch.py', 'miss_rule', '{logs}')}'", False, _planted("rule-id", "S5"), 20.0
    ),
    "serve python, false alarm T3": (
        lambda node: f"serve:'{_script('serve.py', 'false_alarm')}'", True, _planted("false-alarm", "T3"), 20.0
    ),
    "serve python, wrong seq": (
        lambda node: f"serve:'{_script('serve.py', 'wrong_seq')}'", False, _planted("wrong-place", "E2"), 20.0
    ),
    "serve node, hangs": (
        lambda node: f"serve:'{node} {shlex.quote(str(BROKEN / 'node_hang.mjs'))}'", False, _planted("timeout"), 1.0
    ),
}


def _campaign(spec: str, tmp_path: Path, *, official: bool, stop: Callable[[DisagreementFound], bool], **config):
    """Run a 60 s campaign until ``stop`` holds for a settled finding; every finding event seen."""
    settings = {"seed": 1, "workers": 1, "budget_seconds": 60, "official": official, "out": tmp_path,
                "minimise_seconds": 60, **config}
    events: list[DisagreementFound] = []
    campaign = run_campaign(CampaignConfig(checker=spec, **settings), check_first=True)
    try:
        for event in campaign:
            if isinstance(event, DisagreementFound):
                events.append(event)
                if event.stage in SETTLED and stop(event):
                    break
    finally:
        campaign.close()
    return events


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_60s_campaign_finds_the_planted_defect_behind_every_protocol_once_with_a_small_witness(
    case, tmp_path, monkeypatch, request
):
    make_spec, official, matches, timeout = CASES[case]
    spec = make_spec(request.getfixturevalue("node") if "node" in case else "")
    if official:
        request.getfixturevalue("official")  # skips (or fails under CI) exactly as the conformance suite does
    monkeypatch.chdir(REPO)
    events = _campaign(spec, tmp_path, official=official, stop=matches, checker_timeout=timeout)
    planted = [e for e in events if matches(e) and e.stage in SETTLED]
    assert planted, f"{case}: not found; found instead {sorted({e.signature for e in events})}"
    # one cause may show in several formats (a signature each): its minimal witness is the one asked for
    finding = next((e for e in reversed(planted) if e.stage == "minimal"), planted[-1])
    causes = {cause_of(e.signature) for e in events if e.kind == finding.kind and set(finding.rules) <= set(e.rules)}
    assert len(causes) == 1, f"{case}: one planted defect, several causes: {sorted(causes)}"
    witness = finding.data.decode("utf-8", "replace")
    assert finding.stage == "minimal", f"{case}: {finding.stage}\n{witness}"
    events_left = len(parse_log(finding.data, compression=finding.compression).events)  # type: ignore[arg-type]
    assert events_left <= MAX_MINIMAL_EVENTS, f"{case}: {events_left} events left:\n{witness}"


@pytest.mark.slow
def test_two_different_crashes_behind_serve_are_two_causes(tmp_path, monkeypatch):
    # neither error names an exception or a frame: their words tell them apart
    monkeypatch.chdir(REPO)
    crashes: set[str] = set()

    def both(event: DisagreementFound) -> bool:
        if event.kind == "crash":
            crashes.add(cause_of(event.signature))
        return len(crashes) >= 2

    events = _campaign(f"serve:'{_script('serve.py', 'two_crashes')}'", tmp_path, official=False, stop=both,
                       mutators=("non-json-line", "duplicate-seq"), minimise=False)
    causes = sorted({cause_of(e.signature) for e in events if e.kind == "crash"})
    assert len(causes) == 2, f"two crashes, {len(causes)} causes: {causes}"
    assert any("cannot read line" in c for c in causes) and any("repeats" in c for c in causes), causes


_NOT_RELEASED = tuple(sorted(str(layer) for layer in OfficialLayer if layer is not OfficialLayer.RELEASED))
"""What ``tests/broken_checkers/no_released.py`` answers for."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "spec, layers, missed",
    [
        (lambda: f"serve:'{_script('serve.py', 'no_released')}'", None, False),  # the handshake's layers
        (lambda: "py:tests.broken_checkers.no_released:check", _NOT_RELEASED, False),  # --checker-layers
        (lambda: "py:tests.broken_checkers.no_released:check", None, True),  # no declaration: every layer
    ],
    ids=["serve handshake", "checker-layers", "undeclared"],
)
def test_a_refusal_only_a_layer_the_checker_does_not_answer_for_makes_is_out_of_scope(
    spec, layers, missed, official, tmp_path, monkeypatch
):
    monkeypatch.chdir(REPO)
    config = CampaignConfig(
        checker=spec(), checker_layers=layers, seed=1, workers=1, budget_seconds=None, budget_examples=40,
        official=True, out=tmp_path, minimise=False, mutators=("descriptor-version", "title-sources"),
    )
    signatures: list[str] = []
    campaign = run_campaign(config, check_first=True)
    try:
        for event in campaign:
            if isinstance(event, ExampleJudged):
                signatures.extend(event.signatures)
    finally:
        campaign.close()
    misses = sorted({s for s in signatures if s.startswith("miss|released|")})
    out_of_scope = [s for s in signatures if s.startswith("out-of-scope|released|")]
    if missed:
        assert misses and not out_of_scope, (misses, out_of_scope)
    else:
        assert not misses and out_of_scope, f"misses {misses}; {len(out_of_scope)} out of scope"


HONEST = {
    # whole-log findings without a seq are never in the wrong place
    "no seq": ("no_seq", lambda e: e.kind == "wrong-place"),
    # "not assessable" on format 1 and later is no verdict, never a miss there
    "not assessable": ("not_assessable", lambda e: e.kind.startswith("miss") and e.format_version not in (0, None)),
    # S5 refused as S8: the log was refused, under another id
    "other id": ("other_id", lambda e: e.kind.startswith("miss") and e.layer != "expected"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HONEST))
def test_a_checker_is_never_blamed_for_what_it_did_not_claim(case, tmp_path, monkeypatch):
    module, blamed = HONEST[case]
    monkeypatch.chdir(REPO)
    events = _campaign(f"py:tests.broken_checkers.{module}:check", tmp_path, official=False,
                       stop=lambda e: False, budget_seconds=None, budget_examples=400, minimise=False)
    wrong = sorted({e.signature for e in events if blamed(e)})
    assert not wrong, f"{case}: blamed for {wrong}"


@pytest.mark.slow
def test_a_checker_without_p5_gets_no_p5_miss_and_its_scorecard_says_not_implemented(tmp_path):
    """The built-in checker with P5 switched off, declaring every id but P5."""
    out = tmp_path / "run"
    rules = ",".join(r for r in _registry() if r != "P5")
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", "builtin:-P5", "--checker-rules", rules,
         "--mutators", "id-positions-disagree", "--budget", "60examples",
         "--workers", "1", "--no-official", "--no-minimise", "--seed", "2", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    p5_findings = [f["signature"] for f in summary["findings"] if "P5" in f["rules"]]
    assert not p5_findings, p5_findings
    [p5] = [row for row in summary["scorecard"] if row["rule"] == "P5"]
    assert p5["status"] == "not implemented" and p5["notImplemented"] > 0 and p5["missed"] == 0, p5


def _registry() -> list[str]:
    from dshfuzz.checker import RULES

    return [str(r) for r in RULES]


def test_a_checker_printing_plain_text_stops_the_campaign_before_it_starts(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "fuzz", "--checker", f"cmd:'{_script('plain_text.py', '{log}')}'",
         "--budget", "60s", "--workers", "1", "--no-official", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dshfuzz fuzz: the checker"), proc.stderr
    assert "unparsable-output" in lines[0] and not out.exists()


def test_preflight_refuses_an_unrunnable_checker_in_one_line(tmp_path):
    config = CampaignConfig(checker="cmd:'/nonexistent/checker {log}'", official=False, out=tmp_path)
    with pytest.raises(CampaignSetupError, match="gave no usable report on a valid log"):
        list(run_campaign(config, check_first=True))
