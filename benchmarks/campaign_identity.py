"""Findings of two versions of dshfuzz on the same campaigns: identical, or the difference.

    .venv/bin/python benchmarks/campaign_identity.py --before main [--after TREE] [--seeds 1 2 3 4 5]
        [--budget 300examples] [--workers 1] [--checker builtin --checker builtin:-S5,-E2]
        [--official] [--cluster local | --after-cluster local | --in-process] [--control]

A refactoring that moves code must not change what a campaign finds. For each checker and
seed, this runs ``dshfuzz fuzz --budget B --workers W --seed S --out DIR`` (``--no-official``
unless ``--official``) once with each version's ``src`` on ``PYTHONPATH``, and compares from
each ``summary.json`` the example count, the count of each signature, and each finding: its
signature, count, stage, and its witness (events and bytes). It prints each campaign's
difference, or ``identical``, and exits 1 when any differs. ``--control`` runs the before
version a second time and prints how that run differs from its first: a difference that shows
there too comes from the machine, not from the change.

``--before`` (and ``--after``) is a source tree (a directory holding ``src/dshfuzz``) or a
commit, checked out into a temporary worktree that shares this checkout's pinned Node
packages; ``--after`` is this checkout by default. An example budget makes a campaign
deterministic for its seed up to what depends on time: with the official layers, the logs judged
after the budget is reached and before the worker stops (its verdicts arrive in flight), and which
witness a minimisation keeps (a time box, the server's answers under load).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_MODULES = Path("src/dshfuzz/oracle/official/js/node_modules")


@contextlib.contextmanager
def source_tree(spec: str, scratch: Path, name: str) -> Iterator[Path]:
    """The ``src`` directory of ``spec``: a tree as it is, or a commit checked out for the run."""
    given = Path(spec)
    if (given / "src" / "dshfuzz").is_dir():
        yield given.resolve() / "src"
        return
    tree = scratch / name
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), spec], check=True)
    try:
        if (ROOT / NODE_MODULES).exists():
            (tree / NODE_MODULES).symlink_to((ROOT / NODE_MODULES).resolve())
        yield tree / "src"
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


IN_PROCESS = ("import sys, dshfuzz.harness as h; h.default_workers = lambda: 0; "
              "from dshfuzz.cli import main; sys.exit(main(sys.argv[1:]))")
"""``dshfuzz fuzz`` with its default worker count made 0: one worker on a thread of the process,
which every version stops exactly at an example budget (a version whose worker processes do not
stop themselves judges a few logs past it, as many as the machine's timing lets through)."""


def campaign(src: Path, out: Path, seed: int, args: argparse.Namespace, checker: str,
             cluster: str | None = None) -> dict[str, Any]:
    """One campaign of the version at ``src``: what of its summary must not change."""
    if args.in_process:  # the one worker on a thread, stopping itself at the budget in every version
        command = [sys.executable, "-c", IN_PROCESS, "fuzz", "--budget", args.budget]
    else:
        command = [sys.executable, "-m", "dshfuzz", "fuzz", "--budget", args.budget, "--workers", str(args.workers)]
    command += ["--seed", str(seed), "--checker", checker, "--out", str(out)]
    if not args.official:
        command.append("--no-official")
    if cluster:
        command += ["--cluster", cluster]
    run = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(src)}, cwd=out.parent,
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):  # 1: findings
        raise SystemExit(f"{' '.join(command)} (PYTHONPATH={src}) exited {run.returncode}:\n{run.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    findings = []
    for finding in summary["findings"]:
        witness = finding.get("witness")
        data = (out / witness).read_bytes() if witness else b""
        findings.append({
            "signature": finding["signature"],
            "count": finding.get("count"),
            "stage": finding.get("stage"),
            "eventsMinimal": finding.get("eventsMinimal"),
            "witness": hashlib.sha256(data).hexdigest()[:16] if witness else None,
        })
    return {
        "examples": summary["examples"],
        "signatureCounts": summary["signatureCounts"],
        "findings": sorted(findings, key=lambda f: f["signature"]),
    }


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for key in ("examples", "signatureCounts"):
        if before[key] != after[key]:
            out.append(f"{key}: {json.dumps(before[key], sort_keys=True)} -> {json.dumps(after[key], sort_keys=True)}")
    was = {f["signature"]: f for f in before["findings"]}
    now = {f["signature"]: f for f in after["findings"]}
    for signature in sorted(was.keys() | now.keys()):
        if was.get(signature) != now.get(signature):
            out.append(f"finding {signature}: {json.dumps(was.get(signature))} -> {json.dumps(now.get(signature))}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="a source tree or a commit")
    parser.add_argument("--after", default=str(ROOT), help="a source tree or a commit (default: this checkout)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--budget", default="300examples")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--checker", action="append", help="a --checker SPEC (repeatable; default builtin)")
    parser.add_argument("--official", action="store_true", help="judge with the official layers too")
    parser.add_argument("--cluster", help="run the workers on a Dask cluster (local: one started for the run)")
    parser.add_argument("--after-cluster", help="run only the after version's workers on this Dask cluster: "
                        "the same version on both sides compares local processes with a cluster")
    parser.add_argument("--in-process", action="store_true",
                        help="run the one worker on a thread of the campaign's process (--workers is ignored)")
    parser.add_argument("--control", action="store_true",
                        help="run the before version twice too: a difference it shows with itself is the machine's")
    args = parser.parse_args()
    checkers = args.checker or ["builtin"]
    differing = 0
    with tempfile.TemporaryDirectory(prefix="dshfuzz-identity-") as tmp:
        scratch = Path(tmp)
        with source_tree(args.before, scratch, "before") as before, source_tree(args.after, scratch, "after") as after:
            print(f"before: {before}\nafter:  {after}", flush=True)
            for number, checker in enumerate(checkers):
                for seed in args.seeds:
                    got = {}
                    runs = [("before", before), ("after", after)] + ([("again", before)] if args.control else [])
                    for name, src in runs:
                        out = scratch / "runs" / f"{name}-{number}-{seed}"
                        out.parent.mkdir(exist_ok=True)
                        cluster = args.after_cluster if name == "after" and args.after_cluster else args.cluster
                        got[name] = campaign(src, out, seed, args, checker, cluster)
                    found = differences(got["before"], got["after"])
                    counts = got["after"]["signatureCounts"]
                    head = (f"{checker}, seed {seed}: {got['after']['examples']} examples, "
                            f"{len(counts)} signatures shown by {sum(counts.values())} logs")
                    print(f"{head}: " + ("identical" if not found else "DIFFERS\n  " + "\n  ".join(found)), flush=True)
                    if args.control:
                        noise = differences(got["before"], got["again"])
                        print("  before run again: " + ("identical" if not noise else "DIFFERS\n    " + "\n    ".join(noise)),
                              flush=True)
                    differing += bool(found)
    print("identical" if not differing else f"{differing} campaign(s) differ")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
