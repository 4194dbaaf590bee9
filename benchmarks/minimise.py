"""The minimiser at scale: real defects planted deep in the 200k-event log, minimised.

    .venv/bin/python benchmarks/minimise.py [--events 200000] [--cases orphan,seq,corrupt,torn] [--no-official]
    .venv/bin/python benchmarks/minimise.py --cases blank,blank-zstd --no-official --before [--before-cap 3600]

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

The ``blank`` cases (issue 17) are a campaign-sized ``lines-over-limit`` mutant instead:
a generated log (``--log-seed``, about 200 events) with the mutator's seeded draw
(``--mutant-seed``) appending just over 10,000 bare newlines, plain or zstd, against
``builtin:-L4`` (its miss of L4 is the finding). ``--before`` also minimises each case
the way the minimiser did before runs of identical units were one unit (ddmin without
its ``key``: the fine stage's last pass tries every unit alone), measured in the same run
just before it, and prints both side by side; that run is cut after ``--before-cap`` seconds.
``--stand-in`` counts both runs' calls to the end with a stand-in for the judge (the
reader's limit computed from the bytes: more than 10,000 bare lines in plain JSONL, more
lines than ``max(4096, compressed bytes)`` in zstd), fast enough to finish the old run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from read_200k import cached_log

from dshfuzz.generators import generate
from dshfuzz.harness import Example, Judge, _ddmin, _log_units, _minimise, minimise
from dshfuzz.harness._judges import BuiltinChecker, CheckerVerdict
from dshfuzz.model import DEFAULT_LIMITS, decode_frame, dumps, parse_log, read_log, scan_frames
from dshfuzz.mutators import MUTATORS, DrawAdapter, apply_seeded


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    mutator: str
    checker: Any
    compression: str = "zstd"
    generated: bool = False
    """Planted by the mutator's seeded draw in a campaign-sized generated log, not in the synthetic log."""


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
    "blank": Case(
        "bare newlines (plain)", "lines-over-limit", BuiltinChecker(without=frozenset({"L4"})), "none", True
    ),
    "blank-zstd": Case(
        "bare newlines (zstd)", "lines-over-limit", BuiltinChecker(without=frozenset({"L4"})), "zstd", True
    ),
}
SYNTH_CASES = [key for key, case in CASES.items() if not case.generated]


class Cut(Exception):
    """The run before the change went past ``--before-cap``."""


@contextlib.contextmanager
def one_unit_at_a_time() -> Iterator[None]:
    """The minimiser as before runs of identical units were one unit: ddmin without its ``key``
    (which is the former ddmin, unchanged), in the fine and the byte stage."""
    grouped = _minimise.ddmin
    _minimise.ddmin = lambda items, test, key=None: grouped(items, test)  # type: ignore[assignment]
    try:
        yield
    finally:
        _minimise.ddmin = grouped  # type: ignore[assignment]


def _middle(strategy: Any) -> Any:
    """The middle choice of a ``sampled_from`` or ``integers`` strategy (a deep, fixed plant)."""
    inner = getattr(strategy, "wrapped_strategy", strategy)
    if hasattr(inner, "elements"):
        return inner.elements[len(inner.elements) // 2]
    if hasattr(inner, "start") and hasattr(inner, "end"):
        return (inner.start + inner.end) // 2
    raise TypeError(f"no middle for {strategy!r}")


def plant(log_path: Path | None, case: Case, *, log_seed: int = 1, mutant_seed: int = 3) -> Example:
    if case.generated:
        log = next(generate(1, seed=log_seed, turns=(3, 3), max_events=250))
        mutant = apply_seeded(MUTATORS[case.mutator], log, mutant_seed, compression=case.compression)
    else:
        assert log_path is not None
        mutant = MUTATORS[case.mutator].apply_or_raise(
            read_log(log_path), DrawAdapter(_middle), compression=case.compression
        )
    return Example(
        mutant.data,
        mutant.compression,
        mutant.mutator,
        frozenset(str(r) for r in mutant.expects),
        mutant.description,
    )


def events_of(example: Example) -> int:
    return len(parse_log(example.data, compression=example.compression).events)  # type: ignore[arg-type]


def run_case(
    case: Case,
    log_path: Path | None,
    official: Any,
    *,
    verbose: bool = False,
    seeds: tuple[int, int] = (1, 3),
    cap: float | None = None,
) -> dict[str, Any]:
    """Plant, judge and minimise one case. With ``cap``, a minimisation still running after
    ``cap`` seconds is cut (``"cut": True``, the calls and seconds so far)."""
    example = plant(log_path, case, log_seed=seeds[0], mutant_seed=seeds[1])
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
            if cap is not None and time.perf_counter() - started > cap:
                raise Cut
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
        try:
            minimal = minimise(example, still_fails)
        except Cut:
            return {
                "case": case.name,
                "planted": example.description,
                "signature": signature + (" + defect still planted" if guarded else ""),
                "full_judge_s": full,
                "minimise_s": time.perf_counter() - started,
                "calls": len(calls),
                "predicate_s": sum(t for _, t in calls),
                "events_before": judged.events,
                "bytes_before": len(example.data),
                "cut": True,
            }
        took = time.perf_counter() - started
        final = replace(example, data=minimal)
        verified = {d.signature for d in judge.judge(final).disagreements}
        assert signature in verified, "the minimal log lost its signature"
        one_minimal = is_one_minimal(final, keeps)
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
        "lines_after": len(_log_units._layout(final).units) + 1,
        "one_minimal": one_minimal,
        "witness": witness(final),
    }


def is_one_minimal(example: Example, keeps: Any) -> bool:
    """Whether no single unit of ``example`` can go: one removal per run of identical units,
    which is the same candidate as removing any other unit of the run."""
    layout = _log_units._layout(example)
    runs = _ddmin._runs(range(len(layout.units)), lambda i: _minimise._same_unit(layout.units[i]))
    return not any(keeps(layout.render([i for i in range(len(layout.units)) if i != run[0]])) for run in runs)


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
    parser.add_argument("--cases", default=",".join(SYNTH_CASES))
    parser.add_argument("--no-official", action="store_true", help="judge without the official layers")
    parser.add_argument("--verbose", action="store_true", help="print every predicate call to stderr")
    parser.add_argument(
        "--before", action="store_true", help="also minimise each case as before runs were one unit"
    )
    parser.add_argument("--before-cap", type=float, default=3600.0, help="seconds before the old run is cut")
    parser.add_argument("--log-seed", type=int, default=1, help="the generated log of the blank cases")
    parser.add_argument("--mutant-seed", type=int, default=3, help="the mutator's draw in the blank cases")
    parser.add_argument(
        "--stand-in", action="store_true", help="count the blank cases' calls before and after to the end"
    )
    args = parser.parse_args(argv)
    keys = args.cases.split(",")
    if args.stand_in:
        for key in keys:
            stand_in_calls(CASES[key], (args.log_seed, args.mutant_seed))
        return 0
    log_path = cached_log(args.events) if any(not CASES[k].generated for k in keys) else None
    print(f"log: {log_path} ; load average before: {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    pairs = []
    official_cm = None
    if not args.no_official:
        from dshfuzz.oracle.official import OfficialOracle

        official_cm = OfficialOracle()
    official = official_cm.__enter__() if official_cm is not None else None
    seeds = (args.log_seed, args.mutant_seed)
    try:
        for key in keys:
            before = None
            if args.before:
                with one_unit_at_a_time():
                    before = run_case(
                        CASES[key], log_path, official, verbose=args.verbose, seeds=seeds, cap=args.before_cap
                    )
                before.pop("witness", "")
                print("before:", _brief(before), flush=True)
            result = run_case(CASES[key], log_path, official, verbose=args.verbose, seeds=seeds)
            text = result.pop("witness", "")
            print(("after: " if args.before else "") + str(_brief(result)), flush=True)
            print(text[:2000], flush=True)
            rows.append(result)
            if before is not None:
                pairs.append((before, result))
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
    if pairs:
        print()
        print(
            "| defect | signature | calls before | calls after | calls ratio | minimise s before | "
            "minimise s after | time ratio | witness lines before -> after | bytes before -> after | 1-minimal |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for old, new in pairs:
            if "error" in old or "error" in new:
                print(f"| {new['case']} | {old.get('error') or new.get('error')} | | | | | | | | | |")
                continue
            cut = "cut at " if old.get("cut") else ""
            lines_before = "not reached" if old.get("cut") else old["lines_after"]
            print(
                f"| {new['case']} | `{new['signature']}` | {cut}{old['calls']} | {new['calls']} | "
                f"{'>=' if cut else ''}{old['calls'] / new['calls']:.0f}x | {cut}{old['minimise_s']:.1f} | "
                f"{new['minimise_s']:.1f} | {'>=' if cut else ''}{old['minimise_s'] / new['minimise_s']:.0f}x | "
                f"{lines_before} -> {new['lines_after']} | {new['bytes_before']} -> {new['bytes_after']} | "
                f"{'yes' if new['one_minimal'] else 'NO'} |"
            )
    return 0


def _plaintext(example: Example) -> bytes:
    if example.compression != "zstd":
        return example.data
    return b"".join(decode_frame(example.data[f.offset : f.end]) for f in scan_frames(example.data))


def stand_in(example: Example) -> bool:
    """The blank cases' limit from the bytes alone (``DEFAULT_LIMITS``): only the calls it
    takes the minimiser to the end mean anything, not its seconds."""
    text = _plaintext(example)
    if example.compression == "zstd":
        return text.count(b"\n") > DEFAULT_LIMITS.lines_allowed(len(example.data))
    bare = sum(1 for line in text.split(b"\n")[1:-1] if not line.startswith(b"{"))
    return bare > DEFAULT_LIMITS.unreadable_lines


def stand_in_calls(case: Case, seeds: tuple[int, int]) -> None:
    """Both runs of a blank case to the end with :func:`stand_in` as the predicate."""
    example = plant(None, case, log_seed=seeds[0], mutant_seed=seeds[1])
    assert stand_in(example)
    for label, context in (("before", one_unit_at_a_time), ("after", contextlib.nullcontext)):
        calls = 0

        def counted(candidate: Example) -> bool:
            nonlocal calls
            calls += 1
            return stand_in(candidate)

        started = time.perf_counter()
        with context():
            minimal = replace(example, data=minimise(example, counted))
        print(
            f"stand-in, {case.name}, {label}: {calls} calls, {time.perf_counter() - started:.1f} s, "
            f"{len(minimal.data)} bytes, {_plaintext(minimal).count(10)} lines",
            flush=True,
        )


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}


if __name__ == "__main__":
    sys.exit(main())
