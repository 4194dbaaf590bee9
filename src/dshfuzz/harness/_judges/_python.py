"""The ``py:module:function`` checker: a Python callable run in process, on a worker
thread so that a hang becomes a timeout verdict."""

from __future__ import annotations

import importlib
import os
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._interface import DEFAULT_TIMEOUT, CheckerSpecError, CheckerVerdict, _Checker
from ._report import _head, verdict_from_json
from ._vocabulary import catalog_rules

__all__ = ["PythonChecker"]


@dataclass(slots=True)
class PythonChecker(_Checker):
    """A Python callable ``function(path: str)`` returning a report (see :func:`verdict_from_json`).

    It runs in process on a worker thread so a hang becomes a timeout verdict; the
    hung thread cannot be killed, so campaigns should prefer ``cmd:`` or ``serve:``
    for untrusted code.
    """

    target: str
    function: Callable[[str], Any]
    timeout: float = DEFAULT_TIMEOUT
    rules: frozenset[str] = field(default_factory=catalog_rules)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = f"py:{self.target}"
        if self.rules is None:  # given as None: the default vocabulary, as when not given
            self.rules = catalog_rules()

    def check(self, path: Path) -> CheckerVerdict:
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = self.function(str(path))
            except BaseException:  # noqa: BLE001 - any escape from the checker is its crash
                box["error"] = traceback.format_exc(limit=8)

        worker = threading.Thread(target=call, daemon=True, name=f"checker {self.target}")
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            return CheckerVerdict(failure="timeout", detail=f"no answer within {self.timeout:g}s")
        if "error" in box:
            return CheckerVerdict(failure="crash", detail=box["error"])
        value: Any = box.get("value")  # whatever the user's function returned
        if hasattr(value, "to_json"):
            value = value.to_json()
        try:
            return verdict_from_json(value)
        except ValueError as exc:
            shown = _head(value if isinstance(value, str) else repr(value)).replace("output: ", "returned: ", 1)
            return CheckerVerdict(failure="unparsable-output", detail=f"{exc}\n{shown}")


def _resolve_callable(target: str) -> Callable[..., Any]:
    """Import ``module:function``, from the current directory too (as ``python -m`` would)."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise CheckerSpecError(f"expected py:module:function, got py:{target}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise CheckerSpecError(f"cannot load py:{target}: {exc}") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module failed as it imported: one line
        shown = " ".join(str(exc).split())[:200]
        raise CheckerSpecError(
            f"cannot load py:{target}: importing {module_name} raised {type(exc).__name__}" + (f": {shown}" if shown else "")
        ) from None
    if not callable(obj):
        raise CheckerSpecError(f"py:{target} is not callable")
    function: Callable[..., Any] = obj
    return function
