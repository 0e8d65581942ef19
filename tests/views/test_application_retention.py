"""The Retention card of the application settings page: the days, archived only, the next run's count."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from app.db import atomic
from app.models import Feedback
from tests.factories import body_text, make_application, make_organization, make_thread, make_user, sign_in
from tests.views.test_applications import application_row, input_tag, intruder, signed_in

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below


def _card(body: str) -> str:
    return re.search(r'<section class="card retention" id="retention".*?</section>', body, re.S).group(0)


async def _old_thread(application, days: int = 40) -> None:
    thread = await make_thread(application)
    moment = datetime.now(UTC) - timedelta(days=days)
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=moment))


def _posted(csrf: str, days: str, archived_only: bool = False) -> dict[str, str]:
    form = {"csrf_token": csrf, "retention_days": days}
    if archived_only:
        form["retention_archived_only"] = "y"
    return form


async def test_the_card_shows_how_many_threads_the_next_run_deletes(client, agent, signed_in):
    application = await make_application(agent, retention_days=30)
    await _old_thread(application)
    await _old_thread(application, days=31)
    await make_thread(application)

    card = _card(await body_text(await client.get(f"/app/applications/{application.id}")))

    assert "The next run deletes 2 threads." in card
    assert 'value="30"' in input_tag(card, "retention_days")
    assert "checked" not in input_tag(card, "retention_archived_only")


async def test_the_card_says_when_retention_is_off(client, application, signed_in):
    await _old_thread(application, days=4000)

    card = _card(await body_text(await client.get(f"/app/applications/{application.id}")))

    assert "Retention is off." in card
    assert "The next run deletes" not in card


async def test_saving_the_retention(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/retention", form=_posted(signed_in, "90", archived_only=True)
    )

    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/app/applications/{application.id}#retention")
    saved = await application_row(application.id)
    assert (saved.retention_days, saved.retention_archived_only) == (90, True)
    assert "Retention saved." in await body_text(await client.get(f"/app/applications/{application.id}"))


async def test_emptying_the_days_switches_retention_off(client, agent, signed_in):
    application = await make_application(agent, retention_days=30, retention_archived_only=True)

    await client.post(f"/app/applications/{application.id}/retention", form=_posted(signed_in, ""))

    saved = await application_row(application.id)
    assert (saved.retention_days, saved.retention_archived_only) == (None, False)


async def test_saving_with_htmx_answers_the_card_with_the_new_count(client, application, signed_in):
    await _old_thread(application, days=10)

    response = await client.post(
        f"/app/applications/{application.id}/retention",
        form=_posted(signed_in, "7"),
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    body = await body_text(response)
    assert "Retention saved." in body
    assert "The next run deletes 1 thread." in body
    assert "<html" not in body


async def test_days_out_of_range_show_the_card_again_and_save_nothing(client, agent, signed_in):
    application = await make_application(agent, retention_days=30)

    response = await client.post(
        f"/app/applications/{application.id}/retention", form=_posted(signed_in, "0")
    )

    assert response.status_code == 422
    card = _card(await body_text(response))
    assert "Enter a number from 1 to 3650." in card
    assert (await application_row(application.id)).retention_days == 30


async def test_an_agent_sees_the_retention_read_only_and_may_not_change_it(app, agent):
    owner = await make_user(email="owner@example.com")
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id, retention_days=30)
    await _old_thread(application)
    agent_client = app.test_client()
    csrf = await sign_in(agent_client, agent)

    card = _card(await body_text(await agent_client.get(f"/app/applications/{application.id}")))
    response = await agent_client.post(
        f"/app/applications/{application.id}/retention", form=_posted(csrf, "1")
    )

    assert "<form" not in card and "retention_days" not in card
    assert "Threads older than 30 days are deleted." in card
    assert "The next run deletes 1 thread." in card
    assert response.status_code == 403
    assert (await application_row(application.id)).retention_days == 30


async def test_the_settings_form_does_not_change_the_retention(client, agent, signed_in):
    application = await make_application(agent, retention_days=30)
    form = {
        "csrf_token": signed_in,
        "name": "Renamed",
        "organization": "",
        "target_value": "2",
        "target_unit": "hours",
        "retention_days": "1",
    }

    await client.post(f"/app/applications/{application.id}", form=form)

    saved = await application_row(application.id)
    assert (saved.name, saved.retention_days) == ("Renamed", 30)


async def test_another_agent_cannot_see_or_change_the_retention(application, intruder):
    other_client, csrf = intruder

    response = await other_client.post(
        f"/app/applications/{application.id}/retention", form=_posted(csrf, "1")
    )

    assert response.status_code == 404
    assert (await application_row(application.id)).retention_days is None
