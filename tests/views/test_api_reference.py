"""/docs: the API reference page, public like the document it shows."""

from __future__ import annotations

from quart.typing import TestClientProtocol as Client

from tests.factories import sign_in


async def test_reference_page_needs_no_account(client: Client):
    response = await client.get("/docs")

    assert response.status_code == 200
    page = await response.get_data(as_text=True)
    assert 'data-spec-url="/openapi.json"' in page
    assert "swagger-ui-bundle" in page


async def test_reference_page_keeps_the_web_apps_content_policy(client: Client):
    response = await client.get("/docs")

    assert "script-src 'self';" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "<script>" not in await response.get_data(as_text=True)


async def test_signed_in_pages_link_to_the_reference(client: Client, agent):
    await sign_in(client, agent)

    page = await (await client.get("/app/applications")).get_data(as_text=True)

    assert 'href="/docs"' in page
