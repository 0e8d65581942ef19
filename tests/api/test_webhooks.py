"""Webhooks through the management API: an application's endpoints and an organization's, their
secrets, test events, delivery log and resends, with real deliveries to a receiver on loopback.

The deployment here allows private addresses (the receiver listens on 127.0.0.1), as
EARFUL_WEBHOOK_ALLOW_PRIVATE=1 does; the tests of the address rule turn that off.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp import web
from standardwebhooks import Webhook

from app.config import Settings
from app.db import atomic
from app.models import EVENT_TYPES, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from app.openapi import build_document
from app.repositories.organizations import OrganizationRow, organization_by_id
from app.services.deletion import ADMINISTRATORS_ONLY
from app.services.deployment import use_settings
from app.services.organizations import OWNERS_ONLY, add_member
from app.services.webhooks.delivery import Sender, deliver_due
from app.services.webhooks.endpoints import MAX_ENDPOINTS
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_thread,
    make_token,
    make_user,
)

HOST_IS_LOOPBACK = (
    "The URL's host resolves to 127.0.0.1, a private, loopback or link-local address: webhooks only go "
    "to public addresses"
)


# The receiver and the deployment ---------------------------------------------------------------


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    def verified_by(self, secret: str) -> dict[str, Any]:
        """The body, after checking its signature with ``secret`` (raises when it does not match)."""
        return Webhook(secret).verify(self.body, self.headers)


@dataclass
class Receiver:
    """A webhook receiver on a free loopback port: keeps every request, answers ``status``."""

    status: int = 200
    received: list[Received] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def _receive(self, request: web.Request) -> web.Response:
        self.received.append(Received(dict(request.headers), await request.read()))
        return web.Response(status=self.status, text="thanks")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{path:.*}", self._receive)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/hooks/earful"

    async def stop(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


@pytest.fixture
async def receiver() -> Any:
    server = Receiver()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def allow_private() -> bool:
    """Whether webhooks may go to private addresses; parametrize it to False to test the rule."""
    return True


@pytest.fixture
def settings(settings: Settings, allow_private: bool) -> Settings:
    value = replace(settings, webhook_allow_private=allow_private)
    use_settings(value)
    return value


# Owners: an application (its creator administers it) and an organization (the agent owns it) ----


@dataclass
class Owner:
    """Where the agent manages webhooks: the path of the list, and an application whose events
    the endpoints there hear."""

    kind: str
    path: str
    application: Any


@pytest.fixture(params=["application", "organization"])
async def owner(request: pytest.FixtureRequest, agent: Any, application: Any) -> Owner:
    if request.param == "application":
        return Owner("application", f"/applications/{application.id}/webhooks", application)
    organization = await make_organization(agent, name="Hooks Inc")
    member_app = await make_application(agent, organization_id=organization.id)
    return Owner("organization", f"/organizations/{organization.id}/webhooks", member_app)


@pytest.fixture
def hooks(application: Any) -> str:
    """The path of the application's webhooks (for the tests of one owner only)."""
    return f"/applications/{application.id}/webhooks"


async def create(api: Any, token: str, path: str, **fields: Any) -> dict[str, Any]:
    response = await api.post(path, token, json=fields)
    assert response.status_code == 201, await body_text(response)
    return (await body_json(response))["data"]


async def data_of(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, await body_text(response)
    return (await body_json(response))["data"]


async def assert_error(response: Any, status: int, message: str) -> None:
    assert (response.status_code, response.mimetype) == (status, "text/plain")
    assert await body_text(response) == message


async def settled(
    api: Any, token: str, webhook_path: str, delivery_id: int, settings: Settings, attempts: int = 1
) -> dict[str, Any]:
    """Deliver what is due (the app's own worker does too) until the delivery has had
    ``attempts`` attempts and none is under way; its JSON."""
    sender = Sender(settings.webhook_allow_private)
    try:
        for _ in range(200):
            await deliver_due(settings, sender)
            delivery = await data_of(await api.get(f"{webhook_path}/deliveries/{delivery_id}", token))
            if delivery["status"] != "sending" and delivery["attempts"] >= attempts:
                return delivery
            await asyncio.sleep(0.05)
    finally:
        await sender.close()
    raise AssertionError(f"delivery {delivery_id} was not attempted {attempts} times: {delivery}")


# Create, list, show, change, delete --------------------------------------------------------------


async def test_creating_answers_201_with_the_endpoint_and_its_secret(api, token, owner, receiver):
    response = await api.post(owner.path, token, json={"url": receiver.url})

    webhook = await data_of(response, 201)
    assert webhook["secret"].startswith("whsec_")
    assert webhook["url"] == receiver.url
    assert webhook["events"] == list(EVENT_TYPES)
    assert (webhook["format"], webhook["include_notes"], webhook["enabled"]) == ("standard", False, True)
    assert (webhook["description"], webhook["disabled_reason"]) == ("", "")
    assert (webhook["failing_since"], webhook["secret_rotated_until"]) == (None, None)
    if owner.kind == "application":
        assert (webhook["application_id"], webhook["organization_id"]) == (owner.application.id, None)
    else:
        assert webhook["application_id"] is None
        assert webhook["organization_id"] == owner.application.organization_id
    stored = await WebhookEndpoint.get(id=webhook["id"])
    assert stored.secret == webhook["secret"]


async def test_creating_takes_every_field(api, token, owner, receiver):
    webhook = await create(
        api,
        token,
        owner.path,
        url=receiver.url,
        events=["reply.created", "feedback.created"],
        description="  Our   Slack channel ",
        format="slack",
        include_notes=True,
        enabled=False,
    )

    assert webhook["events"] == ["feedback.created", "reply.created"]
    assert webhook["description"] == "Our Slack channel"
    assert (webhook["format"], webhook["include_notes"], webhook["enabled"]) == ("slack", True, False)


async def test_a_form_is_taken_too(api, token, hooks, receiver):
    response = await api.post(
        hooks,
        token,
        form={"url": receiver.url, "events": "feedback.deleted feedback.created", "include_notes": "1"},
    )

    webhook = await data_of(response, 201)
    assert webhook["events"] == ["feedback.created", "feedback.deleted"]
    assert webhook["include_notes"] is True


async def test_the_list_shows_the_endpoints_oldest_first_without_secrets(api, token, owner, receiver):
    first = await create(api, token, owner.path, url=receiver.url, description="first")
    second = await create(api, token, owner.path, url=receiver.url + "/2", description="second")

    response = await api.get(owner.path, token)

    listed = await data_of(response)
    assert [w["id"] for w in listed] == [first["id"], second["id"]]
    assert all("secret" not in w for w in listed)
    text = await body_text(response)
    assert first["secret"] not in text and second["secret"] not in text


async def test_showing_an_endpoint_never_shows_its_secret(api, token, owner, receiver):
    created = await create(api, token, owner.path, url=receiver.url)
    secret = created.pop("secret")

    response = await api.get(f"{owner.path}/{created['id']}", token)

    assert await data_of(response) == created
    assert secret not in await body_text(response)


async def test_a_change_is_partial(api, token, owner, receiver):
    created = await create(api, token, owner.path, url=receiver.url, description="before")
    path = f"{owner.path}/{created['id']}"

    response = await api.patch(path, token, json={"events": ["feedback.created"], "format": "slack"})

    changed = await data_of(response)
    assert "secret" not in changed
    assert changed["events"] == ["feedback.created"]
    assert changed["format"] == "slack"
    assert (changed["description"], changed["url"]) == ("before", receiver.url)
    assert await data_of(await api.get(path, token)) == changed


async def test_an_empty_change_changes_nothing(api, token, hooks, receiver):
    created = await create(api, token, hooks, url=receiver.url)
    del created["secret"]

    response = await api.patch(f"{hooks}/{created['id']}", token, json={})

    assert await data_of(response) == created


async def test_enabling_a_disabled_endpoint_clears_its_failure_record(api, token, hooks, receiver):
    created = await create(api, token, hooks, url=receiver.url)
    await atomic(
        lambda: WebhookEndpoint.filter(id=created["id"]).update(
            enabled=False,
            disabled_reason="Disabled after five days of failed deliveries",
            failing_since=datetime.now(UTC) - timedelta(days=5),
        )
    )

    changed = await data_of(await api.patch(f"{hooks}/{created['id']}", token, json={"enabled": True}))

    assert (changed["enabled"], changed["disabled_reason"], changed["failing_since"]) == (True, "", None)


async def test_deleting_answers_204_and_the_endpoint_is_gone(api, token, owner, receiver):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"
    await data_of(await api.post(f"{path}/test", token), 202)

    response = await api.delete(path, token)

    assert response.status_code == 204
    assert await body_text(response) == ""
    await assert_error(await api.get(path, token), 404, "Invalid webhook")
    assert await data_of(await api.get(owner.path, token)) == []
    assert not await WebhookDelivery.filter(endpoint_id=created["id"]).exists()


async def test_rotating_shows_a_new_secret_once_and_keeps_the_old_one_a_day(api, token, owner, receiver):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"

    response = await api.post(f"{path}/rotate-secret", token)

    rotated = await data_of(response)
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != created["secret"]
    day_later = datetime.now(UTC) + timedelta(hours=24)
    assert abs(rotated["secret_rotated_until"] - day_later.timestamp()) < 60
    shown = await api.get(path, token)
    assert (await data_of(shown))["secret_rotated_until"] == rotated["secret_rotated_until"]
    assert rotated["secret"] not in await body_text(shown)


async def test_the_number_of_endpoints_is_limited(api, token, hooks, receiver):
    for number in range(MAX_ENDPOINTS):
        await create(api, token, hooks, url=f"{receiver.url}/{number}")

    response = await api.post(hooks, token, json={"url": receiver.url})

    await assert_error(response, 400, f"There must not be more than {MAX_ENDPOINTS} webhooks here.")
    assert await WebhookEndpoint.all().count() == MAX_ENDPOINTS


# Bad input --------------------------------------------------------------------------------------

BAD_FIELDS = [
    pytest.param({}, "The url field is required.", id="no url"),
    pytest.param({"url": "  "}, "The url field is required.", id="blank url"),
    pytest.param({"url": 42}, "The url field is required.", id="url not a string"),
    pytest.param(
        {"url": "ftp://203.0.113.7/hook"}, "The url field must be an http:// or https:// URL", id="ftp"
    ),
    pytest.param({"url": "javascript:alert(1)"}, "The url field must be an http:// or https:// URL", id="js"),
    pytest.param({"url": "hooks.example.com"}, "The url field must be an http:// or https:// URL", id="bare"),
    pytest.param(
        {"url": "https://user:pw@203.0.113.7/hook"},
        "The url field must not hold a user name or a password",
        id="credentials",
    ),
    pytest.param(
        {"url": "https://hooks.example.com:99999/hook"},
        "The url field must have a port from 1 to 65535",
        id="port too large",
    ),
    pytest.param(
        {"url": "https://hooks.example.com:https/hook"},
        "The url field must have a port from 1 to 65535",
        id="port not a number",
    ),
    pytest.param(
        {"url": "http://203.0.113.7:0/hook"}, "The url field must have a port from 1 to 65535", id="port 0"
    ),
    pytest.param(
        {"url": "http://203.0.113.7:65536/hook"},
        "The url field must have a port from 1 to 65535",
        id="literal address, port too large",
    ),
    pytest.param(
        {"url": "https://hooks.invalid/earful"},
        "The URL's host 'hooks.invalid' could not be found",
        id="unknown host",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "events": ["feedback.created", "thread.exploded"]},
        "The events field must list one or more of " + ", ".join(EVENT_TYPES) + ".",
        id="unknown event",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "events": []},
        "The events field must list one or more of " + ", ".join(EVENT_TYPES) + ".",
        id="no event",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "events": [1]},
        "The events field must list one or more of " + ", ".join(EVENT_TYPES) + ".",
        id="event not a string",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "format": "xml"},
        "The format field must be standard or slack.",
        id="format",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "description": "x" * 201},
        "The description field must not be greater than 200 characters.",
        id="long description",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "description": ["x"]},
        "The description field must be a string.",
        id="description not a string",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "include_notes": "maybe"},
        "The include_notes field must be true or false.",
        id="include_notes",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "enabled": "yes please"},
        "The enabled field must be true or false.",
        id="enabled",
    ),
    pytest.param(
        {"url": "https://203.0.113.7/hook", "enabled": None},
        "The enabled field must be true or false.",
        id="enabled null",
    ),
]


@pytest.mark.parametrize(("fields", "message"), BAD_FIELDS)
async def test_bad_fields_are_refused_on_create(api, token, owner, fields, message):
    response = await api.post(owner.path, token, json=fields)

    await assert_error(response, 400, message)
    assert await WebhookEndpoint.all().count() == 0


@pytest.mark.parametrize(("fields", "message"), [p for p in BAD_FIELDS if p.id != "no url"])
async def test_bad_fields_are_refused_on_change(api, token, hooks, receiver, fields, message):
    created = await create(api, token, hooks, url=receiver.url)
    before = await WebhookEndpoint.get(id=created["id"]).values()

    response = await api.patch(f"{hooks}/{created['id']}", token, json=fields)

    await assert_error(response, 400, message)
    assert await WebhookEndpoint.get(id=created["id"]).values() == before


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        pytest.param(b'{"url": "https://203.0.113.7/hook",', "application/json", id="truncated JSON"),
        pytest.param(b'["https://203.0.113.7/hook"]', "application/json", id="JSON array"),
        pytest.param(b"not json at all", "application/json", id="not JSON"),
    ],
)
async def test_a_body_that_is_not_a_json_object_is_400(api, token, hooks, receiver, body, content_type):
    created = await create(api, token, hooks, url=receiver.url)
    headers = {"Content-Type": content_type}

    for response in (
        await api.post(hooks, token, data=body, headers=headers),
        await api.patch(f"{hooks}/{created['id']}", token, data=body, headers=headers),
    ):
        await assert_error(response, 400, "The request body must be a JSON object.")
    assert await WebhookEndpoint.all().count() == 1


@pytest.mark.parametrize("allow_private", [False])
@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1/hook", "127.0.0.1"),
        ("http://127.0.0.1:8000/hook", "127.0.0.1"),
        ("https://[::ffff:127.0.0.1]/hook", "::ffff:7f00:1"),
        ("http://[::1]:8000/", "::1"),
    ],
)
async def test_a_loopback_address_is_refused_unless_private_ones_are_allowed(api, token, hooks, url, address):
    response = await api.post(hooks, token, json={"url": url})

    await assert_error(response, 400, HOST_IS_LOOPBACK.replace("127.0.0.1", address))
    assert await WebhookEndpoint.all().count() == 0


@pytest.mark.parametrize("allow_private", [False])
async def test_a_host_name_that_resolves_to_loopback_is_refused(api, token, hooks):
    response = await api.post(hooks, token, json={"url": "http://localhost:8000/hook"})

    assert (response.status_code, response.mimetype) == (400, "text/plain")
    assert (await body_text(response)).startswith("The URL's host resolves to ")
    assert (await body_text(response)).endswith(
        "a private, loopback or link-local address: webhooks only go to public addresses"
    )
    assert await WebhookEndpoint.all().count() == 0


@pytest.mark.parametrize("allow_private", [False])
@pytest.mark.parametrize(
    "url", ["http://10.0.0.5/hook", "http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/"]
)
async def test_private_and_metadata_addresses_are_refused(api, token, hooks, url):
    response = await api.post(hooks, token, json={"url": url})

    assert response.status_code == 400
    assert (await body_text(response)).startswith("The URL's host resolves to ")


@pytest.mark.parametrize("allow_private", [False])
async def test_a_change_to_a_loopback_address_is_refused(api, token, hooks):
    created = await create(api, token, hooks, url="https://93.184.215.14/hook", enabled=False)

    response = await api.patch(f"{hooks}/{created['id']}", token, json={"url": "http://127.0.0.1/hook"})

    await assert_error(response, 400, HOST_IS_LOOPBACK)
    assert (await WebhookEndpoint.get(id=created["id"])).url == "https://93.184.215.14/hook"


# Ids that name nothing here ----------------------------------------------------------------------


@pytest.mark.parametrize("webhook_id", ["999999", "0", "abc", "1e3", str(2**31), "-1"])
async def test_an_unknown_webhook_is_invalid_webhook(api, token, owner, webhook_id):
    for response in (
        await api.get(f"{owner.path}/{webhook_id}", token),
        await api.patch(f"{owner.path}/{webhook_id}", token, json={"description": "x"}),
        await api.delete(f"{owner.path}/{webhook_id}", token),
        await api.post(f"{owner.path}/{webhook_id}/test", token),
        await api.get(f"{owner.path}/{webhook_id}/deliveries", token),
    ):
        await assert_error(response, 404, "Invalid webhook")


async def test_another_owners_webhook_is_invalid_webhook(api, token, agent, application, receiver):
    organization = await make_organization(agent, name="Other")
    other_app = await make_application(agent)
    own = await create(api, token, f"/applications/{application.id}/webhooks", url=receiver.url)
    paths = [f"/applications/{other_app.id}/webhooks", f"/organizations/{organization.id}/webhooks"]
    for path in paths:
        await assert_error(await api.get(f"{path}/{own['id']}", token), 404, "Invalid webhook")
        await assert_error(await api.delete(f"{path}/{own['id']}", token), 404, "Invalid webhook")
    assert await WebhookEndpoint.filter(id=own["id"]).exists()


async def test_a_delivery_of_another_webhook_is_invalid_delivery(api, token, hooks, receiver):
    first = await create(api, token, hooks, url=receiver.url)
    second = await create(api, token, hooks, url=receiver.url)
    delivery = await data_of(await api.post(f"{hooks}/{first['id']}/test", token), 202)
    for delivery_id in (str(delivery["id"]), "999999", "abc", "0"):
        path = f"{hooks}/{second['id']}/deliveries/{delivery_id}"
        await assert_error(await api.get(path, token), 404, "Invalid delivery")
        await assert_error(await api.post(f"{path}/resend", token), 404, "Invalid delivery")


# Test events, deliveries and their log ------------------------------------------------------------


async def test_a_test_event_is_queued_and_listed(api, token, owner, receiver):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"

    response = await api.post(f"{path}/test", token)

    queued = await data_of(response, 202)
    assert queued["webhook_id"] == created["id"]
    assert queued["event_type"] == "webhook.test"
    assert queued["message_id"].startswith("msg_")
    assert queued["status"] in ("pending", "sending", "delivered")  # the app's worker is quick
    assert queued["payload"]["type"] == "webhook.test"
    assert queued["payload"]["data"]["endpoint_id"] == created["id"]
    listed = await data_of(await api.get(f"{path}/deliveries", token))
    assert [d["id"] for d in listed] == [queued["id"]]


async def test_a_delivery_is_signed_sent_and_logged(api, token, owner, receiver, settings):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"
    queued = await data_of(await api.post(f"{path}/test", token), 202)

    delivery = await settled(api, token, path, queued["id"], settings)

    assert (delivery["status"], delivery["attempts"]) == ("delivered", 1)
    assert (delivery["last_status_code"], delivery["last_error"]) == (200, "")
    assert delivery["delivered_at"] is not None and delivery["next_attempt_at"] is None
    [received] = receiver.received
    assert received.verified_by(created["secret"]) == delivery["payload"]
    assert received.headers["webhook-id"] == delivery["message_id"]
    [attempt] = delivery["attempt_log"]
    assert (attempt["status_code"], attempt["error"], attempt["response_body"]) == (200, "", "thanks")
    assert f"webhook-id: {delivery['message_id']}" in attempt["request_headers"]
    assert "webhook-signature" not in attempt["request_headers"]
    assert attempt["duration_ms"] >= 0


async def test_a_change_of_the_owners_application_is_delivered(api, token, owner, receiver, settings):
    created = await create(api, token, owner.path, url=receiver.url, events=["feedback.created"])
    path = f"{owner.path}/{created['id']}"

    thread = await make_thread(owner.application, message="The export button does nothing at all.")

    [listed] = await data_of(await api.get(f"{path}/deliveries", token))
    assert listed["event_type"] == "feedback.created"
    assert listed["payload"]["data"]["id"] == thread.id
    assert listed["payload"]["data"]["message"] == "The export button does nothing at all."
    delivery = await settled(api, token, path, listed["id"], settings)
    assert delivery["status"] == "delivered"
    assert receiver.received[0].verified_by(created["secret"])["data"]["id"] == thread.id


async def test_a_failed_attempt_is_logged_and_tried_again_later(api, token, hooks, receiver, settings):
    receiver.status = 503
    created = await create(api, token, hooks, url=receiver.url)
    path = f"{hooks}/{created['id']}"
    queued = await data_of(await api.post(f"{path}/test", token), 202)

    delivery = await settled(api, token, path, queued["id"], settings)

    assert (delivery["status"], delivery["attempts"]) == ("pending", 1)
    assert (delivery["last_status_code"], delivery["last_error"]) == (503, "HTTP 503")
    assert delivery["next_attempt_at"] > datetime.now(UTC).timestamp()
    assert delivery["attempt_log"][0]["status_code"] == 503
    webhook = await data_of(await api.get(path, token))
    assert webhook["failing_since"] is not None


async def test_after_a_rotation_both_secrets_sign(api, token, owner, receiver, settings):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"
    rotated = await data_of(await api.post(f"{path}/rotate-secret", token))
    queued = await data_of(await api.post(f"{path}/test", token), 202)

    await settled(api, token, path, queued["id"], settings)

    [received] = receiver.received
    assert len(received.headers["webhook-signature"].split()) == 2
    assert received.verified_by(rotated["secret"])["type"] == "webhook.test"
    assert received.verified_by(created["secret"])["type"] == "webhook.test"


async def test_resending_sends_the_same_message_again(api, token, owner, receiver, settings):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"
    queued = await data_of(await api.post(f"{path}/test", token), 202)
    await settled(api, token, path, queued["id"], settings)

    response = await api.post(f"{path}/deliveries/{queued['id']}/resend", token)

    resent = await data_of(response, 202)
    assert resent["id"] == queued["id"]
    assert resent["status"] in ("pending", "sending", "delivered")
    delivery = await settled(api, token, path, queued["id"], settings, attempts=2)
    assert (delivery["status"], len(delivery["attempt_log"])) == ("delivered", 2)
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == queued["message_id"]
    assert first.body == second.body


async def test_a_delivery_being_sent_is_not_resent(api, token, hooks, receiver, settings):
    created = await create(api, token, hooks, url=receiver.url)
    path = f"{hooks}/{created['id']}"
    queued = await data_of(await api.post(f"{path}/test", token), 202)
    await settled(api, token, path, queued["id"], settings)
    lease = datetime.now(UTC) + timedelta(minutes=1)
    await atomic(
        lambda: WebhookDelivery.filter(id=queued["id"]).update(status="sending", next_attempt_at=lease)
    )

    response = await api.post(f"{path}/deliveries/{queued['id']}/resend", token)

    await assert_error(response, 400, "The delivery is being sent right now; try again in a moment.")
    assert (await WebhookDelivery.get(id=queued["id"])).status == "sending"


async def test_the_deliveries_page_newest_first_by_keyset(api, token, owner, receiver):
    created = await create(api, token, owner.path, url=receiver.url)
    path = f"{owner.path}/{created['id']}"
    ids = [(await data_of(await api.post(f"{path}/test", token), 202))["id"] for _ in range(3)]

    first = await body_json(await api.get(f"{path}/deliveries?limit=2", token))
    second = await body_json(
        await api.get(f"{path}/deliveries?limit=2&before={first['pagination']['next_before']}", token)
    )

    assert [d["id"] for d in first["data"]] == [ids[2], ids[1]]
    assert first["pagination"] == {"limit": 2, "next_before": ids[1]}
    assert [d["id"] for d in second["data"]] == [ids[0]]
    assert second["pagination"] == {"limit": 2, "next_before": None}
    everything = await body_json(await api.get(f"{path}/deliveries", token))
    assert [d["id"] for d in everything["data"]] == ids[::-1]
    assert everything["pagination"] == {"limit": 50, "next_before": None}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=0", "The limit field must be between 1 and 100."),
        ("limit=101", "The limit field must be between 1 and 100."),
        ("limit=ten", "The limit field must be an integer."),
        ("before=0", "The before field must be a delivery id (1 to 2147483647)."),
        (f"before={2**31}", "The before field must be a delivery id (1 to 2147483647)."),
        ("before=last", "The before field must be an integer."),
    ],
)
async def test_bad_paging_is_400(api, token, hooks, receiver, query, message):
    created = await create(api, token, hooks, url=receiver.url)

    response = await api.get(f"{hooks}/{created['id']}/deliveries?{query}", token)

    await assert_error(response, 400, message)


# Scopes and who may --------------------------------------------------------------------------------

# Every operation, relative to a list of webhooks ({webhook} and {delivery} are real ids), and
# what it answers the owner; the deletion comes last.
OPERATIONS = [
    ("get", "", None, 200),
    ("post", "", {"url": "https://203.0.113.7/hook"}, 201),
    ("get", "/{webhook}", None, 200),
    ("patch", "/{webhook}", {"description": "Taken over"}, 200),
    ("post", "/{webhook}/rotate-secret", None, 200),
    ("post", "/{webhook}/test", None, 202),
    ("get", "/{webhook}/deliveries", None, 200),
    ("get", "/{webhook}/deliveries/{delivery}", None, 200),
    ("post", "/{webhook}/deliveries/{delivery}/resend", None, 202),
    ("delete", "/{webhook}", None, 204),
]
CALLS = [
    pytest.param(method, suffix, body, id=f"{method} {suffix}") for method, suffix, body, _ in OPERATIONS
]
WRITES = [call for call in CALLS if call.values[0] != "get"]
READS = [(method, suffix) for method, suffix, _, _ in OPERATIONS if method == "get"]


def test_the_operations_here_are_every_webhook_operation():
    document = build_document("http://testserver")
    for prefix in ("/applications/{application_id}/webhooks", "/organizations/{organization_id}/webhooks"):
        documented = {
            (method, path[len(prefix) :])
            for path, item in document["paths"].items()
            if path.startswith(prefix)
            for method in item
        }
        listed = {
            (method, suffix.replace("{webhook}", "{webhook_id}").replace("{delivery}", "{delivery_id}"))
            for method, suffix, _, _ in OPERATIONS
        }
        assert documented == listed


@dataclass
class Hooked:
    """The agent's application (in the agent's organization) and organization, each with a
    webhook that has had one delivery."""

    application_path: str
    organization_path: str
    webhooks: dict[str, dict[str, Any]]
    deliveries: dict[str, int]

    def paths(self) -> dict[str, str]:
        return {"application": self.application_path, "organization": self.organization_path}

    async def organization(self) -> OrganizationRow:
        found = await organization_by_id(self.webhooks["organization"]["organization_id"])
        assert found is not None
        return found

    def url(self, kind: str, suffix: str) -> str:
        return self.paths()[kind] + suffix.format(
            webhook=self.webhooks[kind]["id"], delivery=self.deliveries[kind]
        )


@pytest.fixture
async def hooked(api, agent, token, receiver, settings) -> Hooked:
    organization = await make_organization(agent, name="Acme")
    application = await make_application(agent, organization_id=organization.id)
    paths = {
        "application": f"/applications/{application.id}/webhooks",
        "organization": f"/organizations/{organization.id}/webhooks",
    }
    webhooks, deliveries = {}, {}
    for kind, path in paths.items():
        webhooks[kind] = await create(api, token, path, url=receiver.url)
        queued = await data_of(await api.post(f"{path}/{webhooks[kind]['id']}/test", token), 202)
        await settled(api, token, f"{path}/{webhooks[kind]['id']}", queued["id"], settings)
        deliveries[kind] = queued["id"]
    return Hooked(paths["application"], paths["organization"], webhooks, deliveries)


async def snapshot() -> dict[str, Any]:
    return {
        "endpoints": await WebhookEndpoint.all().order_by("id").values(),
        "deliveries": await WebhookDelivery.all().order_by("id").values(),
        "attempts": await WebhookAttempt.all().count(),
    }


async def send(api, token: str, method: str, url: str, body: dict[str, Any] | None):
    return await getattr(api, method)(url, token, **({"json": body} if body is not None else {}))


@pytest.mark.parametrize("kind", ["application", "organization"])
@pytest.mark.parametrize(("method", "suffix", "body"), CALLS)
async def test_a_stranger_is_told_the_owner_does_not_exist(api, hooked, kind, method, suffix, body):
    stranger = await make_user()
    await make_application(stranger)
    before = await snapshot()

    response = await send(api, await make_token(stranger), method, hooked.url(kind, suffix), body)

    await assert_error(
        response, 404, "Invalid application" if kind == "application" else "Invalid organization"
    )
    assert await snapshot() == before


@pytest.mark.parametrize("kind", ["application", "organization"])
@pytest.mark.parametrize(("method", "suffix", "body"), CALLS)
async def test_an_agent_of_the_organization_may_not(api, hooked, kind, method, suffix, body):
    colleague = await make_user()
    await add_member(await hooked.organization(), colleague)
    before = await snapshot()

    response = await send(api, await make_token(colleague), method, hooked.url(kind, suffix), body)

    await assert_error(response, 403, ADMINISTRATORS_ONLY if kind == "application" else OWNERS_ONLY)
    assert await snapshot() == before


@pytest.mark.parametrize("kind", ["application", "organization"])
@pytest.mark.parametrize(("method", "suffix", "body"), WRITES)
async def test_a_read_token_cannot_write(api, agent, hooked, kind, method, suffix, body):
    before = await snapshot()

    response = await send(api, await make_token(agent, "read"), method, hooked.url(kind, suffix), body)

    await assert_error(response, 403, "Insufficient scope")
    assert await snapshot() == before


@pytest.mark.parametrize("kind", ["application", "organization"])
async def test_a_read_token_may_read(api, agent, hooked, kind):
    reader = await make_token(agent, "read")
    for _, suffix in READS:
        assert (await api.get(hooked.url(kind, suffix), reader)).status_code == 200


async def test_a_co_owner_of_the_organization_manages_both(api, hooked):
    co_owner = await make_user()
    await add_member(await hooked.organization(), co_owner, role="owner")
    co_token = await make_token(co_owner)

    for kind in ("application", "organization"):
        listed = await data_of(await api.get(hooked.paths()[kind], co_token))
        assert [w["id"] for w in listed] == [hooked.webhooks[kind]["id"]]


async def test_no_get_answer_holds_a_secret(api, token, hooked):
    secrets = [w["secret"] for w in hooked.webhooks.values()]
    for kind in ("application", "organization"):
        for _, suffix in READS:
            text = await body_text(await api.get(hooked.url(kind, suffix), token))
            assert not any(secret in text for secret in secrets), suffix
            assert '"secret"' not in text


async def test_without_a_token_every_operation_is_401(client, hooked):
    for kind in ("application", "organization"):
        for method, suffix, body, _ in OPERATIONS:
            response = await getattr(client, method)(hooked.url(kind, suffix), json=body)
            assert response.status_code == 401
            assert await body_text(response) == "Unauthenticated"


async def test_the_owner_may_use_every_operation(api, token, hooked):
    for kind in ("application", "organization"):
        for method, suffix, body, status in OPERATIONS:
            response = await send(api, token, method, hooked.url(kind, suffix), body)

            assert response.status_code == status, (kind, method, suffix, await body_text(response))
