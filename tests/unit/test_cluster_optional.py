"""The cluster packages are an extra: a campaign without ``--cluster`` never imports Dask (nor
Redis), and ``--cluster`` without them is one usage error naming the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# None in sys.modules makes an import fail as if the package were not installed
BLOCK = "import sys; sys.modules['distributed'] = sys.modules['dask'] = sys.modules['redis'] = None; "


def test_a_campaign_without_cluster_runs_with_dask_and_redis_missing(tmp_path):
    code = BLOCK + (
        "from dshfuzz.harness import CampaignConfig, CampaignFinished, run_campaign; "
        f"events = list(run_campaign(CampaignConfig(workers=0, budget_seconds=None, budget_examples=15, "
        f"official=False, out=__import__('pathlib').Path({str(tmp_path)!r})))); "
        "assert isinstance(events[-1], CampaignFinished) and events[-1].examples >= 15, events[-1]; "
        "assert not {'distributed', 'dask', 'redis'} & {m for m, v in sys.modules.items() if v is not None}"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_cluster_without_the_extra_is_one_usage_error(tmp_path):
    code = BLOCK + "from dshfuzz.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run(
        [sys.executable, "-c", code, "fuzz", "--cluster", "local", "--budget", "5s", "--no-official",
         "--out", str(tmp_path / "run")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [
        "dshfuzz fuzz: --cluster needs Dask's distributed package: pip install 'dshfuzz[cluster]'"
    ]
