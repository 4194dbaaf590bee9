"""``loads``/``dumps`` follow ``JSON.parse``/``JSON.stringify`` (expected strings come from Node 24)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dshfuzz.model import JsonDecodeError, dumpb, dumps, js_number, loads, may_hold_lossy_number
from dshfuzz.model._json import _encode_exact, orjson_is_exact, screen_numbers

# (python float, what Node prints for JSON.stringify of that number)
NUMBERS = [
    (1.0, "1"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (123456789012345680000.0, "123456789012345680000"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e300, "1.5e+300"),
    (5e-324, "5e-324"),
    (2.0**53, "9007199254740992"),
    (1e16, "10000000000000000"),
    (-7590199255898464.0, "-7590199255898464"),
    (123.456, "123.456"),
    (math.inf, "null"),
    (-math.inf, "null"),
    (math.nan, "null"),
]


@pytest.mark.parametrize(("value", "expected"), NUMBERS)
def test_numbers_print_as_javascript_prints_them(value: float, expected: str) -> None:
    assert js_number(value) == expected
    assert dumps(value) == expected
    assert dumps([value]) == f"[{expected}]"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2**53 - 1, "9007199254740991"),
        (2**53 + 1, "9007199254740992"),
        (12345678901234567890, "12345678901234567000"),
        (10**400, "null"),
    ],
)
def test_integers_beyond_the_safe_range_print_as_the_double_javascript_holds(value: int, expected: str) -> None:
    assert dumps(value) == expected


def test_array_index_keys_come_first_in_ascending_order_like_every_js_object() -> None:
    value = {"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6, "4294967294": 7}
    assert dumps(value) == '{"2":4,"10":2,"4294967294":7,"b":1,"a":3,"01":5,"4294967295":6}'


def test_strings_escape_exactly_like_json_stringify() -> None:
    assert dumps("\x00\x07\b\t\n\x0b\f\r\x1f\x7f\"\\/\u2028é😀") == '"\\u0000\\u0007\\b\\t\\n\\u000b\\f\\r\\u001f\x7f\\"\\\\/\u2028é😀"'


def test_lone_surrogates_are_escaped_and_pairs_are_one_character() -> None:
    assert dumps("\ud800x") == '"\\ud800x"'
    assert dumps("\udfff") == '"\\udfff"'
    assert dumps("\ud83d\ude00") == '"😀"'
    assert dumps({"\ud800": 1}) == '{"\\ud800":1}'


def test_dumpb_is_the_utf8_of_dumps() -> None:
    value = {"k": ["é", 1.5, "\ud800", {"1": None}]}
    assert dumpb(value) == dumps(value).encode("utf-8", "surrogatepass")


def test_non_json_values_are_refused() -> None:
    with pytest.raises(TypeError):
        dumps({1: "x"})
    with pytest.raises(TypeError):
        dumps(object())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"\\ud800"', "\ud800"),
        ('"\\ud83d\\ude00"', "😀"),
        ("1e400", math.inf),
        ("-1e400", -math.inf),
        (" \t\r\n[1]\n", [1]),
        ('{"a":1,"b":2,"a":3}', {"a": 3, "b": 2}),
        ("123456789012345678901234", 1.2345678901234568e23),
        ("9007199254740993", 9007199254740992.0),
        ("-90071992547409930", -90071992547409930.0),
        ("1" * 400, math.inf),
        ("-" + "9" * 5000, -math.inf),  # past int()'s 4300-digit limit: still JSON.parse's value
        ("[" + "1" * 100_000 + "]", [math.inf]),
        ("1.0", 1.0),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None,
)
def test_loads_accepts_what_json_parse_accepts(text: str, expected: object) -> None:
    assert loads(text) == expected
    assert loads(text.encode()) == expected


def test_duplicate_keys_keep_the_first_position_and_the_last_value() -> None:
    assert list(loads('{"a":1,"b":2,"a":3}').items()) == [("a", 3), ("b", 2)]


def test_minus_zero_keeps_its_sign() -> None:
    value = loads('{"a":-0,"b":[ -0],"c":"x:-0"}')
    assert math.copysign(1.0, value["a"]) < 0 and math.copysign(1.0, value["b"][0]) < 0
    assert value["c"] == "x:-0"
    assert dumps(value) == '{"a":0,"b":[0],"c":"x:-0"}'


@pytest.mark.parametrize(
    "text",
    ["NaN", "Infinity", "-Infinity", "\ufeff{}", "[1,]", "{'a':1}", "01", "1 2", "", " ", '"\x01"', "[1]\x0c", "tru"],
)
def test_loads_refuses_what_json_parse_refuses(text: str) -> None:
    with pytest.raises(JsonDecodeError):
        loads(text)
    with pytest.raises(JsonDecodeError):
        loads(text.encode("utf-8"))


def test_invalid_utf8_is_read_as_replacement_characters_like_node() -> None:
    assert loads(b'"a\xffb\xed\xa0\x80"') == "a\ufffdb\ufffd\ufffd\ufffd"


def test_deep_nesting_is_a_decode_error_not_a_crash() -> None:
    with pytest.raises(JsonDecodeError):
        loads("[" * 100_000)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8") | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=4) | st.integers(0, 20).map(str), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_the_fast_path_agrees_with_the_exact_encoder(value: object) -> None:
    assert dumps(value) == _encode_exact(value)


@given(json_values)
def test_loads_inverts_dumps_and_dumps_is_idempotent_through_loads(value: object) -> None:
    text = dumps(value)
    assert loads(text) == value
    assert dumps(loads(text)) == text


def test_nesting_beyond_the_recursion_limit_is_a_value_error_not_a_crash() -> None:
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError):
        dumps(deep)


number_tokens = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,400}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,400}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,4}", fullmatch=True)),
)


def _lossy(value: float | int) -> bool:
    return isinstance(value, float) and (math.isinf(value) or (value == 0 and math.copysign(1, value) < 0))


@given(number_tokens, st.sampled_from(["[{}]", '{{"n":{}}}', "[1,{},2]", "{}", "[ {} ]", '{{"n":\t{}}}',
                                      "[1,\r\n{},2]", '{{"id":"9e123","n":{}}}']))
@example("9" * 309, "[{}]")
@example("-" + "1" * 310 + ".5", '{{"n":{}}}')
@example("-0." + "0" * 323 + "1", "[1,{},2]")
@example("-1e-400", "[{}]")
@example("1E+400", "[{}]")
@example("-0.0", '{{"n":{}}}')
def test_the_lossy_screen_never_clears_a_number_json_parse_makes_non_finite_or_negative_zero(
    token: str, container: str
) -> None:
    text = container.format(token).encode()
    value = loads(text)
    if isinstance(value, dict):
        number = value["n"]
    elif isinstance(value, list):
        number = value[0] if len(value) == 1 else value[1]
    else:
        number = value
    if _lossy(number):
        assert may_hold_lossy_number(text), text


def test_the_lossy_screen_clears_three_digit_exponents_inside_ids_and_words() -> None:
    """Hex ids hold "e" and three digits in about a third of UUIDs; only a number token's exponent counts."""
    assert not may_hold_lossy_number(b'{"id":"68387d58-9e12-4eaa-a4b8-1cfa3e6d169f","n":1e10,"m":-2.5E-99}')
    assert not may_hold_lossy_number(b'["case2024","x.9e123","-e123",".5e400"]')
    assert may_hold_lossy_number(b'{"id":"9e123","n":-12.5E+400}')
    assert may_hold_lossy_number(b'{"text":"x: 1e400"}')  # a false alarm, which an exact parse clears


def test_the_lossy_screen_gives_up_vetting_past_its_bound_and_suspects_the_block() -> None:
    many = b'["' + b"a9e123" * 65 + b'"]'
    assert may_hold_lossy_number(many)
    assert not may_hold_lossy_number(b'["' + b"a9e123" * 63 + b'"]')
    long_mantissa = b"[" + b"1" * 300 + b"." + b"1" * 700 + b"e400]"
    assert may_hold_lossy_number(long_mantissa)


@given(st.binary(max_size=200) | number_tokens.map(str.encode))
def test_one_screening_pass_answers_both_questions_no_more_leniently(data: bytes) -> None:
    exact, lossy = screen_numbers(data)
    assert lossy == may_hold_lossy_number(data)
    assert not exact or orjson_is_exact(data)
