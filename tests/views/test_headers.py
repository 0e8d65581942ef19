"""Security headers of the web app's pages."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest
from quart import Quart

from app import create_app

HSTS = "max-age=31536000; includeSubDomains"


@pytest.fixture
async def https_app(settings) -> AsyncIterator[Quart]:
    application = create_app(
        dataclasses.replace(settings, base_url="https://feedback.example.com"), manage_db=False
    )
    async with application.test_app():
        yield application


async def test_pages_served_over_https_ask_browsers_to_keep_to_https(https_app):
    response = await https_app.test_client().get("/app/login", scheme="https")

    assert response.status_code == 200
    assert response.headers["Strict-Transport-Security"] == HSTS


async def test_pages_served_over_plain_http_send_no_hsts(client):
    response = await client.get("/app/login")

    assert response.status_code == 200
    assert "Strict-Transport-Security" not in response.headers
