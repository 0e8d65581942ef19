"""The rendered fragments a worker keeps (app.views.fragments)."""

from __future__ import annotations

from markupsafe import Markup

from app.views.fragments import Fragments, fragments


def test_fragments_return_what_they_kept_for_a_key():
    kept = Fragments(2)

    kept.keep(("row", 1), Markup("<li>1</li>"))

    assert kept.get(("row", 1)) == "<li>1</li>"
    assert kept.get(("row", 2)) is None


def test_fragments_drop_the_least_recently_used_when_full():
    kept = Fragments(2)
    kept.keep("a", Markup("A"))
    kept.keep("b", Markup("B"))
    kept.get("a")

    kept.keep("c", Markup("C"))

    assert (kept.get("a"), kept.get("b"), kept.get("c")) == ("A", None, "C")
    assert len(kept) == 2


def test_fragments_of_size_zero_keep_nothing():
    kept = Fragments(0)

    assert kept.keep("a", Markup("A")) == "A"
    assert kept.get("a") is None and len(kept) == 0


async def test_an_app_keeps_fragments_of_each_kind_apart(app):
    async with app.app_context():
        fragments("inbox rows").keep("a", Markup("row"))

        assert fragments("inbox rows").get("a") == "row"
        assert fragments("tag chips").get("a") is None


async def test_an_app_whose_templates_reload_keeps_no_fragments(app):
    app.jinja_env.auto_reload = True
    app.extensions.pop("plain_jinja", None)
    async with app.app_context():
        fragments("inbox rows").keep("a", Markup("row"))

        assert fragments("inbox rows").get("a") is None
