"""The management API's webhooks: the endpoints of an application (for its administrators) and
of an organization (for its owners, hearing every application of it), their secrets, test
events and delivery log.

Every operation exists under both owners, ``/applications/<id>/webhooks...`` and
``/organizations/<id>/webhooks...``, served by the same handler: only the scope differs, and
:mod:`app.services.webhooks.endpoints` holds every rule of both.
"""

from __future__ import annotations

from quart import Blueprint, Response, request

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, parse_id, query_int, read_body, settings
from app.api.owners import routes_under_both_owners
from app.repositories.webhooks import EndpointRow
from app.representations import delivery_json, webhook_json
from app.services.applications import get_application
from app.services.webhooks import endpoints
from app.services.webhooks.endpoints import INVALID_DELIVERY, INVALID_WEBHOOK, LoggedDelivery, Scope

blueprint = Blueprint("webhooks", __name__)

route = routes_under_both_owners(blueprint, "/webhooks")


async def _scope(owner: dict[str, str]) -> Scope:
    """The webhooks of the path's application or organization, as the user may manage them."""
    user = current_user()
    if "organization_id" in owner:
        organization_id = parse_id(owner["organization_id"], "Invalid organization")
        return await endpoints.organization_scope(user, organization_id)
    application = await get_application(user, parse_id(owner["application_id"], "Invalid application"))
    return await endpoints.application_scope(user, application)


async def _endpoint(owner: dict[str, str], webhook_id: str) -> tuple[Scope, EndpointRow]:
    scope = await _scope(owner)
    return scope, await endpoints.get_endpoint(scope, parse_id(webhook_id, INVALID_WEBHOOK))


def _with_secret(endpoint: EndpointRow, secret: str) -> dict[str, object]:
    return {**webhook_json(endpoint), "secret": secret}


def _delivery(logged: LoggedDelivery) -> dict[str, object]:
    return delivery_json(logged.delivery, logged.attempts)


def _before() -> int | None:
    raw = request.args.get("before")
    return None if raw is None or raw == "" else query_int("before", 0)


@route("", "GET")
@require_scope("read")
async def list_webhooks(**owner: str) -> Response:
    """The owner's webhook endpoints, oldest first."""
    scope = await _scope(owner)
    return json_response({"data": [webhook_json(e) for e in await endpoints.list_endpoints(scope)]})


@route("", "POST")
@require_scope("write")
async def create_webhook(**owner: str) -> Response:
    """A new endpoint: 201 with its secret, which no other answer shows."""
    scope = await _scope(owner)
    body = await read_body(NOT_A_JSON_OBJECT)
    endpoint, secret = await endpoints.create_endpoint(current_user(), scope, body, settings())
    return json_response({"data": _with_secret(endpoint, secret)}, 201)


@route("/<webhook_id>", "GET")
@require_scope("read")
async def show_webhook(webhook_id: str, **owner: str) -> Response:
    _, endpoint = await _endpoint(owner, webhook_id)
    return json_response({"data": webhook_json(endpoint)})


@route("/<webhook_id>", "PATCH")
@require_scope("write")
async def update_webhook(webhook_id: str, **owner: str) -> Response:
    """Change the fields sent; the others keep their value."""
    scope, endpoint = await _endpoint(owner, webhook_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    updated = await endpoints.update_endpoint(scope, endpoint, body, settings())
    return json_response({"data": webhook_json(updated)})


@route("/<webhook_id>", "DELETE")
@require_scope("write")
async def delete_webhook(webhook_id: str, **owner: str) -> Response:
    """Delete the endpoint with its delivery log; its waiting deliveries are not sent."""
    _, endpoint = await _endpoint(owner, webhook_id)
    await endpoints.delete_endpoint(endpoint)
    return Response(status=204)


@route("/<webhook_id>/rotate-secret", "POST")
@require_scope("write")
async def rotate_webhook_secret(webhook_id: str, **owner: str) -> Response:
    """A new secret, shown this once; the previous one keeps signing beside it for a day."""
    scope, endpoint = await _endpoint(owner, webhook_id)
    rotated, secret = await endpoints.rotate_secret(scope, endpoint)
    return json_response({"data": _with_secret(rotated, secret)})


@route("/<webhook_id>/test", "POST")
@require_scope("write")
async def send_test_event(webhook_id: str, **owner: str) -> Response:
    """Queue a ``webhook.test`` event for the endpoint: 202 with its delivery."""
    scope, endpoint = await _endpoint(owner, webhook_id)
    queued = await endpoints.send_test_event(scope, endpoint)
    return json_response({"data": _delivery(await endpoints.get_delivery(endpoint, queued.id))}, 202)


@route("/<webhook_id>/deliveries", "GET")
@require_scope("read")
async def list_webhook_deliveries(webhook_id: str, **owner: str) -> Response:
    """The endpoint's deliveries, newest first, each with its attempts; paged by ``before``."""
    _, endpoint = await _endpoint(owner, webhook_id)
    limit = query_int("limit", endpoints.DELIVERIES_PAGE)
    page = await endpoints.delivery_page(endpoint, limit, _before())
    return json_response(
        {
            "data": [_delivery(logged) for logged in page.deliveries],
            "pagination": {"limit": limit, "next_before": page.next_before},
        }
    )


@route("/<webhook_id>/deliveries/<delivery_id>", "GET")
@require_scope("read")
async def show_webhook_delivery(webhook_id: str, delivery_id: str, **owner: str) -> Response:
    _, endpoint = await _endpoint(owner, webhook_id)
    logged = await endpoints.get_delivery(endpoint, parse_id(delivery_id, INVALID_DELIVERY))
    return json_response({"data": _delivery(logged)})


@route("/<webhook_id>/deliveries/<delivery_id>/resend", "POST")
@require_scope("write")
async def resend_webhook_delivery(webhook_id: str, delivery_id: str, **owner: str) -> Response:
    """Send a delivery again at once, with the same ``webhook-id`` and body: 202."""
    _, endpoint = await _endpoint(owner, webhook_id)
    requeued = await endpoints.resend(endpoint, parse_id(delivery_id, INVALID_DELIVERY))
    return json_response({"data": _delivery(await endpoints.get_delivery(endpoint, requeued.id))}, 202)
