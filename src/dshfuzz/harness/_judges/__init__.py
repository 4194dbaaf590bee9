"""Checkers under test, behind one interface: one module per checker or protocol.

A campaign fuzzes *a checker*: the built-in one (whole, or with rules switched off:
``builtin:-S5,-E2``, how detection power is measured), any command run once per log
(``cmd:'... {log} ...'``) or once per batch of logs (``cmd:'... {logs} ...'``), a
long-lived process speaking the ``dshfuzz-checker/1`` protocol (``serve:'...'``), a
Python callable (``py:module:function``), or a plugin registered under the
``dshfuzz.checkers`` entry-point group. ``docs/CHECKER_PROTOCOL.md`` documents what
an external checker prints and answers.

Whatever it is, the campaign sees a :class:`CheckerVerdict` per log (:mod:`._interface`).
The parts:

- :mod:`._interface`: the verdict, the interface every checker has, its spec error;
- :mod:`._vocabulary`: the rules and official layers a checker claims;
- :mod:`._report`: what an external checker prints and how its exit status reads;
- :mod:`._builtin`: ``builtin``, the embedded checker run in process;
- :mod:`._command`: ``cmd:'... {log} ...'``, one process per log;
- :mod:`._batch`: ``cmd:'... {logs} ...'``, one process per batch of logs;
- :mod:`._serve`: ``serve:'...'``, one long-lived process speaking the protocol;
- :mod:`._python`: ``py:module:function``, a callable in process;
- :mod:`._pool`: one checker shared by concurrent minimisations;
- :mod:`._spec`: a ``--checker`` value turned into one of them (plugins included).
"""

from ._batch import BATCH_FILE_FLOOR, BATCH_LOGS, BatchCommandChecker
from ._builtin import BuiltinChecker
from ._command import CommandChecker
from ._interface import (
    DEFAULT_TIMEOUT,
    CheckerFailure,
    CheckerSpecError,
    CheckerUnderTest,
    CheckerVerdict,
    LoadedChecker,
    ReportedFinding,
)
from ._pool import CheckerPool, PooledChecker
from ._python import PythonChecker
from ._report import NOT_ASSESSABLE_EXIT, PARSABLE_REPORT, ExitMeaning, parse_checker_exits, verdict_from_json
from ._serve import PROTOCOL, ServeChecker
from ._spec import CHECKER_SPEC_HELP, load_checker
from ._vocabulary import catalog_rules, declared_layers, parse_checker_layers, parse_checker_rules, registry_rules

__all__ = [
    "BATCH_FILE_FLOOR",
    "BATCH_LOGS",
    "CHECKER_SPEC_HELP",
    "DEFAULT_TIMEOUT",
    "NOT_ASSESSABLE_EXIT",
    "PARSABLE_REPORT",
    "PROTOCOL",
    "BatchCommandChecker",
    "BuiltinChecker",
    "CheckerFailure",
    "CheckerPool",
    "CheckerSpecError",
    "CheckerUnderTest",
    "CheckerVerdict",
    "CommandChecker",
    "ExitMeaning",
    "LoadedChecker",
    "PooledChecker",
    "PythonChecker",
    "ReportedFinding",
    "ServeChecker",
    "catalog_rules",
    "declared_layers",
    "load_checker",
    "parse_checker_exits",
    "parse_checker_layers",
    "parse_checker_rules",
    "registry_rules",
    "verdict_from_json",
]
