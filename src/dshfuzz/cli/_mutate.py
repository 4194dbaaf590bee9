"""``dshfuzz mutate LOG --mutator NAME [--seed S] --out FILE``: inject one incident.

NAME is an incident mutator, or a robustness perturbation or metamorphic transform
(these expect no rule: they reproduce checker-robustness and false-alarm cases).

Reads LOG (never writes it), applies the mutator with choices drawn from Hypothesis
seeded by ``--seed`` (the same seed gives the same mutant), and writes the mutant
atomically to FILE; the container follows FILE's name (``.zstd``: zstd frames).
Prints what was injected where, the rules that must fire and the official layers
that must refuse. Exit 0 written; 2 unreadable LOG, unknown mutator, or a log the
mutator does not apply to (the reason is printed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dshfuzz.model import Compression

HELP = "inject one incident into a log"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import explain

    explain(parser, {
        0: "the mutant was written to --out",
        2: "usage error: an unknown mutator, an --out folder that does not exist or --out naming LOG, a LOG that "
           "cannot be read, or a log the mutator does not apply to (the reason is printed)",
    })
    parser.add_argument("log", type=Path, help="the session log to mutate (read only)")
    parser.add_argument("--mutator", required=True,
                        help="mutator, perturbation or metamorphic transform name (see `dshfuzz mutators`)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the mutator's choices (default 0)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the mutant (.jsonl or .jsonl.zstd)")
    parser.add_argument("--json", action="store_true", help="print the mutant's metadata as JSON")


def run(args: argparse.Namespace) -> int:
    from dshfuzz.model import dumps, read_log, write_atomic
    from dshfuzz.mutators import Inapplicable, apply_seeded, get_edit

    try:
        mutator = get_edit(args.mutator)
    except KeyError as exc:
        print(f"dshfuzz mutate: {exc.args[0]}", file=sys.stderr)
        return 2
    if not args.out.parent.is_dir():
        print(f"dshfuzz mutate: --out {args.out}: the folder {args.out.parent} does not exist", file=sys.stderr)
        return 2
    if args.out.resolve() == args.log.resolve():
        print("dshfuzz mutate: --out must not be the input log (inputs are read-only)", file=sys.stderr)
        return 2
    from . import cyclic_gc_paused

    try:
        with cyclic_gc_paused():
            log = read_log(args.log)
    except OSError as exc:
        print(f"dshfuzz mutate: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    compression: Compression = "zstd" if args.out.name.endswith(".zstd") else "none"
    try:
        mutant = apply_seeded(mutator, log, args.seed, compression=compression)
    except Inapplicable as why:
        print(f"dshfuzz mutate: {mutator.name} does not apply to {args.log}: {why}", file=sys.stderr)
        return 2
    write_atomic(args.out, mutant.data)
    meta = {
        "file": str(args.out),
        "mutator": mutant.mutator,
        "description": mutant.description,
        "compression": mutant.compression,
        "expects": sorted(map(str, mutant.expects)),
        "official": sorted(mutant.official),
    }
    if args.json:
        sys.stdout.write(dumps(meta) + "\n")
    else:
        print(f"{args.out}: {mutant.mutator}: {mutant.description}")
        print(f"  expects {', '.join(meta['expects']) or '-'}; official refusal by {', '.join(meta['official']) or '-'}")
    return 0
