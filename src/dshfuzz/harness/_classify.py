"""Compare a checker's verdict with the truth, and name each disagreement.

The truth is per layer, never one verdict: the official layers disagree with each
other by design (a log can pass ``fold`` and fail ``load``), so a miss is judged
against each refusing layer separately, through the rules the registry maps to
that layer (``Rule.refused_by``).

Kinds:

A checker is judged in its own vocabulary: the rule ids it declares it implements
(``vocabulary``; ``None`` means every id), and for the official layers it declares it
answers for (``layers``; ``None`` means every layer). It is never blamed for what it did
not claim.

Kinds, checker defects first:

* ``false-alarm`` — an error-level finding where every official layer and the
  reference oracle accept (rules the mutator declared are not counted: the log
  is broken on purpose, even where no official layer looks);
* ``miss`` — either an official layer that reads the log's format refuses it and the
  checker reports no error at all, or a declared rule the mutator expects (layer
  ``expected``) did not fire and the checker reported no error: it said the log is fine.
  A warning tells the user the log is usable, so it never answers a refusal by the layers
  that decide that (``load``, ``released``: the harness opens the log and migrates it); a
  warning of a rule the registry maps to a refusing raw reader (a legacy shape the loader
  upgrades on read, which ``seed`` reads raw and refuses: E6) answers that reader's refusal,
  unless its ``refusedBy`` leaves the reader out: the checker told its user exactly that;
* ``rule-id`` — a declared rule the mutator expects did not fire, but the checker refused
  the log under other ids (layer ``expected``): the log was caught, under the wrong name;
* ``miss-model-only`` — as ``miss``, where only the reference oracle speaks for the
  log (no official layer reads its format, or none was consulted): reported apart;
* ``wrong-layer`` — the checker says which official layers refuse the log (its findings'
  ``refusedBy``) and the claim is wrong for a layer the campaign consulted: a finding
  names a layer that accepts the log (layer ``L:accepts``), or a layer refuses a log the
  checker refused for it while no finding names it (``L:refuses``); a checker that says
  nothing of layers is never judged for it, and a refusal it missed is a miss, not this;
* ``silent-loss`` — the official loader accepts the log and recovers more events from the
  file than the checker says it judged (its report's ``events``), and the checker reported
  nothing at all (layer ``load``): events it never read went unjudged, and it did not say so.
  Never judged where the checker gives no count, reports any finding (a warning included),
  failed or declined, or does not answer for ``load``; events are counted as the loader
  counts them (a packed chunk row as the events it holds, the loader's own crash closers
  not at all);
* ``wrong-place`` — the checker reports the reference's rule, both at integer seqs,
  at none of the reference's seqs, on a log whose seqs name events unambiguously
  (a finding without a location is never in the wrong place);
* ``crash`` / ``timeout`` / ``unparsable-output`` — the checker gave no report;
  a crash is keyed by a fingerprint of the failure (:func:`crash_fingerprint`);
* ``metamorphic`` — a verdict changed under a transform that must not change it (the
  judge drops it where an official layer refuses the transformed log: the transform broke
  the log, which is then judged as a log of its own);

notes, never a defect of the checker:

* ``not-implemented`` — expected rules outside the checker's vocabulary, or a layer's
  refusal the reference checker reads as rules the checker does not claim (a checker of H1
  and R1 never said it checks seq gaps);
* ``attribution`` — a layer refuses and the checker refused the log (an error) under ids
  the registry does not map to that layer: the log was refused, under another name;
* ``out-of-scope`` — a layer the checker does not answer for refuses the log: whatever the
  checker said, that refusal is not its to make;
* ``not-assessable`` — the checker declined to judge the log (exit 3, or
  ``"assessable": false``): no verdict, so nothing to compare;
* ``official-disagreement`` — official layers disagree among themselves; recorded
  for the record (seed 002);

and ``oracle-crash`` — the reference oracle raised: a defect of dshfuzz itself,
hunted and minimised like a checker defect so that it gets fixed.

A signature (the deduplication key, one finding per root cause) is the kind, the
layer, the rule-set difference (or the crash fingerprint) and the format version;
never the mutator, which is only one of the ways a campaign reached the cause.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from dshfuzz.contracts.layers import OfficialLayer as L

from ._judges import CheckerVerdict

__all__ = ["Disagreement", "DisagreementKind", "Truth", "classify", "crash_fingerprint", "rules_refused_by"]

DisagreementKind = Literal[
    "false-alarm",
    "miss",
    "miss-model-only",
    "rule-id",
    "wrong-place",
    "wrong-layer",
    "silent-loss",
    "crash",
    "timeout",
    "unparsable-output",
    "metamorphic",
    "official-disagreement",
    "oracle-crash",
    "not-implemented",
    "attribution",
    "not-assessable",
    "out-of-scope",
]

CHECKER_DEFECTS: frozenset[str] = frozenset(
    {"false-alarm", "miss", "miss-model-only", "rule-id", "wrong-place", "wrong-layer", "silent-loss", "crash",
     "timeout", "unparsable-output", "metamorphic"}
)
LIMIT_RULES: frozenset[str] = frozenset({"L1", "L2", "L3", "L4"})
"""dshfuzz's own resource limits: expected of a checker only when it declares them."""

_LAYER_ALIASES = {str(L.LOAD_APP): str(L.LOAD), "loadDirect": str(L.LOAD)}


@dataclass(frozen=True, slots=True)
class Truth:
    """What the judges other than the checker said about one log.

    ``refusing`` are the official layers (registry names: ``loadApp`` folds into
    ``load``) that refused it; ``accepted`` the ones that accepted; ``oracle_refusing``
    the official layer each failing reference model stands for; ``expected`` the
    rules the mutator declared; ``format_version`` the log's header version, part of
    every signature; ``locations_reliable`` whether the log's seqs name its events
    unambiguously (unique non-negative integers), without which no place is wrong.
    """

    refusing: frozenset[str]
    accepted: frozenset[str]
    oracle_refusing: frozenset[str] = frozenset()
    expected: frozenset[str] = frozenset()
    mutator: str | None = None
    oracle_consulted: bool = True
    format_version: int | None = 0
    locations_reliable: bool = True
    reasons: Mapping[str, str] = field(default_factory=dict)
    """Each refusing official layer's message: what a miss of it is keyed by."""
    header_record: bool = True
    """Whether the log's header line is a JSON object: the bridge hands the seed and invariants
    layers no header otherwise, so their verdict is not on the log's header."""
    loaded_events: int | None = None
    """How many events the official loader recovered from the file where it accepted the log
    (its stored events: packed chunk rows expanded, its crash closers left out); ``None`` where
    it was not consulted or refused the log. What a checker's own count is held to (``silent-loss``)."""

    @property
    def official_consulted(self) -> bool:
        return bool(self.refusing or self.accepted)

    @property
    def all_accept(self) -> bool:
        return not self.refusing and not self.oracle_refusing


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One disagreement. ``rules`` is the rule-set difference, or for a crash the
    one-element fingerprint of the failure; ``mutator`` is how the log was made (it is
    reported, but not part of the signature)."""

    kind: DisagreementKind
    layer: str | None
    rules: tuple[str, ...]
    mutator: str | None
    detail: str
    format_version: int | None = 0

    @property
    def signature(self) -> str:
        """Deduplication key, one per root cause: kind, layer, rule-set difference (or crash
        fingerprint) and format version."""
        return f"{self.cause}|v{'?' if self.format_version is None else self.format_version}"

    @property
    def cause(self) -> str:
        """The signature without the format version: what a corpus replay compares."""
        return f"{self.kind}|{self.layer or '-'}|{','.join(self.rules) or '-'}"

    @property
    def is_checker_defect(self) -> bool:
        return self.kind in CHECKER_DEFECTS

    @property
    def is_reportable(self) -> bool:
        """Worth hunting and minimising: a checker defect, or a crash of our own oracle."""
        return self.kind in CHECKER_DEFECTS or self.kind == "oracle-crash"


def signature_cause(signature: str) -> str:
    """The cause part of a signature, of this format or the earlier one that ended in the
    mutator: kind, layer and rules (a crash's kind alone, as earlier crashes had no
    fingerprint)."""
    kind, _, rest = signature.partition("|")
    if kind in _FAILURES:
        return kind
    layer, _, rest = rest.partition("|")
    rules = rest.partition("|")[0]
    return f"{kind}|{layer}|{rules}"


_FAILURES = frozenset({"crash", "timeout", "unparsable-output"})
_TRACE_FRAME = re.compile(r'File "[^"]*", line \d+, in (\S+)|^\s*at (?:async )?([\w$.<>\[\] ]+?) [(\[]|^\s*at ([\w$.<>]+)$', re.M)
_EXCEPTION = re.compile(
    r"^(?:Uncaught )?((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt|Warning|Fault))\b", re.M
)
_SIGNAL = re.compile(r"killed by signal (\d+)")
_EXIT = re.compile(r"^exit (-?\d+)")
_NOISE = re.compile(r"0x[0-9a-f]+|[0-9a-f]{8}-[0-9a-f-]{27}|\d+", re.I)
_VALUE = re.compile(r"[\w.+-]*\d[\w.+-]*")
"""A token holding a digit is a value (a seq, a count, a call id such as ``call_2b14906f-1285``,
a number such as ``-1e+21``), never the name of a check: messages are keyed without them."""
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/'\"():,]+){2,}[\\/]?")
_HARNESS_LINE = re.compile(r"^(?:exit -?\d+|closed its output|output: |no answer within )")
"""Lines of a failure's detail that dshfuzz wrote, not the checker: the exit status, what
it printed on stdout instead of a report."""


def crash_fingerprint(detail: str) -> str:
    """A short key of a checker's failure, the same for one cause however it was reached, and
    different for two causes:

    * the signal that killed it; else
    * the exception type and the innermost (up to three) frames' function names of the last
      traceback in ``detail`` (Python or Node); else
    * the first line the checker wrote about the failure (a ``serve:`` reply's ``error``, or
      its stderr), normalised: paths, double-quoted values, numbers, seqs and ids dropped (a
      JavaScript engine's single-quoted property name stays, as it names the check); else
    * its exit status alone.

    A checker whose failures say nothing has one cause per exit status: two silent crashes
    of one status cannot be told apart, and are one finding."""
    signal_match = _SIGNAL.search(detail)
    if signal_match:
        return f"signal-{signal_match.group(1)}"
    tail = detail[detail.rfind("Traceback"):] if "Traceback" in detail else detail
    exceptions = _EXCEPTION.findall(tail)
    frames = [next(g for g in m.groups() if g) for m in _TRACE_FRAME.finditer(tail)]
    if not frames:  # a message alone: its words tell two causes apart, not its exception type
        return _message_fingerprint(detail)
    node_style = not tail.lstrip().startswith("Traceback")
    inner = frames[:3] if node_style else frames[-3:][::-1]
    name = exceptions[-1].rpartition(".")[2] if exceptions else "no-traceback"
    key = "@".join([name, *(f.rpartition(".")[2].rpartition("/")[2] for f in inner)])
    return _NOISE.sub("N", key).replace("|", "/").replace(",", ";").replace(" ", "")[:160]


def _message_fingerprint(detail: str) -> str:
    """A failure without a traceback: its first line of the checker's own words, normalised
    (see :func:`crash_fingerprint`), or ``exit-N`` / ``no-traceback`` when it said nothing."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    said = [line for line in lines if not _HARNESS_LINE.match(line)]
    if not said:
        status = _EXIT.match(lines[0]) if lines else None
        return f"exit-{status.group(1)}" if status else "no-traceback"
    text = _QUOTED.sub("Q", _PATH.sub("P", said[0]))
    text = re.sub(r"\s+", " ", _VALUE.sub("N", text)).strip()
    return "said:" + text.replace("|", "/").replace(",", ";")[:150]


_QUOTED = re.compile(r'\\?"[^"\\]*(?:\\.[^"\\]*)*\\?"')
_REFUSER = re.compile(r"^@[\w./-]+ refuses this format v\d+ \w+: ")


def refusal_fingerprint(message: str) -> str:
    """A short key of an official layer's refusal, the same for one check however it was
    reached: the message's first line without the package's preamble, with the values it
    quotes (``"…"``, JSON-quoted data), numbers, seqs and ids dropped; a JavaScript
    engine's single-quoted property name stays, as it names the check. A checker silent
    on logs one layer refuses for different reasons (two checks it lacks) has one miss per
    check, not one for the layer."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    text = _QUOTED.sub("Q", _REFUSER.sub("", first))
    text = re.sub(r"\s+", " ", _VALUE.sub("N", text))
    return text.replace("|", "/").replace(",", ";")[:160] or "no-message"


def official_verdict_key(truth: Truth) -> frozenset[tuple[str, str]]:
    """What the official layers said of a log, as a witness must keep it: each refusing layer
    with its refusal's fingerprint (:func:`refusal_fingerprint`). A minimised witness of a
    mutator's incident that changed it is a different log, refused (or not) for other reasons."""
    return frozenset((layer, refusal_fingerprint(truth.reasons.get(layer, ""))) for layer in truth.refusing)


def official_layer_name(layer: str) -> str:
    return _LAYER_ALIASES.get(layer, layer)


@cache
def rules_refused_by(layer: str) -> frozenset[str]:
    """The registry's rule ids whose ``refused_by`` names ``layer``."""
    from dshfuzz.checker import RULES

    return frozenset(str(rid) for rid, rule in RULES.items() if layer in {str(x) for x in rule.refused_by})


EXPLAINED_BY = {str(L.WIRE): str(L.SEED)}
"""A refusal of the key layer is explained by a finding the value layer refuses: the
official request serializer builds its Session with ``Session.create`` (seed) first."""

MODELLED_LAYERS = frozenset(map(str, (L.FOLD, L.INBOX, L.PROVIDER)))
"""The layers whose reference model is complete, so that its acceptance alone clears a
finding. The other models judge part of their layer (enclosure without the seed
checks the companion runs behind, the meter without its projection schemas, the
released relationships without the payload shapes); bytes and framing are the
official loader's alone."""


@cache
def rule_is_modelled(rule: str) -> bool:
    """Whether the reference oracle alone can say a log breaking ``rule`` is clean:
    every layer that refuses it is modelled (a rule refused by ``load`` is not)."""
    from dshfuzz.checker import RULES, RuleId

    try:
        refused_by = {str(x) for x in RULES[RuleId(rule)].refused_by}
    except ValueError:
        return False
    return bool(refused_by) and refused_by <= MODELLED_LAYERS


def classify(
    verdict: CheckerVerdict,
    truth: Truth,
    *,
    reference: CheckerVerdict | None = None,
    vocabulary: frozenset[str] | None = None,
    layers: frozenset[str] | None = None,
) -> list[Disagreement]:
    """Every disagreement between ``verdict`` and ``truth`` (and ``reference``, when given).

    ``reference`` is a trusted checker's verdict on the same log (the built-in one
    when fuzzing an external checker); it is what ``wrong-place`` compares seqs with.
    ``vocabulary`` is the rule ids the checker declares (``None``: every id); ``layers``
    the official layers it answers for (``None``: every layer; ``loadApp`` is ``load``).
    """
    mutator, version = truth.mutator, truth.format_version

    def found(kind: DisagreementKind, layer: str | None, rules: Iterable[str], detail: str) -> Disagreement:
        return Disagreement(kind, layer, tuple(rules), mutator, detail, version)

    if verdict.failure is not None:
        rules = (crash_fingerprint(verdict.detail),) if verdict.failure == "crash" else ()
        return [found(verdict.failure, None, rules, verdict.detail[:2000])]
    if not getattr(verdict, "assessable", True):
        return [found("not-assessable", None, (), "the checker declined to judge this log")]
    out: list[Disagreement] = []
    reported = frozenset(f.rule for f in verdict.findings)
    # a faithful cascade is never a false alarm; an error only a warning explains still is
    unexplained = verdict.standalone_error_rules - truth.expected
    if not truth.official_consulted:
        # no judge said "clean" for the other rules: the reference oracle alone speaks for its models
        modelled = truth.oracle_consulted
        unexplained = frozenset(r for r in unexplained if modelled and rule_is_modelled(r))
    if unexplained and truth.all_accept:
        # a layer no judge read this log for (the provider, on a format only the official layers read) accepts nothing
        unexplained = frozenset(r for r in unexplained if _judged_clean(r, truth, reference or verdict))
    if unexplained and truth.all_accept:
        out.append(found("false-alarm", None, sorted(unexplained), "every official layer and the oracle accept"))
    consulted = truth.refusing | truth.accepted
    model_only = truth.oracle_refusing - consulted  # an official layer that reads the log speaks for it
    for layer in sorted(truth.refusing | model_only):
        if layers is not None and layer not in layers:
            reason = truth.reasons.get(layer, "")
            out.append(
                found("out-of-scope", layer, (refusal_fingerprint(reason),) if reason else (),
                      f"{layer} refuses{f' ({reason[:300]})' if reason else ''}; the checker does not answer for {layer}")
            )
            continue
        mapped = rules_refused_by(layer) | rules_refused_by(EXPLAINED_BY.get(layer, layer))
        if verdict.error_rules & mapped:
            continue
        if layer not in _USABILITY_LAYERS and _warned_of(verdict, layer, mapped):
            continue  # usable, and the checker named this raw reader's refusal (see ``miss`` above)
        by = "official layer" if layer in truth.refusing else "reference oracle (no official layer reads this log)"
        if verdict.error_rules:
            out.append(
                found("attribution", layer, sorted(verdict.error_rules),
                      f"{by} {layer} refuses; the checker refused under {', '.join(sorted(verdict.error_rules))}, "
                      "none of which the registry maps to it")
            )
        elif unclaimed := _unclaimed_cause(reference, mapped, vocabulary):
            out.append(
                found("not-implemented", layer, sorted(unclaimed),
                      f"{by} {layer} refuses for {', '.join(sorted(unclaimed))} (the reference checker's reading), "
                      "none of which the checker claims")
            )
        else:
            kind: DisagreementKind = "miss" if layer in truth.refusing else "miss-model-only"
            reason = truth.reasons.get(layer, "") if layer in truth.refusing else ""
            said = f" ({reason[:300]})" if reason else ""
            out.append(
                found(kind, layer, (refusal_fingerprint(reason),) if reason else (),
                      f"{by} {layer} refuses{said}; the checker reported no error")
            )
    out.extend(_wrong_layers(verdict, truth, layers, found))
    missing = truth.expected - reported
    claimed = claimed_rules(missing, vocabulary)
    if claimed and verdict.error_rules:
        out.append(found("rule-id", "expected", sorted(claimed),
                         f"the mutator's declared rules did not fire; the checker refused the log under "
                         f"{', '.join(sorted(verdict.error_rules))}"))
    elif claimed:
        out.append(found("miss", "expected", sorted(claimed),
                         "the mutator's declared rules did not fire, and the checker reported no error"))
    if missing - claimed:
        out.append(
            found("not-implemented", "expected", sorted(missing - claimed),
                  "expected by the mutator, outside the checker's declared rules")
        )
    if (lost := _silent_loss(verdict, truth, layers)) is not None:
        out.append(found("silent-loss", str(L.LOAD), (), lost))
    if reference is not None and reference.failure is None and truth.locations_reliable:
        for rule in sorted(reported & frozenset(f.rule for f in reference.findings)):
            theirs, ours = _placed(verdict.seqs_of(rule)), _placed(reference.seqs_of(rule))
            if theirs and ours and theirs.isdisjoint(ours):
                out.append(found("wrong-place", None, (rule,), f"reported at seq {_seqs(theirs)}, expected {_seqs(ours)}"))
    return out


_USABILITY_LAYERS = frozenset(map(str, (L.LOAD, L.LOAD_APP, L.RELEASED)))
"""The layers whose refusal makes a log unusable to the harness: only an error answers them."""


def _warned_of(verdict: CheckerVerdict, layer: str, mapped: frozenset[str]) -> bool:
    """Whether ``verdict`` warns of a rule the registry maps to ``layer``, without saying that
    ``layer`` accepts the log (a ``refusedBy`` that leaves it out)."""
    return any(f.severity == "warning" and f.rule in mapped and (f.refused_by is None or layer in f.refused_by)
               for f in verdict.findings)


def _silent_loss(verdict: CheckerVerdict, truth: Truth, layers: frozenset[str] | None) -> str | None:
    """The detail of a silent loss of events (see the module docstring), or ``None`` when there is
    none or it cannot be told: the checker gave no count, said anything at all, or does not answer
    for ``load``; the loader was not consulted, or refused the log (its count is then no measure)."""
    judged, loaded = verdict.events, truth.loaded_events
    if judged is None or loaded is None or verdict.findings or loaded <= judged:
        return None
    if layers is not None and str(L.LOAD) not in layers:
        return None  # a checker that reads the file as another layer does may honestly see fewer events
    if str(L.LOAD) not in truth.accepted:
        return None
    return (f"the official loader recovers {loaded} event{'s' if loaded != 1 else ''} from the file; the checker "
            f"says it judged {judged} and reported nothing")


def _judged_clean(rule: str, truth: Truth, reading: CheckerVerdict) -> bool:
    """Whether a judge consulted on the log speaks for a layer that would refuse ``rule`` there:
    one of the layers the built-in checker's finding of ``rule`` on this log names (``reading``:
    the reference's verdict, or the checker's own when it is the built-in one), else the
    registry's, accepted by a consulted official layer or by a complete reference model the
    oracle ran. A rule no layer enforces (a catalog rule) is spoken for by the log's construction."""
    instances = [f for f in reading.checked if str(f.rule) == rule]
    layers = (frozenset(str(x) for f in instances for x in f.refused_by) if instances
              else frozenset(str(x) for x in _registry_layers(rule)))
    if not layers:
        return True
    return bool(layers & truth.accepted) or (truth.oracle_consulted and bool(layers & MODELLED_LAYERS))


def _registry_layers(rule: str) -> tuple[object, ...]:
    from dshfuzz.checker import RULES, RuleId

    try:
        return tuple(RULES[RuleId(rule)].refused_by)
    except ValueError:
        return ()


def _unclaimed_cause(
    reference: CheckerVerdict | None, mapped: frozenset[str], vocabulary: frozenset[str] | None
) -> frozenset[str]:
    """The rules the reference checker reads a refusal as (its errors the registry maps to the
    refusing layer; where it maps none, every error it reports on the log), when the checker
    claims none of them: a refusal the checker never said it checks is not implemented, not
    missed. Empty when the reference does not say (it was not asked, or reports no error: it
    misses the refusal too), or the checker claims a rule it reads it as."""
    if reference is None or reference.failure is not None or vocabulary is None:
        return frozenset()
    read_as = reference.error_rules & mapped or reference.error_rules
    return frozenset() if read_as & vocabulary else read_as


def claimed_rules(rules: Iterable[str], vocabulary: frozenset[str] | None) -> frozenset[str]:
    """The rules of ``rules`` a checker answers for: those of its ``vocabulary``; with none
    declared, every id but dshfuzz's own resource limits (``LIMIT_RULES``)."""
    if vocabulary is None:
        return frozenset(r for r in rules if r not in LIMIT_RULES)
    return frozenset(r for r in rules if r in vocabulary)


def _wrong_layers(
    verdict: CheckerVerdict,
    truth: Truth,
    layers: frozenset[str] | None,
    found: Callable[[DisagreementKind, str | None, Iterable[str], str], Disagreement],
) -> list[Disagreement]:
    """The checker's claims about which layers refuse the log (its findings' ``refusedBy``),
    held to the official layers consulted within its scope: a named layer that accepts, and
    a refusing layer no finding names although the checker refused the log for it (an error
    the registry maps to it; without one the refusal is a miss, reported as such)."""
    claims = [f for f in verdict.findings if f.refused_by is not None]
    if not claims:
        return []
    judged = (truth.refusing | truth.accepted) if layers is None else (truth.refusing | truth.accepted) & layers
    if not truth.header_record:  # the bridge ran seed and invariants without the log's (non-object) header
        judged -= _HEADERLESS_LAYERS
    named: dict[str, set[str]] = {}  # every claim: what a refusing layer must be named by
    asserted: dict[str, set[str]] = {}  # the claims an accepting layer refutes
    for i, f in enumerate(claims):
        for layer in f.refused_by or ():
            named.setdefault(layer, set()).add(f.rule)
            if f.rule in LIMIT_RULES:
                continue  # a limit's layers are those that would run out of memory on a log that big
            if f.caused_by is not None and _error_root(verdict, f.caused_by):
                continue  # a cascade's layers are read off the checker's state past its root's failure,
                # which a layer reading past that root need not share: the root's claim is judged
            asserted.setdefault(layer, set()).add(f.rule)
    out = []
    for layer in sorted(judged & truth.accepted & asserted.keys()):
        rules = sorted(asserted[layer])
        out.append(found("wrong-layer", f"{layer}:accepts", rules,
                         f"{', '.join(rules)} {'says' if len(rules) == 1 else 'say'} {layer} refuses the log; {layer} accepts it"))
    for layer in sorted((judged & truth.refusing) - named.keys()):
        caught = sorted(verdict.error_rules & (rules_refused_by(layer) | rules_refused_by(EXPLAINED_BY.get(layer, layer))))
        if caught:
            said = f" ({truth.reasons[layer][:200]})" if truth.reasons.get(layer) else ""
            out.append(found("wrong-layer", f"{layer}:refuses", caught,
                             f"{layer} refuses the log{said}; the checker refused it ({', '.join(caught)}) but no "
                             f"finding names {layer}"))
    return out


_HEADERLESS_LAYERS = frozenset(map(str, (L.SEED, L.INVARIANTS)))


def _error_root(verdict: CheckerVerdict, index: int) -> bool:
    """Whether the finding at ``index`` of ``verdict`` is an error (a root a cascade follows)."""
    return 0 <= index < len(verdict.findings) and verdict.findings[index].severity == "error"


def _placed(seqs: frozenset[int | None]) -> frozenset[int]:
    """The findings' locations; a finding without one (the whole log) is never misplaced."""
    return frozenset(s for s in seqs if s is not None)


def official_disagreement(truth: Truth, mutator: str | None) -> Disagreement | None:
    """Official layers that split on one log, worth recording as seed 002 does."""
    if truth.refusing and truth.accepted:
        return Disagreement(
            "official-disagreement",
            "+".join(sorted(truth.refusing)),
            (),
            mutator,
            f"refused by {sorted(truth.refusing)}, accepted by {sorted(truth.accepted)}",
        )
    return None


def metamorphic_disagreement(
    transform: str, before: CheckerVerdict, after: CheckerVerdict, *, ignore: Iterable[str] = ()
) -> Disagreement | None:
    """A verdict change under a verdict-preserving transform (``ignore``: framing-only rules)."""
    skip = frozenset(ignore)
    a, b = before.error_rules - skip, after.error_rules - skip
    if a == b:
        return None
    return Disagreement("metamorphic", transform, tuple(sorted(a ^ b)), None, f"{sorted(a)} became {sorted(b)}")


def _seqs(seqs: Iterable[int | None]) -> str:
    return ",".join("?" if s is None else str(s) for s in sorted(seqs, key=lambda s: -1 if s is None else s))


def truth_from(
    official: Mapping[str, bool],
    *,
    oracle_refusing: Iterable[str] = (),
    expected: Iterable[str] = (),
    mutator: str | None = None,
    oracle_consulted: bool = True,
    format_version: int | None = 0,
    locations_reliable: bool = True,
    reasons: Mapping[str, str] | None = None,
    loaded_events: int | None = None,
) -> Truth:
    """Build a :class:`Truth` from per-layer ok flags (bridge layer names accepted) and the
    refusing layers' messages (``reasons``; of two bridge names of one layer, the first in
    name order that has one). ``loaded_events`` is kept only where ``load`` accepts."""
    refusing = frozenset(official_layer_name(k) for k, ok in official.items() if not ok)
    accepted = frozenset(official_layer_name(k) for k, ok in official.items() if ok) - refusing
    said: dict[str, str] = {}
    for name, message in sorted((reasons or {}).items()):
        if message and not official.get(name, True):
            said.setdefault(official_layer_name(name), message)
    return Truth(
        refusing, accepted, frozenset(oracle_refusing), frozenset(expected), mutator, oracle_consulted,
        format_version, locations_reliable, said,
        loaded_events=loaded_events if str(L.LOAD) in accepted else None,
    )
