"""The findings a worker owns, and the coordinator's claims as they reach it.

The coordinator gives each signature to the first worker that sends it (``_campaign``) and tells
every worker so; :class:`Claims` is a worker's view of those decisions, read from its
:class:`Inbox`. A signature the worker owns is an :class:`OwnedFinding` while it shrinks and
minimises, and each stage of it is reported by :func:`finding_event`.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ._events import DisagreementFound, MinimiseStage
from ._rounds import MINIMISE_SLICE_SECONDS

if TYPE_CHECKING:
    from dshfuzz.oracle.official import LayerVerdict

    from ._confirm import Confirmation
    from ._judge import Example, JudgedExample

__all__ = ["Claims", "Inbox", "OwnedFinding", "finding_event"]


class Inbox(Protocol):
    """A worker's end of the coordinator's decisions: ``("claimed", signature, owner)``."""

    def get_nowait(self) -> tuple[str, str, int]: ...


@dataclass(slots=True)
class OwnedFinding:
    """A signature this worker owns (its first finder, :class:`Claims`): its best witness so far
    and that witness's judgement, and the time its box has left."""

    signature: str
    best: Example
    judged: JudgedExample
    events_found: int
    left: float | None
    """Seconds left in the finding's box (``None``: no box)."""
    confirmation: Confirmation | None = None
    """For a miss of declared rules, what a second mutant said (``None``: not asked yet)."""

    @property
    def exhausted(self) -> bool:
        """Whether the box has no slice worth resuming left."""
        return self.left is not None and self.left < MINIMISE_SLICE_SECONDS


class Claims:
    """The coordinator's decisions, as they reach this worker: which worker owns each
    signature found anywhere. A signature owned elsewhere is never hunted or minimised here."""

    def __init__(self, worker: int, inbox: Inbox | None) -> None:
        self.worker = worker
        self.inbox = inbox
        self.owners: dict[str, int] = {}

    def _read(self) -> None:
        if self.inbox is None:
            return
        while True:
            try:
                _, signature, owner = self.inbox.get_nowait()
            except queue.Empty:
                return
            self.owners.setdefault(signature, owner)

    def known(self, signature: str) -> bool:
        self._read()
        return signature in self.owners

    def elsewhere(self, signature: str) -> bool:
        self._read()
        return self.owners.get(signature, self.worker) != self.worker


def finding_event(finding: OwnedFinding, stage: MinimiseStage, *, seed: int, worker: int) -> DisagreementFound:
    """The event that reports ``finding`` at ``stage``: its witness, what every judge said of it,
    and, for a miss of declared rules, whether a second mutant confirmed it (a miss no one asked
    about yet says so)."""
    from ._confirm import Confirmation, needs_confirmation

    judged = finding.judged
    defect = next(d for d in judged.disagreements if d.signature == finding.signature)
    example = judged.example
    confirmation = finding.confirmation
    if confirmation is None and needs_confirmation(defect):
        confirmation = Confirmation(False, "not tried: the campaign ended first")
    return DisagreementFound(
        signature=finding.signature,
        kind=defect.kind,
        layer=defect.layer,
        rules=defect.rules,
        mutator=example.mutator,
        detail=defect.detail,
        data=example.data,
        compression=example.compression,
        format_version=example.format_version,
        events_found=finding.events_found,
        events_minimal=judged.events or _events_in(example),
        checker_rules=tuple(sorted({f.rule for f in judged.verdict.findings})),
        expected_rules=tuple(sorted(example.expects)),
        oracle_refusing=tuple(sorted(judged.truth.oracle_refusing)),
        official={k: _verdict_json(v) for k, v in judged.official.items()},
        seed=seed,
        at=time.time(),
        worker=worker,
        stage=stage,
        original=example.original if defect.kind == "metamorphic" else None,
        original_compression=example.original_compression,
        shows=tuple(sorted({d.signature for d in judged.defects})),
        confirmed=None if confirmation is None else confirmation.confirmed,
        confirmation="" if confirmation is None else confirmation.detail,
    )


def _events_in(example: Example) -> int:
    from dshfuzz.model import parse_log

    try:
        return len(parse_log(example.data, compression=example.compression).events)
    except Exception:  # noqa: BLE001 - an unreadable witness has no events to count
        return 0


def _verdict_json(verdict: LayerVerdict) -> dict[str, Any]:
    if verdict.ok:
        from ._judge import loaded_events

        count = loaded_events({verdict.layer: verdict})  # the loader's: what a replay holds a count to
        return {"ok": True} if count is None else {"ok": True, "events": count}
    error = verdict.error
    assert error is not None, "a layer that refuses names its error"
    return {"ok": False, "error": {"name": error.name, "message": error.message, "seq": error.seq}}
