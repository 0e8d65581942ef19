"""The small validators every surface shares: addresses, URLs, booleans, integers, ids, JSON."""

from __future__ import annotations

import pytest

from app.services.validation import (
    MAX_ID,
    MAX_JSON_DEPTH,
    JsonRefused,
    decode_json,
    decode_storable_json,
    is_http_url,
    normalize_email,
    parse_bool,
    parse_int,
    storable,
    valid_id,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (" Ann@Example.COM ", "ann@example.com"),
        ("a?cc=x%40evil.test&b=@c.test", "a?cc=x%40evil.test&b=@c.test"),
        ("no-at-sign", None),
        ("a@b", None),
        ("a..b@example.com", None),
        ("a@b.co\r\nBcc: x@y.z", None),
        (5, None),
    ],
)
def test_addresses_are_normalized_or_refused(value, expected):
    assert normalize_email(value) == expected


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://a.example/x", True),
        ("http://a", True),
        ("javascript:alert(1)", False),
        ("https://", False),
        ("a b", False),
    ],
)
def test_only_http_urls_with_a_host_are_urls(value, ok):
    assert is_http_url(value) is ok


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), ("1", True), (" FALSE ", False), (0, False), ("yes", None), (2, None)],
)
def test_booleans_come_as_json_or_form_values(value, expected):
    assert parse_bool(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(" 42 ", 42), ("-3", -3), ("9" * 30, int("9" * 30)), ("1.5", None), (True, None), ("", None)],
)
def test_integers_of_any_length_are_integers(value, expected):
    assert parse_int(value) == expected


def test_ids_run_from_one_to_the_columns_maximum():
    assert valid_id(1) and valid_id(MAX_ID)
    assert not valid_id(0) and not valid_id(MAX_ID + 1)
    assert valid_id(2**40, maximum=2**53 - 1)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": -Infinity}',
        '{"a": 1e400}',
        "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
    ],
)
def test_json_that_is_not_storable_is_refused(text):
    with pytest.raises(JsonRefused):
        decode_json(text)


def test_json_as_deep_as_allowed_decodes():
    assert decode_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None


def test_storable_strings_lose_nul_and_lone_surrogates_whatever_their_nesting():
    assert storable({"k\x00": ["a\x00b", "\ud800x"]}) == {"k": ["ab", "?x"]}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"k\\u0000": ["a\\u0000b"]}', {"k": ["ab"]}),
        (b'{"a": "\\ud800x", "b": "\\uDFFF"}', {"a": "?x", "b": "?"}),
        (b'{"a": "\xed\xa0\x80x"}', {"a": "?x"}),  # a surrogate as UTF-8 bytes
        ('{"a": "\\u0000b"}'.encode("utf-16-le"), {"a": "b"}),
        ('{"a": "\\ud800"}'.encode("utf-16"), {"a": "?"}),
        ('{"a": "\\u0000"}'.encode("utf-32"), {"a": ""}),
    ],
)
def test_decoded_json_loses_what_no_database_stores_however_it_is_written(raw, expected):
    assert decode_storable_json(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        b'{"m": "line one\\nline \\"two\\"", "tags": ["a", {"b": [1, 2.5, null]}]}',
        b'{"pair": "\\ud83d\\ude00", "literal": "\\\\u0000", "accent": "caf\xc3\xa9"}',
    ],
)
def test_decoded_json_that_is_storable_comes_back_as_decoded(raw):
    assert decode_storable_json(raw) == decode_json(raw) == storable(decode_json(raw))
