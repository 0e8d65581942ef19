"""The widget script at /widget.js, and the widget demo page of the web app."""

from __future__ import annotations

import gzip
import re

from app.api.widget import SCRIPT
from tests.factories import body_text, make_application, make_user, sign_in

MAX_GZIPPED_BYTES = 12 * 1024


async def test_widget_js_is_javascript_any_site_may_load(client):
    response = await client.get("/widget.js")

    assert response.status_code == 200
    assert response.mimetype == "application/javascript"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert response.headers["Cache-Control"] == "public, max-age=300"
    assert await response.get_data() == SCRIPT.read_bytes()


async def test_widget_js_answers_not_modified_to_its_etag(client):
    etag = (await client.get("/widget.js")).headers["ETag"]

    response = await client.get("/widget.js", headers={"If-None-Match": etag})

    assert response.status_code == 304
    assert await response.get_data() == b""
    assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_widget_js_is_at_most_12_kb_gzipped(client):
    content = await (await client.get("/widget.js")).get_data()

    assert len(gzip.compress(content, compresslevel=9)) <= MAX_GZIPPED_BYTES


def test_widget_js_uses_nothing_a_strict_csp_blocks():
    source = SCRIPT.read_text()

    assert not re.search(r"\beval\(|new Function|setAttribute\(\"style|\.style\.|style=", source)
    assert "adoptedStyleSheets" in source
    assert "<style" not in source


async def test_demo_page_embeds_the_widget_of_the_application(client, agent, application):
    await sign_in(client, agent)

    response = await client.get(f"/app/applications/{application.id}/demo")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await body_text(response)
    assert (
        f'<script src="/widget.js" data-app="{application.id}" data-key="{application.key_javascript}"'
        in body
    )
    assert (
        f"&lt;script src=&#34;http://earful.test/widget.js&#34; data-app=&#34;{application.id}&#34;" in body
    )
    assert f'data-email="{agent.email}"' in body


async def test_demo_page_options_reach_the_snippet_and_bad_values_are_ignored(client, agent, application):
    await sign_in(client, agent)

    response = await client.get(
        f"/app/applications/{application.id}/demo",
        query_string={"apply": "1", "language": "es", "theme": "dark", "color": "red", "position": "top"},
    )

    body = await body_text(response)
    assert 'data-language="es" data-theme="dark" async></script>' in body
    assert "data-color" not in body
    assert "data-position" not in body
    assert "data-nps" not in body


async def test_demo_page_of_another_agents_application_is_not_found(client, agent):
    other = await make_user(email="other@example.com")
    foreign = await make_application(other)
    await sign_in(client, agent)

    response = await client.get(f"/app/applications/{foreign.id}/demo")

    assert response.status_code == 404
    assert foreign.key_javascript not in await body_text(response)


async def test_demo_page_requires_signing_in(client, application):
    response = await client.get(f"/app/applications/{application.id}/demo")

    assert response.status_code == 302
    assert "/app/login" in response.headers["Location"]
