"""What the in-process judges say of each log, to compare two trees byte for byte.

    .venv/bin/python benchmarks/judges_equal.py mutants --bases DIR --out MUTANTS [--seeds 2]
    env PYTHONPATH=<tree>/src .venv/bin/python benchmarks/judges_equal.py dump --logs MUTANTS --out FILE
    cmp FILE-before FILE-after

``mutants`` writes every mutator's mutant of every log in ``--bases`` (each with ``--seeds``
seeds; a mutator whose precondition a log misses is skipped). ``dump`` writes one JSON line per
log of ``--logs``, in name order: ``dshfuzz check --json``'s output and exit status (run in
process), ``check_log``'s report on the whole model, the campaign's built-in checker verdict
(``BuiltinChecker.check_data``) and the reference oracle's reading (the judge's ``_reference``
and ``shape_of``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
from types import SimpleNamespace


def write_mutants(bases: Path, out: Path, seeds: int) -> None:
    from dshfuzz.model import read_log
    from dshfuzz.mutators import MUTATORS
    from dshfuzz.mutators._strategy import apply_seeded

    out.mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    logs = sorted(bases.iterdir())
    for name in sorted(MUTATORS):
        for b, base in enumerate(logs):
            log = read_log(base)
            for s in range(seeds):
                try:
                    mutant = apply_seeded(MUTATORS[name], log, 100 * b + s)
                except Exception:  # noqa: BLE001 - the precondition missed: no mutant of this log
                    skipped += 1
                    continue
                suffix = ".jsonl.zstd" if mutant.compression == "zstd" else ".jsonl"
                (out / f"{name}--{b}-{s}{suffix}").write_bytes(mutant.data)
                written += 1
    print(f"{written} mutants written, {skipped} not applicable")


def dump(logs: Path, out: Path) -> None:
    from dshfuzz.checker import CheckOptions, check_log
    from dshfuzz.cli import main
    from dshfuzz.harness._judge import _reference, shape_of
    from dshfuzz.harness._judges import BuiltinChecker
    from dshfuzz.model import parse_log

    checker = BuiltinChecker()
    files = sorted(logs.iterdir())
    with out.open("w") as sink:
        for path in files:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                status = main(["check", "--json", str(path)])
            compression = "zstd" if path.name.endswith(".zstd") else "none"
            data = path.read_bytes()
            whole = check_log(parse_log(data, compression=compression), CheckOptions()).to_json()
            verdict = checker.check_data(data, compression)
            example = SimpleNamespace(data=data, compression=compression)
            shape, refusing, judged = _reference(example)
            record = {
                "log": path.name, "status": status, "cli": json.loads(printed.getvalue()), "whole": whole,
                "verdict": [repr(f) for f in verdict.findings], "exit": verdict.exit_code,
                "oracle": [repr(shape), sorted(refusing), judged], "shape_of": repr(shape_of(example)),
            }
            sink.write(json.dumps(record, sort_keys=True) + "\n")
    print(f"{len(files)} logs")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("mutants")
    m.add_argument("--bases", type=Path, required=True)
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--seeds", type=int, default=2)
    d = sub.add_parser("dump")
    d.add_argument("--logs", type=Path, required=True)
    d.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "mutants":
        write_mutants(args.bases, args.out, args.seeds)
    else:
        dump(args.logs, args.out)


if __name__ == "__main__":
    cli()
