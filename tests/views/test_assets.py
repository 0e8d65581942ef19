"""Static files: content-hashed names, long cache lifetimes, htmx from its npm package."""

from __future__ import annotations

import re

from app.views.assets import Assets


def test_hashed_name_changes_with_the_content(tmp_path):
    (tmp_path / "css").mkdir()
    (tmp_path / "css" / "site.css").write_text("a{}")
    before = Assets(tmp_path).url("css/site.css")
    (tmp_path / "css" / "site.css").write_text("b{}")
    after = Assets(tmp_path).url("css/site.css")

    assert re.fullmatch(r"/static/css/site\.[0-9a-f]{10}\.css", before)
    assert before != after


async def test_pages_link_hashed_static_files_served_with_long_cache(client):
    page = await (await client.get("/app/login")).get_data(as_text=True)
    htmx_url = re.search(
        r'src="(/static/vendor/htmx\.[0-9a-f]{10}\.min\.js|/static/vendor/htmx\.min\.[0-9a-f]{10}\.js)"', page
    )
    css_url = re.search(r'href="(/static/css/app\.[0-9a-f]{10}\.css)"', page)
    assert htmx_url and css_url

    script = await client.get(htmx_url.group(1))
    style = await client.get(css_url.group(1))

    assert script.status_code == 200 and style.status_code == 200
    assert script.mimetype in ("text/javascript", "application/javascript")
    assert style.mimetype == "text/css"
    assert (
        "immutable" in script.headers["Cache-Control"]
        and "max-age=31536000" in script.headers["Cache-Control"]
    )
    assert b"htmx" in await script.get_data()


async def test_unhashed_or_unknown_static_names_are_not_found(client):
    assert (await client.get("/static/css/app.css")).status_code == 404
    assert (await client.get("/static/../app/__init__.py")).status_code == 404
