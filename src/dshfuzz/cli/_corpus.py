"""``dshfuzz corpus list|replay|add|minimise|mark-fixed``: the corpus of minimised witnesses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dshfuzz.harness import CHECKER_SPEC_HELP

if TYPE_CHECKING:
    from dshfuzz.harness import Corpus

_CORPUS_HELP = "corpus directory (default corpus/ in the current directory; it must exist, but for add)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import HelpFormatter, explain

    explain(parser, {
        0: "done (replay: every entry behaves as its meta records)",
        1: "replay: an entry changed; minimise: the entry no longer reproduces",
        2: "usage error, a missing corpus folder or an unknown entry (replay: an entry's checker cannot be loaded)",
    }, description=(
        "The corpus of minimised witnesses: each entry a log, the checker it was found with and what the "
        "checker said. `dshfuzz corpus ACTION --help` states an action's arguments."
    ))
    parser.add_argument("--corpus", type=Path, default=Path("corpus"), help=_CORPUS_HELP)
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help_text: str, exits: dict[int, str]) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)
        explain(p, exits)
        # after the action too (`corpus replay --corpus DIR`), as well as before it
        p.add_argument("--corpus", type=Path, default=argparse.SUPPRESS, help=_CORPUS_HELP)
        return p

    missing = "usage error, or the corpus folder is missing"
    action("list", "one line per entry: kind, signature, the checker it was found with, its log (the ENTRY "
                   "other actions take)", {0: "the entries were listed (none is not an error)", 2: missing})
    rep = action(
        "replay",
        "re-run each entry's checker and compare with its meta: a known bug is STILL FAILING, a fixed one "
        "(`mark-fixed`) FIXED, a witness HOLDS",
        {0: "every entry behaves as its meta records",
         1: "some entry changed (FIXED with no fix recorded, failing again though marked fixed, CHANGED VERDICT)",
         2: f"{missing}, or an entry's checker cannot be loaded (NOT REPLAYED; the others are replayed)"},
    )
    rep.add_argument("--checker", default=None,
                     help=f"replay against this checker instead of each entry's own ({CHECKER_SPEC_HELP})")
    rep.add_argument("--json", action="store_true", help="one JSON object per entry, in a list")
    mini = action(
        "minimise",
        "continue minimising an entry's witness (one a campaign cut at its time box)",
        {0: "the smaller witness was saved as a new entry",
         1: "the entry no longer reproduces with this checker",
         2: f"{missing}, an unknown entry, a checker that cannot be loaded, or the official layers not set up"},
    )
    mini.add_argument("entry", type=Path, help="the entry's log file (as `corpus list` prints it)")
    mini.add_argument("--checker", default=None, help=f"the checker (default: the entry's own; {CHECKER_SPEC_HELP})")
    mini.add_argument("--seconds", type=float, default=None, metavar="S",
                      help="stop after S seconds with the smallest witness so far (default: until 1-minimal)")
    mini.add_argument("--no-official", action="store_true", help="judge without the official layers")
    fixed = action(
        "mark-fixed",
        "record in an entry's meta the change that fixed its bug: replay then expects it FIXED",
        {0: "the fix was recorded",
         2: f"{missing}, an unknown entry, a witness (it records no bug) or an empty --by"},
    )
    fixed.add_argument("entry", type=Path, help="the entry's log file (as `corpus list` prints it)")
    fixed.add_argument("--by", required=True, metavar="COMMIT", help="the commit (or change) that fixed it")
    add = action("add", "add a log as a witness of the built-in checker's current verdict (creates the "
                        "corpus folder)",
                 {0: "added (or already present)", 2: "usage error, or LOG cannot be read"})
    add.add_argument("log", type=Path, metavar="LOG", help="the session log to keep (.jsonl or .jsonl.zstd)")
    add.add_argument("--signature", default=None, help="default: witness|<rules the checker reports>")


def run(args: argparse.Namespace) -> int:
    from dshfuzz.harness import Corpus, CorpusFormatError

    corpus = Corpus(args.corpus)
    if args.action != "add" and not corpus.root.is_dir():
        what = "not a folder" if corpus.root.exists() else "no such folder"
        name = str(corpus.root) if corpus.root.is_absolute() else f"{corpus.root} ({corpus.root.absolute()})"
        print(f"dshfuzz corpus: {name}: {what} (pass --corpus DIR; `dshfuzz corpus add LOG` creates one)",
              file=sys.stderr)
        return 2
    try:
        if args.action == "list":
            return _list(corpus)
        if args.action == "replay":
            return _replay(corpus, args)
        if args.action == "minimise":
            return _minimise(corpus, args)
        if args.action == "mark-fixed":
            return _mark_fixed(corpus, args)
        return _add(corpus, args)
    except CorpusFormatError as exc:
        print(f"dshfuzz corpus: {exc}", file=sys.stderr)
        return 2


def _list(corpus: Corpus) -> int:
    from dshfuzz.report import corpus_list_lines

    entries = list(corpus.entries())
    for line in corpus_list_lines(entries):
        print(line)
    print(f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'} in {corpus.root}", file=sys.stderr)
    return 0


def _unknown_entry(corpus: Corpus, entry: Path) -> int:
    print(f"dshfuzz corpus: {entry} is not an entry of {corpus.root} (`dshfuzz corpus list` shows them)",
          file=sys.stderr)
    return 2


def _replay(corpus: Corpus, args: argparse.Namespace) -> int:
    from dshfuzz.harness import CheckerSpecError, ReplayStatus, load_entry_checker, replay
    from dshfuzz.report import replay_json, replay_line, replay_summary

    try:
        checker = load_entry_checker(args.checker, corpus.root.resolve().parent) if args.checker else None
    except CheckerSpecError as exc:
        print(f"dshfuzz corpus: {exc}", file=sys.stderr)
        return 2
    try:
        results = []
        for r in replay(corpus, checker):
            results.append(r)
            if not args.json:
                print(replay_line(r), flush=True)
    finally:
        if checker is not None and callable(getattr(checker, "close", None)):
            checker.close()
    if args.json:
        print(replay_json(results, args.checker))
    print(replay_summary(results), file=sys.stderr if args.json else sys.stdout)
    if any(r.status is ReplayStatus.FIXED and not r.as_recorded for r in results) and not args.json:
        print("a fix nobody recorded: `dshfuzz corpus mark-fixed ENTRY --by COMMIT` records it")
    if any(r.status is ReplayStatus.NOT_REPLAYED for r in results):
        return 2
    return 0 if all(r.as_recorded for r in results) else 1


def _minimise(corpus: Corpus, args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from dshfuzz.harness import CheckerSpecError, keep_minimised, load_entry_checker, minimise_entry

    found = corpus.find(args.entry)
    if found is None:
        return _unknown_entry(corpus, args.entry)
    path, entry = found
    try:
        checker = load_entry_checker(args.checker or entry.checker, corpus.root.resolve().parent)
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
    new_entry = keep_minimised(corpus, entry, polished, args.checker or entry.checker)
    before, after = len(path.read_bytes()), len(polished.example.data)
    print(f"{polished.stage}: {corpus.path_of(new_entry)} ({before} -> {after} bytes)")
    return 0


def _mark_fixed(corpus: Corpus, args: argparse.Namespace) -> int:
    found = corpus.find(args.entry)
    if found is None:
        return _unknown_entry(corpus, args.entry)
    path, entry = found
    if entry.kind == "witness":
        print(f"dshfuzz corpus: {args.entry} is a witness (it records a verdict, not a bug): "
              "there is nothing to mark fixed", file=sys.stderr)
        return 2
    if not args.by.strip():
        print("dshfuzz corpus: --by names the fix (a commit); it cannot be empty", file=sys.stderr)
        return 2
    from dshfuzz.report import marked_fixed_line

    _, before = corpus.mark_fixed(path, args.by)
    print(marked_fixed_line(path, args.by, before))
    return 0


def _add(corpus: Corpus, args: argparse.Namespace) -> int:
    from dshfuzz.harness import add_witness

    from . import cyclic_gc_paused

    try:
        with cyclic_gc_paused():
            entry, new = add_witness(corpus, args.log, args.signature)
    except OSError as exc:
        print(f"dshfuzz corpus: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"{'added' if new else 'already present'}: {corpus.path_of(entry)}")
    return 0
