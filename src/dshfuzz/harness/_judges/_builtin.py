"""The built-in checker under test (``builtin``, ``builtin:-S5,-E2``): ``dshfuzz.checker``
run in process, on a log's file or its bytes, by the same streamed check ``dshfuzz check``
runs."""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ._interface import CheckerVerdict, ReportedFinding, _Checker
from ._vocabulary import _rule_order, registry_rules

if TYPE_CHECKING:
    from dshfuzz.checker import CheckOptions, Report
    from dshfuzz.model import Compression

__all__ = ["BuiltinChecker"]


@dataclass(slots=True)
class BuiltinChecker(_Checker):
    """The embedded contract checker (``dshfuzz.checker``), run in process.

    ``without`` names rules switched off (spec ``builtin:-S5,-E2``): the checker a
    detection-power campaign must catch, since it misses exactly those incidents.
    Its vocabulary is the whole registry, the switched-off rules included: they are
    claimed and missed on purpose.
    """

    without: frozenset[str] = frozenset()
    rules: frozenset[str] = field(default_factory=registry_rules)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = "builtin" + (":" + ",".join(f"-{r}" for r in _rule_order(self.without)) if self.without else "")
        if self.rules is None:  # given as None: the default vocabulary, as when not given
            self.rules = registry_rules()

    def check(self, path: Path) -> CheckerVerdict:
        from dshfuzz.checker import check_path

        try:
            report = check_path(path, self._options())  # the streamed check `dshfuzz check` runs
        except Exception:  # a crash of the checker under test is a campaign finding
            return CheckerVerdict(failure="crash", detail=traceback.format_exc(limit=8))
        return self._verdict(report)

    def check_data(self, data: bytes, compression: Compression) -> CheckerVerdict:
        """:meth:`check` of a log's bytes, with no file: the same streamed check of the same bytes."""
        from dshfuzz.checker import check_stream

        try:
            report = check_stream(data, compression=compression, options=self._options())
        except Exception:  # a crash of the checker under test is a campaign finding
            return CheckerVerdict(failure="crash", detail=traceback.format_exc(limit=8))
        return self._verdict(report)

    def _options(self) -> CheckOptions:
        from dshfuzz.checker import RULES, CheckOptions

        return CheckOptions(rules=frozenset(rid for rid in RULES if str(rid) not in self.without) if self.without else None)

    @staticmethod
    def _verdict(report: Report) -> CheckerVerdict:
        return CheckerVerdict(
            tuple(ReportedFinding(str(f.rule), str(f.severity), f.seq, f.caused_by, tuple(map(str, f.refused_by)))
                  for f in report.findings),
            exit_code=0 if report.ok else 1,
            checked=tuple(report.findings),
            events=report.events,
        )
