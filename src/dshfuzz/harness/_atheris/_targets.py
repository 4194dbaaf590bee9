"""The byte-level entry points of dshfuzz, as fuzz targets.

A target takes any bytes and must return normally: every input, however hostile,
becomes a model or a report, never an exception (the row decoder may also refuse
with its documented :class:`~dshfuzz.model.RowDecodeError`). The whole-checker
targets also treat a pass that crashed inside ``check_log`` (which the checker
catches and records in ``Report.internal_errors``) as a crash: the checker kept
going, but one of its passes did not survive the input.

Targets import dshfuzz lazily, so that the fuzzing child can import them under
coverage instrumentation (see ``_child``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["TARGETS", "CheckerInternalError", "Shape", "Target", "atheris_targets", "resolve_target"]

Shape = Literal["log", "row"]
"""What an input is: a whole log file, or one storage row (a JSON text)."""


class CheckerInternalError(RuntimeError):
    """A checker pass crashed on the input (``check_log`` caught it and kept going)."""


@dataclass(frozen=True, slots=True)
class Target:
    """One fuzz target: ``run(data)`` must return for every ``data``.

    ``compression`` is the container inputs are read as (and the custom mutator
    re-encodes to); ``shape`` says whether an input is a log or one row.
    """

    name: str
    summary: str
    compression: Literal["none", "zstd"]
    shape: Shape
    run: Callable[[bytes], object]


def _read_jsonl(data: bytes) -> object:
    from dshfuzz.model import parse_log

    return parse_log(data, compression="none")


def _read_zstd(data: bytes) -> object:
    from dshfuzz.model import parse_log

    return parse_log(data, compression="zstd")


def _decode_row(data: bytes) -> object:
    from dshfuzz.model import JsonDecodeError, RowDecodeError, decode_storage_record, loads

    try:
        value = loads(data)
    except JsonDecodeError:
        return None  # not a row at all: the JSON reader's rejection, not the row decoder's
    try:
        return decode_storage_record(value)
    except RowDecodeError as refused:  # the documented rejection, with the official message
        return refused


def _checked(compression: Literal["none", "zstd"]) -> Callable[[bytes], object]:
    """What ``dshfuzz check`` runs on a file's bytes: the streamed check (whose reports equal
    ``check_log`` of the whole model, as tests/unit/test_stream.py shows)."""
    def check(data: bytes) -> object:
        from dshfuzz.checker import check_stream

        report = check_stream(data, compression=compression)
        if report.internal_errors:
            raise CheckerInternalError(report.internal_errors[0])
        return report

    return check


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("jsonl-reader", "parse_log of a .jsonl file", "none", "log", _read_jsonl),
        Target(
            "zstd-reader",
            "parse_log of a .jsonl.zstd file (frame scan, decode, torn-tail recovery)",
            "zstd",
            "log",
            _read_zstd,
        ),
        Target(
            "row-decoder",
            "decode_storage_record of one JSON row (RowDecodeError is the rejection)",
            "none",
            "row",
            _decode_row,
        ),
        Target(
            "checker-jsonl", "check_stream of a .jsonl file (what dshfuzz check runs)", "none", "log", _checked("none")
        ),
        Target(
            "checker-zstd",
            "check_stream of a .jsonl.zstd file (what dshfuzz check runs)",
            "zstd",
            "log",
            _checked("zstd"),
        ),
    )
}


def atheris_targets(spec: str = "all") -> list[str]:
    """The targets ``spec`` names (``all``, one name, or ``py:module:function``); raises ``KeyError``
    naming the choices."""
    if spec == "all":
        return list(TARGETS)
    if spec not in TARGETS and not spec.startswith("py:"):
        raise KeyError(
            f"unknown atheris target {spec!r}; expected all, py:module:function or one of: "
            f"{', '.join(TARGETS)}"
        )
    return [spec]


def resolve_target(spec: str) -> Target:
    """The built-in target ``spec``, or ``py:module:function``: any callable taking a log's bytes
    (read as JSONL), imported from the current directory too, as checkers are."""
    if spec in TARGETS:
        return TARGETS[spec]
    from dshfuzz.harness._judges import CheckerSpecError
    from dshfuzz.harness._judges._python import _resolve_callable

    if not spec.startswith("py:"):
        raise KeyError(f"unknown atheris target {spec!r}")
    try:
        function = _resolve_callable(spec[3:])
    except CheckerSpecError as exc:
        raise KeyError(str(exc)) from None
    return Target(spec, f"{spec} on a .jsonl file", "none", "log", function)
