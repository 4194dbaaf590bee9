"""The contract-rule registry: the single source of truth for every checker rule.

Every rule of the catalog (``../shared/seeds/000-contracts-catalog.txt``, 46 ids,
kept in catalog order) plus the rules added from seeds 001 and 002 (``W3`` ``W4``
``P5`` ``W5``), the reader's resource limits of issue 7 (``L1`` ``L2`` ``L3``
``L4``, layer ``limits``), and the released relations the fuzzing campaigns showed no rule
modelled (``G4``). ``docs/CONTRACTS.md`` and ``dshfuzz contracts`` are generated
from :data:`RULES`; nothing else may restate a rule's metadata.

``refused_by`` names the official moment(s) that say no to a log breaking the rule
(the oracle layers of the pinned rc.8 set, plus the provider for wire-level defects
that no harness layer catches). An empty tuple means no official layer refuses such
a log: the rule is advisory. ``divergence`` records, in one sentence, where the
official code is stricter or looser than the catalog text; for format v0 the
official behaviour is what the rule implements.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from .layers import OfficialLayer

__all__ = [
    "ALL_FORMATS",
    "RELEASED_CHECKS",
    "RULES",
    "OfficialLayer",
    "Origin",
    "Rule",
    "RuleId",
    "RuleLayer",
    "Severity",
]


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


class RuleLayer(enum.StrEnum):
    """The catalog's layer column: which part of the system a rule protects.

    ``limits`` is dshfuzz's own: a log beyond the reader's resource limits
    (:class:`dshfuzz.model.Limits`) breaks no DSH contract, but the checker
    read only the part before the limit and can vouch for nothing after it.
    """

    PERSISTENCE = "persistence"
    ENGINE = "engine"
    PLUGIN = "plugin"
    CONCURRENCY = "concurrency"
    FRAMING = "framing"
    MIGRATION = "migration"
    LIMITS = "limits"


class RuleId(enum.StrEnum):
    H1 = "H1"
    H2 = "H2"
    R1 = "R1"
    R2 = "R2"
    R3 = "R3"
    E1 = "E1"
    E2 = "E2"
    S9 = "S9"
    I1 = "I1"
    E3 = "E3"
    E4 = "E4"
    E5 = "E5"
    E6 = "E6"
    S1 = "S1"
    S2 = "S2"
    S3 = "S3"
    S4 = "S4"
    S5 = "S5"
    S6 = "S6"
    S7 = "S7"
    S8 = "S8"
    T1 = "T1"
    T2 = "T2"
    T3 = "T3"
    T4 = "T4"
    T5 = "T5"
    E7 = "E7"
    E8 = "E8"
    E9 = "E9"
    E10 = "E10"
    Z3 = "Z3"
    P3 = "P3"
    P4 = "P4"
    M1 = "M1"
    P1 = "P1"
    P2 = "P2"
    C1 = "C1"
    Z1 = "Z1"
    Z2 = "Z2"
    Z4 = "Z4"
    Z5 = "Z5"
    W1 = "W1"
    W2 = "W2"
    G1 = "G1"
    G2 = "G2"
    G3 = "G3"
    W3 = "W3"
    W4 = "W4"
    P5 = "P5"
    W5 = "W5"
    L1 = "L1"
    L2 = "L2"
    L3 = "L3"
    L4 = "L4"
    G4 = "G4"
    G5 = "G5"


Origin = Literal["catalog", "seed-001", "seed-002", "issue-7", "fuzzing"]

ALL_FORMATS: frozenset[int] = frozenset({0, 1, 2, 3})
"""The format versions the catalog knows (0-2 legacy, 3 current)."""

_V0 = frozenset({0})
_V01 = frozenset({0, 1})
_V3 = frozenset({3})


@dataclass(frozen=True, slots=True)
class Rule:
    """One contract rule. ``formats`` are the header versions it applies to.

    ``unmutated`` says why no incident mutator exercises the rule, for the rare rule whose
    mutants cost too much to judge in every run; the kill matrix reports such a rule
    apart instead of as unkilled, and the reason is shown in the generated docs.
    """

    id: RuleId
    severity: Severity
    layer: RuleLayer
    title: str
    contract: str
    source: str
    formats: frozenset[int]
    refused_by: tuple[OfficialLayer, ...]
    divergence: str | None = None
    origin: Origin = "catalog"
    unmutated: str | None = None

    def applies_to(self, version: int | None) -> bool:
        """Whether the rule runs on a file of ``version`` (``None``: unknown version,
        where only the version-agnostic rules run)."""
        return self.formats == ALL_FORMATS if version is None else version in self.formats

    def to_json(self) -> dict[str, object]:
        return {
            "id": str(self.id),
            "severity": str(self.severity),
            "layer": str(self.layer),
            "title": self.title,
            "contract": self.contract,
            "source": self.source,
            "formats": sorted(self.formats),
            "refusedBy": [str(x) for x in self.refused_by],
            "divergence": self.divergence,
            "origin": self.origin,
            "unmutated": self.unmutated,
        }


_E, _W = Severity.ERROR, Severity.WARNING
_L = OfficialLayer
# the rc.8 path a log takes into a store: Session.create, the invariant companion, the load
_SEED_PATH = (_L.SEED, _L.INVARIANTS, _L.LOAD)
_SURFACE_PATH = (_L.FOLD, _L.SEED, _L.INVARIANTS, _L.LOAD)

_RULES: tuple[Rule, ...] = (
    Rule(
        RuleId.H1, _E, RuleLayer.PERSISTENCE,
        "First line is valid JSON with type=session",
        "The first line of a session log must JSON.parse to an object whose type is \"session\". "
        "A broken first line makes the whole session unreadable.",
        "@deepseek-ai/dsh-session lib/index.js:1109-1126 (validateSessionHeader); "
        "dsh-session-persistence-jsonl isHeaderLine",
        ALL_FORMATS, (_L.SEED, _L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.H2, _E, RuleLayer.PERSISTENCE,
        "Header version and required fields",
        "header.version must be a known format (0/1/2/3); id is a string; createdAt a non-negative "
        "safe integer; cwd, when present, an absolute path; origin only \"subagent\".",
        "@deepseek-ai/dsh-session lib/index.js:1110-1125; persistence-jsonl isHeaderLine/fromHeaderLine; "
        "dsh-session-format-v0-to-v1 released physical header",
        ALL_FORMATS, (_L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
        "For v0 the official readers are stricter than the catalog: delegationDepth is required (load), "
        "the retired keys sandboxMode/approvalPolicy are refused (load), parentSession/seedLength/agentPreset "
        "are typed (seed), and any key outside the released set is refused (released only).",
    ),
    Rule(
        RuleId.R1, _E, RuleLayer.PERSISTENCE,
        "Every line is valid JSON",
        "A non-empty line that does not JSON.parse is a corrupt line. Empty lines at frame boundaries "
        "are legal and skipped.",
        "seq gap scan; dsh-session-persistence-jsonl read path",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
        "The jsonl loader treats a corrupt line with no later turn/end as a torn tail and accepts the "
        "prefix, so only a corrupt line before a committed turn/end is refused by load.",
    ),
    Rule(
        RuleId.R2, _E, RuleLayer.PERSISTENCE,
        "Chunk rows have the exact envelope shape",
        "text-chunks / reasoning-chunks / tool-call-chunks rows must be exactly {type, seq0, time0, data} "
        "with data exactly {turn, step, index, dt, texts|args} (tool-call rows add id and optional name). "
        "A malformed row loses the whole run and fails the load.",
        "@deepseek-ai/dsh-session lib/index.js:922-971 (validateRow)",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.R3, _E, RuleLayer.PERSISTENCE,
        "Expanded chunk-row members keep safe seq/time",
        "After expansion every member seq and time stays a safe integer (seq0+len-1 and the running "
        "sum of dt gaps do not overflow).",
        "@deepseek-ai/dsh-session lib/index.js:964-969",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.E1, _E, RuleLayer.PERSISTENCE,
        "Every event carries a non-negative safe-integer seq",
        "The event envelope is {type, seq, time, data, ...surfaceMetadata}; seq must be a non-negative "
        "safe integer.",
        "@deepseek-ai/dsh-session lib/index.js:295-298 (isEventSeq), :1453-1459 (append envelope)",
        ALL_FORMATS, (_L.FOLD, _L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.E2, _E, RuleLayer.PERSISTENCE,
        "seq is strictly contiguous (single-writer assumption)",
        "seq must increase strictly by one from 0 (or the window's baseSeq). A gap or a step back breaks "
        "the single-writer assumption and the load throws.",
        "@deepseek-ai/dsh-session lib/index.js:398 (planSurfaceEvent \"not contiguous\")",
        ALL_FORMATS, (_L.FOLD, _L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
        "The jsonl loader treats a gap with no later turn/end as a torn tail and accepts the prefix, "
        "while the zstd loader refuses it as a torn record inside a complete frame.",
    ),
    Rule(
        RuleId.S9, _E, RuleLayer.PERSISTENCE,
        "Physical-order seq is monotonic (interleaved writers)",
        "In physical line order the expanded events' seq must strictly increase. A step back is direct "
        "evidence of several writers (or a stale cursor replay) interleaving; the load refuses it.",
        "2026-08-28 incident: physical order went large -> small -> larger; a single appendCore cannot write that",
        ALL_FORMATS, (_L.FOLD, _L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.I1, _E, RuleLayer.ENGINE,
        "Inbox seed-relative replay (orphan fork-boundary splice)",
        "Replaying agent/inbox/spliced from header.seedLength over the next-turn and next-step queues, "
        "start+removedCount must not exceed the queue length and no pending id may repeat.",
        "@deepseek-ai/dsh-agent lib/types/inbox.js:155-178 (apply/validate)",
        ALL_FORMATS, (_L.INBOX,),
    ),
    Rule(
        RuleId.E3, _E, RuleLayer.PERSISTENCE,
        "type is in the known vocabulary (or marked ignorable)",
        "A type outside the vocabulary is refused by the persistence read path unless the event carries "
        "the envelope-level ignorable marker.",
        "@deepseek-ai/dsh-session lib/index.js:1046-1049 (KNOWN_SESSION_EVENT_TYPES)",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
        "The v0 loader upgrades the legacy steering/message to user/message before this check, so only the "
        "released migration refuses it.",
    ),
    Rule(
        RuleId.E4, _E, RuleLayer.PERSISTENCE,
        "data and surface metadata are lossless JSON",
        "data and the surface metadata must survive a lossless JSON snapshot; non-JSON-safe values "
        "(non-finite numbers, unsafe integers) are refused.",
        "@deepseek-ai/dsh-session lib/index.js:1446-1450 (snapshotJsonValue)",
        ALL_FORMATS, (_L.SEED, _L.INVARIANTS, _L.RELEASED),
        "The loader restores events without the lossless snapshot; released refuses such a number only where "
        "its validator reads one (each finding names its layers): anywhere in a format-0 payload but an "
        "assistant/chunk, a tool schema's parameters and unknown block, source or reason variants, and only "
        "in the envelope of a format-1 event.",
    ),
    Rule(
        RuleId.E5, _E, RuleLayer.PERSISTENCE,
        "No retired vocabulary",
        "request/header-delta and request/header with reason=fallback are deleted legacy forms; the host "
        "write succeeds but the next read throws. A format-0 hook/invoked with the retired hook dialect "
        "\"claude\" (now claude-code) opens, but the released migration refuses it.",
        "@deepseek-ai/dsh-session lib/index.js:1273-1277 (assertSupportedRequestHeader)",
        ALL_FORMATS, (_L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.E6, _E, RuleLayer.PERSISTENCE,
        "Message events have the message shape",
        "user/message, assistant/message and tool/result carry a named message: non-empty id, the right "
        "role, a valid source, a content array whose every element is an object with a non-empty string "
        "type; assistant needs a model source, tool/result a tool source and exactly one tool-result block "
        "whose toolCallId matches.",
        "@deepseek-ai/dsh-session lib/index.js:1242-1266 (assertMessageEventShape); "
        "dsh-session-format-v0-to-v1 (content[i] must be a JSON object, type must be a non-empty string)",
        ALL_FORMATS, (_L.SEED, _L.INVARIANTS, _L.LOAD, _L.METER, _L.RELEASED, _L.WIRE),
        "The token meter crashes on an assistant/message or tool/result without a message object rather "
        "than reporting it. The shape check reads no content element: a user or assistant element that is "
        "not a typed object is refused by released alone, unless it is null, which crashes the token meter, "
        "the request serializer (for a message on the surface) and, in an assistant/message, the load.",
    ),
    Rule(
        RuleId.S1, _E, RuleLayer.PERSISTENCE,
        "Surface-eligible types carry surfaceOp",
        "user/message, assistant/message and tool/result are surface-eligible; a missing surfaceOp breaks "
        "the contract.",
        "@deepseek-ai/dsh-session lib/index.js:312-317 (surfaceOpOf)",
        ALL_FORMATS, (*_SURFACE_PATH, _L.METER, _L.RELEASED),
        "The token meter refuses too, but only for an assistant/message (its surface pricing throws a "
        "TypeError on one without surfaceOp) and without naming the contract.",
    ),
    Rule(
        RuleId.S2, _E, RuleLayer.PERSISTENCE,
        "Non-surface types carry no surface metadata",
        "A known non-surface type carrying surfaceOp or sourceEventSeqs breaks the contract.",
        "@deepseek-ai/dsh-session lib/index.js:307-311 (surfaceOpOf)",
        ALL_FORMATS, _SURFACE_PATH,
        "The released migration accepts surface metadata on a non-surface type and drops it.",
    ),
    Rule(
        RuleId.S3, _E, RuleLayer.PERSISTENCE,
        "append sourceEventSeqs contract",
        "An append is validated with an empty shadowed set: sourceEventSeqs, when present, must pass "
        "assertProvenance (an array, no duplicates, only earlier events).",
        "@deepseek-ai/dsh-session lib/index.js:401-407, :320-337 (assertProvenance)",
        ALL_FORMATS, (*_SURFACE_PATH, _L.RELEASED),
        "The released migration refuses a non-array sourceEventSeqs but was measured accepting duplicates.",
    ),
    Rule(
        RuleId.S4, _E, RuleLayer.PERSISTENCE,
        "replace operand and range are valid",
        "A replace is exactly {op:\"replace\", start, end}; start and end name current surface nodes and "
        "startIdx <= endIdx.",
        "@deepseek-ai/dsh-session lib/index.js:300-303 (isReplaceOp), :339-350 (replacementRange)",
        ALL_FORMATS, (*_SURFACE_PATH, _L.METER, _L.RELEASED),
        "The token meter also refuses a replace whose range is not on its priced surface.",
    ),
    Rule(
        RuleId.S5, _E, RuleLayer.PERSISTENCE,
        "replace sourceEventSeqs cover every replaced node",
        "sourceEventSeqs must include every shadowed surface node; one missing node makes the load fail "
        "(SessionPersistenceCorruptionError).",
        "@deepseek-ai/dsh-session lib/index.js:335-336 (assertProvenance)",
        ALL_FORMATS, (*_SURFACE_PATH, _L.RELEASED),
    ),
    Rule(
        RuleId.S6, _E, RuleLayer.PERSISTENCE,
        "sourceEventSeqs constraints",
        "When present, sourceEventSeqs is an array without duplicates citing only earlier events "
        "(< the event's seq), and is non-empty except on assistant/message.",
        "@deepseek-ai/dsh-session lib/index.js:320-333 (assertProvenance)",
        ALL_FORMATS, (*_SURFACE_PATH, _L.RELEASED),
        "The released migration refuses a non-array sourceEventSeqs but was measured accepting duplicates.",
    ),
    Rule(
        RuleId.S7, _E, RuleLayer.PERSISTENCE,
        "tool/result replace only rewrites one node's content",
        "A tool/result replace rewrites exactly one current node, which must be a tool/result, and may "
        "change nothing but message.content.",
        "@deepseek-ai/dsh-session lib/index.js:369-395 (assertToolResultRewrite)",
        ALL_FORMATS, _SURFACE_PATH,
        "rc.8 is stricter than the catalog: only message.content[0].content may change; the released "
        "migration accepts any rewrite.",
    ),
    Rule(
        RuleId.S8, _E, RuleLayer.PERSISTENCE,
        "The whole log replays through foldSurface",
        "Final check: folding the whole log with the fold of its header.version does not throw. "
        "Any S1-S7 violation surfaces here too.",
        "@deepseek-ai/dsh-session lib/index.js:444-455 (foldSurface); legacy fold for v0-v2",
        ALL_FORMATS, (*_SURFACE_PATH, _L.METER, _L.RELEASED),
        "The released migration has its own surface checks and accepts what S2 and S7 refuse; the token "
        "meter refuses only a replace range off its priced surface (S4).",
    ),
    Rule(
        RuleId.T1, _E, RuleLayer.ENGINE,
        "Token-meter pairing of assistant/message and step/end with the open step/start",
        "The token meter requires assistant/message and step/end to match the open step/start (same "
        "turn and step); otherwise /compact and pressure measurement fail for good.",
        "@deepseek-ai/dsh-token-meter lib/index.js:566-625 (_foldEvent)",
        ALL_FORMATS, (_L.METER, _L.INVARIANTS, _L.RELEASED),
        "The meter also reads data.chunk.type of every assistant/chunk and throws where the chunk is null or "
        "missing; no other layer reads a chunk's payload, so T1 reports that naming the meter alone.",
    ),
    Rule(
        RuleId.T2, _E, RuleLayer.ENGINE,
        "Token-meter source references stay in the same turn/step",
        "The assistant/chunk events cited by an assistant/message's sourceEventSeqs must be earlier, "
        "unique and in the message's turn/step.",
        "@deepseek-ai/dsh-token-meter lib/index.js:634-650 (_estimateProviderAssistant)",
        _V01, (_L.METER, _L.RELEASED),
        "The meter checks cited chunks only for a message with usage after a request/header; some "
        "instances are refused by the released migration too (each finding names its layers).",
    ),
    Rule(
        RuleId.T3, _E, RuleLayer.ENGINE,
        "Step keys are unique within a turn",
        "Within one turn two step/start events must not reuse a step number (the client's render key is "
        "turn:step; a collision loops the renderer).",
        "2026-09-02 render white-screen incident",
        ALL_FORMATS, (_L.INVARIANTS, _L.RELEASED),
        "Officially the invariant is stricter: step numbers must be exactly 1, 2, 3... within each turn.",
    ),
    Rule(
        RuleId.T4, _E, RuleLayer.ENGINE,
        "step and message bodies carry a real turn",
        "step/start, step/end and assistant/message with turn null or missing cannot be attributed to a "
        "turn and loop the client renderer.",
        "2026-09-01 D8 incident (retrace 0.4.17 edit block with turn:null)",
        ALL_FORMATS, (_L.INVARIANTS, _L.METER, _L.RELEASED),
    ),
    Rule(
        RuleId.T5, _E, RuleLayer.ENGINE,
        "turn/end carries data.reason.kind",
        "turn/end must carry data.reason.kind; a malformed turn/end fails the session load.",
        "dsh-agent-loop lib/index.js:620; dsh-session-persistence migrateLegacyTurnEndEvent",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
        "The v0 loader upgrades legacy reason-less aborted, disposed and error{step,message} forms "
        "and requires data keys exactly {turn, reason} with turn >= 1.",
    ),
    Rule(
        RuleId.E7, _W, RuleLayer.PERSISTENCE,
        "Ignorable unknown types need a consumer",
        "An unknown type marked ignorable:true is accepted by the read path but consumed by nobody; "
        "outside the known plugin consumers (retrace/marker, retrace/goal-marker, message-editor/*) "
        "and the three types of released's v0 inventory that rc.8 does not know (model/selection, "
        "session-log-deepseek/delivery-accepted, subagent/model-selection-policy), whose payloads "
        "released's migration validates and keeps, it is reported.",
        "2026-09-09 T2 (E3's ignorable exemption is unvalidated)",
        ALL_FORMATS, (),
        "The released migration refuses every unknown type outside its inventory, ignorable or not, consumers "
        "included; that is G2's concern, so no layer refuses what distinguishes E7.",
    ),
    Rule(
        RuleId.E8, _E, RuleLayer.PERSISTENCE,
        "Event envelope key whitelist",
        "An event object has only the seven envelope keys type/seq/time/data/surfaceOp/sourceEventSeqs/"
        "ignorable; extra keys are refused by the seed/restore path.",
        "@deepseek-ai/dsh-session lib/index.js:849-861 (assertSessionEventEnvelope)",
        ALL_FORMATS, (_L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
        "In rc.8 the load path validates restored events with the same envelope check, so extra keys "
        "also fail the load. The catalog grades it a warning; the loader and the released migration refuse "
        "such a log, so the harness cannot open it: an error.",
    ),
    Rule(
        RuleId.E9, _E, RuleLayer.PERSISTENCE,
        "system/message carries a plugin source",
        "The v3 system/message has role system and a plugin source with a non-empty plugin.",
        "@deepseek-ai/dsh-session@0.1.5-rc.1 lib/index.js:942-944",
        _V3, (_L.SEED, _L.LOAD),
        "Format v3 only: the pinned rc.8 set has no system/message, so a v0 one is E3's unknown type.",
    ),
    Rule(
        RuleId.E10, _E, RuleLayer.PERSISTENCE,
        "request/header data.header constraints",
        "request/header must carry header.config with provider and model; for v3 it must omit "
        "header.system, an empty tools and an empty adapterDefaults.",
        "@deepseek-ai/dsh-session lib/index.js:1220-1244 (rc.8); @0.1.5-rc.1 lib/index.js:231-248",
        ALL_FORMATS, (*_SEED_PATH, _L.METER, _L.RELEASED, _L.WIRE),
        "rc.8 (v0) allows header.system and empty lists but requires provider/model, a non-empty string "
        "reasoningEffort and a config value behind every adapterDefaults marker; the token meter also "
        "throws (a TypeError) when the data, header or config it reads is null or missing, when tools is "
        "not an array or when system is null (the seed and the request serializer too for a null system, "
        "the serializer for tools), and the released migration refuses both; where only the meter reads "
        "the log (format 1) those name the meter alone.",
    ),
    Rule(
        RuleId.Z3, _W, RuleLayer.FRAMING,
        "An empty session file (header, no events) is reported",
        "A header with zero events is an abnormal empty session (created empty, or writes never landed).",
        "2026-09-09 T3",
        ALL_FORMATS, (),
    ),
    Rule(
        RuleId.P3, _W, RuleLayer.PLUGIN,
        "tool/call <-> tool/result pairing",
        "Every tool/call's data.callId is answered by a tool/result whose data.message.source.callId "
        "matches; an orphan call is audited.",
        "archaeology method §2/§4.2 (pair by callId, never by position)",
        ALL_FORMATS, (_L.RELEASED,),
        "The released migration refuses an unanswered tool/call at its step/end; rc.8 accepts it.",
    ),
    Rule(
        RuleId.P4, _E, RuleLayer.PLUGIN,
        "tool/result output is parseable",
        "tool/result data.message.content parses recursively as text blocks; empty content is legal.",
        "archaeology method §2/§4.2",
        ALL_FORMATS, (_L.METER, _L.WIRE, _L.RELEASED),
        "Only output that the token meter cannot price (a stored result with a surfaceOp), that the released "
        "codec's exact content blocks reject, or that the request serializer cannot send for a result on the "
        "surface, is refused (each finding names its layers); the rest is an archaeology gap. The catalog grades "
        "it a warning; a finding the released migration refuses is an error (the harness cannot migrate the "
        "log), the others stay warnings.",
    ),
    Rule(
        RuleId.M1, _E, RuleLayer.ENGINE,
        "An assistant/message with null turn/step is a replace, never an append",
        "An assistant/message whose data.turn/data.step is null (a plugin marker) must be carried by a "
        "replace; as an append it falls into the core assistant-step path and crashes the client engine.",
        "incident second attempt (rt.js:6816)",
        ALL_FORMATS, (_L.INVARIANTS, _L.METER, _L.RELEASED),
    ),
    Rule(
        RuleId.P1, _W, RuleLayer.PLUGIN,
        "Marker id prefixes are recognised",
        "An assistant/message replace's message.id starts with a known prefix (retrace- or "
        "message-editor-).",
        "retrace plugin RENAME RULE (lib/client.js:29-44)",
        ALL_FORMATS, (),
    ),
    Rule(
        RuleId.P2, _E, RuleLayer.PLUGIN,
        "A marker's own seq is not in its shadowed set",
        "A marker's sourceEventSeqs (its shadowed seqs) must not contain the marker's own seq.",
        "retrace plugin lib/client.js:393",
        ALL_FORMATS, _SURFACE_PATH,
    ),
    Rule(
        RuleId.C1, _W, RuleLayer.CONCURRENCY,
        "seq gaps or steps back suggest several writers",
        "A gap or step back exposed by E2 is what two host processes sharing one session directory "
        "produce.",
        "dsh-session-persistence-jsonl appendLines has no lock (:1200-1227)",
        ALL_FORMATS, (_L.FOLD, _L.SEED, _L.INVARIANTS, _L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.Z1, _W, RuleLayer.FRAMING,
        "Torn zstd tail frame",
        "The last frame is incomplete: a write in flight, or a truncated file.",
        "zstd frame layout (dsh-session-persistence-jsonl)",
        ALL_FORMATS, (),
        "The official loader recovers the complete records of a torn tail and accepts the log.",
    ),
    Rule(
        RuleId.Z2, _E, RuleLayer.FRAMING,
        "A zstd frame fails to decode",
        "Any frame that fails to decode (bit rot, truncation, a torn concurrent write) makes the whole "
        "session unreadable.",
        "multi-frame single-frame loss",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.Z4, _E, RuleLayer.FRAMING,
        "The first frame holds exactly the header line",
        "The official shape puts the header line alone in frame one: its plaintext is non-empty and its only "
        "newline is its last byte. An empty first frame, a header without its newline, or a header followed by "
        "whole or partial event lines throws, even when the joined plaintext reads as the same lines.",
        "dsh-session-persistence-jsonl assertZstdHeaderFrame",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.Z5, _E, RuleLayer.FRAMING,
        "A multi-line log is not one frame",
        "Recompressing a whole log into one frame also breaks Z4; rewrites must keep the frame shape.",
        "official shape: header frame + one frame per batch",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
    ),
    Rule(
        RuleId.W1, _E, RuleLayer.ENGINE,
        "Wire: a tool message follows an assistant message with that tool call",
        "Expanding the folded surface into wire messages, every role=tool message answers, by id, a still "
        "unanswered tool call of the assistant message before it; otherwise it dangles (no call awaits an "
        "answer) or names a call that message never made (the assistant's tool-call block and the tool "
        "result disagree on the id), and strict providers refuse the request.",
        "2026-08-27 incident (strict endpoints: role \"tool\" must answer a preceding \"tool_calls\")",
        ALL_FORMATS, (_L.PROVIDER,),
        "The official DeepSeek serializer sends a dangling tool message unchanged; only the provider refuses. "
        "An id mismatch is refused by released too, for the lifecycle P5 and W5 report; a tool/call whose id "
        "alone differs never reaches the wire, so it is theirs and not W1's.",
    ),
    Rule(
        RuleId.W2, _E, RuleLayer.ENGINE,
        "Wire: no user text between tool_calls and their tool results",
        "While an assistant tool call is unanswered, a user text message produces "
        "[assistant(tool_calls), user(text), tool], which strict endpoints refuse.",
        "OpenAI-compatible ordering checks; the DSH serializer puts text before tool results",
        ALL_FORMATS, (_L.PROVIDER,),
        "The official DeepSeek serializer does not check ordering; only the provider refuses.",
    ),
    Rule(
        RuleId.G1, _E, RuleLayer.MIGRATION,
        "Migration pre-check: v0 subagent/descriptor version is 3",
        "In a format-0 file a subagent/descriptor with data.version !== 3 is refused by the official "
        "v0->v1 migration.",
        "@deepseek-ai/dsh-session-format-v0-to-v1 lib/index.js:1584-1586",
        _V0, (_L.RELEASED,),
        "The catalog grades it a warning; the released migration refuses such a log, so the harness cannot "
        "migrate it: an error.",
    ),
    Rule(
        RuleId.G2, _E, RuleLayer.MIGRATION,
        "Migration pre-check: no unknown historical types in v0 (even ignorable)",
        "In a format-0 file an event type outside the released v0 dispositions is refused by the "
        "migration, even with ignorable:true.",
        "@deepseek-ai/dsh-session-format-v0-to-v1 lib/index.js:1580-1583",
        _V0, (_L.RELEASED,),
        "The catalog grades it a warning; the released migration refuses such a log, so the harness cannot "
        "migrate it: an error.",
    ),
    Rule(
        RuleId.G3, _E, RuleLayer.MIGRATION,
        "Migration pre-check: title messageSeqs cite earlier human user/messages",
        "In a format-0 or format-1 file session/title and session/title-llm-request messageSeqs are arrays; "
        "session/title's are empty exactly for a user title; each cites an earlier user/message whose "
        "source.kind is user, and a title request frames exactly the cited messages.",
        "@deepseek-ai/dsh-session-format-v0-to-v1 lib/index.js:439-444 (v0 payload), 2541-2568 "
        "(assertTitleSources, v0 and v1)",
        _V01, (_L.RELEASED,),
        "On a format-1 file released checks only the relation walk: a title citing a later or a repeated "
        "human user/message is restored, so G3 reports those for format 0 only. The catalog grades it a "
        "warning; the released migration refuses such a log, so the harness cannot migrate it: an error.",
    ),
    Rule(
        RuleId.W3, _E, RuleLayer.ENGINE,
        "Wire: every provider-visible tool call is answered",
        "A tool call of a provider-visible assistant message must be answered by a tool message before "
        "the next user text, the next assistant message, or the end of history; otherwise every later "
        "request fails (\"An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'\").",
        "seed 001 (scheduler threw after tool/call; turn/end written)",
        ALL_FORMATS, (_L.RELEASED, _L.PROVIDER),
        "rc.8 layers and the DeepSeek serializer accept the gap; released refuses it at the step/end.",
        "seed-001",
    ),
    Rule(
        RuleId.W4, _E, RuleLayer.ENGINE,
        "An unanswered tool call already hidden by a compaction",
        "An unanswered tool/call whose gap a compaction has already removed from the provider-visible "
        "surface no longer reaches the provider, but the history still holds it.",
        "seed 001 (provider-visible defect vs a gap hidden by compaction)",
        ALL_FORMATS, (_L.RELEASED,),
        "The released migration checks tool lifecycles per step regardless of later compaction, so it "
        "still refuses: no provider sees the gap, but the harness cannot migrate the log, so it is an error.",
        "seed-001",
    ),
    Rule(
        RuleId.P5, _E, RuleLayer.PLUGIN,
        "The three call-id positions agree, by id",
        "The call ids of assistant tool-call blocks, tool/call.data.callId and "
        "tool/result.data.message.source.callId must agree as sets of ids, not as counts.",
        "seed 002",
        ALL_FORMATS, (_L.RELEASED,),
        None,
        "seed-002",
    ),
    Rule(
        RuleId.W5, _E, RuleLayer.ENGINE,
        "A tool message answers a pending call id",
        "A tool message (tool/result) must answer a call id that is pending: advertised and not yet "
        "answered.",
        "seed 002",
        ALL_FORMATS, (_L.INVARIANTS, _L.RELEASED, _L.PROVIDER),
        None,
        "seed-002",
    ),
    Rule(
        RuleId.L1, _E, RuleLayer.LIMITS,
        "zstd plaintext stays within the reader's limits",
        "A zstd frame may not declare or inflate to more plaintext than the reader's limits allow: "
        "per frame, per file, and per compressed byte (the ratio, beyond a floor); a zstd bomb stops "
        "the read there, and nothing after it is checked.",
        "issue 7 (hardening); dsh-session-persistence-jsonl NodePrivateZstdFrameDecoder.decodeFrame",
        ALL_FORMATS, (_L.LOAD, _L.RELEASED),
        "No official layer limits plaintext: the loader decodes each frame whole, so it refuses such a file "
        "only when the allocation or the string conversion fails and crashes when memory runs out (measured: "
        "a 64 GiB frame aborts Node at a 3 GB address-space cap).",
        "issue-7",
    ),
    Rule(
        RuleId.L2, _E, RuleLayer.LIMITS,
        "Lines stay within the reader's line limit",
        "A line longer than the reader's line limit is measured as it streams past, never joined or "
        "parsed; the read stops there and nothing after it is checked.",
        "issue 7 (hardening)",
        ALL_FORMATS, (),
        "The official reader has no line limit below V8's maximum string length (2**29-24 characters), so it "
        "accepts the lines this rule stops at.",
        "issue-7",
        unmutated="A mutant needs a line over 32 MiB: about 3 s each to build, check and judge by the official "
        "layers (measured: 0.4 s, 0.5 s, 2 s), too slow for the per-mutator suites and the kill matrix; "
        "tests/unit/test_hardening.py checks the rule under small injected limits, benchmarks/hardening.py "
        "with a 100 MB line.",
    ),
    Rule(
        RuleId.L3, _E, RuleLayer.LIMITS,
        "JSON nesting stays within the reader's depth limit",
        "A line nested deeper than the reader's depth limit (found by an iterative pre-scan before any "
        "parser sees it) stops the read there; nothing after it is checked.",
        "issue 7 (hardening)",
        ALL_FORMATS, (),
        "The official loader and the released migration accept any depth (V8's JSON.parse does not recurse); "
        "only code that re-serialises the value recursively overflows the stack.",
        "issue-7",
    ),
    Rule(
        RuleId.L4, _E, RuleLayer.LIMITS,
        "Line counts stay within the reader's limits",
        "A file may hold at most the reader's limit of unreadable lines (empty, not JSON, or a malformed "
        "packed row), and a zstd file at most one line per compressed byte beyond a floor (the ratio limit "
        "counted in lines); past either the read stops, and nothing after it is checked.",
        "issue 7 (hardening); an atheris timeout: 469 zstd bytes that inflate to 493,599 empty lines",
        ALL_FORMATS, (),
        "The official loader reads every line whatever their number; the unreadable lines refuse the load "
        "only where R1 says so (before a later turn/end), so no layer refuses what distinguishes L4.",
        "issue-7",
    ),
    Rule(
        RuleId.G4, _E, RuleLayer.MIGRATION,
        "Migration pre-check: compaction, retry, command, code-dispatch and delivery-marker relations",
        "In a format-0 or format-1 file a compaction is opened, summarised at most once over an exact current "
        "surface span, and ended by one owner (compactionId, sourceCommandId) in its own turn, with no turn "
        "boundary inside it; an llm/retry names the open turn and step and the open request/header's provider "
        "and continues its policy chain (retry number, retryId); an llm/retry-started pairs one earlier "
        "scheduled attempt of its turn and step, once; a command/run's commandId is new and a command/done "
        "follows its command/run; a tool/code-dispatch-start's subCallId is new and its tool/code-dispatch "
        "matches it; a delivery marker of the walked generation (sessionFormatVersion 1) outside the inherited "
        "prefix names this session.",
        "@deepseek-ai/dsh-session-format-v0-to-v1 lib/index.js:2290, 2403-2476 (assertReleasedArtifactRelationships), "
        "2383-2398, 2425-2440, 2442-2444, 2500-2510 (assertRetryChain), 2570-2584 (assertCompactionOwner/Turn, "
        "assertCurrentSurfaceSpan)",
        _V01, (_L.RELEASED,),
        "Released stops at its first refusal, so G4 reports only a relation break reached before any other.",
        "fuzzing",
    ),
    Rule(
        RuleId.G5, _E, RuleLayer.MIGRATION,
        "The released migration's per-type payload schema",
        "In a format-0 file every event but assistant/chunk, once the migration has normalised its legacy "
        "form, has an object data holding exactly the members its type admits (every required one, no "
        "other), each of the JSON type, value set and relation the released payload validator asks "
        "(non-empty strings, counts, literals, earlier seqs, exact nested records); in a format-1 file "
        "the data of every event of the released inventory is an object. The migration refuses the log "
        "otherwise, so no released or later harness can open it.",
        "@deepseek-ai/dsh-session-format-v0-to-v1 lib/index.js:27-235 (RELEASED_V0_EVENT_DISPOSITIONS), "
        "245-1466 (assertReleasedPayloadSemantics and its value validators), 1576-1593 "
        "(assertReleasedEventPayload), 1914-2247 (normalizeReleasedV0Event), 2287 (the relation walk's data)",
        _V01, (_L.RELEASED,),
        "No rc.8 layer reads these payloads so strictly; where another rule already names the defect "
        "(T5 turn/end, G1 descriptor version, G2 unknown types, G3 title messageSeqs, E4 lossy numbers, E5 "
        "retired vocabulary, E6 message shape and content elements, P4 a tool result's output blocks, E10 "
        "request/header) G5 leaves it to that rule.",
        "fuzzing",
    ),
)

RULES: Mapping[RuleId, Rule] = MappingProxyType({r.id: r for r in _RULES})
"""Every rule, in catalog order then the seed rules."""


RELEASED_CHECKS: tuple[tuple[str, str, tuple[RuleId, ...]], ...] = (
    # (what released checks of a format-0 log, where in V01 = dsh-session-format-v0-to-v1 lib/index.js, rules)
    ("the physical header: type session, version 0, string id, the v0 header members and no other",
     "1700-1713", (RuleId.H1, RuleId.H2)),
    ("seedLength / inheritedEventCount within the event count, 0 when unseeded", "1518-1519, 1693", (RuleId.H2,)),
    ("every row decodes (JSON, the packed chunk-row envelope), strict recovery", "1640-1690",
     (RuleId.R1, RuleId.R2, RuleId.R3)),
    ("seqs dense from 0 (no gap, no step back)", "1535, 1677", (RuleId.E1, RuleId.E2, RuleId.S9)),
    ("the event envelope: exactly type, seq, time, data and the optional ignorable, sourceEventSeqs, surfaceOp; "
     "time a safe integer; ignorable true when present", "1524-1537", (RuleId.E1, RuleId.E8)),
    ("no type outside the released inventory, even ignorable", "1530, 1582", (RuleId.G2,)),
    ("no request/header-delta, mode/set, request/header reason fallback, hook dialect claude", "2047-2050, 349",
     (RuleId.E5,)),
    ("request/header messagePrefix, when present, is an array (then dropped)", "2034-2046", (RuleId.G5,)),
    ("steering/message: exactly {turn, message} or {turn, content, source}, turn a count", "2052-2081",
     (RuleId.G5,)),
    ("a pre-react-loop turn/start: exactly {turn, trigger}, turn >= 1, trigger.kind a non-empty string",
     "2083-2094", (RuleId.G5,)),
    ("turn/end: exactly {turn, reason}, turn >= 1, the legacy reasons upgraded, then the reason's exact shape",
     "2096-2168, 1068-1085", (RuleId.T5,)),
    ("a legacy tool/result replace cites a message with an identity", "2214", (RuleId.S4,)),
    ("a current-generation delivery marker names this session", "1949, 2444", (RuleId.G5,)),
    ("subagent/descriptor version 3", "1584-1587", (RuleId.G1,)),
    ("data is a JSON object (format 0 and 1)", "1588, 2287", (RuleId.G5,)),
    ("data holds every required member of its type and no member outside the type's list", "1590",
     (RuleId.G5,)),
    ("opaque members (tool/code-dispatch arguments, tool/result meta) are lossless JSON", "1591", (RuleId.E4,)),
    ("messages: exact {id, role, content, source}, the role and source kind the event type needs",
     "722-740, 771-944", (RuleId.E6, RuleId.G5)),
    ("content elements are objects with a non-empty string type; a text or reasoning block's text is a string",
     "651-700", (RuleId.E6,)),
    ("content blocks of known types hold exactly their members (text, image attachment, tool-call, "
     "tool-result)", "651-720", (RuleId.G5,)),
    ("a tool result's output blocks (inside its tool-result block) are typed objects of their exact shape",
     "651-720", (RuleId.P4,)),
    ("message sources of known kinds hold exactly their members (user, plugin forms, model, tool, "
     "agent-instructions, session-reference, team-message, goal, legacy goal, skill-*, relay, notice, webhook)",
     "741-998", (RuleId.G5,)),
    ("request/header: config provider and model, reasoningEffort, adapterDefaults, tools an array",
     "1087-1119", (RuleId.E10,)),
    ("request/header: the exact header and config members, temperature, maxTokens, stop, system, each tool's "
     "schema, the reason literal, startsSeries", "1087-1128, 419-428", (RuleId.G5,)),
    ("every other member: non-empty strings, counts, positive counts, finite numbers, booleans, literals "
     "(approval, sandbox, plan, hook, llm/retry failure and limits, todo, workflow, team, goal, schedule, "
     "web search body, compaction ids and turns, usage)", "269-559, 621-640, 1129-1466", (RuleId.G5,)),
    ("compaction shadowedRange and shadowedSeqs name earlier events, unique, endpoints matching",
     "1138-1146", (RuleId.G5,)),
    ("command/done sourceEventSeq and delivery throughSeq name earlier events", "317, 430", (RuleId.G5,)),
    ("title messageSeqs cite earlier human user/messages, a title request frames them", "439-444, 2541-2568",
     (RuleId.G3,)),
    ("surface metadata: surfaceOp on surface types, sourceEventSeqs unique earlier seqs, replace ranges",
     "1548-1573, 2522-2536", (RuleId.S1, RuleId.S3, RuleId.S4, RuleId.S5, RuleId.S6)),
    ("turns open in order and close without an open step; steps in the open turn", "2300-2322",
     (RuleId.T1, RuleId.T3, RuleId.T4)),
    ("tool lifecycles: advertised once, a tool/call matching one advertised call, each answered by a tool/result "
     "or the exact TOOL_NOT_STARTED repair, none left open at a boundary", "2330-2368, 2513-2515",
     (RuleId.P3, RuleId.P5, RuleId.W3, RuleId.W4, RuleId.W5)),
    ("compaction owner, turn, single summary over an exact surface span; llm/retry chains and retry-started "
     "pairing; command/run ids unique and command/done after its run; code-dispatch starts unique and matched",
     "2383-2476, 2500-2510, 2570-2584", (RuleId.G4,)),
)
"""Every check the released v0->v1 migration makes of a format-0 log, and the rules that report
it: each of released's refusals is some rule's finding. Rendered in ``docs/CONTRACTS.md``."""
