"""``dshfuzz corpus list|replay|add|minimise``: the corpus of minimised witnesses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dshfuzz.harness import CHECKER_SPEC_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", type=Path, default=Path("corpus"), help="corpus directory (default corpus/)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="one line per entry")
    rep = sub.add_parser("replay", help="re-run each entry's checker: FIXED / STILL FAILING / CHANGED VERDICT")
    rep.add_argument("--checker", default=None, help=f"replay against this checker instead of each entry's own ({CHECKER_SPEC_HELP})")
    rep.add_argument("--json", action="store_true")
    mini = sub.add_parser(
        "minimise",
        help="continue minimising an entry's witness (one a campaign cut at its time box); exit 0 when the "
             "minimal witness is saved, 1 when the entry no longer reproduces, 2 on a usage error",
    )
    mini.add_argument("entry", type=Path, help="the entry's log file (as `corpus list` prints it)")
    mini.add_argument("--checker", default=None, help=f"the checker (default: the entry's own; {CHECKER_SPEC_HELP})")
    mini.add_argument("--seconds", type=float, default=None, help="stop after this long with the best so far")
    mini.add_argument("--no-official", action="store_true", help="judge without the official layers")
    add = sub.add_parser("add", help="add a log as a witness of the built-in checker's current verdict")
    add.add_argument("log", type=Path)
    add.add_argument("--signature", default=None, help="default: witness|<rules the checker reports>")


def run(args: argparse.Namespace) -> int:
    from dshfuzz.harness import Corpus
    from dshfuzz.harness._corpus import CorpusFormatError

    corpus = Corpus(args.corpus)
    try:
        if args.action == "list":
            return _list(corpus)
        if args.action == "replay":
            return _replay(corpus, args)
        if args.action == "minimise":
            return _minimise(corpus, args)
        return _add(corpus, args)
    except CorpusFormatError as exc:
        print(f"dshfuzz corpus: {exc}", file=sys.stderr)
        return 2


def _list(corpus) -> int:  # noqa: ANN001 - a Corpus
    count = 0
    for path, entry in corpus.entries():
        count += 1
        print(f"{entry.kind:<22} {entry.signature:<60} {path}")
    print(f"{count} entries in {corpus.root}", file=sys.stderr)
    return 0


def _replay(corpus, args: argparse.Namespace) -> int:  # noqa: ANN001 - a Corpus
    import json

    from dshfuzz.harness._judges import CheckerSpecError, load_checker
    from dshfuzz.harness._replay import replay

    try:
        checker = load_checker(args.checker) if args.checker else None
    except CheckerSpecError as exc:
        print(f"dshfuzz corpus: {exc}", file=sys.stderr)
        return 2
    results = list(replay(corpus, checker))
    if args.json:
        print(json.dumps([
            {"file": str(r.path), "signature": r.entry.signature, "status": str(r.status), "reproduces": r.reproduces,
             "rulesNow": list(r.rules_now), "detail": r.detail}
            for r in results
        ], indent=1))
    else:
        for r in results:
            print(f"{r.status:<16} {r.entry.signature:<60} {r.path.name}  ({r.detail})")
        print(f"{len(results)} entries replayed; {sum(not r.reproduces for r in results)} do not reproduce", file=sys.stderr)
    return 0 if all(r.reproduces for r in results) else 1


def _minimise(corpus, args: argparse.Namespace) -> int:  # noqa: ANN001 - a Corpus
    from contextlib import ExitStack

    from dshfuzz.harness._judges import CheckerSpecError, load_checker
    from dshfuzz.harness._witness import minimise_entry

    wanted = args.entry.resolve()
    found = next(((p, e) for p, e in corpus.entries() if p.resolve() == wanted), None)
    if found is None:
        print(f"dshfuzz corpus: {args.entry} is not an entry of {corpus.root} (`dshfuzz corpus list` shows them)",
              file=sys.stderr)
        return 2
    path, entry = found
    try:
        checker = load_checker(args.checker or entry.checker)
    except CheckerSpecError as exc:
        print(f"dshfuzz corpus: {exc}", file=sys.stderr)
        return 2
    with ExitStack() as stack:
        official = None
        if not args.no_official:
            from dshfuzz.oracle.official import OfficialOracle, unavailable_reason

            reason = unavailable_reason()
            if reason is not None:
                print(f"dshfuzz corpus: official layers unavailable: {reason}; run `make setup`, or pass --no-official",
                      file=sys.stderr)
                return 2
            official = stack.enter_context(OfficialOracle())
        stack.callback(getattr(checker, "close", lambda: None))
        polished = minimise_entry(path, entry, checker, official=official, seconds=args.seconds)
    if polished is None:
        print(f"dshfuzz corpus: {path}: {entry.signature} no longer shows on this witness with {checker.name}",
              file=sys.stderr)
        return 1
    final = polished.judged
    new_entry, _ = corpus.add(
        polished.example.data,
        signature=entry.signature,
        kind=entry.kind,
        compression=entry.compression,
        format_version=entry.format_version,
        expected=entry.expected,
        actual={"rules": sorted({f.rule for f in final.verdict.findings})},
        checker=args.checker or entry.checker,
        mutator=entry.mutator,
        seed=entry.seed,
        official=entry.official,
        stage=polished.stage,
    )
    before, after = len(path.read_bytes()), len(polished.example.data)
    print(f"{polished.stage}: {corpus.path_of(new_entry)} ({before} -> {after} bytes)")
    return 0


def _add(corpus, args: argparse.Namespace) -> int:  # noqa: ANN001 - a Corpus
    from dshfuzz.harness._judges import BuiltinChecker
    from dshfuzz.model import read_log

    try:
        data = args.log.read_bytes()
        log = read_log(args.log)
    except OSError as exc:
        print(f"dshfuzz corpus: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    verdict = BuiltinChecker().check(args.log)
    rules = sorted({f.rule for f in verdict.findings})
    entry, new = corpus.add(
        data,
        signature=args.signature or "witness|" + (",".join(rules) or "clean"),
        kind="witness",
        compression=log.compression,
        format_version=log.format_version if isinstance(log.format_version, int) else None,
        expected={"rules": rules},
        actual={"rules": rules},
    )
    print(f"{'added' if new else 'already present'}: {corpus.path_of(entry)}")
    return 0
