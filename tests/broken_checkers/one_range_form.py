"""Mishandles one rare form of one field: a ``sourceEventSeqs`` range (``[start, end]``) whose
end reaches the event's own seq or passes it. Its range branch compares only the range's start
with the seq, so such an event's findings are dropped; plain seqs past the event, and every
other range, it judges as the built-in checker does. The official layers refuse a citation of
the event itself or a later one in every encoding (released: V01:1850 for plain seqs, V01:1857
for a range), so every log this checker passes wrongly is a miss. What ``--checker-coverage``
is measured against: the range branch is code only a range-encoded list runs."""

from __future__ import annotations

import sys
from typing import Any

from tests.broken_checkers._base import main, run_with


def _cites_itself_or_later(event: Any) -> bool:
    raw = event.raw
    if type(raw) is not dict or type(raw.get("seq")) is not int or type(raw.get("sourceEventSeqs")) is not list:
        return False
    for member in raw["sourceEventSeqs"]:
        if type(member) is list and len(member) == 2 and all(type(m) is int for m in member):
            start, end = member
            if start < raw["seq"] <= end:  # the defect: only ``start`` decides, and it is earlier
                return True
    return False


def defect(log, findings):  # noqa: ANN001 - the checker's log and finding dicts
    wrong = {e.raw["seq"] for e in log.events if _cites_itself_or_later(e)}
    return [f for f in findings if f["seq"] not in wrong]


def check(path: str) -> dict:
    return run_with(defect, path)


if __name__ == "__main__":
    sys.exit(main(defect))
