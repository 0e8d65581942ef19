"""The filters of thread lists, read from text with the management API's messages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.errors import ValidationError
from app.services.thread_filters import ThreadFilters, parse_filters


def test_no_parameters_are_the_open_threads_unfiltered():
    filters = parse_filters({})

    assert filters == ThreadFilters()
    assert filters.plain()


def test_empty_parameters_are_not_set():
    filters = parse_filters(
        {name: "" for name in ("sentiment", "tag", "since", "replied", "nps_min", "before")}
    )

    assert filters.plain()


def test_every_filter_is_read():
    filters = parse_filters(
        {
            "archived": "1",
            "sentiment": "negative",
            "tag": " Billing ",
            "q": "refund",
            "since": "1700000000",
            "until": "1800000000",
            "replied": "false",
            "nps_min": "0",
            "nps_max": "6",
            "before": "42",
        }
    )

    assert filters == ThreadFilters(
        archived=True,
        sentiment="negative",
        tag="Billing",
        query="refund",
        since=datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
        until=datetime(2027, 1, 15, 8, 0, tzinfo=UTC),
        replied=False,
        nps_min=0,
        nps_max=6,
        before=42,
    )
    assert not filters.plain()


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_replied_reads_true(value):
    assert parse_filters({"replied": value}).replied is True


def test_a_cursor_alone_pages_but_does_not_narrow():
    filters = parse_filters({"before": "7"})

    assert not filters.narrowed() and not filters.plain()


def test_a_tag_alone_is_told_apart_from_a_tag_with_other_filters():
    assert parse_filters({"tag": "billing", "before": "9"}).only_tag()
    assert not parse_filters({"tag": "billing", "sentiment": "positive"}).only_tag()
    assert not parse_filters({"tag": "billing", "q": "refund"}).only_tag()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"archived": "maybe"}, "The archived field must be true or false."),
        ({"sentiment": "furious"}, "The sentiment field must be one of positive, neutral, negative."),
        ({"since": "yesterday"}, "The since field must be an integer."),
        ({"until": "1.5"}, "The until field must be an integer."),
        ({"since": "-1"}, "The since field must be between 0 and 253402300799."),
        ({"until": "253402300800"}, "The until field must be between 0 and 253402300799."),
        ({"replied": "sometimes"}, "The replied field must be true or false."),
        ({"nps_min": "high"}, "The nps_min field must be an integer."),
        ({"nps_min": "11"}, "The nps_min field must be between 0 and 10."),
        ({"nps_max": "-1"}, "The nps_max field must be between 0 and 10."),
        ({"before": "abc"}, "The before field must be a thread id (1 to 2147483647)."),
        ({"before": "0"}, "The before field must be a thread id (1 to 2147483647)."),
        ({"before": "2147483648"}, "The before field must be a thread id (1 to 2147483647)."),
        ({"q": "x" * 201}, "The q field must not be greater than 200 characters."),
    ],
)
def test_malformed_filters_are_refused_with_the_apis_message(args, message):
    with pytest.raises(ValidationError) as refused:
        parse_filters(args)

    assert str(refused.value) == message
