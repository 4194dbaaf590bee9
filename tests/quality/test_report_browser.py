"""The HTML report as a user sees it, rendered by a real browser (headless Chromium): at
1280 px nothing runs off the page sideways (the kill matrix scrolls in its own box), and
every finding has its section. Needs Debian's ``chromium`` (``.ci/run`` installs it);
skipped with the reason where it is absent outside CI, a failure under CI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from dshfuzz.checker import RULES
from dshfuzz.harness import CampaignFinished, CampaignStarted, DisagreementFound, ExampleJudged
from dshfuzz.mutators import MUTATORS
from dshfuzz.report import CampaignSummary, write_reports

T0 = 1_000.0
WIDTH = 1280


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def _wide_campaign(findings: int) -> CampaignSummary:
    """Every mutator firing every rule (the widest heatmap), and findings with long signatures and logs."""
    rules = frozenset(str(r) for r in RULES)
    events: list = [CampaignStarted("run", "cmd:'node a/rather/long/path/to/checker.mjs --json {log}'", 0, 2, 60.0,
                                    None, True, "/tmp/run", T0, tuple(MUTATORS))]
    for i, name in enumerate(sorted(MUTATORS)):
        events.append(ExampleJudged(0, name, 40, rules, frozenset(list(rules)[:2]), frozenset({"fold", "load"}),
                                    (), T0 + i / 10))
    log = b"".join(
        json.dumps({"type": "user/message", "seq": n, "time": 0, "data": {"text": "x" * 300}}).encode() + b"\n"
        for n in range(12)
    )
    for n in range(findings):
        rule = sorted(rules)[n]
        events.append(DisagreementFound(
            signature=f"miss|expected|{rule},W3,W4,P5|v0", kind="miss", layer="expected", rules=(rule, "W3", "W4", "P5"),
            mutator="orphan-tool-call", detail="the mutator's declared rules did not fire " * 4, data=log,
            compression="none", format_version=0, events_found=90, events_minimal=12, checker_rules=(),
            expected_rules=(rule,), official={"load": {"ok": False, "error": {"name": "SessionLogError",
                                                                             "message": "seq gap " * 40, "seq": 7}}},
            at=T0 + 5 + n, worker=0, stage="minimal",
        ))
    events.append(CampaignFinished("budget", len(MUTATORS), 60.0, T0 + 60))
    summary = CampaignSummary()
    for event in events:
        summary.add(event)
    return summary


def test_the_report_fits_1280px_and_shows_every_finding(tmp_path, chromium):
    findings = 4
    paths = write_reports(_wide_campaign(findings), tmp_path / "run")
    page = paths["html"].read_text()
    # the measuring script goes into a copy: the report itself runs no script
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", (
        "<script>document.title = JSON.stringify({scroll: document.documentElement.scrollWidth,"
        " view: window.innerWidth, findings: document.querySelectorAll('details[id^=finding-]').length})"
        "</script></body>")))
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},900", "--virtual-time-budget=3000",
         "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    title = re.search(r"<title>(.*?)</title>", proc.stdout, re.S)
    assert title is not None, proc.stderr[-2000:]
    seen = json.loads(title.group(1).replace("&quot;", '"'))
    assert seen["view"] == WIDTH, seen
    assert seen["scroll"] <= WIDTH, f"the page runs {seen['scroll'] - WIDTH} px off the side at {WIDTH} px"
    assert seen["findings"] == findings, seen
