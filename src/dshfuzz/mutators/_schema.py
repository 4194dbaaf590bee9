"""Perturbations by schema: values just outside a validator's domain, duplicated identifiers
and every seq-reference encoding, at any field of any event and of the header.

Like ``type-confusion`` these declare no rule (``must_find=False``): the official layers say
what each perturbed log is, so a perturbation never needs to know the validator it aims at.
They aim by shape instead of by schema table: every numeric, string or boolean leaf is a
candidate, and the values drawn for it are the ones validators draw their lines at (zero,
negative, negative zero, past the timer and safe-integer ranges, surrounding whitespace,
non-canonical instants, lengths past a path segment). A field whose validator accepts the
value leaves the log valid, and a checker that refuses it is a false alarm.

* ``out-of-domain`` and ``header-out-of-domain`` (line level: ``-0`` has no other spelling,
  the serialiser writes ``0``);
* ``duplicate-id`` (event level): an element of a list repeated, an event repeated, an
  identifier copied from another event, a seq repeated;
* ``seq-encoding`` (event level): a seq-reference list or range rewritten in each encoding a
  format version uses (plain seqs, ``[start, end]`` ranges) and just outside each.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from dshfuzz.contracts.seqs import SEQ_LIST_KEYS
from dshfuzz.model import JsonDecodeError, JsonValue, dumpb, loads

from ._base import Level
from ._draft import EventDraft, Inapplicable, LineDraft, copy_json
from ._perturb import _all_paths, _at, _by_depth, _Path, _show, perturbation
from ._select import choose

__all__ = ["DUPLICATIONS", "SEQ_ENCODINGS"]

_NUMBERS: tuple[int | float, ...] = (-1, 0, 1.5, 99, 600, 299, 2147483648, 9007199254740992, -9007199254740992)
"""Past the lines validators draw: non-positive, fractional, below/above HTTP status, one
short of a five-minute schedule, one past the 32-bit timer range, past the safe integers."""

_INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
_NEG_ZERO = "\u2063dshfuzz-negative-zero\u2063"
"""A marker string spliced into ``-0`` after serialisation (``dumpb(-0.0)`` writes ``0``)."""
# a seq list's size follows the log's seq numbers, which a hostile or fuzzed log may set to 10**15
_MAX_DRAWN_CITES = 64
_MAX_LIST = 4096


def _string_edges(value: str, data: Any) -> list[str]:
    """Strings just outside a drawn string's domain: whitespace around it, empty, too long for
    a path segment (245-256 bytes: NAME_MAX with the log's suffix), case-flipped, and for an
    instant the non-canonical spellings of the same time."""
    out = [f" {value}", f"{value} ", f"\t{value}\n", "", value.swapcase()]
    out.append(value + "x" * max(0, data.draw(st.sampled_from((245, 250, 256, 1025)), label="length") - len(value)))
    if _INSTANT.match(value):
        bare = value[:19]
        out += [bare + "Z", bare + ".000+00:00", bare.replace("T", " ") + "Z", value.lower(), bare + ".0Z"]
    return [s for s in out if s != value]


def _leaves(value: JsonValue) -> list[_Path]:
    return [p for p in _all_paths(value) if p and type(_at(value, p)) not in (dict, list)]


_ABSENT_HEADER: tuple[tuple[str, tuple[JsonValue, ...]], ...] = (
    ("seedLength", (1_000_000, -1, _NEG_ZERO)),
    ("parentSession", ("", " parent")),
    ("agentPreset", ("", " preset")),
    ("origin", ("Subagent", "subagent ")),
    ("sandboxMode", ("workspace-write",)),
)
"""Optional header members most logs leave out, with the values just outside their domain (a
seed longer than the log, an empty parent, a retired policy member): an edit must be able to
reach a field the log does not hold yet."""

_ABSENT_ROW: tuple[tuple[str, tuple[JsonValue, ...]], ...] = (("ignorable", (False,)),)
"""Optional envelope members of any row: ``ignorable`` is ``true`` or absent."""

_Place = tuple[int, _Path, tuple[JsonValue, ...] | None]
"""A line, a path in it, and the edge values of an absent member (``None``: the leaf is there)."""


def _signature(value: JsonValue, path: _Path) -> tuple[str, ...]:
    """A field as the schema names it: the row's type and the path with indices dropped."""
    kind = value.get("type") if type(value) is dict else None
    return (kind if type(kind) is str else "?", *(step if type(step) is str else "[]" for step in path))


def _edges(current: JsonValue, data: Any) -> list[JsonValue]:
    """The values just outside the domain of a field now holding ``current``, never ``current``."""
    if type(current) is bool:
        return [not current]
    if type(current) in (int, float):
        numbers = [n for n in (*_NUMBERS, current - 1, current + 1) if not (n == current and type(n) is type(current))]
        return [*numbers, _NEG_ZERO]
    if type(current) is str:
        return list(_string_edges(current, data))
    return []


def _out_of_domain(lines: LineDraft, data: Any, header: bool) -> str:
    """Sets a drawn field of the header (``header``) or of a row to a drawn value of
    :func:`_edges`. A row field is drawn by schema, not by position: a field signature (row
    type, path without indices) first, then one of its places, so a field that one rare row
    holds is drawn as often as one every row holds. Absent optional members
    (:data:`_ABSENT_HEADER`, :data:`_ABSENT_ROW`) are places too. The line is re-serialised
    canonically; ``-0`` is spliced in as text. Deterministic given the draws."""
    values: dict[int, JsonValue] = {}
    for n in range(0, 1) if header else range(1, lines.count):
        f, i = lines.locate(n)
        try:
            values[n] = loads(lines.frames[f][i])
        except JsonDecodeError:
            continue
    places: dict[tuple[str, ...], list[_Place]] = {}
    for n, value in values.items():
        if (n == 0) != header or type(value) is not dict:
            continue
        for path in _leaves(value):
            places.setdefault(_signature(value, path), []).append((n, path, None))
        for key, absent_edges in _ABSENT_HEADER if header else _ABSENT_ROW:
            if key not in value:
                places.setdefault(_signature(value, (key,)), []).append((n, (key,), absent_edges))
    signature = choose(data, sorted(places), "field")
    line, path, absent = choose(data, places[signature], "place")
    value = values[line]
    edges: list[JsonValue] = list(absent) if absent is not None else _edges(_at(value, path), data)
    if header and path == ("version",):
        # another known format is no edge: the log would be of that format, judged as the one it was drawn in
        edges = [e for e in edges if not (type(e) is int and 0 <= e <= 3)]
    new = choose(data, edges, "value")
    _at(value, path[:-1])[path[-1]] = new
    text = dumpb(value)
    if new == _NEG_ZERO:
        text = text.replace(dumpb(_NEG_ZERO), b"-0")
    f, i = lines.locate(line)
    lines.frames[f][i] = text
    shown = f"{len(new)}-character string" if type(new) is str and len(new) > 40 else ("-0" if new == _NEG_ZERO else repr(new))
    where = "header" + _show(path)[len("event"):] if header else _show(path)
    return f"line {line + 1}: {where} = {shown}"


_EDGE_VALUES = ("zero, negative, -0, fractional, past the timer or safe-integer range, surrounding whitespace, "
                "empty, too long, a non-canonical instant, a flipped boolean")


@perturbation(
    "out-of-domain",
    f"at any scalar field of any row (an absent ignorable included): a value just outside a validator's domain "
    f"({_EDGE_VALUES})",
    Level.LINE,
    must_find=False,
)
def out_of_domain(lines: LineDraft, data: Any) -> str:
    """A row field pushed just outside its domain (:func:`_out_of_domain`)."""
    return _out_of_domain(lines, data, header=False)


@perturbation(
    "header-out-of-domain",
    f"at any scalar field of the header (absent optional members and a retired policy member included): a "
    f"value just outside a validator's domain ({_EDGE_VALUES})",
    Level.LINE,
    must_find=False,
)
def header_out_of_domain(lines: LineDraft, data: Any) -> str:
    """A header field pushed just outside its domain (:func:`_out_of_domain`): a stratum of its
    own, since every layer reads the header and its few fields would be drawn rarely among the
    rows' many."""
    return _out_of_domain(lines, data, header=True)


DUPLICATIONS = ("list-element", "event", "identifier", "seq")
"""The variants of ``duplicate-id``."""

_ID_KEY = re.compile(r"(^id$|Id$|^route$|^key$|Key$)")
"""Keys that name something: ids (``id``, ``callId``, ``sessionId``, ``retryId`` ...), routes, keys."""


@perturbation(
    "duplicate-id",
    "a duplicate of an identifier that must be unique in its scope: a list element repeated in place (seqs, "
    "routes, references, tool calls), an event repeated after itself, an id copied from another event, a seq "
    "repeated",
    Level.EVENT,
    must_find=False,
)
def duplicate_id(draft: EventDraft, data: Any) -> str:
    """Draws a variant of :data:`DUPLICATIONS`:

    * ``list-element``: a drawn element of a drawn non-empty list (any depth of any event)
      is repeated right after itself;
    * ``event``: a drawn event is inserted again right after itself (later seqs and the
      references to them renumbered), so every id it carries appears twice;
    * ``identifier``: a string under an id-like key (:data:`_ID_KEY`) takes the value another
      event holds under the same key;
    * ``seq``: an event takes the seq of the event before it.

    The log changes; the seq of every event but the drawn one is kept (``event`` renumbers
    consistently). Deterministic given the draws."""
    variant = data.draw(st.sampled_from(DUPLICATIONS), label="variant")
    objects = draft.objects()
    if variant == "list-element":
        holders: dict[tuple[str, ...], list[tuple[int, _Path]]] = {}
        for i in objects:
            for p in _all_paths(draft.events[i]):
                if type(_at(draft.events[i], p)) is list and _at(draft.events[i], p):
                    holders.setdefault(_signature(draft.events[i], p), []).append((i, p))
        # by schema: a list field first (event type, path without indices), then one of its places
        i, path = choose(data, holders[choose(data, sorted(holders), "list field")], "non-empty list")
        items = _at(draft.events[i], path)
        j = data.draw(st.integers(0, len(items) - 1), label="element")
        items.insert(j + 1, copy_json(items[j]))
        return f"seq {i}: {_show(path)}[{j}] repeated"
    if variant == "event":
        by_type: dict[str, list[int]] = {}
        for i in objects:
            by_type.setdefault(_signature(draft.events[i], ())[0], []).append(i)
        # an event type first: the rare types are the ones whose ids must be unique (commands, dispatches)
        i = choose(data, by_type[choose(data, sorted(by_type), "event type")], "event")
        copy = copy_json(draft.events[i])
        draft.insert(i + 1, copy)
        return f"seq {i} repeated as seq {i + 1}"
    if variant == "identifier":
        named: dict[str, list[tuple[int, _Path]]] = {}
        for i in objects:
            for p in _all_paths(draft.events[i]):
                if p and type(p[-1]) is str and _ID_KEY.search(p[-1]) and type(_at(draft.events[i], p)) is str:
                    named.setdefault(p[-1], []).append((i, p))
        pairs = [(a, b) for places in named.values() for a in places for b in places
                 if a[0] != b[0] and _at(draft.events[a[0]], a[1]) != _at(draft.events[b[0]], b[1])]
        (i, path), (j, source) = choose(data, pairs, "two events naming different ids under one key")
        value = _at(draft.events[j], source)
        _at(draft.events[i], path[:-1])[path[-1]] = value
        return f"seq {i}: {_show(path)} = {value!r}, the id seq {j} holds"
    if variant != "seq":
        raise ValueError(f"unknown duplication {variant!r}")
    i = choose(data, [i for i in objects if i > 0], "event after the first")
    draft.events[i]["seq"] = i - 1
    return f"seq {i} repeats seq {i - 1}"


SEQ_ENCODINGS = ("plain", "ranges", "mixed-unordered", "reversed-range", "range-overflow", "repeat",
                 "too-many", "empty", "forward", "bad-pair", "non-integer", "range-ends")
"""The variants of ``seq-encoding``: the list encodings format versions use (plain seqs,
``[start, end]`` ranges), then the shapes just outside them."""


def _runs(seqs: list[int]) -> list[Any]:
    """``seqs`` (ascending) in the range encoding: runs of consecutive seqs as ``[start, end]``."""
    out: list[Any] = []
    for s in seqs:
        if out and type(out[-1]) is list and out[-1][1] == s - 1:
            out[-1][1] = s
        elif out and type(out[-1]) is int and out[-1] == s - 1:
            out[-1] = [out[-1], s]
        else:
            out.append(s)
    return out


def _seq_places(draft: EventDraft) -> list[tuple[int, str]]:
    """``(event, key)`` of every seq-reference list or range an event holds, and of every
    event with a seq (``sourceEventSeqs`` may be added to any event)."""
    out: list[tuple[int, str]] = []
    for i in draft.objects():
        event = draft.events[i]
        data = event.get("data") if type(event.get("data")) is dict else {}
        out.append((i, "sourceEventSeqs"))
        out += [(i, key) for key in SEQ_LIST_KEYS if type(data.get(key)) is list]
        out += [(i, key) for key in ("shadowedRange",) if type(data.get(key)) is dict]
        out += [(i, key) for key in ("surfaceOp",) if type(event.get(key)) is dict]
    return out


@perturbation(
    "seq-encoding",
    "a seq-reference list (sourceEventSeqs, messageSeqs, shadowedSeqs) or range (shadowedRange, a surface "
    "replacement's start/end) rewritten in each encoding a format version uses (plain seqs, [start, end] "
    "ranges) and just outside it: unordered, reversed, overflowing the event's seq, repeated, empty, forward, "
    "malformed pairs, non-integers, mismatched endpoints",
    Level.EVENT,
    must_find=False,
)
def seq_encoding(draft: EventDraft, data: Any) -> str:
    """Draws a place of :func:`_seq_places` and a variant of :data:`SEQ_ENCODINGS`, and writes the
    variant's list there (built from the seqs the place cites, or from drawn earlier seqs when
    it cites none). For a range object (``shadowedRange``, ``surfaceOp``) the variant moves an
    endpoint instead: reversed, forward, past the surface, or non-integer. Deterministic given
    the draws."""
    places: dict[str, list[tuple[int, str]]] = {}
    for i, key in _seq_places(draft):
        has = key != "sourceEventSeqs" or "sourceEventSeqs" in draft.events[i]
        places.setdefault(key if has else "sourceEventSeqs (added)", []).append((i, key))
    # the kind of reference first: the few lists and ranges would drown among the events that may gain one
    i, key = choose(data, places[choose(data, sorted(places), "reference kind")], "seq reference")
    event = draft.events[i]
    own = event.get("seq") if type(event.get("seq")) is int else i
    variant = data.draw(st.sampled_from(SEQ_ENCODINGS), label="variant")
    holder = event["data"] if key in (*SEQ_LIST_KEYS, "shadowedRange") else event
    if key in ("shadowedRange", "surfaceOp"):
        rng = holder[key]
        end = data.draw(st.sampled_from(("start", "end")), label="endpoint")
        values: list[JsonValue] = [own, own + 1, -1, 1.5, "1", None]
        if type(rng.get("start")) is int and type(rng.get("end")) is int:
            values += [rng["end"] + 1, rng["start"] - 1, rng["end"] if end == "start" else rng["start"]]
        value = choose(data, [v for v in values if v != rng.get(end)], "endpoint value")
        rng[end] = value
        return f"seq {i}: {key}.{end} = {value!r}"
    cited = [s for s in holder.get(key, []) if type(s) is int] if type(holder.get(key)) is list else []
    if not cited:
        if own < 1:
            raise Inapplicable("the first event can cite nothing earlier")
        lo = data.draw(st.integers(0, own - 1), label="first cited")
        last = data.draw(st.integers(lo, min(own - 1, lo + _MAX_DRAWN_CITES - 1)), label="last cited")
        cited = list(range(lo, last + 1))
    cited = sorted(set(cited))
    new: list[Any]
    if variant == "plain":
        new = list(cited)
    elif variant == "ranges":
        new = _runs(cited)
    elif variant == "mixed-unordered":
        new = [[cited[-1], cited[-1]], *cited[:-1]] if len(cited) > 1 else [[cited[0], cited[0]], cited[0]]
    elif variant == "reversed-range":
        new = [[cited[-1], cited[0]]] if len(cited) > 1 else [[cited[0] + 1, cited[0]]]
    elif variant == "range-overflow":
        new = [[0, own + data.draw(st.integers(0, 2), label="past")]]
    elif variant == "repeat":
        new = [*cited, cited[-1]]
    elif variant == "too-many":
        if own > _MAX_LIST:
            raise Inapplicable(f"seq {own}: a list longer than the seq would hold {own + 1} entries")
        new = [*range(own), 0]
    elif variant == "empty":
        new = []
    elif variant == "forward":
        new = [*cited, own + data.draw(st.integers(0, 1), label="past")]
    elif variant == "bad-pair":
        new = [choose(data, ([cited[0]], [cited[0], cited[-1], cited[-1]], [cited[0], str(cited[-1])], []), "pair")]
    elif variant == "non-integer":
        new = [*cited[:-1], choose(data, (cited[-1] + 0.5, str(cited[-1]), -1, None, True), "member")]
    else:  # range-ends: a range whose ends do not match the list's, when the event has both
        new = list(cited)
        rng = holder.get("shadowedRange") if holder is not event else None
        if type(rng) is dict:
            rng["end"] = cited[-1] + 1 if cited[-1] + 1 < own else cited[0] - 1
    if holder.get(key) == new:
        raise Inapplicable(f"the {variant} encoding is the list as it stands")
    holder[key] = new
    return f"seq {i}: {key} = {dumpb(new).decode()[:200]} ({variant})"
