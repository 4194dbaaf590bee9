"""The minimiser at scale: real defects planted deep in the 200k-event log, minimised.

    .venv/bin/python benchmarks/minimise.py [--events 200000] [--cases orphan,seq,corrupt,torn] [--no-official]

Takes ``.dshfuzz-cache/synth-<events>.jsonl.zstd`` (``benchmarks/synth.py``, built once),
plants each defect with the existing mutator at the middle of the log (every draw
picks the middle choice), and judges it the way a campaign does (``Judge``: the
checker under test, the reference oracle and the official layers) with a checker
that misses the defect: the built-in one with the mutator's rules switched off, or
one that crashes on a torn tail. The minimiser keeps the campaign's signature of the
finding with the campaign's predicate (``Judge.still_fails``: only the judges the
signature depends on, and for a missed declared rule the built-in checker still
reporting it); the minimal log is then verified by every judge. Per case it prints the wall time of one full judgement of the
planted log (the reference), the minimiser's wall time and predicate calls, the
events before and after, and the ratio; then the Markdown rows for
``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from read_200k import cached_log

from dshfuzz.harness import Example, Judge, minimise
from dshfuzz.harness._judges import BuiltinChecker, CheckerVerdict
from dshfuzz.model import dumps, parse_log, read_log
from dshfuzz.mutators import MUTATORS, DrawAdapter


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    mutator: str
    checker: Any
    compression: str = "zstd"


@dataclass(slots=True)
class TornTailCrash:
    """A checker that falls over on any log with a torn tail (the framing case's defect)."""

    name: str = field(default="crashes-on-torn-tail")

    def check(self, path: Path) -> CheckerVerdict:
        if read_log(path).torn is not None:
            return CheckerVerdict(failure="crash", detail="IndexError: torn tail")
        return CheckerVerdict()


CASES = {
    "orphan": Case("orphan tool call", "orphan-tool-call", BuiltinChecker(without=frozenset({"P3", "W3"}))),
    "seq": Case("invalid seq", "invalid-seq", BuiltinChecker(without=frozenset({"E1"}))),
    "corrupt": Case("corrupt frame (garbled)", "corrupt-frame", BuiltinChecker(without=frozenset({"Z2"}))),
    "torn": Case("torn final frame", "torn-tail-frame", TornTailCrash()),
}


def _middle(strategy: Any) -> Any:
    """The middle choice of a ``sampled_from`` or ``integers`` strategy (a deep, fixed plant)."""
    inner = getattr(strategy, "wrapped_strategy", strategy)
    if hasattr(inner, "elements"):
        return inner.elements[len(inner.elements) // 2]
    if hasattr(inner, "start") and hasattr(inner, "end"):
        return (inner.start + inner.end) // 2
    raise TypeError(f"no middle for {strategy!r}")


def plant(log_path: Path, case: Case) -> Example:
    log = read_log(log_path)
    mutant = MUTATORS[case.mutator].apply_or_raise(log, DrawAdapter(_middle), compression=case.compression)
    return Example(
        mutant.data,
        mutant.compression,
        mutant.mutator,
        frozenset(str(r) for r in mutant.expects),
        mutant.description,
    )


def events_of(example: Example) -> int:
    return len(parse_log(example.data, compression=example.compression).events)  # type: ignore[arg-type]


def run_case(case: Case, log_path: Path, official: Any, *, verbose: bool = False) -> dict[str, Any]:
    example = plant(log_path, case)
    with Judge(case.checker, official=official) as judge:
        started = time.perf_counter()
        judged = judge.judge(example)
        full = time.perf_counter() - started
        defects = list(judged.defects)
        if not defects:
            return {"case": case.name, "error": f"no finding: {[d.signature for d in judged.disagreements]}"}
        signature = defects[0].signature
        guarded = defects[0].layer == "expected"
        keeps = judge.still_fails(defects[0], example)
        if keeps is None:
            return {"case": case.name, "error": f"the built-in checker does not see {signature} either"}
        calls: list[tuple[int, float]] = []

        def still_fails(candidate: Example) -> bool:
            t = time.perf_counter()
            ok = keeps(candidate)
            calls.append((len(candidate.data), time.perf_counter() - t))
            if verbose:
                print(
                    f"  call {len(calls)}: {len(candidate.data)} bytes, {calls[-1][1]:.2f} s, {ok}",
                    file=sys.stderr,
                    flush=True,
                )
            return ok

        started = time.perf_counter()
        minimal = minimise(example, still_fails)
        took = time.perf_counter() - started
        final = replace(example, data=minimal)
        verified = {d.signature for d in judge.judge(final).disagreements}
        assert signature in verified, "the minimal log lost its signature"
    return {
        "case": case.name,
        "planted": example.description,
        "signature": signature + (" + defect still planted" if guarded else ""),
        "full_judge_s": full,
        "minimise_s": took,
        "calls": len(calls),
        "predicate_s": sum(t for _, t in calls),
        "events_before": judged.events,
        "events_after": events_of(final),
        "bytes_before": len(example.data),
        "bytes_after": len(minimal),
        "witness": witness(final),
    }


def witness(example: Example) -> str:
    """The minimal log for the eye: its frames' fate (zstd), header and events."""
    log = parse_log(example.data, compression=example.compression)  # type: ignore[arg-type]
    frames = [f"frame {f.index}: {f.status}, {f.size} bytes" for f in log.frames]
    header = [dumps(log.header.raw)] if log.header is not None else []
    torn = [f"torn tail: {len(example.data) - log.torn.truncate_to} bytes"] if log.torn is not None else []
    return "\n".join([*frames, *header, *(dumps(e.raw)[:300] for e in log.events), *torn])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--no-official", action="store_true", help="judge without the official layers")
    parser.add_argument("--verbose", action="store_true", help="print every predicate call to stderr")
    args = parser.parse_args(argv)
    log_path = cached_log(args.events)
    print(f"log: {log_path} ; load average before: {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    official_cm = None
    if not args.no_official:
        from dshfuzz.oracle.official import OfficialOracle

        official_cm = OfficialOracle()
    official = official_cm.__enter__() if official_cm is not None else None
    try:
        for key in args.cases.split(","):
            result = run_case(CASES[key], log_path, official, verbose=args.verbose)
            text = result.pop("witness", "")
            print({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}, flush=True)
            print(text, flush=True)
            rows.append(result)
    finally:
        if official_cm is not None:
            official_cm.__exit__(None, None, None)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(
        "| defect | signature | full judge s | minimise s | x full judge | predicate calls | in predicate s | events before -> after | bytes after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']} | {r['error']} | | | | | | | |")
            continue
        print(
            f"| {r['case']} | `{r['signature']}` | {r['full_judge_s']:.1f} | {r['minimise_s']:.1f} | "
            f"{r['minimise_s'] / r['full_judge_s']:.2f} | {r['calls']} | {r['predicate_s']:.1f} | "
            f"{r['events_before']} -> {r['events_after']} | {r['bytes_after']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
