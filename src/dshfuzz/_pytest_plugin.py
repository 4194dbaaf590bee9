"""The dshfuzz pytest plugin (entry point ``pytest11: dshfuzz``).

It loads in every pytest run wherever dshfuzz is installed, so it changes nothing a
project did not ask for:

- Hypothesis profiles, only when asked: ``--dshfuzz-profile NAME``, else the
  ``DSHFUZZ_PROFILE`` environment variable, else the ini key ``dshfuzz_profile``
  (``[tool.pytest.ini_options]`` or ``pytest.ini``). NAME is ``dev``, ``ci``, ``nightly``
  or ``auto`` (``ci`` when ``CI`` is set, else ``dev``). Not asked, the plugin registers
  no profile and loads none: Hypothesis' active profile is whatever it was.
  Asked, it registers the one profile named, as ``dshfuzz-NAME`` (so that no profile of
  the project's or Hypothesis' own ``ci`` is overwritten), and loads it, unless the
  project already chose one: ``--hypothesis-profile``, or a profile loaded before
  pytest configures its plugins (in a ``conftest.py``, say). A chosen profile is never
  replaced; the report header says which profile runs and why.
  ``ci`` is derandomized, so a red CI run always reproduces. Each profile names its
  example database explicitly (``dev`` and ``nightly`` one directory that every xdist
  worker shares, or ``DSHFUZZ_DATABASE`` when set: ``redis://HOST:PORT/N`` shares it
  between machines; ``ci`` none), so Hypothesis' own ``CI`` defaults never decide it.
- The ``dshfuzz_witness`` fixture: a fuzz property records each log it judges; when
  the test fails, the last record is the minimal example Hypothesis replayed, and
  the plugin prints it under the failure and ships it to the xdist controller in
  ``report.user_properties``. It works with any profile, or none.
- ``--dshfuzz-save``: the controller adds every failing witness to the corpus.

This module imports nothing heavy at import time: Hypothesis and dshfuzz are
imported inside the hooks that need them, and Hypothesis only when a profile is asked for.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from pluggy import Result

PROFILES = ("dev", "ci", "nightly")
_CHOICES = (*PROFILES, "auto")
_PROPERTY = "dshfuzz_witness"
_EXAMPLES = {"dev": 50, "ci": 200, "nightly": 5000}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dshfuzz")
    group.addoption(
        "--dshfuzz-profile", choices=_CHOICES, default=None,
        help="register and load the dshfuzz Hypothesis profile NAME (auto: ci when CI is set, else dev)",
    )
    group.addoption("--dshfuzz-save", action="store_true", help="add failing fuzz witnesses to the corpus")
    group.addoption("--dshfuzz-corpus", default="corpus", help="corpus directory for --dshfuzz-save")
    parser.addini(
        "dshfuzz_profile", default="",
        help="dshfuzz Hypothesis profile to load when neither --dshfuzz-profile nor DSHFUZZ_PROFILE names one "
             f"({', '.join(_CHOICES)})",
    )


def profile_name(config: pytest.Config) -> str | None:
    """The dshfuzz profile asked for (``auto`` resolved), or None when nobody asked."""
    asked = (config.getoption("dshfuzz_profile") or os.environ.get("DSHFUZZ_PROFILE")
             or str(config.getini("dshfuzz_profile") or "").strip())
    if not asked:
        return None
    if asked not in _CHOICES:
        raise pytest.UsageError(f"dshfuzz profile {asked!r}: choose one of {', '.join(_CHOICES)}")
    if asked == "auto":
        return "ci" if os.environ.get("CI") else "dev"
    return asked


def _chosen_by_the_project(config: pytest.Config) -> str | None:
    """The Hypothesis profile the project chose itself, if any: ``--hypothesis-profile``, or
    one active other than Hypothesis' own start (``default``, or its ``ci`` under CI) and
    other than a ``dshfuzz-*`` profile (this plugin's, from an enclosing run in the process)."""
    from hypothesis import settings

    explicit = config.getoption("hypothesis_profile", None)
    if explicit:
        return str(explicit)
    current = settings.get_current_profile_name()
    try:
        from hypothesis._settings import is_in_ci
    except ImportError:  # pragma: no cover - an older or newer Hypothesis
        in_ci = bool(os.environ.get("CI"))
    else:
        in_ci = is_in_ci()
    ours = current == "default" or (current == "ci" and in_ci) or current.startswith("dshfuzz-")
    return None if ours else current


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG["config"] = config
    name = profile_name(config)
    if name is None:
        return
    kept = _chosen_by_the_project(config)
    if kept is not None:
        config.stash[_header_key] = f"hypothesis profile {kept!r} (the project's; dshfuzz profile {name!r} not loaded)"
        return
    from hypothesis import HealthCheck, settings

    # CI explores a fixed sequence (a red build always reproduces; derandomizing implies no
    # database); dev and nightly explore afresh and share one database across xdist workers
    ci = name == "ci"
    database = None if ci else _database(config)
    settings.register_profile(
        f"dshfuzz-{name}",
        max_examples=_EXAMPLES[name],
        print_blob=name != "dev",
        derandomize=ci,
        database=database,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(f"dshfuzz-{name}")
    config.stash[_header_key] = f"hypothesis profile {name!r} (loaded as 'dshfuzz-{name}')"


def _database(config: pytest.Config) -> Any:
    """The example database of a dev or nightly profile: ``DSHFUZZ_DATABASE`` when set
    (``redis://…`` shared between machines, or a folder), else one folder under the
    project root that every xdist worker shares."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    named = os.environ.get("DSHFUZZ_DATABASE", "").strip()
    if not named:
        return DirectoryBasedExampleDatabase(str(Path(config.rootpath) / ".hypothesis" / "examples"))
    from dshfuzz.harness._database import DatabaseError, example_database

    try:
        return example_database(named, given_as="DSHFUZZ_DATABASE")
    except DatabaseError as exc:
        raise pytest.UsageError(str(exc)) from None


_header_key = pytest.StashKey[str]()
_CONFIG: dict[str, pytest.Config] = {}


def pytest_report_header(config: pytest.Config) -> str | None:
    said = config.stash.get(_header_key, None)
    return None if said is None else f"dshfuzz: {said}"


@dataclass(slots=True)
class Witness:
    """One judged log: bytes, container and what the property knew about it."""

    data: bytes
    compression: str
    signature: str = ""
    kind: str = "witness"
    meta: dict[str, Any] = field(default_factory=dict)


class WitnessRecorder:
    """What a fuzz property records; the last record of a failing test is its minimal log."""

    def __init__(self) -> None:
        self.last: Witness | None = None

    def record(self, data: bytes, compression: str = "none", *, signature: str = "", kind: str = "witness", **meta: Any) -> None:
        self.last = Witness(data, compression, signature, kind, meta)


_RECORDER = WitnessRecorder()


@pytest.fixture(scope="session")
def dshfuzz_witness() -> WitnessRecorder:
    """Session-scoped (so Hypothesis does not warn); the plugin clears it before each test."""
    return _RECORDER


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Result[None], None]:
    _RECORDER.last = None
    yield


def _plain(value: Any) -> Any:
    return sorted(value, key=str) if isinstance(value, (set, frozenset)) else str(value)


def _render(witness: Witness) -> str:
    if witness.compression == "zstd":
        from dshfuzz.model import parse_log

        log = parse_log(witness.data, compression="zstd")
        return b"".join(f.content for f in log.frames).decode("utf-8", "replace")
    return witness.data.decode("utf-8", "replace")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    uses = "dshfuzz_witness" in getattr(item, "fixturenames", ())
    if report.when != "call" or not report.failed or not uses or _RECORDER.last is None:
        return
    witness = _RECORDER.last
    report.sections.append(("dshfuzz minimal log", _render(witness)))
    report.user_properties.append(
        (
            _PROPERTY,
            {
                "data": base64.b64encode(witness.data).decode("ascii"),
                "compression": witness.compression,
                "signature": witness.signature or f"test|{item.nodeid}",
                "kind": witness.kind,
                # user_properties cross to the xdist controller by execnet: plain JSON values only
                "meta": json.loads(json.dumps(witness.meta, default=_plain)),
            },
        )
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Runs on the controller (with or without xdist): save failing witnesses when asked."""
    if not report.failed or report.when != "call":
        return
    config = _CONFIG.get("config")
    if config is None or not config.getoption("dshfuzz_save"):
        return
    from dshfuzz.harness import Corpus

    for name, stored in report.user_properties:
        if name != _PROPERTY:
            continue
        value = cast("dict[str, Any]", stored)  # the dict written above, as JSON across execnet
        meta = value.get("meta", {})
        Corpus(Path(config.getoption("dshfuzz_corpus"))).add(
            base64.b64decode(value["data"]),
            signature=value["signature"],
            kind=value["kind"],
            compression=value["compression"],
            format_version=meta.get("format_version", 0),
            expected=meta.get("expected", {}),
            actual=meta.get("actual", {}),
            checker=meta.get("checker", "builtin"),
            mutator=meta.get("mutator"),
            seed=meta.get("seed"),
        )
