"""Checker protocols (issue 17): a campaign's logs/s against a slow-starting Node checker
behind each protocol, as ratios to the built-in checker's campaign measured in the same run.

    .venv/bin/python benchmarks/protocols.py [--budget 30s] [--workers 1] [--repeats 3] [--seed 17]
        [--official] [--no-minimise] [--startup-ms 300] [--per-log-ms 2] [--spin-startup]
        [--protocols builtin,serve,logs,log] [--json FILE] [--keep DIR] [--src DIR] [--direct N]

The checker is ``benchmarks/protocol_checker.mjs`` on the Node 24 the official oracle runs:
0.3 s of simulated start-up (a synchronous sleep; ``--spin-startup`` burns a core instead),
then about 2 ms a log (each log read, zstd frames decoded, every line parsed, padded with a
busy loop), one rule (H1), declared by the serve handshake and by ``--checker-rules H1`` for
the ``cmd:`` forms so that every protocol is judged on the same vocabulary. Each round runs
the same campaign (``dshfuzz fuzz --budget B --workers W --seed S --no-official``: the same
seed, so the same examples; only the checker differs) once per protocol:

    builtin   --checker builtin
    serve     --checker "serve:'NODE protocol_checker.mjs serve'"
    logs      --checker "cmd:'NODE protocol_checker.mjs check-many {logs}'"
    log       --checker "cmd:'NODE protocol_checker.mjs check {log}'"

in an order rotated every round (round r starts at the r-th protocol), so that no protocol
always runs first or last on this shared machine. Each campaign's ``summary.json`` gives
``examples``, ``elapsedSeconds``, ``examplesPerSecond``, ``checkerSecondsPerLog`` and
``startupAdvice``. A protocol's ratio is its logs/s over builtin's *in the same round*;
the figures printed are medians over the rounds. Targets (issue 17): serve >= 0.70,
{logs} >= 0.40 of builtin.

``--src DIR`` runs the campaigns on another copy of dshfuzz's sources (DIR first on
PYTHONPATH), e.g. a snapshot of a commit while others edit the checkout:
``git archive HEAD src | tar -x -C /tmp/snap; git rev-parse --short HEAD > /tmp/snap/COMMIT``
then ``--src /tmp/snap/src``. The JSON records the commit (the checkout's, and the files
under src/ that differ from it; or the snapshot's COMMIT file).

``--direct N`` also times the checkers alone, outside a campaign, on N generated logs:
builtin and serve: one log a call (serve's start-up counted apart); {logs}: the N logs in
one invocation, and one log an invocation (a sample); {log}: a sample of one-log calls.
It shows what each protocol itself costs per log (``--repeats 0`` runs only this).

Prints a table, then the JSON (also written to ``--json FILE``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHECKER = HERE / "protocol_checker.mjs"
PROTOCOLS = ("builtin", "serve", "logs", "log")
TARGETS = {"serve": 0.70, "logs": 0.40}
LABELS = {
    "builtin": "builtin",
    "serve": "serve:",
    "logs": "cmd: {logs}",
    "log": "cmd: {log}",
}


def checker_command(node: Path, args: argparse.Namespace) -> str:
    parts = [str(node), str(CHECKER), "--startup-ms", f"{args.startup_ms:g}"]
    parts += ["--per-log-ms", f"{args.per_log_ms:g}"]
    if args.spin_startup:
        parts.append("--spin-startup")
    return " ".join(shlex.quote(p) for p in parts)


def specs(node: Path, args: argparse.Namespace) -> dict[str, str]:
    base = checker_command(node, args)
    return {
        "builtin": "builtin",
        "serve": f"serve:'{base} serve'",
        "logs": f"cmd:'{base} check-many {{logs}}'",
        "log": f"cmd:'{base} check {{log}}'",
    }


def fuzz_argv(protocol: str, spec: str, out: Path, args: argparse.Namespace) -> list[str]:
    argv = [
        sys.executable, "-m", "dshfuzz", "fuzz",
        "--budget", args.budget, "--workers", str(args.workers), "--seed", str(args.seed),
        "--checker", spec, "--out", str(out),
    ]
    if protocol != "builtin":
        argv += ["--checker-rules", "H1"]
    if not args.official:
        argv.append("--no-official")
    if args.no_minimise:
        argv.append("--no-minimise")
    return argv


def child_env(args: argparse.Namespace) -> dict[str, str]:
    """The environment of a dshfuzz child: wide terminal lines, and --src first on the path."""
    env = {**os.environ, "COLUMNS": "200"}
    if args.src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.src.resolve()), env.get("PYTHONPATH")]))
    return env


def run_one(protocol: str, spec: str, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    argv = fuzz_argv(protocol, spec, out, args)
    load_before = os.getloadavg()[0]
    began = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=child_env(args))
    wall = time.monotonic() - began
    summary_path = out / "summary.json"
    if done.returncode not in (0, 1) or not summary_path.is_file():
        tail = (done.stderr or done.stdout)[-1500:]
        raise SystemExit(f"{protocol}: dshfuzz fuzz exited {done.returncode} without a summary:\n{tail}")
    s = json.loads(summary_path.read_text())
    report_md = (out / "report.md").read_text() if (out / "report.md").is_file() else ""
    return {
        "protocol": protocol,
        "examples": s["examples"],
        "elapsedSeconds": s["elapsedSeconds"],
        "examplesPerSecond": s["examplesPerSecond"],
        "checkerSecondsPerLog": s.get("checkerSecondsPerLog"),
        "findings": len(s["findings"]),
        "stop": s["stop"],
        "startupAdvice": s.get("startupAdvice"),
        # where the advice shows: the terminal summary the run printed, and report.md
        "adviceInOutput": "start-up" in done.stdout and "dominates" in done.stdout,
        "adviceInReport": "**start-up:**" in report_md,
        "exit": done.returncode,
        "wallSeconds": round(wall, 2),
        "loadBefore": round(load_before, 2),
    }


def direct(
    n: int, spec_of: dict[str, str], protocols: list[str], args: argparse.Namespace, root: Path
) -> dict[str, Any]:
    """Each checker alone on ``n`` generated logs: milliseconds per log, per way of calling it."""
    from dshfuzz.harness._judges import load_checker

    logs_dir = root / "direct-logs"
    generate = ["generate", "--count", str(n), "--seed", str(args.seed), "--out", str(logs_dir)]
    subprocess.run([sys.executable, "-m", "dshfuzz", *generate], check=True, capture_output=True, env=child_env(args))
    paths = sorted(p for p in logs_dir.iterdir() if p.name.endswith((".jsonl", ".jsonl.zstd")))
    sample = paths[: min(len(paths), 10)]
    out: dict[str, Any] = {"generated": len(paths), "sample": len(sample)}

    def per_log_ms(checker: Any, items: list[Path]) -> float:
        began = time.perf_counter()
        for path in items:
            verdict = checker.check(path)
            if verdict.failure:
                raise SystemExit(f"--direct: {checker.name} failed on {path}: {verdict.failure} {verdict.detail}")
        return round(1000 * (time.perf_counter() - began) / len(items), 2)

    rules = None
    for protocol in protocols:
        if protocol != "builtin":
            rules = frozenset({"H1"})
        with load_checker(spec_of[protocol], rules=None if protocol == "builtin" else rules) as checker:
            if protocol == "builtin":
                out["builtin"] = {"msPerLog": per_log_ms(checker, paths)}
            elif protocol == "serve":
                began = time.perf_counter()
                checker.check(paths[0])  # the start: Node, the simulated start-up, the handshake
                first = round(1000 * (time.perf_counter() - began), 1)
                out["serve"] = {"firstLogMs": first, "msPerLog": per_log_ms(checker, paths)}
            elif protocol == "logs":
                began = time.perf_counter()
                verdicts = checker.check_many(paths)
                whole = round(1000 * (time.perf_counter() - began) / len(paths), 2)
                if any(v.failure for v in verdicts):
                    raise SystemExit(f"--direct: {checker.name} failed in a batch: {verdicts[0].failure}")
                out["logs"] = {"msPerLogOneInvocation": whole, "msPerLogOneLogAnInvocation": per_log_ms(checker, sample)}
            else:
                out["log"] = {"msPerLog": per_log_ms(checker, sample)}
    return out


def git_state(src: Path | None) -> dict[str, Any]:
    """The checkout's commit, and the files under src/ that differ from it (moot with --src)."""
    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=HERE.parent, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    if src is not None:  # a snapshot: its commit is what the snapshot recorded beside it, if anything
        marker = src.resolve().parent / "COMMIT"
        commit = marker.read_text().strip() if marker.is_file() else None
        return {"commit": commit, "src": str(src), "dirtySrc": []}
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "src": "src/ of the checkout",
        "dirtySrc": git("status", "--short", "--", "src").splitlines(),
    }


def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 4) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", default="30s", help="each campaign's --budget (default 30s)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--repeats", type=int, default=3, help="rounds; figures are medians (default 3)")
    parser.add_argument("--official", action="store_true", help="judge with the official layers too (default --no-official)")
    parser.add_argument("--no-minimise", action="store_true", help="pass --no-minimise to every campaign")
    parser.add_argument("--startup-ms", type=float, default=300.0, help="the checker's simulated start-up (default 300)")
    parser.add_argument("--per-log-ms", type=float, default=2.0, help="the checker's work per log (default 2)")
    parser.add_argument("--spin-startup", action="store_true", help="burn a core during start-up instead of sleeping")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help="a subset of builtin,serve,logs,log")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    parser.add_argument("--keep", type=Path, help="keep every campaign's report under this folder")
    parser.add_argument("--direct", type=int, default=0, metavar="N", help="also time the checkers alone on N logs")
    parser.add_argument("--src", type=Path, help="run the campaigns on the dshfuzz package under this folder")
    args = parser.parse_args()

    if args.src is not None:
        sys.path.insert(0, str(args.src.resolve()))
    from dshfuzz.oracle.official._server import node_executable

    protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    unknown = sorted(set(protocols) - set(PROTOCOLS))
    if unknown or "builtin" not in protocols:
        parser.error(f"--protocols: a subset of {','.join(PROTOCOLS)} including builtin (got {args.protocols})")
    node = node_executable()
    if node is None or not node.is_file():
        raise SystemExit(f"Node 24 not found ({node}); run `make setup`")
    spec_of = specs(node, args)

    root = Path(tempfile.mkdtemp(prefix="dshfuzz-protocols-")) if args.keep is None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.timezone.utc)
    load_start = os.getloadavg()
    rounds: list[dict[str, dict[str, Any]]] = []
    try:
        for r in range(args.repeats):
            order = protocols[r % len(protocols):] + protocols[: r % len(protocols)]
            results: dict[str, dict[str, Any]] = {}
            for protocol in order:
                result = run_one(protocol, spec_of[protocol], root / f"round{r + 1}-{protocol}", args)
                results[protocol] = result
                print(
                    f"round {r + 1} {LABELS[protocol]:<12} {result['examples']:>5} logs in {result['elapsedSeconds']:6.1f} s"
                    f" = {result['examplesPerSecond']:7.2f} logs/s  checker {result['checkerSecondsPerLog']} s/log"
                    f"  findings {result['findings']}  load {result['loadBefore']}",
                    file=sys.stderr, flush=True,
                )
            for protocol, result in results.items():
                base = results["builtin"]["examplesPerSecond"]
                result["ratioToBuiltin"] = round(result["examplesPerSecond"] / base, 4) if base else None
            rounds.append({"order": order, "results": results})
        direct_figures = direct(args.direct, spec_of, protocols, args, root) if args.direct > 0 else None
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    load_end = os.getloadavg()

    per_protocol: dict[str, dict[str, Any]] = {}
    for protocol in protocols if rounds else ():
        runs = [rnd["results"][protocol] for rnd in rounds]
        entry: dict[str, Any] = {
            "spec": spec_of[protocol],
            "logsPerSecond": median([x["examplesPerSecond"] for x in runs]),
            "ratioToBuiltin": median([x["ratioToBuiltin"] for x in runs]),
            "checkerSecondsPerLog": median([x["checkerSecondsPerLog"] for x in runs]),
            "examples": median([x["examples"] for x in runs]),
            "findings": median([x["findings"] for x in runs]),
            "startupAdvice": next((x["startupAdvice"] for x in runs if x["startupAdvice"]), None),
            "adviceRounds": sum(1 for x in runs if x["startupAdvice"]),
            "adviceInOutputRounds": sum(1 for x in runs if x["adviceInOutput"]),
        }
        if protocol in TARGETS:
            entry["target"] = TARGETS[protocol]
            entry["met"] = entry["ratioToBuiltin"] is not None and entry["ratioToBuiltin"] >= TARGETS[protocol]
        per_protocol[protocol] = entry

    report = {
        "command": " ".join(shlex.quote(a) for a in [".venv/bin/python", "benchmarks/protocols.py", *sys.argv[1:]]),
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "node": str(node),
        "code": git_state(args.src),
        "checker": {"startupMs": args.startup_ms, "perLogMs": args.per_log_ms, "spinStartup": args.spin_startup},
        "campaign": {
            "budget": args.budget, "workers": args.workers, "seed": args.seed,
            "official": args.official, "minimise": not args.no_minimise, "repeats": args.repeats,
        },
        "loadAverage": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in load_end]},
        "protocols": per_protocol,
        "rounds": rounds,
        "direct": direct_figures,
    }

    if direct_figures is not None:
        figures = {k: v for k, v in direct_figures.items() if isinstance(v, dict)}
        print(
            f"\nthe checkers alone, {direct_figures['generated']} generated logs"
            f" (a sample of {direct_figures['sample']} where one process a log): {json.dumps(figures)}"
        )
    print(
        f"\n{'protocol':<12} {'logs/s':>8} {'x builtin':>9} {'target':>7} {'met':>4}"
        f" {'checker s/log':>13} {'findings':>8}  start-up advice"
    )
    for protocol, e in per_protocol.items():
        target = f"{e['target']:.2f}" if "target" in e else "-"
        met = ("yes" if e["met"] else "NO") if "target" in e else "-"
        advice = f"{e['adviceRounds']}/{len(rounds)} rounds" if e["adviceRounds"] else "none"
        print(
            f"{LABELS[protocol]:<12} {e['logsPerSecond']:>8.2f} {e['ratioToBuiltin']:>9.3f} {target:>7} {met:>4}"
            f" {e['checkerSecondsPerLog']:>13.4f} {e['findings']:>8g}  {advice}"
        )
    print(f"load average: start {report['loadAverage']['start']}, end {report['loadAverage']['end']}")
    text = json.dumps(report, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
