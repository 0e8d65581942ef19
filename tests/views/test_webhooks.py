"""Webhooks in the web app: the card of the settings and organization pages, an endpoint's page
(settings, secret shown once, rotation, deletion, test event) and its delivery log.

The test app's background worker really delivers: endpoints point at a receiver on loopback
(this module's deployment allows private addresses, as EARFUL_WEBHOOK_ALLOW_PRIVATE=1 does).
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import json
import re
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest
from markupsafe import escape
from standardwebhooks import Webhook

from app import create_app
from app.db import transactional
from app.models import EVENT_TYPES, WebhookEndpoint
from app.repositories import webhooks
from app.repositories.webhooks import DeliveryRow, EndpointRow
from app.services.deployment import use_settings
from app.services.webhooks import endpoints as service
from tests.factories import body_text, make_application, make_organization, make_thread, make_user, sign_in
from tests.views.test_applications import intruder, signed_in
from tests.webhook_receiver import Receiver

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below

HTMX = {"HX-Request": "true"}
CLOSED = "http://127.0.0.1:9/closed"  # the discard port: nothing listens, every attempt fails at once


@pytest.fixture
def settings(settings):
    """The tests' deployment, with webhooks allowed to loopback (the receiver)."""
    allowed = dataclasses.replace(settings, webhook_allow_private=True)
    use_settings(allowed)
    return allowed


@pytest.fixture
async def receiver():
    server = Receiver()
    await server.start()
    yield server
    await server.stop()


def _form(csrf: str, url: str, events=EVENT_TYPES, **fields: str) -> list[tuple[str, str]]:
    """A webhook form as a browser posts it (one ``events`` pair per ticked box)."""
    form = [("csrf_token", csrf), ("url", url), ("format", "standard")]
    form += [("events", kind) for kind in events]
    return form + list(fields.items())


def _card(body: str) -> str:
    return re.search(r'<section class="card webhooks" id="webhooks".*?</section>', body, re.S).group(0)


def _log(body: str) -> str:
    return re.search(r'<section class="card webhook-log" id="deliveries".*?</section>', body, re.S).group(0)


async def _create(client, csrf: str, place: str, url: str, **fields: str):
    return await client.post(f"{place}/webhooks", form=_form(csrf, url, **fields))


def _webhook_id(response) -> int:
    return int(urlsplit(response.headers["Location"]).path.rsplit("/", 1)[1])


async def _endpoint(endpoint_id: int) -> EndpointRow:
    found = await webhooks.endpoint_by_id(endpoint_id)
    assert found is not None
    return found


async def _deliveries(endpoint_id: int) -> list[DeliveryRow]:
    return await webhooks.deliveries_of_endpoint(endpoint_id, 100)


async def _settled(endpoint_id: int, count: int = 1) -> list[DeliveryRow]:
    """The endpoint's deliveries once ``count`` of them are delivered (the worker is fast)."""
    async with asyncio.timeout(15):
        while True:
            found = await _deliveries(endpoint_id)
            if sum(delivery.status == "delivered" for delivery in found) >= count:
                return found
            await asyncio.sleep(0.05)


@pytest.fixture
async def webhook(client, application, signed_in, receiver) -> str:
    """An endpoint of ``application`` pointing at the receiver, made through the card; its page."""
    response = await _create(client, signed_in, f"/app/applications/{application.id}", receiver.url)
    assert response.status_code == 303
    await client.get(response.headers["Location"])  # the page that shows the secret, once
    return response.headers["Location"]


# --- the card ----------------------------------------------------------------------------------


async def test_an_administrator_sees_the_card_with_every_event_ticked(client, application, signed_in):
    response = await client.get(f"/app/applications/{application.id}")

    card = _card(await body_text(response))
    assert "No webhooks yet." in card
    assert f'action="/app/applications/{application.id}/webhooks"' in card
    for kind in EVENT_TYPES:
        assert re.search(rf'<input checked[^>]*value="{re.escape(kind)}"', card), kind
    assert '<option selected value="standard">' in card and 'value="slack"' in card
    assert 'name="include_notes"' in card and 'name="enabled"' not in card


async def test_the_card_lists_the_webhooks_with_their_state(client, agent, application, signed_in, settings):
    scope = await service.application_scope(agent, application)
    fields = {"url": CLOSED, "description": "CRM", "events": ["reply.created"], "format": "slack"}
    endpoint, _ = await service.create_endpoint(agent, scope, fields, settings)
    await transactional(webhooks.disable_endpoint)(endpoint.id, "Disabled after five days", datetime.now(UTC))

    card = _card(await body_text(await client.get(f"/app/applications/{application.id}")))

    assert f'href="/app/applications/{application.id}/webhooks/{endpoint.id}"' in card
    assert CLOSED in card and "CRM" in card and "Slack-compatible" in card
    assert "1 event: reply.created" in card
    assert "Disabled" in card and "Disabled after five days" in card


async def test_the_card_counts_the_deliveries_still_waiting(client, application, signed_in):
    response = await _create(client, signed_in, f"/app/applications/{application.id}", CLOSED)
    await client.post(f"{response.headers['Location']}/test", form={"csrf_token": signed_in})

    card = _card(await body_text(await client.get(f"/app/applications/{application.id}")))

    assert "1 waiting" in card  # the first attempt failed at once; the next one is in 5 s


async def test_an_agent_of_the_organization_sees_no_card_and_may_not_manage_webhooks(app, agent):
    owner = await make_user(email="owner@example.com")
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    scope = await service.application_scope(owner, application)
    endpoint, _ = await service.create_endpoint(owner, scope, {"url": CLOSED}, app.config["EARFUL"])
    agent_client = app.test_client()
    csrf = await sign_in(agent_client, agent)
    place = f"/app/applications/{application.id}"

    page = await body_text(await agent_client.get(place))
    created = await _create(agent_client, csrf, place, CLOSED)
    shown = await agent_client.get(f"{place}/webhooks/{endpoint.id}")
    deleted = await agent_client.post(f"{place}/webhooks/{endpoint.id}/delete", form={"csrf_token": csrf})

    assert 'id="webhooks"' not in page and CLOSED not in page
    assert (created.status_code, shown.status_code, deleted.status_code) == (403, 403, 403)
    assert await WebhookEndpoint.filter(application_id=application.id).count() == 1


# --- creating, and the secret shown once --------------------------------------------------------


async def test_creating_opens_the_webhooks_page_which_shows_the_secret_once(
    client, application, signed_in, receiver
):
    response = await _create(
        client, signed_in, f"/app/applications/{application.id}", receiver.url, description="Our CRM"
    )

    assert response.status_code == 303
    location = response.headers["Location"]
    assert re.fullmatch(rf"/app/applications/{application.id}/webhooks/\d+", location)
    endpoint = await _endpoint(_webhook_id(response))
    assert (endpoint.url, endpoint.description, endpoint.events) == (receiver.url, "Our CRM", EVENT_TYPES)
    assert endpoint.secret.startswith("whsec_") and endpoint.secret not in response.headers.get(
        "Set-Cookie", ""
    )
    first = await body_text(await client.get(location))
    assert f'value="{endpoint.secret}"' in first
    assert "it is shown only this once" in first
    assert 'data-copy="#webhook-secret-value"' in first
    again = await body_text(await client.get(location))
    assert endpoint.secret not in again
    assert "The secret is shown once" in again


async def test_creating_with_htmx_sends_the_browser_to_the_new_page(client, application, signed_in, receiver):
    response = await client.post(
        f"/app/applications/{application.id}/webhooks", form=_form(signed_in, receiver.url), headers=HTMX
    )

    assert response.status_code == 200
    endpoint = (await service.list_endpoints(service.Scope(application=application)))[0]
    assert response.headers["HX-Redirect"] == f"/app/applications/{application.id}/webhooks/{endpoint.id}"
    assert endpoint.secret in await body_text(await client.get(response.headers["HX-Redirect"]))


async def test_a_refused_url_shows_the_services_message_and_saves_nothing(client, application, signed_in):
    response = await _create(client, signed_in, f"/app/applications/{application.id}", "ftp://example.com/in")

    assert response.status_code == 422
    card = _card(await body_text(response))
    assert "The url field must be an http:// or https:// URL" in card
    assert 'value="ftp://example.com/in"' in card
    assert not await WebhookEndpoint.exists()


async def test_a_private_address_is_refused_unless_the_deployment_allows_it(settings, agent):
    strict = create_app(dataclasses.replace(settings, webhook_allow_private=False), manage_db=False)
    application = await make_application(agent)
    async with strict.test_app():
        client = strict.test_client()
        csrf = await sign_in(client, agent)

        response = await _create(
            client, csrf, f"/app/applications/{application.id}", "http://127.0.0.1:8080/in"
        )

        assert response.status_code == 422
        message = "a private, loopback or link-local address: webhooks only go to public addresses"
        assert message in html.unescape(_card(await body_text(response)))
    assert not await WebhookEndpoint.exists()


async def test_a_refused_url_with_htmx_answers_the_card(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/webhooks",
        form=_form(signed_in, "http://user:secret@127.0.0.1/in"),
        headers=HTMX,
    )

    assert response.status_code == 422
    body = await body_text(response)
    assert "<html" not in body
    assert "must not hold a user name or a password" in _card(body)


async def test_a_webhook_needs_a_url_and_one_event(client, application, signed_in):
    place = f"/app/applications/{application.id}"

    without_url = await _create(client, signed_in, place, "")
    without_events = await client.post(f"{place}/webhooks", form=_form(signed_in, CLOSED, events=()))

    assert without_url.status_code == 422
    assert "Enter the URL that receives the events." in await body_text(without_url)
    assert without_events.status_code == 422
    assert "The events field must list one or more of" in await body_text(without_events)
    assert not await WebhookEndpoint.exists()


async def test_creating_needs_the_csrf_token(client, application, signed_in):
    form = [pair for pair in _form(signed_in, CLOSED) if pair[0] != "csrf_token"]

    response = await client.post(f"/app/applications/{application.id}/webhooks", form=form)

    assert response.status_code == 400
    assert not await WebhookEndpoint.exists()


# --- isolation -----------------------------------------------------------------------------------


async def test_another_user_gets_the_not_found_page_for_everything(webhook, application, intruder):
    other_client, csrf = intruder
    place = f"/app/applications/{application.id}"

    answers = [
        await other_client.get(webhook),
        await other_client.get(f"{webhook}/delete"),
        await other_client.get(f"{webhook}/rotate"),
        await _create(other_client, csrf, place, CLOSED),
        await other_client.post(webhook, form=_form(csrf, "http://127.0.0.1:1/x")),
        await other_client.post(f"{webhook}/rotate", form={"csrf_token": csrf}),
        await other_client.post(f"{webhook}/test", form={"csrf_token": csrf}),
        await other_client.post(f"{webhook}/delete", form={"csrf_token": csrf}),
    ]

    assert [answer.status_code for answer in answers] == [404] * len(answers)
    for answer in answers:
        body = await body_text(answer)
        assert "Invalid application" in body and "127.0.0.1" not in body and "whsec_" not in body
    assert await WebhookEndpoint.filter(application_id=application.id).count() == 1
    assert await _deliveries(_webhook_id_of(webhook)) == []


def _webhook_id_of(page: str) -> int:
    return int(page.rsplit("/", 1)[1])


async def test_a_webhook_of_another_application_looks_like_one_that_does_not_exist(
    client, agent, webhook, signed_in
):
    other_application = await make_application(agent)
    elsewhere = f"/app/applications/{other_application.id}/webhooks/{_webhook_id_of(webhook)}"

    borrowed = await client.get(elsewhere)
    missing = await client.get(f"/app/applications/{other_application.id}/webhooks/999999999")

    assert borrowed.status_code == missing.status_code == 404
    assert await body_text(borrowed) == await body_text(missing)
    assert "Invalid webhook" in await body_text(borrowed)


async def test_an_organizations_webhook_is_not_reachable_through_one_of_its_applications(
    client, agent, signed_in
):
    organization = await make_organization(agent)
    application = await make_application(agent, organization_id=organization.id)
    response = await _create(client, signed_in, f"/app/organizations/{organization.id}", CLOSED)
    webhook_id = _webhook_id(response)

    through_application = await client.get(f"/app/applications/{application.id}/webhooks/{webhook_id}")

    assert through_application.status_code == 404


# --- an endpoint's settings ----------------------------------------------------------------------


async def test_the_page_shows_the_settings_and_the_buttons_that_ask_first(client, webhook, receiver):
    body = await body_text(await client.get(webhook))

    assert f'value="{receiver.url}"' in body
    assert re.search(r'<input [^>]*checked[^>]*name="enabled"', body)
    assert f'<form method="get" action="{webhook}/delete"' in body
    assert f'hx-post="{webhook}/delete"' in body and "hx-confirm=" in body
    assert f'<form method="get" action="{webhook}/rotate"' in body
    assert "No deliveries yet." in body


async def test_saving_the_settings(client, webhook, signed_in):
    form = _form(signed_in, CLOSED, events=("feedback.created",), description="Ops", include_notes="y")
    form = [(name, "slack" if name == "format" else value) for name, value in form]

    response = await client.post(webhook, form=form)

    assert response.status_code == 303
    assert response.headers["Location"] == webhook
    endpoint = await _endpoint(_webhook_id_of(webhook))
    assert (endpoint.url, endpoint.description, endpoint.events) == (CLOSED, "Ops", ("feedback.created",))
    assert (endpoint.format, endpoint.include_notes, endpoint.enabled) == ("slack", True, False)
    assert "Webhook saved." in await body_text(await client.get(webhook))


async def test_saving_with_htmx_answers_the_form(client, webhook, signed_in):
    response = await client.post(webhook, form=_form(signed_in, CLOSED, enabled="y"), headers=HTMX)

    assert response.status_code == 200
    body = await body_text(response)
    assert "<html" not in body and "Webhook saved." in body
    assert (await _endpoint(_webhook_id_of(webhook))).url == CLOSED


async def test_a_refused_change_shows_the_form_again_and_saves_nothing(client, webhook, signed_in, receiver):
    response = await client.post(webhook, form=_form(signed_in, "javascript:alert(1)", enabled="y"))

    assert response.status_code == 422
    body = await body_text(response)
    assert "The url field must be an http:// or https:// URL" in body
    assert 'value="javascript:alert(1)"' in body
    assert (await _endpoint(_webhook_id_of(webhook))).url == receiver.url


async def test_enabling_a_disabled_webhook_clears_its_failure(client, webhook, signed_in, receiver):
    webhook_id = _webhook_id_of(webhook)
    await transactional(webhooks.disable_endpoint)(webhook_id, "Disabled after five days", datetime.now(UTC))
    page = await body_text(await client.get(webhook))

    await client.post(webhook, form=_form(signed_in, receiver.url, enabled="y"))

    assert "Disabled: Disabled after five days" in page
    endpoint = await _endpoint(webhook_id)
    assert (endpoint.enabled, endpoint.disabled_reason) == (True, "")


async def test_saving_needs_the_csrf_token(client, webhook):
    response = await client.post(webhook, form=[("url", CLOSED), ("events", "feedback.created")])

    assert response.status_code == 400
    assert (await _endpoint(_webhook_id_of(webhook))).url != CLOSED


# --- rotating the secret ------------------------------------------------------------------------


async def test_rotating_asks_first_without_javascript_then_shows_the_new_secret_once(
    client, webhook, signed_in
):
    old = (await _endpoint(_webhook_id_of(webhook))).secret

    asked = await client.get(f"{webhook}/rotate")
    response = await client.post(f"{webhook}/rotate", form={"csrf_token": signed_in})

    assert asked.status_code == 200
    question = await body_text(asked)
    assert "Rotate the secret?" in question and f'action="{webhook}/rotate"' in question
    assert response.status_code == 303 and response.headers["Location"] == f"{webhook}#webhook-secret"
    endpoint = await _endpoint(_webhook_id_of(webhook))
    assert endpoint.secret != old and endpoint.previous_secret == old
    page = await body_text(await client.get(webhook))
    assert f'value="{endpoint.secret}"' in page and old not in page
    assert "The previous secret keeps signing beside the new one for 24 hours" in page
    assert endpoint.secret not in await body_text(await client.get(webhook))


async def test_rotating_with_htmx_answers_the_secret_card(client, webhook, signed_in):
    response = await client.post(f"{webhook}/rotate", form={"csrf_token": signed_in}, headers=HTMX)

    assert response.status_code == 200
    body = await body_text(response)
    endpoint = await _endpoint(_webhook_id_of(webhook))
    assert body.lstrip().startswith('<section class="card webhook-secret" id="webhook-secret"')
    assert f'value="{endpoint.secret}"' in body and "24 hours" in body
    assert endpoint.secret not in await body_text(await client.get(webhook))


async def test_rotating_needs_the_csrf_token(client, webhook):
    old = (await _endpoint(_webhook_id_of(webhook))).secret

    response = await client.post(f"{webhook}/rotate")

    assert response.status_code == 400
    assert (await _endpoint(_webhook_id_of(webhook))).secret == old


# --- deleting -------------------------------------------------------------------------------------


async def test_deleting_asks_first_without_javascript(client, application, webhook, signed_in, receiver):
    asked = await client.get(f"{webhook}/delete")

    assert asked.status_code == 200
    question = await body_text(asked)
    assert "Delete this webhook?" in question and receiver.url in question
    assert f'<form method="post" action="{webhook}/delete"' in question
    assert await WebhookEndpoint.exists(id=_webhook_id_of(webhook))

    response = await client.post(f"{webhook}/delete", form={"csrf_token": signed_in})

    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/applications/{application.id}#webhooks"
    assert not await WebhookEndpoint.exists(id=_webhook_id_of(webhook))
    page = await body_text(await client.get(f"/app/applications/{application.id}"))
    assert "Webhook deleted." in page and "No webhooks yet." in _card(page)
    assert (await client.get(webhook)).status_code == 404


async def test_deleting_with_htmx_sends_the_browser_back_to_the_card(client, application, webhook, signed_in):
    response = await client.post(f"{webhook}/delete", form={"csrf_token": signed_in}, headers=HTMX)

    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == f"/app/applications/{application.id}#webhooks"
    assert not await WebhookEndpoint.exists(id=_webhook_id_of(webhook))


async def test_deleting_needs_the_csrf_token(client, webhook):
    response = await client.post(f"{webhook}/delete")

    assert response.status_code == 400
    assert await WebhookEndpoint.exists(id=_webhook_id_of(webhook))


# --- the delivery log ------------------------------------------------------------------------------


async def test_a_test_event_reaches_the_receiver_signed_and_the_log_shows_it(
    client, webhook, signed_in, receiver
):
    secret = (await _endpoint(_webhook_id_of(webhook))).secret

    response = await client.post(f"{webhook}/test", form={"csrf_token": signed_in})

    assert response.status_code == 303 and response.headers["Location"] == f"{webhook}#deliveries"
    async with asyncio.timeout(15):
        [received] = await receiver.wait_for(1)
    payload = Webhook(secret).verify(received.body, received.headers)
    assert payload["type"] == "webhook.test"
    await _settled(_webhook_id_of(webhook))
    log = _log(await body_text(await client.get(webhook)))
    assert "webhook.test" in log and "Delivered" in log and "HTTP 200" in log
    assert f"webhook-id: {received.headers['webhook-id']}" in log
    assert "webhook-signature:" not in log  # not kept in the log
    assert "x-receiver: pytest" in log.lower() and "thanks" in log
    assert str(escape(json.dumps(payload["data"]["message"]))) in log  # the body, as Jinja escapes it


async def test_a_test_event_with_htmx_answers_the_log_which_refreshes_while_it_waits(
    client, signed_in, application
):
    place = f"/app/applications/{application.id}"
    webhook = (await _create(client, signed_in, place, CLOSED)).headers["Location"]

    response = await client.post(f"{webhook}/test", form={"csrf_token": signed_in}, headers=HTMX)

    assert response.status_code == 200
    body = await body_text(response)
    assert body.lstrip().startswith('<section class="card webhook-log" id="deliveries"')
    assert "Test event queued" in body and "webhook.test" in body
    assert f'hx-get="{webhook}/deliveries"' in body and 'hx-trigger="every 2s"' in body


async def test_the_log_stops_refreshing_once_nothing_is_under_way(client, webhook, signed_in):
    await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    await _settled(_webhook_id_of(webhook))

    response = await client.get(f"{webhook}/deliveries", headers=HTMX)

    body = await body_text(response)
    assert "<html" not in body and "Delivered" in body
    assert "hx-trigger" not in body


async def test_the_logs_address_without_htmx_leads_to_the_page(client, webhook):
    response = await client.get(f"{webhook}/deliveries?before=12")

    assert response.status_code == 303
    assert response.headers["Location"] == f"{webhook}?before=12#deliveries"


async def test_a_failed_attempt_shows_its_error(client, signed_in, application):
    webhook = (await _create(client, signed_in, f"/app/applications/{application.id}", CLOSED)).headers[
        "Location"
    ]
    await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    # The page is read until the worker's failed attempt is on it: on a busy machine the retry,
    # five seconds later, may already be under way (shown as sending) when the page is read.
    async with asyncio.timeout(30):
        while True:
            log = _log(await body_text(await client.get(webhook)))
            if "Pending" in log and "no answer" in log:
                break
            await asyncio.sleep(0.05)

    assert "Next attempt" in log
    assert "ClientConnectorError" in log or "Connect" in log


async def test_resending_sends_the_same_message_again(client, webhook, signed_in, receiver):
    await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    [delivery] = await _settled(_webhook_id_of(webhook))

    response = await client.post(f"{webhook}/deliveries/{delivery.id}/resend", form={"csrf_token": signed_in})

    assert response.status_code == 303
    assert response.headers["Location"] == f"{webhook}#delivery-{delivery.id}"
    async with asyncio.timeout(15):
        first, second = await receiver.wait_for(2)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery.message_id
    assert first.body == second.body
    [again] = await _settled(_webhook_id_of(webhook))
    assert again.attempts == 2


async def test_resending_with_htmx_answers_the_log(client, webhook, signed_in):
    await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    [delivery] = await _settled(_webhook_id_of(webhook))

    response = await client.post(
        f"{webhook}/deliveries/{delivery.id}/resend", form={"csrf_token": signed_in}, headers=HTMX
    )

    assert response.status_code == 200
    body = await body_text(response)
    assert "<html" not in body and "Delivery queued again" in body and f'id="delivery-{delivery.id}"' in body


async def test_a_delivery_of_another_webhook_cannot_be_resent(client, webhook, signed_in, application):
    other = (await _create(client, signed_in, f"/app/applications/{application.id}", CLOSED)).headers[
        "Location"
    ]
    await client.post(f"{other}/test", form={"csrf_token": signed_in})
    [delivery] = await _deliveries(_webhook_id_of(other))

    response = await client.post(f"{webhook}/deliveries/{delivery.id}/resend", form={"csrf_token": signed_in})

    assert response.status_code == 404
    assert "Invalid delivery" in await body_text(response)


async def test_the_log_pages_with_older_and_newest(client, webhook, signed_in, monkeypatch):
    monkeypatch.setattr(service, "DELIVERIES_PAGE", 2)
    for _ in range(3):
        await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    newest, middle, oldest = await _deliveries(_webhook_id_of(webhook))

    first = _log(await body_text(await client.get(webhook)))
    older = _log(await body_text(await client.get(f"{webhook}?before={middle.id}")))

    assert f'id="delivery-{newest.id}"' in first and f'id="delivery-{middle.id}"' in first
    assert f'id="delivery-{oldest.id}"' not in first
    assert f'href="{webhook}?before={middle.id}#deliveries">Older' in first and "Newest" not in first
    assert f'id="delivery-{oldest.id}"' in older and f'id="delivery-{middle.id}"' not in older
    assert f'href="{webhook}#deliveries">Newest' in older and "Older" not in older


async def test_the_pages_statements_do_not_grow_with_the_log(client, application, signed_in, queries):
    webhook = (await _create(client, signed_in, f"/app/applications/{application.id}", CLOSED)).headers[
        "Location"
    ]
    await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    queries.statements.clear()
    await client.get(webhook)
    few = queries.count
    for _ in range(3):
        await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    queries.statements.clear()

    await client.get(webhook)

    assert queries.count == few


async def test_what_people_typed_is_escaped(client, application, signed_in, receiver):
    place = f"/app/applications/{application.id}"
    response = await _create(client, signed_in, place, receiver.url, description="<b>CRM</b>")
    webhook = response.headers["Location"]
    await make_thread(application, message="<script>alert('feedback')</script>", name="<i>Eve</i>")
    await _settled(_webhook_id(response))

    card = _card(await body_text(await client.get(place)))
    page = await body_text(await client.get(webhook))

    assert "&lt;b&gt;CRM&lt;/b&gt;" in card and "<b>CRM</b>" not in card
    assert "<script>alert" not in page and "<i>Eve</i>" not in page
    assert "&lt;script&gt;alert(&#39;feedback&#39;)&lt;/script&gt;" in _log(page)


# --- an organization's webhooks --------------------------------------------------------------------


async def test_an_owner_manages_the_organizations_webhooks_on_its_page(client, agent, signed_in, receiver):
    organization = await make_organization(agent, name="Acme")
    place = f"/app/organizations/{organization.id}"

    card = _card(await body_text(await client.get(place)))
    response = await _create(client, signed_in, place, receiver.url)

    assert "every application of Acme" in card and f'action="{place}/webhooks"' in card
    assert response.status_code == 303
    webhook = response.headers["Location"]
    assert re.fullmatch(rf"{place}/webhooks/\d+", webhook)
    endpoint = await _endpoint(_webhook_id(response))
    assert (endpoint.organization_id, endpoint.application_id) == (organization.id, None)
    page = await body_text(await client.get(webhook))
    assert endpoint.secret in page and f'href="{place}#webhooks"' in page
    await client.post(f"{webhook}/test", form={"csrf_token": signed_in})
    async with asyncio.timeout(15):
        [received] = await receiver.wait_for(1)
    assert Webhook(endpoint.secret).verify(received.body, received.headers)["type"] == "webhook.test"

    deleted = await client.post(f"{webhook}/delete", form={"csrf_token": signed_in})

    assert deleted.headers["Location"] == f"{place}#webhooks"
    after = await body_text(await client.get(place))
    assert "Webhook deleted." in _card(after) and "No webhooks yet." in _card(after)


async def test_an_agent_of_the_organization_sees_no_card_on_its_page_and_gets_403(app, agent):
    owner = await make_user(email="owner@example.com")
    organization = await make_organization(agent, owners=(owner,))
    scope = await service.organization_scope(owner, organization.id)
    endpoint, _ = await service.create_endpoint(owner, scope, {"url": CLOSED}, app.config["EARFUL"])
    agent_client = app.test_client()
    csrf = await sign_in(agent_client, agent)
    place = f"/app/organizations/{organization.id}"

    page = await body_text(await agent_client.get(place))
    shown = await agent_client.get(f"{place}/webhooks/{endpoint.id}")
    created = await _create(agent_client, csrf, place, CLOSED)

    assert 'id="webhooks"' not in page and CLOSED not in page
    assert (shown.status_code, created.status_code) == (403, 403)
    assert await WebhookEndpoint.filter(organization_id=organization.id).count() == 1


async def test_another_user_gets_the_not_found_page_for_an_organizations_webhook(
    client, agent, signed_in, intruder
):
    organization = await make_organization(agent)
    place = f"/app/organizations/{organization.id}"
    webhook = (await _create(client, signed_in, place, CLOSED)).headers["Location"]
    other_client, csrf = intruder

    shown = await other_client.get(webhook)
    created = await _create(other_client, csrf, place, CLOSED)

    assert (shown.status_code, created.status_code) == (404, 404)
    assert "Invalid organization" in await body_text(shown)
    assert CLOSED not in await body_text(shown)
