"""The minimiser: ddmin is 1-minimal, and removing events keeps the log's own defects."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.generators import GeneratedLog, generate
from dshfuzz.harness import Example, ddmin, minimise
from dshfuzz.harness._ddmin import _runs
from dshfuzz.harness._log_units import _layout
from dshfuzz.harness._minimise import _same_unit
from dshfuzz.model import (
    DEFAULT_LIMITS,
    compress_frame,
    decode_frame,
    encode_jsonl,
    encode_zstd,
    parse_log,
    repeat_frame,
    scan_frames,
)


@given(
    st.lists(st.integers(0, 50), min_size=1, max_size=60), st.sets(st.integers(0, 50), min_size=1, max_size=4)
)
def test_ddmin_keeps_exactly_what_the_predicate_needs(items, needed):
    needed &= set(items)
    if not needed:
        return

    def test(subset):
        return needed <= set(subset)

    result = ddmin(items, test)
    assert test(result)
    for i in range(len(result)):
        assert not test(result[:i] + result[i + 1 :]), f"{result} is not 1-minimal"


HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _log(events: list[dict]) -> bytes:
    return ("\n".join(json.dumps(x, separators=(",", ":")) for x in [HEADER, *events]) + "\n").encode()


def _events(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines()[1:]]


def _message(seq: int, text: str, **extra) -> dict:
    data = {
        "id": f"m{seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
    }
    return {"type": "user/message", "seq": seq, "time": 0, "data": data, "surfaceOp": "append", **extra}


def test_minimising_a_seq_gap_keeps_the_gap_and_drops_everything_else():
    events = [_message(i, f"text {i}") for i in range(8)] + [_message(9, "after the gap")]

    def has_gap(example: Example) -> bool:
        seqs = [e["seq"] for e in _events(example.data)]
        return any(b - a > 1 for a, b in itertools.pairwise(seqs))

    minimal = _events(minimise(Example(_log(events), "none"), has_gap))
    assert [e["seq"] for e in minimal] == [0, 2], minimal


def test_references_follow_the_events_they_cite():
    events = [_message(0, "a"), _message(1, "b"), _message(2, "c")]
    replace = _message(
        3, "summary", surfaceOp={"op": "replace", "start": 1, "end": 2}, sourceEventSeqs=[1, 2]
    )
    events.append(replace)

    def replace_cites_two(example: Example) -> bool:
        evs = _events(example.data)
        return any(e.get("sourceEventSeqs") and len(e["sourceEventSeqs"]) == 2 for e in evs)

    minimal = _events(minimise(Example(_log(events), "none"), replace_cites_two))
    assert [e["seq"] for e in minimal] == [0, 1, 2]
    assert minimal[-1]["surfaceOp"] == {"op": "replace", "start": 0, "end": 1}
    assert minimal[-1]["sourceEventSeqs"] == [0, 1]


def test_a_header_only_defect_minimises_to_the_header():
    events = [_message(i, "x") for i in range(5)]
    data = minimise(Example(_log(events), "none"), lambda ex: ex.data.startswith(b'{"type":"session"'))
    assert data.decode().splitlines() == [json.dumps(HEADER, separators=(",", ":"))]


def _units_after_removing(example: Example, index: int) -> Example:
    """``example`` with its ``index``-th unit removed, renumbered as the minimiser does."""
    layout = _layout(example)
    return layout.render([i for i in range(len(layout.units)) if i != index])


def assert_one_minimal(example: Example, predicate) -> None:
    for i in range(len(_layout(example).units)):
        smaller = _units_after_removing(example, i)
        assert not predicate(smaller), f"unit {i} can go:\n{example.data.decode(errors='replace')}"


def _long_log(turns: int = 40) -> GeneratedLog:
    return next(generate(1, seed=5, turns=(turns, turns), max_events=5000))


def _tool_calls_without_result(example: Example) -> set[object]:
    calls: dict[object, int] = {}
    for event in (e.raw for e in parse_log(example.data, compression=example.compression).events):
        if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
            continue
        data = event["data"]
        if event.get("type") == "tool/call":
            calls[data.get("callId")] = calls.get(data.get("callId"), 0) + 1
        elif event.get("type") == "tool/result":
            source = (
                data.get("message", {}).get("source", {}) if isinstance(data.get("message"), dict) else {}
            )
            calls[source.get("callId")] = calls.get(source.get("callId"), 0) - 1
    return {call for call, open_ in calls.items() if open_ > 0}


class _Counted:
    """A predicate that records the size of every candidate it judged."""

    def __init__(self, predicate) -> None:
        self.predicate = predicate
        self.sizes: list[int] = []

    def __call__(self, example: Example) -> bool:
        self.sizes.append(len(example.data))
        return self.predicate(example)


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_a_deep_orphan_call_in_a_long_log_minimises_to_that_call_at_the_cost_of_a_few_whole_logs(compression):
    log = _long_log()
    calls = [i for i, e in enumerate(log.events) if e["type"] == "tool/call"]
    deep = calls[len(calls) * 3 // 4]
    call_id = log.events[deep]["data"]["callId"]
    result = next(
        i
        for i, e in enumerate(log.events)
        if e["type"] == "tool/result" and e["data"]["message"]["source"].get("callId") == call_id
    )
    events = [e for i, e in enumerate(log.events) if i != result]
    data = encode_jsonl(log.header, [events]) if compression == "none" else encode_zstd(log.header, [events])
    example = Example(data, compression)
    predicate = _Counted(lambda ex: call_id in _tool_calls_without_result(ex))

    minimal = Example(minimise(example, predicate), compression)

    assert predicate(minimal)
    events_left = [e.raw for e in parse_log(minimal.data, compression=compression).events]
    assert [e["type"] for e in events_left] == ["tool/call"], minimal.data.decode(errors="replace")
    assert_one_minimal(minimal, lambda ex: call_id in _tool_calls_without_result(ex))
    judged = sum(predicate.sizes) / len(data)
    assert judged <= 3, f"judged {judged:.1f} whole logs' worth of bytes in {len(predicate.sizes)} calls"


def _unterminated_tail(example: Example) -> bool:
    return parse_log(example.data, compression=example.compression).torn is not None


def test_a_torn_tail_line_minimises_to_one_byte_after_the_header():
    events = [_message(i, f"text {i}") for i in range(6)]
    data = _log(events)
    torn = data + json.dumps(_message(6, "cut short")).encode()[:25]
    assert _unterminated_tail(Example(torn, "none"))

    minimal = minimise(Example(torn, "none"), _unterminated_tail)

    header, tail = minimal.split(b"\n", 1)
    assert json.loads(header) == HEADER
    assert len(tail) == 1, minimal
    assert_one_minimal(Example(minimal, "none"), _unterminated_tail)


def _corrupt_frames(example: Example) -> int:
    return sum(f.status == "corrupt" for f in parse_log(example.data, compression="zstd").frames)


def test_a_garbled_frame_deep_in_a_zstd_log_minimises_to_the_header_frame_and_a_few_bytes():
    log = _long_log(turns=12)
    data = bytearray(log.to_zstd())
    frames = parse_log(bytes(data), compression="zstd").frames
    middle = frames[len(frames) // 2]
    data[middle.offset + middle.size // 2] ^= 0x5A
    example = Example(bytes(data), "zstd")
    assert _corrupt_frames(example) == 1

    minimal = Example(minimise(example, lambda ex: _corrupt_frames(ex) == 1), "zstd")

    kept = parse_log(minimal.data, compression="zstd")
    assert [f.status for f in kept.frames] == ["complete", "corrupt"]
    assert kept.frames[1].size < middle.size
    assert_one_minimal(minimal, lambda ex: _corrupt_frames(ex) == 1)


def test_a_removed_range_endpoint_moves_onto_the_nearest_surviving_surface_event():
    events = [_message(i, f"text {i}") for i in range(4)]
    events.append(
        _message(
            4, "summary", surfaceOp={"op": "replace", "start": 0, "end": 3}, sourceEventSeqs=[0, 1, 2, 3]
        )
    )

    def replaces_two_or_more(example: Example) -> bool:
        return any(len(e.get("sourceEventSeqs", ())) >= 2 for e in _events(example.data))

    minimal = _events(minimise(Example(_log(events), "none"), replaces_two_or_more))
    assert minimal[-1]["surfaceOp"] == {"op": "replace", "start": 0, "end": 1}, minimal
    assert minimal[-1]["sourceEventSeqs"] == [0, 1]


def test_the_seed_length_follows_removed_seed_events():
    header = {**HEADER, "seedLength": 4}
    events = [_message(i, f"text {i}") for i in range(6)]
    data = ("\n".join(json.dumps(x, separators=(",", ":")) for x in [header, *events]) + "\n").encode()

    def last_seed_event_inherited(example: Example) -> bool:
        lines = example.data.decode().splitlines()
        seed = json.loads(lines[0])["seedLength"]
        return any(
            e["data"]["content"][0]["text"] == "text 3" and e["seq"] == seed - 1
            for e in map(json.loads, lines[1:])
        )

    minimal = minimise(Example(data, "none"), last_seed_event_inherited)
    lines = minimal.decode().splitlines()
    assert json.loads(lines[0])["seedLength"] == 1
    assert [json.loads(line)["seq"] for line in lines[1:]] == [0]


def test_a_torn_tail_of_a_long_log_is_looked_for_in_the_last_window_first():
    log = _long_log()
    torn = Example(log.to_jsonl() + b'{"type":"turn/st', "none")
    verdicts: list[bool] = []

    def still_torn(example: Example) -> bool:
        verdicts.append(_unterminated_tail(example))
        return verdicts[-1]

    minimal = minimise(torn, still_torn)

    assert verdicts[0], "the first window judged did not hold the torn tail"
    assert len(minimal.split(b"\n", 1)[1]) == 1, minimal


@pytest.mark.parametrize("declare_size", [True, False], ids=["declared", "undeclared"])
def test_a_zstd_bomb_is_kept_whole_and_never_inflated_past_the_reader_limits(declare_size):
    log = _long_log(turns=6)
    bomb = repeat_frame(0x20, DEFAULT_LIMITS.frame_bytes + 1, declare_size=declare_size)
    example = Example(log.to_zstd() + bomb, "zstd")

    def over_limit(candidate: Example) -> bool:
        return parse_log(candidate.data, compression="zstd").limit is not None

    assert over_limit(example)
    predicate = _Counted(over_limit)

    minimal = minimise(example, predicate)

    frames = parse_log(minimal, compression="zstd").frames
    assert [f.status for f in frames] == ["complete", "over-limit"], frames
    assert minimal.endswith(bomb), "the bomb frame lost bytes: it must be kept or dropped whole"
    assert len(predicate.sizes) < 60, f"{len(predicate.sizes)} predicate calls"


# Runs of identical units: removed whole, then halved (issue 17).

RUN = 10_000
THRESHOLD = 4097
RUN_CALLS = 200


def assert_one_minimal_over_runs(example: Example, predicate) -> None:
    """:func:`assert_one_minimal` removing one unit per run of identical units, which is the
    same candidate as removing any other of the run (the property test below); removing
    each of thousands of units would cost seconds per unit here."""
    layout = _layout(example)
    for run in _runs(range(len(layout.units)), lambda i: _same_unit(layout.units[i])):
        smaller = _units_after_removing(example, run[0])
        assert not predicate(smaller), f"a unit of the run at {run[0]} ({len(run)} units) can go"


def _plaintext(example: Example) -> bytes:
    if example.compression != "zstd":
        return example.data
    return b"".join(decode_frame(example.data[f.offset : f.end]) for f in scan_frames(example.data))


def _bare_lines(example: Example) -> list[bytes]:
    """The physical lines after the header that are not JSON objects (bare newlines here)."""
    lines = _plaintext(example).split(b"\n")[1:-1]
    return [line for line in lines if not line.startswith(b"{")]


def _with_tail(events: list[dict], tail: list[bytes], compression: str) -> Example:
    """``events`` in one batch (one frame) and the ``tail`` lines as a final batch of their own,
    as the ``lines-over-limit`` mutator appends them."""
    head = _log(events)
    if compression == "none":
        return Example(head + b"".join(line + b"\n" for line in tail), "none")
    header, body = head.split(b"\n", 1)
    frames = [
        compress_frame(header + b"\n"),
        compress_frame(body),
        compress_frame(b"".join(t + b"\n" for t in tail)),
    ]
    return Example(b"".join(frames), "zstd")


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_a_long_run_of_bare_newlines_minimises_to_exactly_the_threshold_in_a_logarithmic_number_of_calls(
    compression,
):
    example = _with_tail([_message(i, f"text {i}") for i in range(30)], [b""] * RUN, compression)
    predicate = _Counted(lambda ex: len(_bare_lines(ex)) >= THRESHOLD)

    minimal = Example(minimise(example, predicate), compression)

    assert _plaintext(minimal).split(b"\n", 1)[1] == b"\n" * THRESHOLD
    assert len(predicate.sizes) <= RUN_CALLS, f"{len(predicate.sizes)} predicate calls"
    assert_one_minimal_over_runs(minimal, lambda ex: len(_bare_lines(ex)) >= THRESHOLD)


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_a_different_unit_inside_a_run_that_the_predicate_needs_is_kept(compression):
    tail = [b""] * (RUN // 2) + [b"garbled"] + [b""] * (RUN // 2)
    example = _with_tail([_message(i, f"text {i}") for i in range(5)], tail, compression)

    def holds(ex: Example) -> bool:
        bare = _bare_lines(ex)
        return b"garbled" in bare and bare.count(b"") >= THRESHOLD

    predicate = _Counted(holds)
    minimal = Example(minimise(example, predicate), compression)

    assert sorted(_bare_lines(minimal)) == [b""] * THRESHOLD + [b"garbled"]
    assert len(predicate.sizes) <= RUN_CALLS, f"{len(predicate.sizes)} predicate calls"
    assert_one_minimal_over_runs(minimal, holds)


def test_a_long_run_of_one_byte_in_a_garbled_line_shrinks_in_a_logarithmic_number_of_calls():
    example = Example(_log([_message(0, "a")]) + b"x" * 60_000 + b"\n", "none")

    def holds(ex: Example) -> bool:
        return any(len(line) >= 3000 for line in _bare_lines(ex))

    predicate = _Counted(holds)
    minimal = minimise(example, predicate)

    assert minimal.split(b"\n", 1)[1] == b"x" * 3000 + b"\n"
    assert len(predicate.sizes) <= RUN_CALLS, f"{len(predicate.sizes)} predicate calls"


@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 40)), min_size=1, max_size=8),
    st.dictionaries(st.sampled_from("abc"), st.integers(1, 60), min_size=1),
)
def test_ddmin_over_runs_keeps_exactly_the_counts_the_predicate_needs_in_few_calls(runs, needed):
    items = [value for value, length in runs for _ in range(length)]
    needed = {value: count for value, count in needed.items() if items.count(value) >= count}
    if not needed:
        return
    calls = 0

    def test(subset):
        nonlocal calls
        calls += 1
        return all(list(subset).count(value) >= count for value, count in needed.items())

    result = ddmin(items, test, key=lambda item: item)

    assert calls <= 40 * len(runs), f"{calls} calls for {len(runs)} runs of {len(items)} items"
    assert sorted(result) == sorted(value for value, count in needed.items() for _ in range(count))
    for i in range(len(result)):
        assert not test(result[:i] + result[i + 1 :]), f"{result} is not 1-minimal"


@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.data())
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_a_candidate_renders_the_same_whichever_units_of_a_run_it_keeps(compression, seed, copies, data):
    """The invariant behind one test per run: identical consecutive units (a replayed event
    line, bare newlines) render to the same bytes whichever of them a candidate keeps."""
    log = next(generate(1, seed=seed, turns=(1, 3), max_events=60))
    events = list(log.events)
    at = data.draw(st.integers(0, len(events) - 1), label="repeated event")
    events[at + 1 : at + 1] = [events[at]] * (copies - 1)
    tail = [b""] * copies
    example = _with_tail(events, tail, compression)
    layout = _layout(example)
    runs = [
        run for run in _runs(range(len(layout.units)), lambda i: _same_unit(layout.units[i])) if len(run) > 1
    ]
    assert len(runs) >= 2, "the repeated event and the bare newlines are runs"
    others = [i for i in range(len(layout.units)) if not any(i in run for run in runs)]
    kept_others = (
        data.draw(st.lists(st.sampled_from(others), unique=True), label="others kept") if others else []
    )
    renders = set()
    choices = [(run, data.draw(st.integers(0, len(run)), label="how many")) for run in runs]
    for _ in range(3):
        keep = list(kept_others)
        for run, count in choices:
            keep += data.draw(st.permutations(run), label="which")[:count]
        renders.add(layout.render(sorted(keep)).data)
    assert len(renders) == 1


def _first_of(test, log):
    """``StillFails.first`` over ``test``: every candidate of a group is asked (as a batch
    checker is), the index of the first that holds answered; ``log`` records group sizes."""

    def first(candidates):
        log.append(len(candidates))
        answers = [test(c) for c in candidates]
        return answers.index(True) if True in answers else None

    return first


@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=40),
    st.sets(st.integers(0, 9), max_size=4),
    st.integers(0, 2**32 - 1),
    st.integers(2, 16),
    st.booleans(),
)
def test_ddmin_asking_several_candidates_at_once_gives_exactly_the_one_at_a_time_result(
    items, needed, salt, width, runs
):
    """Whatever the predicate (monotone or not), asking ``width`` candidates at a time and
    taking the first that holds is the sequential search: same result, same accepted steps."""
    import hashlib

    def test(subset):  # needs ``needed``, and then an arbitrary but fixed answer per subset
        if not needed <= set(subset):
            return False
        digest = hashlib.blake2b(repr((salt, list(subset))).encode(), digest_size=1).digest()[0]
        return digest < 200

    if not test(items):
        return
    key = (lambda item: item) if runs else None
    groups: list[int] = []
    alone = ddmin(items, test, key=key)
    together = ddmin(items, test, key=key, first=_first_of(test, groups), width=width)
    assert together == alone
    assert all(1 <= g <= width for g in groups)


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_minimise_with_batched_questions_gives_the_same_log_in_fewer_rounds(compression):
    from dshfuzz.harness import StillFails

    example = _with_tail([_message(i, f"text {i}") for i in range(30)], [b"garbled"], compression)

    def holds(ex: Example) -> bool:
        return b"garbled" in _bare_lines(ex)

    one = _Counted(holds)
    alone = minimise(example, one)
    groups: list[int] = []
    together = minimise(example, StillFails(holds, _first_of(holds, groups), width=16))
    assert together == alone
    asked = sum(groups) + 0
    assert groups and max(groups) > 1, "no question was asked in a batch"
    assert len(groups) < len(one.sizes), f"{len(groups)} batches for {len(one.sizes)} single questions ({asked} asked)"


@pytest.mark.parametrize("confused", [["turn/start"], {"t": 1}, 7, None])
def test_an_event_whose_type_is_not_a_string_minimises_like_any_other(confused):
    """A type-confused event (its type a list, as a campaign's type-confusion mutants write)
    once crashed the minimiser's layout (an unhashable dict key), ending the worker."""
    import json

    events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
              {"type": confused, "seq": 1, "time": 2, "data": {"turn": 1}},
              {"type": "turn/end", "seq": 2, "time": 3, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    data = b"".join(json.dumps(x).encode() + b"\n" for x in [header, *events])
    example = Example(data, "none")
    assert len(_layout(example).units) == 3
    smaller = minimise(example, lambda candidate: b'"seq": 1' in candidate.data)
    assert b'"seq": 1' in smaller and b"turn/end" not in smaller, smaller
