"""Hypothesis strategies of mutants, and seeded one-shot application for the CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, Phase, given, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from dshfuzz.generators import FeatureWeights, session_logs
from dshfuzz.model import Compression

from ._base import DrawAdapter, Edit, LogShape, Mutant, Mutator
from ._draft import DraftSource, Inapplicable, as_draft
from ._registry import get

__all__ = ["apply_seeded", "incident_logs", "incident_weights", "logs_for", "mutants", "twins"]


def incident_weights() -> FeatureWeights:
    """Generator weights under which mutator preconditions hold often: tool calls in most
    steps, and compactions, prunes, titles, forks and subagents in many logs."""
    return FeatureWeights(tool_calls=0.9, compaction=0.3, prune=0.4, title=0.9, fork=0.15, subagent=0.15)


def incident_logs(
    *, format_version: int = 0, max_events: int = 150, shape: LogShape = LogShape()
) -> st.SearchStrategy[Any]:
    """Valid generated logs of ``shape``: by default one to three turns drawn with
    :func:`incident_weights`; a mutator's declared :class:`LogShape` changes the turn count
    and overrides some of those weights."""
    weights = replace(incident_weights(), **dict(shape.weights)) if shape.weights else incident_weights()
    return session_logs(format_version=format_version, turns=shape.turns, max_events=max_events, weights=weights)


def _as_v3(log: Any) -> Any:
    """The generators write v0/v1 only: a v0 log rewritten in the v3 shapes carries a v3
    incident. The shapes v3 changed (catalog S3, S4, E10): replaces name ``startSeq`` and
    ``endSeq``, an assistant/message carries no ``sourceEventSeqs``, and a request/header
    omits ``system`` (the prompt moves to system/message events), an empty ``tools`` list
    and an empty ``adapterDefaults``."""
    from ._draft import EventDraft

    draft = EventDraft.of(log.header, log.events, log.batches)
    draft.header["version"] = 3
    for event in draft.events:
        if type(event) is not dict:
            continue
        op = event.get("surfaceOp")
        if type(op) is dict and "start" in op and "end" in op:
            event["surfaceOp"] = {"op": op.get("op"), "startSeq": op["start"], "endSeq": op["end"]}
        kind, data = event.get("type"), event.get("data")
        if kind == "assistant/message":
            event.pop("sourceEventSeqs", None)
        elif kind == "request/header" and type(data) is dict and type(data.get("header")) is dict:
            header = data["header"]
            header.pop("system", None)
            for key, empty in (("tools", []), ("adapterDefaults", {})):
                if header.get(key) == empty:
                    del header[key]
    return draft


def logs_for(mutator: Mutator | str, *, max_events: int = 150) -> st.SearchStrategy[Any]:
    """Valid logs of the formats ``mutator``'s incident exists in, of the shape it declares
    (:attr:`Mutator.logs`): v0 and v1 generated. There is no v3 generator, so a v3-only
    incident gets v0 logs rewritten in the v3 shapes."""
    m = get(mutator) if isinstance(mutator, str) else mutator
    formats, shape = m.formats, m.logs
    options = [incident_logs(format_version=v, max_events=max_events, shape=shape) for v in (0, 1) if v in formats]
    if not options and 3 in formats:
        options.append(incident_logs(max_events=max_events, shape=shape).map(_as_v3))
    return st.one_of(options)


def mutants(mutator: Edit | str, logs: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Mutant]:
    """Mutants of ``mutator`` applied to logs drawn from ``logs`` (default:
    :func:`incident_logs`). Logs that miss the mutator's precondition are rejected."""
    m = get(mutator) if isinstance(mutator, str) else mutator
    if logs is None:
        logs = incident_logs()

    @st.composite
    def draw_mutant(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Mutant:
        return m.apply(draw(logs), DrawAdapter(draw))

    return draw_mutant()


def twins(mutator: Mutator | str, logs: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Mutant]:
    """Twins of ``mutator`` (:meth:`Mutator.twin`: its draws and inserted structure without the
    defect) on logs drawn from ``logs`` (default: :func:`logs_for` the mutator). Logs that miss
    the mutator's precondition are rejected."""
    m = get(mutator) if isinstance(mutator, str) else mutator
    if logs is None:
        logs = logs_for(m)

    @st.composite
    def draw_twin(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Mutant:
        return m.twin(draw(logs), DrawAdapter(draw))

    return draw_twin()


_EXAMPLES = 3
"""Hypothesis' first example is always the simplest one; the seed decides the later ones,
so the last of a few examples is the seeded mutant."""


def apply_seeded(mutator: Edit, log: DraftSource, seed_value: int, *, compression: Compression | None = None,
                 twin: bool = False) -> Mutant:
    """Apply ``mutator`` (or any other edit) to one fixed ``log`` with choices drawn by Hypothesis seeded with
    ``seed_value``: the same seed (and Hypothesis version) gives the same mutant. Raises
    :class:`Inapplicable` with the reason when the log misses the precondition. With ``twin``, the
    mutator's twin (:meth:`Mutator.twin`) instead, from the same draws as the mutant of that seed."""
    if twin and not isinstance(mutator, Mutator):
        raise TypeError(f"{mutator.name} is not an incident mutator: it has no twin")
    make = mutator.twin_or_raise if isinstance(mutator, Mutator) and twin else mutator.apply_or_raise
    draft = as_draft(log)
    found: list[Mutant] = []
    reasons: list[str] = []

    @seed(seed_value)
    @settings(max_examples=_EXAMPLES, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def once(data: Any) -> None:
        try:
            found.append(make(draft, data, compression=compression))
        except Inapplicable as why:
            reasons.append(str(why))
            reject()

    try:
        once()
    except Unsatisfiable:
        pass
    if not found:
        raise Inapplicable(reasons[-1] if reasons else f"{mutator.name} does not apply to this log")
    return found[-1]
