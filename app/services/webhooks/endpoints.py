"""Webhook endpoints: who may manage them, what they may hold, their secrets, their log.

An application's endpoints are managed by its administrators (its creator and the owners of its
organization, as for deletion); an organization's endpoints, which hear of every application of
the organization, by the organization's owners. Anyone else is told the endpoint does not
exist. A secret (``whsec_`` and 32 random bytes in base64) is shown once, when the endpoint is
created or its secret rotated; after a rotation the previous secret keeps signing beside the new
one for ROTATION_OVERLAP, so receivers can switch without losing a delivery.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.config import Settings
from app.db import transactional
from app.errors import NotFound, ValidationError
from app.models import EVENT_TYPES, FORMATS
from app.repositories import webhooks
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.webhooks import AttemptRow, DeliveryRow, EndpointRow
from app.services.deletion import check_administrator
from app.services.organizations import check_owner
from app.services.validation import MAX_ID, parse_bool, valid_id
from app.services.webhooks import events
from app.services.webhooks.addresses import ForbiddenAddress, check_url
from app.services.webhooks.delivery import wake_after_commit

ROTATION_OVERLAP = timedelta(hours=24)
MAX_ENDPOINTS = 20
MAX_DESCRIPTION = 200
INVALID_WEBHOOK = "Invalid webhook"
INVALID_DELIVERY = "Invalid delivery"
DELIVERIES_PAGE = 50
MAX_DELIVERIES_PAGE = 100


@dataclass(frozen=True)
class Scope:
    """Where endpoints live: an application, or an organization (for all its applications)."""

    application: ApplicationRow | None = None
    organization_id: int | None = None


def new_secret() -> str:
    """A signing secret in the Standard Webhooks form."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


async def application_scope(user: UserRow, application: ApplicationRow) -> Scope:
    """An application's endpoints, for one of its administrators (403 for other agents)."""
    await check_administrator(user, application)
    return Scope(application=application)


async def organization_scope(user: UserRow, organization_id: int) -> Scope:
    """An organization's endpoints, for one of its owners (403 for agents, 404 for the rest)."""
    await check_owner(user, organization_id)
    return Scope(organization_id=organization_id)


async def list_endpoints(scope: Scope) -> list[EndpointRow]:
    if scope.application is not None:
        return await webhooks.endpoints_of_application(scope.application.id)
    assert scope.organization_id is not None
    return await webhooks.endpoints_of_organization(scope.organization_id)


async def pending_counts(endpoints: Sequence[EndpointRow]) -> dict[int, int]:
    """How many deliveries each endpoint still waits for (absent: none), in one statement."""
    return await webhooks.pending_counts([endpoint.id for endpoint in endpoints])


async def get_endpoint(scope: Scope, endpoint_id: int) -> EndpointRow:
    """One endpoint of the scope; any other id is 'Invalid webhook'."""
    endpoint = await webhooks.endpoint_by_id(endpoint_id)
    if endpoint is None or not _in_scope(endpoint, scope):
        raise NotFound(INVALID_WEBHOOK)
    return endpoint


def _in_scope(endpoint: EndpointRow, scope: Scope) -> bool:
    if scope.application is not None:
        return endpoint.application_id == scope.application.id
    return endpoint.organization_id is not None and endpoint.organization_id == scope.organization_id


def _check_events(value: object) -> list[str]:
    if isinstance(value, str):
        value = value.split()
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(kind, str) and kind in EVENT_TYPES for kind in value)
    ):
        raise ValidationError(
            "The events field must list one or more of %(types)s.", types=", ".join(EVENT_TYPES)
        )
    return [kind for kind in EVENT_TYPES if kind in value]


def _check_flag(name: str, value: object) -> bool:
    flag = parse_bool(value)
    if flag is None:
        raise ValidationError("The %(name)s field must be true or false.", name=name)
    return flag


async def clean_fields(data: Mapping[str, object], settings: Settings, creating: bool) -> dict[str, object]:
    """The endpoint settings in ``data``, validated; defaults for those missing when creating."""
    fields: dict[str, object] = {}
    if "url" in data or creating:
        url = data.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ValidationError("The url field is required.")
        try:
            await check_url(url.strip(), settings.webhook_allow_private)
        except ForbiddenAddress as error:
            raise ValidationError(str(error)) from None
        fields["url"] = url.strip()
    if "description" in data:
        description = data["description"] if data["description"] is not None else ""
        if not isinstance(description, str):
            raise ValidationError("The description field must be a string.")
        if len(description.strip()) > MAX_DESCRIPTION:
            raise ValidationError(
                "The description field must not be greater than %(max)d characters.", max=MAX_DESCRIPTION
            )
        fields["description"] = " ".join(description.split())
    if "events" in data:
        fields["events"] = _check_events(data["events"])
    if "format" in data:
        if data["format"] not in FORMATS:
            raise ValidationError("The format field must be standard or slack.")
        fields["format"] = data["format"]
    for name in ("include_notes", "enabled"):
        if name in data:
            fields[name] = _check_flag(name, data[name])
    if creating:
        defaults = {"description": "", "events": list(EVENT_TYPES), "format": "standard"}
        fields = {**defaults, "include_notes": False, "enabled": True, **fields}
    return fields


async def create_endpoint(
    user: UserRow, scope: Scope, data: Mapping[str, object], settings: Settings
) -> tuple[EndpointRow, str]:
    """A new endpoint and its secret (shown this once)."""
    fields = await clean_fields(data, settings, creating=True)
    secret = new_secret()
    endpoint_id = await _insert(scope, fields, secret, user.id)
    return await get_endpoint(scope, endpoint_id), secret


@transactional
async def _insert(scope: Scope, fields: dict[str, object], secret: str, user_id: int) -> int:
    if len(await list_endpoints(scope)) >= MAX_ENDPOINTS:
        raise ValidationError("There must not be more than %(max)d webhooks here.", max=MAX_ENDPOINTS)
    application_id = scope.application.id if scope.application is not None else None
    return await webhooks.insert_endpoint(
        application_id, scope.organization_id, fields, secret, user_id, datetime.now(UTC)
    )


async def update_endpoint(
    scope: Scope, endpoint: EndpointRow, data: Mapping[str, object], settings: Settings
) -> EndpointRow:
    """Change an endpoint's settings; enabling a disabled one clears its failure record."""
    fields = await clean_fields(data, settings, creating=False)
    await _update(endpoint.id, fields)
    return await get_endpoint(scope, endpoint.id)


@transactional
async def _update(endpoint_id: int, fields: dict[str, object]) -> None:
    if fields.get("enabled") is True:
        await webhooks.forgive_if_disabled(endpoint_id)
    await webhooks.update_endpoint(endpoint_id, fields, datetime.now(UTC))


async def delete_endpoint(endpoint: EndpointRow) -> None:
    """Delete an endpoint with its deliveries and their log."""
    await transactional(webhooks.delete_endpoint)(endpoint.id)


async def rotate_secret(scope: Scope, endpoint: EndpointRow) -> tuple[EndpointRow, str]:
    """A new secret (shown this once); the current one keeps signing beside it for a day."""
    secret = new_secret()
    now = datetime.now(UTC)
    await transactional(webhooks.update_endpoint)(
        endpoint.id,
        {
            "secret": secret,
            "previous_secret": endpoint.secret,
            "previous_secret_expires_at": now + ROTATION_OVERLAP,
        },
        now,
    )
    return await get_endpoint(scope, endpoint.id), secret


@dataclass
class LoggedDelivery:
    """A delivery with its attempts, as the log shows it."""

    delivery: DeliveryRow
    attempts: list[AttemptRow]


async def delivery_log(
    endpoint: EndpointRow, limit: int = DELIVERIES_PAGE, before: int | None = None
) -> list[LoggedDelivery]:
    """An endpoint's deliveries, newest first, each with its attempts (two statements)."""
    found = await webhooks.deliveries_of_endpoint(endpoint.id, limit, before)
    attempts = await webhooks.attempts_of_deliveries([delivery.id for delivery in found])
    return [LoggedDelivery(delivery, attempts.get(delivery.id, [])) for delivery in found]


@dataclass
class DeliveryPage:
    """A page of an endpoint's log, and the ``before`` of the next (older) page (None on the last)."""

    deliveries: list[LoggedDelivery]
    next_before: int | None


async def delivery_page(
    endpoint: EndpointRow, limit: int = DELIVERIES_PAGE, before: int | None = None
) -> DeliveryPage:
    """Up to ``limit`` (1 to MAX_DELIVERIES_PAGE) deliveries of the endpoint with ids below
    ``before``, newest first; one more is read to know whether an older page exists."""
    if not 1 <= limit <= MAX_DELIVERIES_PAGE:
        raise ValidationError("The limit field must be between 1 and %(max)d.", max=MAX_DELIVERIES_PAGE)
    if before is not None and not valid_id(before):
        raise ValidationError("The before field must be a delivery id (1 to %(max)d).", max=MAX_ID)
    found = await delivery_log(endpoint, limit + 1, before)
    next_before = found[limit - 1].delivery.id if len(found) > limit else None
    return DeliveryPage(found[:limit], next_before)


async def get_delivery(endpoint: EndpointRow, delivery_id: int) -> LoggedDelivery:
    """One delivery of the endpoint with its attempts; any other id is 'Invalid delivery'."""
    delivery = await webhooks.delivery_by_id(delivery_id)
    if delivery is None or delivery.endpoint_id != endpoint.id:
        raise NotFound(INVALID_DELIVERY)
    attempts = await webhooks.attempts_of_deliveries([delivery.id])
    return LoggedDelivery(delivery, attempts.get(delivery.id, []))


async def send_test_event(scope: Scope, endpoint: EndpointRow) -> DeliveryRow:
    """Queue a ``webhook.test`` event for the endpoint (sent at once by the worker)."""
    application_id = scope.application.id if scope.application is not None else None
    delivery_id = await _queue_test(endpoint, application_id)
    delivery = await webhooks.delivery_by_id(delivery_id)
    assert delivery is not None  # just written
    return delivery


@transactional
async def _queue_test(endpoint: EndpointRow, application_id: int | None) -> int:
    delivery_id = await events.announce_test(endpoint, application_id)
    wake_after_commit()
    return delivery_id


async def resend(endpoint: EndpointRow, delivery_id: int) -> DeliveryRow:
    """Send a delivery again, with the same ``webhook-id`` and body, at once."""
    await get_delivery(endpoint, delivery_id)
    await _requeue(delivery_id)
    delivery = await webhooks.delivery_by_id(delivery_id)
    assert delivery is not None  # checked above
    return delivery


@transactional
async def _requeue(delivery_id: int) -> None:
    if not await webhooks.requeue_delivery(delivery_id, datetime.now(UTC)):
        raise ValidationError("The delivery is being sent right now; try again in a moment.")
    wake_after_commit()
