"""Avatars: initials, a keyed digest instead of the address, and an SVG that escapes its text."""

from __future__ import annotations

import pytest

from app.services.avatars import avatar_digest, avatar_url, initials, render_avatar


@pytest.mark.parametrize(
    ("name", "email", "letters"),
    [
        ("Ann Lee", "a@b.co", "AL"),
        ("ann", "a@b.co", "A"),
        ("", "zoe@b.co", "Z"),
        ("", "@b.co", "?"),
        ("😀", "", "?"),
    ],
)
def test_initials_come_from_the_name_else_the_address(name, email, letters):
    assert initials(name, email) == letters


def test_the_digest_is_keyed_and_ignores_case():
    assert avatar_digest("Ann@Example.com", "k") == avatar_digest("ann@example.com", "k")
    assert avatar_digest("ann@example.com", "k") != avatar_digest("ann@example.com", "other key")


def test_the_address_never_appears_in_the_url():
    url = avatar_url("https://earful.example", "k", "ann@example.com", "Ann Lee")

    assert "ann" not in url.split("?")[0] and "example.com" not in url
    assert url.endswith("?i=AL")


def test_the_svg_escapes_and_trims_its_letters():
    svg = render_avatar("00ff00", "<script>")

    assert "<script" not in svg
    assert ">SC</text>" in svg
