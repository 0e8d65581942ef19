"""Presentation helpers of the pages: one way to show a duration everywhere."""

from __future__ import annotations

import pytest

from app.views.thread_display import duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (45, "45 s"),
        (60, "1 min"),
        (300, "5 min"),
        (3599, "1 h"),
        (3600, "1 h"),
        (7500, "2 h 5 min"),
        (86400, "1 d"),
        (97200, "1 d 3 h"),
    ],
)
def test_a_duration_reads_in_the_two_largest_units(seconds, text):
    assert duration(seconds) == text
