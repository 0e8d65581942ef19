"""The settings page's Notifications card (each agent's e-mails about an application) and the
receipt switch of the application form."""

from __future__ import annotations

import re

from app.services.notifications import mode_of
from tests.factories import (
    application_row,
    body_text,
    make_application,
    make_organization,
    make_user,
    sign_in,
)
from tests.views.test_applications import fields, intruder, signed_in

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below

HTMX = {"HX-Request": "true"}


def _card(body: str) -> str:
    return re.search(
        r'<section class="card notifications" id="notifications".*?</section>', body, re.S
    ).group(0)


def _checked(card: str) -> list[str]:
    return re.findall(r'<input checked[^>]*name="mode"[^>]*value="(\w+)"', card)


async def _shared_application(agent):
    """An application of an organization whose owner created it, where ``agent`` is an agent."""
    owner = await make_user(email="owner@example.com", name="Olive Owner")
    organization = await make_organization(agent, owners=(owner,))
    return owner, await make_application(owner, organization_id=organization.id)


async def test_an_administrator_gets_the_daily_digest_by_default(client, application, signed_in):
    card = _card(await body_text(await client.get(f"/app/applications/{application.id}")))

    assert _checked(card) == ["digest"]
    assert "every new thread" in card and "a daily digest" in card and "nothing" in card
    assert "This server sends no e-mail yet" in card  # the test deployment has no EARFUL_SMTP_URL


async def test_an_agent_of_the_organization_chooses_their_own_without_javascript(app, agent):
    owner, application = await _shared_application(agent)
    agent_client = app.test_client()
    csrf = await sign_in(agent_client, agent)
    page = f"/app/applications/{application.id}"
    before = _card(await body_text(await agent_client.get(page)))

    response = await agent_client.post(f"{page}/notifications", form={"csrf_token": csrf, "mode": "instant"})

    assert _checked(before) == ["none"]
    assert response.status_code == 303
    assert response.headers["Location"] == f"{page}#notifications"
    assert await mode_of(agent, application) == "instant"
    assert await mode_of(owner, application) == "digest"  # everyone's own choice
    after = await body_text(await agent_client.get(page))
    assert _checked(_card(after)) == ["instant"]
    assert "Notifications saved." in after


async def test_saving_with_htmx_answers_the_card(client, agent, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/notifications",
        form={"csrf_token": signed_in, "mode": "none"},
        headers=HTMX,
    )

    assert response.status_code == 200
    body = await body_text(response)
    assert "<html" not in body and "Notifications saved." in body
    assert _checked(_card(body)) == ["none"]
    assert await mode_of(agent, application) == "none"


async def test_a_refused_mode_shows_the_card_again_and_saves_nothing(client, agent, application, signed_in):
    page = f"/app/applications/{application.id}"

    plain = await client.post(f"{page}/notifications", form={"csrf_token": signed_in, "mode": "hourly"})
    htmx = await client.post(f"{page}/notifications", form={"csrf_token": signed_in}, headers=HTMX)

    assert plain.status_code == htmx.status_code == 422
    assert "The mode field must be instant, digest or none." in _card(await body_text(plain))
    assert "<html" not in await body_text(htmx)
    assert "The mode field must be instant, digest or none." in await body_text(htmx)
    assert await mode_of(agent, application) == "digest"


async def test_saving_needs_the_csrf_token(client, agent, application, signed_in):
    response = await client.post(f"/app/applications/{application.id}/notifications", form={"mode": "none"})

    assert response.status_code == 400
    assert await mode_of(agent, application) == "digest"


async def test_another_user_gets_the_not_found_page(agent, application, intruder):
    other_client, csrf = intruder

    response = await other_client.post(
        f"/app/applications/{application.id}/notifications", form={"csrf_token": csrf, "mode": "none"}
    )

    assert response.status_code == 404
    assert "Invalid application" in await body_text(response)
    assert await mode_of(agent, application) == "digest"


# --- the customer's receipt, in the application form ----------------------------------------------


async def test_the_settings_form_switches_the_receipt_on_and_off(client, application, signed_in):
    page = f"/app/applications/{application.id}"

    before = await body_text(await client.get(page))
    switched_on = await client.post(page, form=fields(signed_in, receipts_enabled="y"))
    shown = await body_text(await client.get(page))
    await client.post(page, form=fields(signed_in))

    assert re.search(r'<input [^>]*id="receipts_enabled"', before)
    assert not re.search(r'<input [^>]*checked[^>]*id="receipts_enabled"', before)
    assert switched_on.status_code == 303
    assert re.search(r'<input [^>]*checked[^>]*id="receipts_enabled"', shown)
    assert (await application_row(application.id)).receipts_enabled is False


async def test_an_agent_who_may_edit_the_application_may_switch_the_receipt(app, agent):
    _, application = await _shared_application(agent)
    agent_client = app.test_client()
    csrf = await sign_in(agent_client, agent)

    response = await agent_client.post(
        f"/app/applications/{application.id}",
        form=fields(csrf, receipts_enabled="y", organization=str(application.organization_id)),
    )

    assert response.status_code == 303
    assert (await application_row(application.id)).receipts_enabled is True


async def test_a_new_application_may_send_receipts_from_the_start(client, signed_in):
    response = await client.post("/app/applications/new", form=fields(signed_in, receipts_enabled="y"))

    assert response.status_code == 303
    application_id = int(response.headers["Location"].rsplit("/", 1)[1])
    assert (await application_row(application_id)).receipts_enabled is True
