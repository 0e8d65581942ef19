"""API answers are never cached and never sniffed, errors included; cacheable files say so themselves."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("path", ["/users/me", "/applications", "/applications/999/feedback"])
async def test_management_answers_are_not_stored_nor_sniffed(api, token, path):
    response = await api.get(path, token)

    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_unauthenticated_answers_are_not_stored(api):
    response = await api.get("/users/me")

    assert response.status_code == 401
    assert response.headers["Cache-Control"] == "no-store"


async def test_capture_answers_are_not_stored_nor_sniffed(api, application):
    response = await api.post(f"/applications/{application.id}/open?key={application.key_api}")

    assert response.status_code == 201
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_the_widget_script_keeps_its_own_cache_rule(api):
    response = await api.get("/widget.js")

    assert response.headers["Cache-Control"].startswith("public, max-age=")
