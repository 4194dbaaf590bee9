"""Checker fixes for what the schema and boundary perturbations found (issue 32 item 4).

Each case is the minimised witness of a campaign finding, with the official layers' verdict
it was judged against: the checker must name exactly the layers that refuse."""

from __future__ import annotations

from typing import Any

from dshfuzz.checker import CheckOptions, RuleId, check_log
from dshfuzz.checker._surface import released_decodes_sources
from dshfuzz.model import compress_frame, dumpb, parse_log

_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/p", "delegationDepth": 0}


def _findings(data: bytes, compression: str = "none") -> list[Any]:
    return [f for f in check_log(parse_log(data, compression=compression), CheckOptions(strict=True)).findings
            if f.severity == "error"]


def test_a_lone_unterminated_header_line_is_refused_by_the_loader_and_released() -> None:
    """load: "empty or header-less session log"; released: "log has no complete header line"."""
    (h1,) = _findings(dumpb(_HEADER))
    assert h1.rule is RuleId.H1 and {str(x) for x in h1.refused_by} == {"load", "released"}
    assert not _findings(dumpb(_HEADER) + b"\n")


def test_a_torn_header_frame_is_refused_by_the_loader_and_released() -> None:
    """load and released: "empty or header-less Zstandard session log" (no complete frame)."""
    whole = compress_frame(dumpb(_HEADER) + b"\n")
    for cut in (len(whole) - 4, len(whole) - 1):  # the header text decodes, the frame ends early
        (h1,) = _findings(whole[:cut], "zstd")
        assert h1.rule is RuleId.H1 and {str(x) for x in h1.refused_by} == {"load", "released"}, cut
    assert not _findings(whole, "zstd")


def test_negative_zero_anywhere_in_the_header_is_refused_by_seed_and_released() -> None:
    """seed: "session header is not losslessly JSON-serializable"; released: the version check."""
    text = dumpb({**_HEADER, "version": "marker"}).replace(dumpb("marker"), b"-0") + b"\n"
    (h2,) = _findings(text)
    assert h2.rule is RuleId.H2 and {str(x) for x in h2.refused_by} == {"seed", "released"}


def test_an_unterminated_last_frame_is_the_loaders_refusal_alone() -> None:
    """released concatenates the frames' text: only the loader's frame walk refuses."""
    event = {"type": "turn/end", "seq": 0, "time": 2, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    data = compress_frame(dumpb(_HEADER) + b"\n") + compress_frame(dumpb(event))
    (z2,) = _findings(data, "zstd")
    assert z2.rule is RuleId.Z2 and [str(x) for x in z2.refused_by] == ["load"]


def test_released_decodes_plain_seqs_and_ranges_as_its_codec_does() -> None:
    assert released_decodes_sources([0, 1], 2) and released_decodes_sources([[0, 2]], 3)
    assert released_decodes_sources([[88, 95]], 8)  # the decoder bounds the count, not the values
    assert released_decodes_sources([0, 0], 5)  # repeats are not its business
    assert not released_decodes_sources([0, 0], 1)  # "exceeds its event seq"
    assert not released_decodes_sources([[3, 4], 2], 9)  # "ranges must be strictly increasing"
    assert not released_decodes_sources([[4, 3]], 9) and not released_decodes_sources([[1]], 9)
    assert not released_decodes_sources([True], 9) and not released_decodes_sources([-1], 9)
    assert not released_decodes_sources([-0.0], 9) and not released_decodes_sources("0", 9)


def test_a_chunk_citing_an_undecodable_list_names_released() -> None:
    events = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 3, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/chunk", "seq": 2, "time": 4, "sourceEventSeqs": [-1],
         "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "reasoning"}}},
    ]
    text = b"".join(dumpb(x) + b"\n" for x in (_HEADER, *events))
    s2 = [f for f in _findings(text) if f.rule is RuleId.S2]
    assert s2 and all("released" in {str(x) for x in f.refused_by} for f in s2)
    events[2]["sourceEventSeqs"] = [0]
    text = b"".join(dumpb(x) + b"\n" for x in (_HEADER, *events))
    assert all("released" not in {str(x) for x in f.refused_by} for f in _findings(text) if f.rule is RuleId.S2)


def test_an_empty_header_id_is_the_loaders_refusal() -> None:
    """load: 'stored session identity mismatch: requested "unknown", header contains ""' (SP:1130)."""
    (h2,) = _findings(dumpb({**_HEADER, "id": ""}) + b"\n")
    assert h2.rule is RuleId.H2 and [str(x) for x in h2.refused_by] == ["load"]


def test_a_seed_longer_than_the_log_is_releaseds_refusal() -> None:
    """released: "Session inheritedEventCount exceeds its event count" (V01:1693); the others accept."""
    (h2,) = _findings(dumpb({**_HEADER, "seedLength": 3}) + b"\n")
    assert h2.rule is RuleId.H2 and [str(x) for x in h2.refused_by] == ["released"]
    event = {"type": "turn/end", "seq": 0, "time": 2, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    assert not [f for f in _findings(dumpb({**_HEADER, "seedLength": 1}) + b"\n" + dumpb(event) + b"\n")
                if f.rule is RuleId.H2]


def test_negative_zero_in_a_packed_rows_numbers_is_releaseds_refusal_too() -> None:
    """released: "released tool-call-chunks row N index must be a non-negative safe integer": its
    codec reads every number of a packed row (V01:1741-1777); seed and invariants read the members."""
    rows = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 3, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/chunk", "seq": 2, "time": 4,
         "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "tool-call"}}},
        {"type": "tool-call-chunks", "seq0": 3, "time0": 5,
         "data": {"turn": 1, "step": 1, "index": "marker", "dt": [1], "id": "call_1", "name": "read", "args": ["{", "}"]}},
    ]
    text = b"".join(dumpb(x) + b"\n" for x in (_HEADER, *rows)).replace(dumpb("marker"), b"-0")
    e4 = [f for f in _findings(text) if f.rule is RuleId.E4]
    assert e4 and all({str(x) for x in f.refused_by} == {"seed", "invariants", "released"} for f in e4)


def test_a_header_id_seed_cannot_match_names_seed() -> None:
    """seed: 'session header id "id" does not match session id "id"' (S:1118) for an array or an
    object (the snapshot is a copy); a number, boolean or null matches itself (measured)."""
    for value, seed in ((["id"], True), ({"a": 1}, True), (None, False), (5, False), (True, False)):
        (h2,) = [f for f in _findings(dumpb({**_HEADER, "id": value}) + b"\n") if f.rule is RuleId.H2]
        assert ("seed" in {str(x) for x in h2.refused_by}) is seed, value


def test_the_format_0_loaders_refusals_are_warnings_in_a_later_format() -> None:
    """The loader reads format 0 only; a format-1 log's layers read the joined text and accept an
    empty header id and a torn last frame: no error (found as false alarms of a checker built on
    this one, by a 60-second campaign's header and framing perturbations)."""
    v1 = {**_HEADER, "version": 1}
    event = {"type": "turn/end", "seq": 0, "time": 2, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    torn = compress_frame(dumpb(v1) + b"\n") + compress_frame(dumpb(event))
    empty_id = dumpb({**v1, "id": ""}) + b"\n"
    assert not _findings(torn, "zstd") and not _findings(empty_id)
    for data, compression, rule in ((torn, "zstd", RuleId.Z2), (empty_id, "none", RuleId.H2)):
        warned = [f for f in check_log(parse_log(data, compression=compression), CheckOptions(strict=True)).findings
                  if f.rule is rule]
        assert [(str(f.severity), f.refused_by) for f in warned] == [("warning", ())], warned


def _request_header_log(tools: Any, version: int) -> bytes:
    """A request/header with ``tools`` in a step no assistant message follows: the meter never compares it."""
    events = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 3, "data": {"turn": 1, "step": 1}},
        {"type": "request/header", "seq": 2, "time": 4, "data": {"reason": "initial", "header": {
            "config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}, "system": "s", "tools": tools}}},
    ]
    return b"\n".join(dumpb(x) for x in [{**_HEADER, "version": version}, *events]) + b"\n"


def test_tools_that_are_no_array_are_refused_by_the_layers_that_read_them_so() -> None:
    """Measured: released refuses any non-array in format 0; the serializer sends what the canonical header keeps
    (a positive length) and fails; with no usage anchor the meter never compares headers, so only null trips it."""
    expected = {
        (0, "ls"): {"released", "wire"}, (0, True): {"released"}, (0, None): {"seed", "meter", "released", "wire"},
        (1, "ls"): {"wire"}, (1, None): {"meter", "wire"},
    }
    for (version, tools), layers in expected.items():
        (e10,) = _findings(_request_header_log(tools, version))
        assert e10.rule is RuleId.E10 and {str(x) for x in e10.refused_by} == layers, (version, tools, e10)
    everything = check_log(parse_log(_request_header_log(True, 1)), CheckOptions(strict=True)).findings
    (warning,) = [f for f in everything if f.rule is RuleId.E10]
    assert warning.severity == "warning" and not warning.refused_by, "format 1 and no layer keeps it: a warning"


def _finishes_cited(*replays: Any, version: int = 1) -> bytes:
    """A step whose assistant message (with usage: the meter's anchor) cites a text block-end and then
    finish chunks with ``replays`` as their replayState (``None``: no replayState), in that order."""
    chunks = [{"type": "block-end", "index": 0, "block": {"type": "text", "text": "hi"}},
              *({"type": "finish", "reason": {"kind": "stop"}, **({} if r is None else {"replayState": r})} for r in replays)]
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 3, "data": {"turn": 1, "step": 1}},
        {"type": "request/header", "seq": 2, "time": 4, "data": {"reason": "initial", "header": {
            "config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}}},
        *({"type": "assistant/chunk", "seq": 3 + i, "time": 5 + i, "data": {"turn": 1, "step": 1, "chunk": c}}
          for i, c in enumerate(chunks)),
    ]
    n = len(events)
    events += [
        {"type": "assistant/message", "seq": n, "time": 5 + n, "sourceEventSeqs": list(range(3, n)), "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "usage": {"inputTokens": 5, "outputTokens": 1}, "message": {
             "id": "m", "role": "assistant", "content": [{"type": "text", "text": "hi"}],
             "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}}}},
        {"type": "step/end", "seq": n + 1, "time": 6 + n, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": n + 2, "time": 7 + n, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    return b"\n".join(dumpb(x) for x in [{**_HEADER, "version": version}, *events]) + b"\n"


def test_the_last_cited_finish_with_null_replay_blocks_is_the_meters_refusal() -> None:
    """The meter's assembler keeps the last finish chunk's replayState and reads ``blocks.length`` (DL:851-855)."""
    null = {"response": {"id": "r"}, "blocks": None}
    for version in (0, 1):
        for replays in ([null], [null, {}, null], [{}, null]):
            (t2,) = _findings(_finishes_cited(*replays, version=version))
            assert t2.rule is RuleId.T2 and [str(x) for x in t2.refused_by] == ["meter"], (version, replays)
        for replays in ([None], [null, {}], [null, None], [{"blocks": 5}]):
            assert not _findings(_finishes_cited(*replays, version=version)), (version, replays)


def _replaced_twice(second: tuple[int, int], version: int = 1) -> bytes:
    """A user message, replaced by an assistant message whose surfaceOp has a member too many (the fold
    refuses it, the meter reads it as the replace it names), then replaced again over ``second``."""
    message = {"role": "assistant", "id": "a", "content": [{"type": "text", "text": "hi"}],
               "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}}
    events = [
        {"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 3, "data": {"turn": 1, "step": 1}},
        {"type": "user/message", "seq": 2, "time": 4, "surfaceOp": "append",
         "data": {"id": "u", "role": "user", "content": [{"type": "text", "text": "go"}], "source": {"kind": "user"}}},
        {"type": "assistant/message", "seq": 3, "time": 5, "sourceEventSeqs": [2],
         "surfaceOp": {"op": "replace", "start": 2, "end": 2, "count": 1}, "data": {"turn": 1, "step": 1, "message": message}},
        {"type": "assistant/message", "seq": 4, "time": 6, "sourceEventSeqs": [second[0]],
         "surfaceOp": {"op": "replace", "start": second[0], "end": second[1]},
         "data": {"turn": 1, "step": 1, "message": {**message, "id": "b"}}},
    ]
    return b"\n".join(dumpb(x) for x in [{**_HEADER, "version": version}, *events]) + b"\n"


def test_the_meter_replaces_a_range_the_fold_refused_and_refuses_a_later_replace_of_it() -> None:
    """TM foldSurfaceTokens reads a malformed op's start/end and replaces that range: node 2 is gone
    when the second replace names it ("token surface: replace at seq 4 has invalid current range 2-2")."""
    gone = [f for f in _findings(_replaced_twice((2, 2))) if f.seq == 4]
    assert gone and "meter" in {str(x) for f in gone for x in f.refused_by}, gone
    kept = [f for f in _findings(_replaced_twice((3, 3))) if f.seq == 4]
    assert "meter" not in {str(x) for f in kept for x in f.refused_by}, kept


def test_an_event_that_is_no_object_is_the_meters_refusal_only_when_null() -> None:
    """The meter reads ``event.type`` of every event: null throws there, an array, a number or a
    string has none and is passed over (measured: "Cannot read properties of null (reading 'type')")."""
    for value, meter in ((None, True), ([], False), (5, False), ("x", False)):
        text = dumpb(_HEADER) + b"\n" + dumpb(value) + b"\n"
        (s8,) = [f for f in _findings(text) if f.rule is RuleId.S8]
        assert ("meter" in {str(x) for x in s8.refused_by}) is meter, (value, s8.refused_by)
