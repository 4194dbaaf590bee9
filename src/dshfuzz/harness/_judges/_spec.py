"""A ``--checker`` value, turned into a checker (:func:`load_checker`): ``builtin``,
``cmd:``, ``serve:``, ``py:``, or a plugin registered under the ``dshfuzz.checkers``
entry-point group. A value that names no usable checker is a :class:`CheckerSpecError`."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TypeVar

from ._batch import BatchCommandChecker
from ._builtin import BuiltinChecker
from ._command import CommandChecker
from ._interface import DEFAULT_TIMEOUT, CheckerSpecError, CheckerVerdict, LoadedChecker, _Checker
from ._python import PythonChecker, _resolve_callable
from ._serve import ServeChecker
from ._vocabulary import _rule_order, catalog_rules

__all__ = ["CHECKER_SPEC_HELP", "load_checker"]


CHECKER_SPEC_HELP = (
    "builtin | builtin:-RULE,... | cmd:'... {log} ...' | cmd:'... {logs} ...' | serve:'...' "
    "| py:module:function | a dshfuzz.checkers plugin name"
)
"""The ``--checker`` forms, for every command's help and every spec error."""


class _PluginChecker(_Checker):
    """A plugin's checker object, given what it lacks: ``rules`` (the catalog's ids unless
    it says), ``check_many`` and ``close`` (its own when it has them)."""

    name: str
    rules: frozenset[str]

    def __init__(self, inner: Any, rules: frozenset[str] | None) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", type(inner).__name__))
        own = getattr(inner, "rules", None)
        self.rules = rules if rules is not None else (frozenset(map(str, own)) if own else catalog_rules())

    def check(self, path: Path) -> CheckerVerdict:
        verdict: CheckerVerdict = self.inner.check(path)  # a plugin's checker, typed by its protocol alone
        return verdict

    def check_many(self, paths: Sequence[Path]) -> list[CheckerVerdict]:
        many = getattr(self.inner, "check_many", None)
        return list(many(paths)) if callable(many) else [self.inner.check(path) for path in paths]

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def _plugin_names() -> Iterable[str]:
    return sorted(ep.name for ep in entry_points(group="dshfuzz.checkers"))


def _builtin_without(options: str, rules: frozenset[str] | None) -> BuiltinChecker:
    """Parse the ``-RULE,-RULE`` list of ``builtin:-RULE,...``; unknown ids are a usage error."""
    from dshfuzz.checker import RULES

    items = [item.strip() for item in options.split(",")]
    malformed = [item for item in items if not item.startswith("-") or not item[1:]]
    if malformed:
        raise CheckerSpecError(f"builtin:{options}: expected a comma-separated list of -RULE (e.g. builtin:-S5,-E2)")
    known = {str(rid) for rid in RULES}
    unknown = [item[1:] for item in items if item[1:] not in known]
    if unknown:
        raise CheckerSpecError(
            f"builtin:{options}: unknown rule id{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"known: {', '.join(_rule_order(known))}"
        )
    return _given(BuiltinChecker(without=frozenset(item[1:] for item in items)), rules)


_Given = TypeVar("_Given", BuiltinChecker, CommandChecker, BatchCommandChecker, PythonChecker)


def _given(checker: _Given, rules: frozenset[str] | None) -> _Given:
    """``checker`` with the vocabulary ``rules`` when given (else its own default)."""
    if rules is not None:
        checker.rules = rules
    return checker


def _unwrap(value: str) -> str:
    """A command as a shell user quotes it: ``'node c.mjs {log}'`` (one word wrapped in one
    pair of matching quotes) is unwrapped as the shell would; anything else is kept."""
    value = value.strip()
    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
        try:
            words = shlex.split(value)
        except ValueError:
            return value
        if len(words) == 1:
            return words[0]
    return value


def load_checker(
    spec: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    rules: frozenset[str] | None = None,
    exits: Mapping[int, str] | None = None,
) -> LoadedChecker:
    """Turn a ``--checker`` value into a checker (:data:`CHECKER_SPEC_HELP` lists the forms).

    Starts no process. ``rules``, when given, replaces the checker's vocabulary (by
    default the registry for ``builtin``, the handshake for ``serve:``, else the
    catalog's 46 ids); ``exits`` maps a ``cmd:`` checker's own exit statuses
    (:func:`parse_checker_exits`; a checker without exit statuses takes none, and a
    mapping given to one is a :class:`CheckerSpecError`). After ``cmd:`` or ``serve:``, a command wrapped in one pair of
    quotes (as a shell user writes ``--checker "cmd:'node c.mjs {log}'"``) is
    unwrapped. A checker's ``name`` is a spec that loads the same checker again.
    """
    if rules is not None:
        rules = frozenset(rules)
        if not rules:
            raise CheckerSpecError("a checker's vocabulary (rules) must name at least one rule id")
    if exits and not spec.startswith("cmd:"):
        raise CheckerSpecError(f"--checker-exit maps a cmd: checker's exit statuses; {spec!r} has none")
    if spec == "builtin":
        return _given(BuiltinChecker(), rules)
    if spec.startswith("builtin:"):
        return _builtin_without(spec[len("builtin:"):], rules)
    if spec.startswith("cmd:"):
        template = _unwrap(spec[4:])
        if "{logs}" in template:
            return _given(BatchCommandChecker(template, timeout=timeout, exits=dict(exits or {})), rules)
        if "{log}" not in template:
            raise CheckerSpecError(f"command template has no {{log}} or {{logs}} placeholder: {template!r}")
        return _given(CommandChecker(template, timeout=timeout, exits=dict(exits or {})), rules)
    if spec.startswith("serve:"):
        return ServeChecker(_unwrap(spec[6:]), timeout=timeout, rules=rules)
    if spec.startswith("py:"):
        return _given(PythonChecker(spec[3:], _resolve_callable(spec[3:]), timeout=timeout), rules)
    for ep in entry_points(group="dshfuzz.checkers"):
        if ep.name == spec:
            loaded = ep.load()
            if callable(loaded) and not hasattr(loaded, "check"):
                return _given(PythonChecker(ep.value, loaded, timeout=timeout), rules)
            obj = loaded() if isinstance(loaded, type) else loaded
            if isinstance(obj, _Checker):
                if rules is not None:
                    setattr(obj, "rules", rules)  # a field, or ServeChecker's setter
                return obj
            return _PluginChecker(obj, rules)
    plugins = ", ".join(_plugin_names()) or "none installed"
    raise CheckerSpecError(f"unknown checker {spec!r}; expected {CHECKER_SPEC_HELP} (plugins: {plugins})")
