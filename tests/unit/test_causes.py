"""Root cause first: a finding that follows from another names its root (``caused_by``).

The checker keeps every finding; the ones that restate or follow from another carry
the index of their root. These tests pin the relation on the incidents the issue
names (a seq gap, a truncated line, a frame whose checksum fails), its invariants on
arbitrary reports, and that independent defects stay separate roots.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import CAUSAL_ORDER, RULES, Finding, Report, RuleId, check_path
from dshfuzz.checker._causes import BREAKS_LATER, PAIRING, READS_ACROSS, SUMMARISES, attribute
from dshfuzz.model import dumps, encode_zstd

from checker_logs import check, explain, header, minimal_events

_RANK = {rule: i for i, rule in enumerate(CAUSAL_ORDER)}


def _summary(report: Report) -> str:
    return "\n".join(f"  [{i}] {f.rule} seq={f.seq} line={f.line} frame={f.frame} causedBy={f.caused_by}: {f.message}"
                     for i, f in enumerate(report.findings))


def _roots(report: Report) -> list[RuleId]:
    return [f.rule for f in report.findings if f.caused_by is None]


def test_the_causal_order_names_every_rule_once():
    assert sorted(map(str, CAUSAL_ORDER)) == sorted(map(str, RULES)), "a rule is missing from CAUSAL_ORDER, or twice"
    assert len(set(CAUSAL_ORDER)) == len(CAUSAL_ORDER)
    assert PAIRING <= READS_ACROSS
    for summary, of in SUMMARISES.items():
        assert all(_RANK[r] < _RANK[summary] for r in of), summary


def test_a_seq_gap_is_one_root_and_the_fold_and_writers_traces_follow_from_it():
    events = minimal_events()
    for e in events[4:]:
        e["seq"] += 1
    report = check(header(), events)
    assert _roots(report) == [RuleId.E2], _summary(report) + "\n" + explain(report, header(), events)
    followers = {f.rule for f in report.findings if f.caused_by is not None}
    assert {RuleId.S8, RuleId.C1} <= followers, _summary(report)


def test_a_truncated_line_is_one_root(tmp_path: Path):
    events = minimal_events()
    lines = [dumps(header()), *(dumps(e) for e in events)]
    lines[5] = lines[5][: len(lines[5]) // 2]  # event 4, cut mid-line, before a committed turn/end
    path = tmp_path / "torn.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = check_path(path)
    assert _roots(report) == [RuleId.R1], _summary(report)
    assert len(report.findings) > 1, "the truncated line left no follow-on finding to attribute: " + _summary(report)


def test_a_frame_whose_checksum_fails_is_the_root_of_what_is_read_after_it(tmp_path: Path):
    events = minimal_events()
    data = bytearray(encode_zstd(header(), [events[:4], events[4:9], events[9:]]))
    frames = _frame_starts(bytes(data))
    data[frames[2] + 12] ^= 0x5A  # inside the second batch's frame: its checksum fails
    path = tmp_path / "bitrot.jsonl.zstd"
    path.write_bytes(bytes(data))
    report = check_path(path)
    roots = _roots(report)
    assert RuleId.Z2 in roots and all(RULES[r].severity != "error" or r is RuleId.Z2 for r in roots), _summary(report)


def _frame_starts(data: bytes) -> list[int]:
    magic = b"\x28\xb5\x2f\xfd"
    starts, at = [], data.find(magic)
    while at >= 0:
        starts.append(at)
        at = data.find(magic, at + 1)
    return starts


def test_an_unanswered_call_is_one_root_across_the_pairing_rules():
    events = minimal_events()
    del events[9]  # the tool/result of call_1
    for e in events[9:]:
        e["seq"] -= 1
        if "sourceEventSeqs" in e:
            e["sourceEventSeqs"] = [s - 1 for s in e["sourceEventSeqs"]]
    report = check(header(), events)
    pairing = [f for f in report.findings if f.rule in PAIRING]
    assert pairing, _summary(report)
    assert sum(f.caused_by is None for f in pairing) == 1, _summary(report)


def test_independent_defects_at_different_events_stay_separate_roots():
    events = minimal_events()
    events[14]["sourceEventSeqs"] = [12, 12, 13]  # S3: a repeated source seq, at the last message
    events[15]["data"]["step"] = 3  # T1: step/end names a step that is not open, later
    report = check(header(), events)
    roots = _roots(report)
    assert RuleId.S3 in roots and RuleId.T1 in roots, _summary(report)


def _finding(rule: RuleId, line: int | None, seq: int | None, frame: int | None, call: str | None) -> Finding:
    return Finding(rule, RULES[rule].severity, RULES[rule].layer, f"{rule}", seq=seq, line=line, frame=frame,
                   context={} if call is None else {"callId": call})


_findings = st.lists(
    st.builds(
        _finding,
        st.sampled_from(CAUSAL_ORDER),
        st.one_of(st.none(), st.integers(1, 6)),
        st.one_of(st.none(), st.integers(0, 6)),
        st.one_of(st.none(), st.integers(0, 2)),
        st.one_of(st.none(), st.sampled_from(["a", "b"])),
    ),
    max_size=12,
)


@given(_findings)
def test_every_cause_is_a_root_and_nothing_is_dropped(findings):
    out = attribute(findings)
    assert [(f.rule, f.line, f.seq, f.frame) for f in out] == [(f.rule, f.line, f.seq, f.frame) for f in findings]
    for i, f in enumerate(out):
        if f.caused_by is None:
            continue
        root = out[f.caused_by]
        assert f.caused_by != i and root.caused_by is None, out
        if root.line is not None and root.line == f.line:  # at one event, the earlier rule is the root
            assert _RANK[root.rule] < _RANK[f.rule] or root.rule in BREAKS_LATER, out


@given(_findings)
def test_only_the_declared_relations_make_a_consequence(findings):
    for f in attribute(findings):
        if f.caused_by is None:
            continue
        if f.rule in SUMMARISES:
            continue
        same_place = any(
            g is not f and _RANK[g.rule] < _RANK[f.rule]
            and ((f.line is not None and g.line == f.line) or (f.line is None and f.seq is not None and g.line is None
                                                               and g.seq == f.seq))
            for g in findings
        )
        assert same_place or f.rule in PAIRING or (f.rule in READS_ACROSS and any(g.rule in BREAKS_LATER for g in findings))


def test_a_replace_the_fold_refuses_is_the_root_of_a_later_replace_citing_it():
    """S5 at one replace; a later replace whose range starts at it finds no such surface node (S4)."""
    s5 = _finding(RuleId.S5, 20, 18, None, None)
    s4 = _finding(RuleId.S4, 45, 47, None, None)
    out = attribute([s5, _finding(RuleId.S8, 20, 18, None, None), s4])
    assert out[2].caused_by == 0 and out[1].caused_by == 0, out


def test_a_loop_of_causes_is_cut_at_its_earliest_finding():
    """No table today makes a loop; should one, the earliest finding in the file becomes a root."""
    from dshfuzz.checker._causes import _cut_cycles

    findings = [_finding(RuleId.S5, 10, 8, None, None), _finding(RuleId.S9, 30, 3, None, None),
                _finding(RuleId.T2, 40, 9, None, None)]
    direct: list[int | None] = [1, 0, 1]
    _cut_cycles(findings, direct)
    assert direct == [None, 0, 1]
