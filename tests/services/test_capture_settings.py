"""Validation of the capture controls and the origin rule of the javascript key."""

from __future__ import annotations

import pytest

from app.errors import ValidationError
from app.services.capture_settings import (
    clean_capture_fields,
    normalize_origin,
    origin_allowed,
    parse_origins,
)


def test_only_the_fields_sent_are_cleaned():
    assert clean_capture_fields({"name": "x"}) == {}
    assert clean_capture_fields({"capture_enabled": "0", "opens_per_minute": ""}) == {
        "capture_enabled": False,
        "opens_per_minute": None,
    }


def test_origins_are_stored_one_per_line_without_duplicates():
    fields = clean_capture_fields(
        {"allowed_origins": "https://a.example, HTTPS://A.example/ http://b.example:8080"}
    )
    assert fields == {"allowed_origins": "https://a.example\nhttp://b.example:8080"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://Shop.Example.com", "https://shop.example.com"),
        ("https://shop.example.com:8443/", "https://shop.example.com:8443"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("https://shop.example.com/path", None),
        ("https://user@shop.example.com", None),
        ("https://shop.example.com?x=1", None),
        ("shop.example.com", None),
        ("javascript:alert(1)", None),
        ("https://shop.example.com:99999", None),
        ("", None),
        (42, None),
    ],
)
def test_normalize_origin(value, expected):
    assert normalize_origin(value) == expected


def test_a_list_with_something_else_than_origins_is_refused():
    with pytest.raises(ValidationError):
        parse_origins(["https://a.example", 7])


def test_origin_rule():
    allowed = ("https://shop.example.com",)
    assert origin_allowed((), None)
    assert origin_allowed((), "https://any.example")
    assert origin_allowed(allowed, "https://shop.example.com")
    assert not origin_allowed(allowed, "https://evil.example")
    assert not origin_allowed(allowed, None)
    assert not origin_allowed(allowed, "null")
