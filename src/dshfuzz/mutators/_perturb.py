"""Robustness perturbations: malformed input a checker must turn into findings, never a crash.

Each perturbation breaks the input in a way no contract allows (a scalar where an
event belongs, a wrong JSON type in a field, nesting or strings far past normal
sizes placed where the contract wants something else, invalid UTF-8, a byte-order
mark, CRLF line ends). ``must_find`` says whether a finding is required; where the
official reader itself accepts the input (``crlf``: JSON.parse ignores the
``\\r``) only "no crash, a report" is required.

``type-confusion`` is one a campaign runs (a stratum of its own, see
:mod:`dshfuzz.harness._strategy`): it declares no rule, so the official layers say what
each perturbed log is, and a checker that crashes on it, or accepts what a layer refuses,
is a finding. Its variants cover what ``not-an-event``, ``wrong-type-envelope`` and
``wrong-type-field`` do, at every depth and with more shapes. The perturbations by schema
(:mod:`._schema`: values just outside a domain, duplicated identifiers, seq-reference
encodings), the framing boundaries (:mod:`._boundary`) and the aimed families (:mod:`._aimed`)
register through :func:`perturbation` too and run the same way; :mod:`._perturbations` holds
the table of them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from dshfuzz.model import ENVELOPE_KEYS, JsonDecodeError, JsonValue, dumpb, loads

from ._base import CompressionPolicy, Edit, Level, MutateFn
from ._draft import ByteDraft, EventDraft, Inapplicable, LineDraft
from ._select import choose

__all__ = ["TYPE_CONFUSIONS", "Confusion", "Perturbation", "confuse", "perturbation"]


@dataclass(frozen=True, slots=True)
class Perturbation(Edit):
    """One robustness perturbation at one :class:`Level`."""

    name: str
    summary: str
    level: Level
    fn: MutateFn = field(repr=False, compare=False)
    must_find: bool = True
    compression: CompressionPolicy = "any"
    formats: tuple[int, ...] = (0, 1)
    """The format versions of the generated logs a campaign draws for it."""


_PERTURBATIONS: list[Perturbation] = []


def perturbation(name: str, summary: str, level: Level, *, must_find: bool = True,
                 compression: CompressionPolicy = "any", formats: tuple[int, ...] = (0, 1)) -> Callable[[MutateFn], MutateFn]:
    def wrap(fn: MutateFn) -> MutateFn:
        _PERTURBATIONS.append(Perturbation(name, summary, level, fn, must_find, compression, formats))
        return fn

    return wrap


def _event_line(lines: LineDraft, data: Any) -> tuple[int, int]:
    count = lines.count
    if count < 2:
        raise Inapplicable("no event line")
    return lines.locate(data.draw(st.integers(1, count - 1), label="line"))


@perturbation("not-an-event", "JSON null, a scalar or an array where an event row belongs", Level.LINE)
def not_an_event(lines: LineDraft, data: Any) -> str:
    """Replaces a drawn event line by a drawn non-object JSON value."""
    f, i = _event_line(lines, data)
    value = data.draw(st.sampled_from((None, 0, -1, 1.5, "event", True, False, [], [{}])), label="value")
    lines.frames[f][i] = dumpb(value)
    return f"an event line replaced by {value!r}"


_OTHER_TYPES: tuple[JsonValue, ...] = (None, True, 0, -7, 2.5, "", "x", [], [1], {}, {"k": 1})


@perturbation("wrong-type-envelope", "a wrong JSON type in an envelope field of an event", Level.EVENT)
def wrong_type_envelope(draft: EventDraft, data: Any) -> str:
    """Gives a drawn envelope key of a drawn event a value of a different JSON type (an
    absent optional key is added that way)."""
    i = choose(data, draft.objects(), "event object")
    key = data.draw(st.sampled_from(ENVELOPE_KEYS), label="key")
    current = draft.events[i].get(key)
    absent = key not in draft.events[i]
    others = [
        v for v in _OTHER_TYPES
        if not _same_type(v, current)
        and not (key == "ignorable" and v is True)
        # a list of earlier seqs is a valid sourceEventSeqs wherever the key may appear
        and not (key == "sourceEventSeqs" and absent and type(v) is list)
    ]
    draft.events[i][key] = data.draw(st.sampled_from(others), label="value")
    return f"seq {i} {key} = {draft.events[i][key]!r}"


def _same_type(a: JsonValue, b: JsonValue) -> bool:
    number = (int, float)
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b)
    return (type(a) in number and type(b) in number) or type(a) is type(b)


def _paths(value: JsonValue, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [prefix] if prefix else []
    if type(value) is dict:
        out += [p for k, v in value.items() for p in _paths(v, (*prefix, k))]
    elif type(value) is list:
        out += [p for j, v in enumerate(value) for p in _paths(v, (*prefix, j))]
    return out


@perturbation("wrong-type-field", "a wrong JSON type in any field of an event", Level.EVENT, must_find=False)
def wrong_type_field(draft: EventDraft, data: Any) -> str:
    """Replaces the value at a drawn path (any depth) of a drawn event by a value of a
    different JSON type. Some fields constrain nothing, so no finding is required."""
    i = choose(data, draft.objects(), "event object")
    path = choose(data, _paths(draft.events[i]), "field")
    holder = draft.events[i]
    for key in path[:-1]:
        holder = holder[key]
    others = [v for v in _OTHER_TYPES if not _same_type(v, holder[path[-1]])]
    holder[path[-1]] = data.draw(st.sampled_from(others), label="value")
    return f"seq {i} {'.'.join(map(str, path))} = {holder[path[-1]]!r}"


def _splice(lines: LineDraft, f: int, i: int, key: str, literal: bytes) -> None:
    """Set ``key`` of the object on line ``(f, i)`` to the raw JSON text ``literal``."""
    try:
        value = loads(lines.frames[f][i])
    except JsonDecodeError:
        raise Inapplicable("the line is not JSON") from None
    if type(value) is not dict:
        raise Inapplicable("the line is not an object")
    marker = "\u2063dshfuzz-splice\u2063"
    value[key] = marker
    lines.frames[f][i] = dumpb(value).replace(dumpb(marker), literal)


@perturbation("deep-nesting", "arrays nested tens of thousands deep as a line or in place of seq/type",
              Level.LINE)
def deep_nesting(lines: LineDraft, data: Any) -> str:
    """Puts ``[[[...]]]`` of a drawn depth (1,000-200,000) in place of a drawn event line, or
    of its ``seq`` or ``type``."""
    f, i = _event_line(lines, data)
    depth = data.draw(st.integers(1_000, 200_000), label="depth")
    literal = b"[" * depth + b"]" * depth
    where = data.draw(st.sampled_from(("line", "seq", "type")), label="where")
    if where == "line":
        lines.frames[f][i] = literal
    else:
        _splice(lines, f, i, where, literal)
    return f"{depth}-deep nesting as {where}"


@perturbation("huge-string", "a string of megabytes in place of an event's type, seq or surfaceOp", Level.EVENT)
def huge_string(draft: EventDraft, data: Any) -> str:
    """Sets a drawn event's ``type``, ``seq`` or ``surfaceOp`` to a string of a drawn size
    (1-4 MiB) of one drawn character."""
    i = choose(data, draft.objects(), "event object")
    key = data.draw(st.sampled_from(("type", "seq", "surfaceOp")), label="key")
    size = data.draw(st.integers(1 << 20, 4 << 20), label="size")
    char = data.draw(st.sampled_from(("x", "/", "\u00e9", "\U0001f600")), label="char")
    draft.events[i][key] = char * size
    return f"seq {i} {key} = {size}-character string"


_INVALID_UTF8 = (b"\xff", b"\xfe\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80")


@perturbation("invalid-utf8", "invalid UTF-8 bytes at the start of a line", Level.LINE)
def invalid_utf8(lines: LineDraft, data: Any) -> str:
    """Prefixes a drawn line (the header included) with a drawn invalid UTF-8 sequence."""
    line = data.draw(st.integers(0, lines.count - 1), label="line")
    f, i = lines.locate(line)
    bad = data.draw(st.sampled_from(_INVALID_UTF8), label="bytes")
    lines.frames[f][i] = bad + lines.frames[f][i]
    return f"line {line + 1} prefixed with {bad!r}"


@perturbation("bom", "a UTF-8 byte-order mark at the start of the file (an editor's save)", Level.BYTE)
def bom(file: ByteDraft, data: Any) -> str:
    """Prefixes the whole file with ``EF BB BF`` (no draws): the header line no longer
    parses, and a zstd file no longer starts with a frame magic."""
    file.data[:0] = b"\xef\xbb\xbf"
    return "BOM at byte 0"


@perturbation("crlf", "CRLF line ends on every line", Level.LINE, must_find=False)
def crlf(lines: LineDraft, data: Any) -> str:
    """Terminates every line with ``\\r\\n`` (no draws). JSON.parse treats ``\\r`` as
    whitespace, so the official reader accepts it."""
    for frame in lines.frames:
        frame[:] = [line + b"\r" for line in frame]
    return "CRLF line ends"


_Path = tuple[str | int, ...]
"""A JSON path inside one event: object keys and array indices; ``()`` is the event itself."""

TYPE_CONFUSIONS = (
    "null",
    "other-type",
    "empty-container",
    "huge-number",
    "long-string",
    "drop-key",
    "unknown-key",
    "content-element",
)
"""The variants of :func:`type_confusion`, in the order a draw shrinks through them."""

_HUGE_NUMBERS: tuple[int | float, ...] = (
    1e308, -1e308, 1.7976931348623157e308, 2.0**64, -(2.0**63), 9007199254740993, 1e21, -1e21,
)
"""Finite numbers JSON.parse reads far past any count, seq or size a log holds (beyond the
safe integers, or past every int64): a checker that does arithmetic or allocation with them
must still answer. Non-finite literals (``1e400``) are the lossy-number mutators' business."""

_UNKNOWN_KEYS = ("x-dshfuzz-unknown", "unknown", "__proto__", "constructor", "toString", "")
"""Keys no contract defines, among them the names a JavaScript object already answers to
(``obj.__proto__``, ``obj.constructor``) and the empty key."""

_LONG_STRING_CHARS = ("x", "\u00e9", "\U0001f600", '"', "\u0000")
_NON_OBJECTS: tuple[JsonValue, ...] = (None, 0, -1, 2.5, True, "", "text", [], [{}])


def _all_paths(value: JsonValue) -> list[_Path]:
    """Every path in ``value``, ``()`` first, then depth-first in document order (an explicit
    stack: a damaged log may nest past the interpreter's recursion limit)."""
    out: list[_Path] = []
    stack: list[tuple[_Path, JsonValue]] = [((), value)]
    while stack:
        path, item = stack.pop()
        out.append(path)
        if type(item) is dict:
            stack.extend(((*path, k), v) for k, v in reversed(list(item.items())))
        elif type(item) is list:
            stack.extend(((*path, j), v) for j, v in reversed(list(enumerate(item))))
    return out


def _at(event: JsonValue, path: _Path) -> JsonValue:
    for step in path:
        event = event[step]
    return event


def _by_depth(data: Any, paths: list[_Path], label: str) -> _Path:
    """One of ``paths``: a depth first, then a path of that depth, so the few shallow paths (the
    event itself, its envelope) are drawn as often as the many deep ones. Shrinks towards the
    shallowest, first path."""
    depths = sorted({len(p) for p in paths})
    depth = choose(data, depths, f"{label} depth")
    return choose(data, [p for p in paths if len(p) == depth], label)


def _show(path: _Path) -> str:
    """``event``, ``event.data.message.content[0]``: a path as a reader writes it."""
    return "event" + "".join(f"[{step}]" if type(step) is int else f".{step}" for step in path)


def _replace(draft: EventDraft, i: int, path: _Path, value: JsonValue) -> None:
    if not path:
        draft.events[i] = value
    else:
        _at(draft.events[i], path[:-1])[path[-1]] = value


@dataclass(frozen=True, slots=True)
class Confusion:
    """Where one :func:`confuse` edit landed: event ``index``; ``path`` inside it (``()``: the
    event itself; for ``unknown-key`` the added key's path, for ``drop-key`` the dropped
    one's); ``value`` the value now there (``None`` for a dropped key)."""

    variant: str
    index: int
    path: _Path
    value: JsonValue
    description: str


@perturbation(
    "type-confusion",
    "at any JSON path of an event, the event itself included: a value replaced by null, another JSON "
    "type, an empty container, a huge number or a long string; a key dropped or an unknown key added; a "
    "content-array element replaced by null or a non-object",
    Level.EVENT,
    must_find=False,
)
def type_confusion(draft: EventDraft, data: Any) -> str:
    """Draws a variant of :data:`TYPE_CONFUSIONS` and applies it with :func:`confuse`. No
    rule is declared: whether the log is still valid is for the official layers to say (a
    field that constrains nothing accepts any value). Deterministic given the draws."""
    variant = data.draw(st.sampled_from(TYPE_CONFUSIONS), label="variant")
    return confuse(draft, data, variant).description


def _is_content_element(path: _Path) -> bool:
    """Whether ``path`` leads to an element of an array held under a ``content`` key."""
    return len(path) >= 2 and type(path[-1]) is int and path[-2] == "content"


def confuse(draft: EventDraft, data: Any, variant: str) -> Confusion:
    """Applies ``variant`` to a drawn event (of any JSON type: the log may be damaged already)
    at a drawn place (a depth first, then a path of that depth: the event itself at depth 0):

    * ``null``, ``other-type``, ``empty-container``, ``huge-number``, ``long-string``: the value
      at the path becomes null, a value of another JSON type, ``[]`` or ``{}`` (never the value
      it was), a number of :data:`_HUGE_NUMBERS`, or a string of a drawn length (1,000 to
      65,536) of one drawn character; at depth 0 the whole line is that value;
    * ``drop-key``: a key of an object is removed (every key of a valid event is a candidate,
      so the required ones are among them);
    * ``unknown-key``: an object (the event itself included) gains a key it lacked, from
      :data:`_UNKNOWN_KEYS`, with a drawn value;
    * ``content-element``: an element of an array held under a ``content`` key becomes null
      or another non-object.

    The edit always changes the event, and nothing else in the log. :class:`Inapplicable`
    when the drawn event has no place for the variant. ``content-element`` draws among the
    events that hold a content element (most events hold none: a blind draw would mostly
    miss), every other variant among all events."""
    if variant == "content-element":
        holders = [i for i, e in enumerate(draft.events) if any(_is_content_element(p) for p in _all_paths(e))]
        i = choose(data, holders, "event with a content element")
    else:
        i = choose(data, range(len(draft.events)), "event")
    event = draft.events[i]
    paths = _all_paths(event)
    if variant == "drop-key":
        path = _by_depth(data, [p for p in paths if p and type(_at(event, p[:-1])) is dict], "key")
        del _at(event, path[:-1])[path[-1]]
        return Confusion(variant, i, path, None, f"seq {i}: {_show(path)} dropped")
    if variant == "unknown-key":
        where = _by_depth(data, [p for p in paths if type(_at(event, p)) is dict], "object")
        holder = _at(event, where)
        absent = [k for k in _UNKNOWN_KEYS if k not in holder]
        key = choose(data, absent, "unknown key")
        value = data.draw(st.sampled_from((None, 1, "x", True, [], {})), label="value")
        holder[key] = value
        shown = f"seq {i}: {_show(where)} gains the unknown key {key!r}"
        return Confusion(variant, i, (*where, key), value, shown)
    if variant == "content-element":
        elements = [p for p in paths if _is_content_element(p)]
        path = _by_depth(data, elements, "content element")
        current = _at(event, path)
        others = [v for v in _NON_OBJECTS if not (v == current and _same_type(v, current))]
        value = choose(data, others, "element")
        _replace(draft, i, path, value)
        return Confusion(variant, i, path, value, f"seq {i}: content element {_show(path)} = {value!r}")
    if variant not in TYPE_CONFUSIONS:
        raise ValueError(f"unknown type confusion {variant!r}")
    path = _by_depth(data, paths, "path")
    current = _at(event, path)
    if variant == "null":
        candidates: list[JsonValue] = [None] if current is not None else []
    elif variant == "other-type":
        candidates = [v for v in _OTHER_TYPES if not _same_type(v, current)]
    elif variant == "empty-container":
        empties: tuple[JsonValue, ...] = ([], {})
        candidates = [v for v in empties if not (type(v) is type(current) and not current)]
    elif variant == "huge-number":
        candidates = [v for v in _HUGE_NUMBERS if not (v == current and _same_type(v, current))]
    else:
        size = data.draw(st.integers(1_000, 65_536), label="length")
        char = data.draw(st.sampled_from(_LONG_STRING_CHARS), label="char")
        candidates = [char * size] if current != char * size else []
    value = choose(data, candidates, f"{variant} value")
    _replace(draft, i, path, value)
    long = variant == "long-string"
    shown = f"{len(value)}-character string" if long else repr(value)
    return Confusion(variant, i, path, value, f"seq {i}: {_show(path)} = {shown}")
