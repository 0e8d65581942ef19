"""What rendering a page costs besides its template: no hand-off to Quart's thread pool."""

from __future__ import annotations

from tests.factories import make_application, make_thread, make_user, sign_in


async def test_a_signed_in_page_renders_without_handing_work_to_a_thread(app, client, monkeypatch):
    agent = await make_user()
    application = await make_application(agent)
    await make_thread(application)
    await sign_in(client, agent)
    handed = []
    to_thread = app.sync_to_async

    def recorded(func):
        handed.append(getattr(func, "__qualname__", repr(func)))
        return to_thread(func)

    monkeypatch.setattr(app, "sync_to_async", recorded)

    response = await client.get(f"/app/applications/{application.id}/feedback")

    assert response.status_code == 200
    assert handed == []
