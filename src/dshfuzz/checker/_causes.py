"""Root cause first: which finding of a report follows from which.

One defect often breaks several contracts, each faithful to some layer: a lost
frame leaves a seq gap (E2) that the fold refuses (S8) and that leaves a token
meter citation pointing at the wrong event (T2). The checker keeps every finding,
and marks each consequence with ``caused_by``, the index of its root finding in
the report. Four relations decide, tried in this order:

* **one event** -- at one event (one line, or one seq where the line is unknown),
  a finding follows the finding of the rule earliest in :data:`CAUSAL_ORDER`: the
  reading stages come first (framing, lines, numbering, envelope, payload shape),
  then markers, the surface, turn structure, tool-call pairing and migration;
* **one call** -- among the tool-call pairing rules (:data:`PAIRING`), a finding
  follows the earlier-ordered pairing finding about one of the same call ids;
* **read after** -- a finding of a rule that reads across events
  (:data:`READS_ACROSS`) follows the nearest earlier finding that lost events,
  renumbered them or left an event unreadable as what it claims to be
  (:data:`BREAKS_LATER`); after an interleaving (S9) the file order is not the
  seq order anywhere, and a replace that hides the wrong range (P2, S4, an unknown
  marker P1) changes what the provider is sent before it too, so those reach back;
* **summaries** -- S8 (the fold of the whole log) and C1 (the writers' traces)
  restate what other rules found (:data:`SUMMARISES`).

At one event a cause is always earlier in :data:`CAUSAL_ORDER` than its
consequence; read after, it sits earlier in the file. Where the relations still loop
(a breaker reaching back to a finding read after another breaker), the loop's
earliest finding in the file becomes a root, so every chain ends at a root;
``caused_by`` names that root. The relations are heuristics of reading order, not proofs: an independent
defect after a lost event is reported as a consequence, because the checker
cannot tell what the lost events would have said. The JSON report keeps every
finding either way. The tables here are rendered into ``docs/CONTRACTS.md``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from dshfuzz.contracts.rules import RULES, RuleId

from ._finding import Finding

__all__ = [
    "BREAKS_LATER", "CAUSAL_ORDER", "PAIRING", "REACH", "READS_ACROSS", "SUMMARISES", "attribute", "consequence_table",
]

_R = RuleId

CAUSAL_ORDER: tuple[RuleId, ...] = (
    # the file and its frames
    _R.H1, _R.H2, _R.Z4, _R.Z5, _R.Z2, _R.Z1, _R.L1, _R.L2, _R.L3, _R.L4,
    # lines and packed rows
    _R.R1, _R.R2, _R.R3,
    # numbering
    _R.E1, _R.E2, _R.S9,
    # the envelope and the payload's shape
    _R.E3, _R.E5, _R.E8, _R.E4, _R.E7, _R.E9, _R.E10, _R.P4, _R.E6,
    # a marker's own seq in its shadowed set is more specific than the surface rule it also breaks
    _R.P2,
    # the surface fold, then an unknown marker prefix (a replace that is not read as a marker)
    _R.S2, _R.S1, _R.S4, _R.S5, _R.S6, _R.S3, _R.S7, _R.P1,
    # turn and step structure
    _R.T4, _R.M1, _R.T5, _R.T3, _R.T1, _R.T2, _R.I1,
    # tool-call pairing
    _R.P3, _R.P5, _R.W1, _R.W2, _R.W3, _R.W5, _R.W4,
    # the released migration
    _R.G1, _R.G2, _R.G3, _R.G4, _R.G5,
    # summaries of the whole log
    _R.Z3, _R.S8, _R.C1,
)
"""Every rule, from the earliest reading stage to the latest: at one event the
earliest rule's finding is the root."""

PAIRING: frozenset[RuleId] = frozenset({_R.P3, _R.P5, _R.W1, _R.W2, _R.W3, _R.W5, _R.W4})
"""The rules that pair tool calls with their results (seed 002): one call id read
by several layers."""

READS_ACROSS: frozenset[RuleId] = frozenset({
    _R.E2, _R.S9, _R.S3, _R.S4, _R.S5, _R.S6, _R.S7, _R.P2,
    _R.T1, _R.T2, _R.T3, _R.I1, _R.G3, _R.G4, *PAIRING,
})
"""Rules that judge an event by others: they misread what follows a lost,
renumbered or unreadable event."""

BREAKS_LATER: dict[RuleId, str] = {
    _R.Z2: "its frame's events are lost",
    _R.Z4: "the header frame holds more or less than the header",
    _R.Z5: "the log is one frame",
    _R.L1: "the rest of the plaintext is not read",
    _R.L2: "the line is not read",
    _R.L3: "the line is not read",
    _R.L4: "the rest of the log is not read",
    _R.R1: "the line's event is lost",
    _R.R2: "the row's run of events is lost",
    _R.R3: "the row's run of events is lost",
    _R.E1: "the event has no usable seq",
    _R.E2: "the events after it are numbered off by the gap or repeat",
    _R.S9: "file order is not seq order, before it as after it",
    _R.E3: "the event is not read as a known type",
    _R.E4: "a number in the event does not read back",
    _R.E6: "the message's blocks are not read",
    _R.S1: "the event is not on the surface the provider is sent",
    _R.S2: "the fold refuses the event: a later surface read misses it",
    _R.S3: "the fold refuses the event: a later surface read misses it",
    _R.S4: "the replace does not hide what it should, before it or after",
    _R.S5: "the fold refuses the replace: a later replace citing its range misses it",
    _R.S6: "the fold refuses the event: a later surface read misses it",
    _R.S7: "the fold refuses the rewrite: a later surface read misses it",
    _R.P1: "the replace is not read as a marker: what it should hide stays on the wire",
    _R.P2: "the marker hides a range that takes in itself, and what it hides before it leaves the wire",
    _R.T4: "the event belongs to no turn",
    _R.M1: "the marker is appended as a message",
}
"""Findings after which the rules of :data:`READS_ACROSS` misread the log, and why
(the surface's breakers only mislead the rules that read the surface: :data:`REACH`)."""

_SURFACE_READERS: frozenset[RuleId] = frozenset({_R.S3, _R.S4, _R.S5, _R.S6, _R.S7, _R.P2, *PAIRING})

REACH: dict[RuleId, frozenset[RuleId]] = {
    rule: _SURFACE_READERS if rule in {_R.S1, _R.S2, _R.S3, _R.S4, _R.S5, _R.S6, _R.S7, _R.P1, _R.P2}
    else READS_ACROSS
    for rule in BREAKS_LATER
}
"""A breaker -> the rules it misleads: a surface breaker misleads the surface's readers
(the fold's rules and the pairing rules, which read the wire the surface makes)."""

_REACHES_BACK: dict[RuleId, frozenset[RuleId]] = {
    _R.S9: READS_ACROSS, _R.P2: PAIRING, _R.S4: PAIRING, _R.P1: PAIRING,
}
"""Breakers whose damage reaches findings before them too, and the rules it reaches."""

SUMMARISES: dict[RuleId, frozenset[RuleId]] = {
    _R.S8: frozenset({_R.E1, _R.E2, _R.S9, _R.S1, _R.S2, _R.S3, _R.S4, _R.S5, _R.S6, _R.S7, _R.P2,
                      *BREAKS_LATER}),
    _R.C1: frozenset({_R.E1, _R.E2, _R.S9}),
}
"""A summary rule -> the rules whose findings it restates, wherever they are."""

_RANK: dict[RuleId, int] = {rule: i for i, rule in enumerate(CAUSAL_ORDER)}


def attribute(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` (in report order) with ``caused_by`` set on every consequence to
    the index of its root; roots keep ``caused_by`` ``None``. Linear in the findings
    but for the candidates one event, one call or one position offers."""
    n = len(findings)
    if n < 2:
        return list(findings)
    direct: list[int | None] = [None] * n
    by_event: dict[tuple[str, int], list[int]] = {}
    by_call: dict[str, list[int]] = {}
    breakers: list[int] = []
    summarised: dict[RuleId, list[int]] = {rule: [] for rule in SUMMARISES}
    for i, f in enumerate(findings):
        for key in _event_keys(f):
            by_event.setdefault(key, []).append(i)
        if f.rule in PAIRING:
            for call in _call_ids(f):
                by_call.setdefault(call, []).append(i)
        if f.rule in BREAKS_LATER:
            breakers.append(i)
        for summary, of in SUMMARISES.items():
            if f.rule in of:
                summarised[summary].append(i)
    for i, f in enumerate(findings):
        rank = _RANK[f.rule]
        if f.rule in SUMMARISES:
            direct[i] = _summarised(findings, summarised[f.rule], f)
            continue
        cause = _earliest(findings, _same_event(by_event, f, i), rank)
        if cause is None:
            cause = _earliest(findings, _same_call(by_call, f, i), rank)
        if cause is None and f.rule in READS_ACROSS:
            cause = _read_after(findings, breakers, f, i, rank)
        direct[i] = cause
    _cut_cycles(findings, direct)
    out = list(findings)
    for i in range(n):
        root = direct[i]
        if root is None:
            continue
        while (up := direct[root]) is not None:
            root = up
        out[i] = replace(findings[i], caused_by=root)
    return out


def _cut_cycles(findings: Sequence[Finding], direct: list[int | None]) -> None:
    """Make every chain of causes end: where one loops (a finding read after a breaker that
    an interleaving before it reaches back to, say), the loop's earliest finding in the
    file becomes a root."""
    done = [False] * len(direct)
    for start in range(len(direct)):
        path: list[int] = []
        on_path: set[int] = set()
        j: int | None = start
        while j is not None and not done[j] and j not in on_path:
            path.append(j)
            on_path.add(j)
            j = direct[j]
        if j is not None and j in on_path:
            loop = path[path.index(j):]
            direct[min(loop, key=lambda k: (_position(findings[k]), _RANK[findings[k].rule]))] = None
        for k in path:
            done[k] = True


def _event_keys(f: Finding) -> Iterator[tuple[str, int]]:
    """Where ``f`` sits: its line, or (without one) its seq; frame-only findings sit nowhere."""
    if f.line is not None:
        yield ("line", f.line)
    elif type(f.seq) is int:
        yield ("seq", f.seq)


def _same_event(by_event: dict[tuple[str, int], list[int]], f: Finding, i: int) -> Iterator[int]:
    for key in _event_keys(f):
        for j in by_event.get(key, ()):
            if j != i:
                yield j


def _call_ids(f: Finding) -> Iterator[str]:
    ctx = f.context
    one = ctx.get("callId")
    if type(one) is str:
        yield one
    many = ctx.get("callIds")
    if type(many) is list:
        yield from (c for c in many if type(c) is str)


def _same_call(by_call: dict[str, list[int]], f: Finding, i: int) -> Iterator[int]:
    if f.rule not in PAIRING:
        return
    for call in _call_ids(f):
        for j in by_call.get(call, ()):
            if j != i:
                yield j


def _earliest(findings: Sequence[Finding], candidates: Iterator[int], rank: int) -> int | None:
    """The candidate of the earliest rule, if that rule is earlier than ``rank``."""
    best, best_rank = None, rank
    for j in candidates:
        r = _RANK[findings[j].rule]
        if r < best_rank:
            best, best_rank = j, r
    return best


def _after(root: Finding, f: Finding) -> bool:
    """Whether ``f`` sits at or after ``root`` in the file (by line, else by frame)."""
    if root.line is not None and f.line is not None:
        return f.line >= root.line
    if root.frame is not None and f.frame is not None:
        return f.frame >= root.frame
    return False


def _position(f: Finding) -> tuple[int, int]:
    return (f.line or 0, f.frame or 0)


def _strictly_before(root: Finding, f: Finding) -> bool:
    """Whether ``root`` sits before ``f``'s event in the file (by line, else by frame)."""
    if root.line is not None and f.line is not None:
        return root.line < f.line
    if root.frame is not None and f.frame is not None:
        return root.frame < f.frame
    return False


def _read_after(findings: Sequence[Finding], breakers: list[int], f: Finding, i: int, rank: int) -> int | None:
    """The nearest breaker before ``f`` (of any rule: a refused replace misleads a later
    replace of the same rule too), or at ``f``'s own place of an earlier rule; failing
    that, the first breaker of an earlier rule whose damage reaches back to ``f``'s rule
    (S9: every rule that reads across events; P1, P2, S4: the pairing rules, which read
    the surface a replace hides)."""
    before: int | None = None
    back: int | None = None
    for j in breakers:
        root = findings[j]
        if j == i or f.rule not in REACH[root.rule]:
            continue
        earlier_rule = _RANK[root.rule] < rank
        if _strictly_before(root, f) or (earlier_rule and _after(root, f)):
            if before is None or _position(root) > _position(findings[before]):
                before = j
        elif back is None and earlier_rule and f.rule in _REACHES_BACK.get(root.rule, ()):
            back = j
    return before if before is not None else back


def _summarised(findings: Sequence[Finding], candidates: list[int], f: Finding) -> int | None:
    """The restated finding: the one the summary names at its own event, else the nearest
    at or before it, else the first."""
    named = f.context.get("rule")
    keys = set(_event_keys(f))
    nearest: int | None = None
    for j in candidates:
        root = findings[j]
        if named is not None and str(root.rule) == named and not keys.isdisjoint(_event_keys(root)):
            return j
        if _after(root, f) and (nearest is None or _position(root) > _position(findings[nearest])):
            nearest = j
    return nearest if nearest is not None else (candidates[0] if candidates else None)


def consequence_table() -> list[tuple[RuleId, str]]:
    """Per rule that can be a consequence, what it can follow, in words (for ``docs/CONTRACTS.md``)."""
    rows: list[tuple[RuleId, str]] = []
    for rule in RULES:
        parts: list[str] = []
        rank = _RANK[rule]
        earlier = list(CAUSAL_ORDER[:rank])
        if earlier:
            parts.append("at its own event: any finding of " + _span(earlier))
        if rule in PAIRING:
            same = [r for r in CAUSAL_ORDER[:rank] if r in PAIRING]
            if same:
                parts.append("about the same call id: " + ", ".join(map(str, same)))
        if rule in READS_ACROSS:
            breakers = [r for r in CAUSAL_ORDER if r in BREAKS_LATER and rule in REACH[r]]
            if breakers:
                parts.append("read after a finding of " + ", ".join(
                    f"{r} (anywhere)" if rule in _REACHES_BACK.get(r, ()) else str(r) for r in breakers))
        if rule in SUMMARISES:
            parts.append("anywhere: " + ", ".join(str(r) for r in CAUSAL_ORDER if r in SUMMARISES[rule]))
        if parts:
            rows.append((rule, "; ".join(parts)))
    return rows


def _span(rules: list[RuleId]) -> str:
    return f"{rules[0]}" if len(rules) == 1 else f"{rules[0]} to {rules[-1]} in the causal order"
