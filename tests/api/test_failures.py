"""What an unexpected failure answers: the documented 500 body, and a request id that finds its
traceback in the log."""

from __future__ import annotations

import logging

import pytest

from app.repositories import applications, threads
from tests.factories import body_text, make_thread, sign_in


def fail(*args: object, **kwargs: object) -> None:
    raise RuntimeError("the disk is full")


@pytest.fixture
def broken_thread_writes(monkeypatch) -> None:
    """Every write of a thread's state fails as a full disk would."""
    monkeypatch.setattr(threads, "correct_sentiment", fail)
    monkeypatch.setattr(threads, "set_archived", fail)


async def test_a_failed_thread_update_answers_the_seeds_500(
    api, token, application, broken_thread_writes, caplog
):
    thread = await make_thread(application)

    response = await api.patch(
        f"/applications/{application.id}/feedback/{thread.id}", token, json={"archived": True}
    )

    assert response.status_code == 500
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Could not update feedback"
    request_id = response.headers["X-Request-Id"]
    [record] = [r for r in caplog.records if r.name == "earful.requests"]
    assert request_id in record.getMessage()
    assert record.exc_info is not None and "the disk is full" in str(record.exc_info[1])


async def test_a_failure_elsewhere_answers_internal_server_error(api, token, monkeypatch, caplog):
    monkeypatch.setattr(applications, "visible_applications", fail)

    response = await api.get("/applications", token)

    assert response.status_code == 500
    assert await body_text(response) == "Internal Server Error"
    assert any(response.headers["X-Request-Id"] in r.getMessage() for r in caplog.records)


async def test_a_failed_page_shows_the_reference_to_quote(client, agent, monkeypatch):
    await sign_in(client, agent)
    monkeypatch.setattr(applications, "visible_applications_with_organizations", fail)

    response = await client.get("/app/applications")

    assert response.status_code == 500
    assert response.mimetype == "text/html"
    assert response.headers["X-Request-Id"] in await body_text(response)


async def test_a_domain_error_is_not_logged_as_a_failure(api, token, caplog):
    with caplog.at_level(logging.ERROR):
        response = await api.get("/applications/999999", token)

    assert response.status_code == 404
    assert not [r for r in caplog.records if r.name == "earful.requests"]


async def test_every_answer_carries_a_request_id(api):
    first = await api.get("/users/me")
    second = await api.get("/users/me")

    assert len(first.headers["X-Request-Id"]) == 32
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]


@pytest.mark.parametrize(
    ("given", "kept"), [("proxy-7f3a.9", True), ("x" * 65, False), ("a b", False), ("id;drop=1", False)]
)
async def test_a_request_id_from_the_proxy_is_kept_only_when_plain(api, given, kept):
    response = await api.get("/users/me", headers={"X-Request-Id": given})

    assert (response.headers["X-Request-Id"] == given) is kept
