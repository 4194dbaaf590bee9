"""The recovery planner's recommended prefix passes every official layer.

Sessions mixing healthy turns with the incidents of the seeds (an unanswered call
under a written turn/end, a malformed turn/end, a dangling result, a reused step,
user text between a call and its result) and the real v0 sessions: wherever the
planner names a fork boundary, the prefix it would seed is written as a file and
every official layer accepts it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' scenario builders

from agent_loop_logs import jsonl  # noqa: E402
from recovery_scenarios import DEFECTIVE, HEALTHY, session  # noqa: E402

from dshfuzz.checker import CheckOptions, check_path  # noqa: E402
from dshfuzz.checker._recover import blocking, fork_bytes, recover_plan  # noqa: E402
from dshfuzz.model import encode_zstd, parse_log, read_log  # noqa: E402

STRICT = CheckOptions(strict=True)


def _refusals(official, path: Path) -> dict[str, str]:
    return {name: (v.error.message if v.error else "refused")
            for name, v in official.check(path=path).items() if not v.ok}


def _assert_fork_passes(official, log, plan, tmp_path: Path, suffix: str) -> None:
    """Every layer accepts the fork, but for the raw-event readers that refuse only a legacy shape
    the loader and the released migration upgrade on read (a non-blocking finding names them)."""
    path = tmp_path / f"fork{suffix}"
    path.write_bytes(fork_bytes(log, plan.fork))
    refused = _refusals(official, path)
    upgraded = {str(layer) for f in check_path(path, STRICT).findings if not blocking(f) for layer in f.refused_by}
    refused = {k: v for k, v in refused.items() if FOLDED.get(k, k) not in upgraded or FOLDED.get(k, k) in HARNESS}
    assert not refused, f"fork after seq {plan.fork.seq} is refused: {refused}\n{path.read_text(errors='replace')[:4000]}"


FOLDED = {"loadApp": "load", "loadDirect": "load"}
HARNESS = {"load", "released"}


@given(st.lists(st.sampled_from(HEALTHY + DEFECTIVE), min_size=1, max_size=5), st.booleans())
def test_recommended_prefix_of_injected_defects_passes_every_layer(official, tmp_path_factory, kinds, zstd) -> None:
    b = session(kinds)
    data = encode_zstd(b.header, [b.events]) if zstd else jsonl(b.header, b.events).encode()
    log = parse_log(data, path="s.jsonl.zstd" if zstd else "s.jsonl")
    plan = recover_plan(log, options=STRICT)
    if plan.fork is not None:
        _assert_fork_passes(official, log, plan, tmp_path_factory.mktemp("fork"), ".jsonl.zstd" if zstd else ".jsonl")
    if set(kinds) <= set(HEALTHY):
        assert plan.fork is not None and not plan.rejected, "a healthy session forks at its last turn"


def test_recommended_prefix_of_every_real_v0_session_passes_every_layer(official, real_sessions_dir: Path,
                                                                         tmp_path: Path) -> None:
    entries = json.loads((real_sessions_dir / "manifest.json").read_text(encoding="utf-8"))["files"]
    forked = 0
    for entry in (e for e in entries if e["format_version"] == 0):
        log = read_log(real_sessions_dir / "concrete" / entry["name"])
        plan = recover_plan(log, options=STRICT)
        if plan.fork is None:
            continue
        forked += 1
        _assert_fork_passes(official, log, plan, tmp_path, "-" + entry["name"])
    assert forked >= 10, "the real sessions that pass every layer fork at their last turn"


@pytest.mark.parametrize("kinds", [["text", "gap", "tool"], ["tool", "orphan"], ["parallel", "interject", "text"]])
def test_seed_incidents_are_forked_around(official, tmp_path: Path, kinds: list[str]) -> None:
    b = session(kinds)
    log = parse_log(jsonl(b.header, b.events).encode(), path="s.jsonl")
    plan = recover_plan(log, options=STRICT)
    assert plan.fork is not None and plan.fork.turn == 1
    _assert_fork_passes(official, log, plan, tmp_path, ".jsonl")
