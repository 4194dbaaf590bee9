"""The typed outcome every reference model returns.

A model either accepts the whole log, returning the state it ends in
(:class:`Accepted`), or stops at the first event the official code would throw
on (:class:`Violation`). ``Violation.seq`` is the *position* of that event in the
log (equal to its ``seq`` whenever seqs are contiguous; a malformed event may
carry no usable seq of its own), or ``None`` for a finding about the end of the
log as a whole. ``code`` is a stable short reason code; ``message`` repeats the
official error text wherever the official code has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Iterable, Literal, TypeVar, Union

from dshfuzz.model import Event, SessionHeader

__all__ = ["Accepted", "Violation", "Verdict", "raw_events", "raw_header"]

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Accepted(Generic[S]):
    """The model accepted every event; ``state`` is its final state."""

    state: S
    ok: Literal[True] = True


@dataclass(frozen=True, slots=True)
class Violation:
    """The first event (by log position ``seq``) the model refuses, and why."""

    seq: int | None
    code: str
    message: str
    ok: Literal[False] = False


Verdict = Union[Accepted[S], Violation]


def raw_events(events: Iterable[Any]) -> list[Any]:
    """The raw JSON values of ``events`` (``dshfuzz.model.Event`` objects or JSON values)."""
    return [event.raw if isinstance(event, Event) else event for event in events]


def raw_header(header: Any) -> Any:
    """The raw JSON value of a header (a ``dshfuzz.model.SessionHeader`` or a JSON value)."""
    return header.raw if isinstance(header, SessionHeader) else header
