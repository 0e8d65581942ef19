"""The management API's webhooks, under both owners: an application's endpoints (managed by its
administrators) and an organization's (managed by its owners, hearing all its applications)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.models import EVENT_TYPES, FORMATS
from app.openapi.management import (
    APPLICATION_ID,
    ORGANIZATION_ID,
    Operation,
    operation,
    validation,
)
from app.openapi.responses import json_data, path_id, query, text
from app.openapi.schemas import Schema, closed, list_of, ref
from app.services.deletion import ADMINISTRATORS_ONLY
from app.services.organizations import OWNERS_ONLY
from app.services.validation import MAX_ID
from app.services.webhooks.endpoints import (
    DELIVERIES_PAGE,
    INVALID_DELIVERY,
    INVALID_WEBHOOK,
    MAX_DELIVERIES_PAGE,
    MAX_DESCRIPTION,
    MAX_ENDPOINTS,
)

TAG = "Webhooks"
WEBHOOK_ID = path_id("webhook_id", "The webhook endpoint's id.")
DELIVERY_ID = path_id("delivery_id", "The delivery's id.")
EVENTS_TEXT = ", ".join(EVENT_TYPES)
FLAG_TEXT = "a form's `true`/`false`/`1`/`0` is taken too"

WEBHOOK_FIELDS: dict[str, Schema] = {
    "url": {
        "type": "string",
        "maxLength": 2048,
        "description": "An http:// or https:// URL without user name or password. Its host must resolve "
        "only to public addresses (no loopback, private, link-local or metadata address) unless the "
        "deployment sets `EARFUL_WEBHOOK_ALLOW_PRIVATE=1`; checked again at every delivery.",
    },
    "events": {
        "anyOf": [
            {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(EVENT_TYPES)}},
            {"type": "string"},
        ],
        "description": f"The event types to receive, one or more of {EVENTS_TEXT} (or one string of "
        "them separated by spaces). Default: all of them.",
    },
    "description": {
        "type": ["string", "null"],
        "maxLength": MAX_DESCRIPTION,
        "description": f"At most {MAX_DESCRIPTION} characters; whitespace is collapsed. Default empty.",
    },
    "format": {
        "type": "string",
        "enum": list(FORMATS),
        "description": "`standard` (default) or `slack`.",
    },
    "include_notes": {
        "type": "boolean",
        "description": f"Send `reply.created` for internal notes too. Default false ({FLAG_TEXT}).",
    },
    "enabled": {
        "type": "boolean",
        "description": f"Default true. Enabling a disabled endpoint clears its failure record ({FLAG_TEXT}).",
    },
}
CREATE_BODY: dict[str, Any] = {
    "required": True,
    "description": "JSON (a form with the same fields is accepted too).",
    "content": {
        "application/json": {"schema": {"type": "object", "required": ["url"], "properties": WEBHOOK_FIELDS}}
    },
}
UPDATE_BODY: dict[str, Any] = {
    "required": True,
    "description": "JSON (a form with the same fields is accepted too): the fields sent change, the others "
    "keep their value; an empty object changes nothing.",
    "content": {"application/json": {"schema": {"type": "object", "properties": WEBHOOK_FIELDS}}},
}
FIELD_ERRORS = (
    "The url field is required.",
    "The url field must be an http:// or https:// URL",
    "The URL's host resolves to 127.0.0.1, a private, loopback or link-local address: webhooks only go "
    "to public addresses",
    "The URL's host 'hooks.example' could not be found",
    "The url field must have a port from 1 to 65535",
    f"The events field must list one or more of {EVENTS_TEXT}.",
    "The format field must be standard or slack.",
    f"The description field must not be greater than {MAX_DESCRIPTION} characters.",
    "The include_notes field must be true or false.",
    "The request body must be a JSON object.",
)
DELIVERIES = closed({"data": list_of("WebhookDelivery"), "pagination": ref("KeysetPagination")})
SIGNING = (
    "Deliveries are POSTed with the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and "
    "`webhook-signature` (HMAC-SHA256 with the secret; during a rotation's day, one signature per "
    "secret, separated by a space). Any 2xx answer is a success; anything else, a redirect included, "
    "is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then given up. An endpoint whose "
    "deliveries have all failed for five days is disabled and its administrators are told by e-mail."
)


@dataclass(frozen=True)
class Owner:
    """Where webhooks live, as the document names and describes it."""

    prefix: str
    noun: str  # in operation ids: Application, Organization
    parameter: dict[str, Any]
    missing: str  # the 404 text of an unknown (or unseen) owner
    unseen: str  # and when it is answered
    only: str  # the 403 text of a member who may not manage its webhooks
    who: str


OWNERS = (
    Owner(
        "/applications/{application_id}/webhooks",
        "Application",
        APPLICATION_ID,
        "Invalid application",
        "No application with this id that the user may see",
        ADMINISTRATORS_ONLY,
        "the application's administrators (its creator and the owners of its organization)",
    ),
    Owner(
        "/organizations/{organization_id}/webhooks",
        "Organization",
        ORGANIZATION_ID,
        "Invalid organization",
        "No organization with this id that the user belongs to",
        OWNERS_ONLY,
        "the organization's owners; they hear the events of every application of the organization",
    ),
)


def _forbidden(owner: Owner) -> dict[str, Any]:
    return text(
        f"The token lacks the scope, or the user is not one of {owner.who.split(';')[0]}.",
        "Insufficient scope",
        owner.only,
    )


def _not_found(owner: Owner, *more: str) -> dict[str, Any]:
    """The 404 of an operation: the owner, and the webhook and delivery it names (``more``)."""
    names = ("webhook", "delivery of the webhook")[: len(more)]
    extra = "".join(f", or no {name} of it" for name in names[:1]) + "".join(
        f", or no {name}" for name in names[1:]
    )
    return text(
        f"{owner.unseen}{extra}.",
        owner.missing,
        *more,
    )


def _operation(
    owner: Owner,
    operation_id: str,
    summary: str,
    scope: str,
    responses: dict[int, Any],
    parameters: tuple[dict[str, Any], ...],
    description: str = "",
    **extra: Any,
) -> Operation:
    """A webhook operation of ``owner``: its 403 and its tag."""
    result = operation(
        operation_id,
        summary,
        scope,
        {**responses, 403: _forbidden(owner)},
        (owner.parameter, *parameters),
        description=(description + "\n\n" if description else "") + f"For {owner.who}.",
        **extra,
    )
    result["tags"] = [TAG]
    return result


def _owner_paths(owner: Owner) -> dict[str, dict[str, Operation]]:
    noun = owner.noun
    webhook = _not_found(owner, INVALID_WEBHOOK)
    delivery = _not_found(owner, INVALID_WEBHOOK, INVALID_DELIVERY)
    created = json_data("The endpoint, with its secret (shown this once).", ref("WebhookWithSecret"))
    return {
        owner.prefix: {
            "get": _operation(
                owner,
                f"list{noun}Webhooks",
                "List the webhook endpoints",
                "read",
                {200: json_data("The endpoints, oldest first.", list_of("Webhook")), 404: _not_found(owner)},
                (),
            ),
            "post": _operation(
                owner,
                f"create{noun}Webhook",
                "Create a webhook endpoint",
                "write",
                {
                    201: created,
                    400: validation(
                        *FIELD_ERRORS, f"There must not be more than {MAX_ENDPOINTS} webhooks here."
                    ),
                    404: _not_found(owner),
                },
                (),
                description=f"At most {MAX_ENDPOINTS} endpoints here. {SIGNING}",
                requestBody=CREATE_BODY,
            ),
        },
        owner.prefix + "/{webhook_id}": {
            "get": _operation(
                owner,
                f"get{noun}Webhook",
                "One webhook endpoint",
                "read",
                {200: json_data("The endpoint (never its secret).", ref("Webhook")), 404: webhook},
                (WEBHOOK_ID,),
            ),
            "patch": _operation(
                owner,
                f"update{noun}Webhook",
                "Change a webhook endpoint",
                "write",
                {
                    200: json_data("The endpoint, changed.", ref("Webhook")),
                    400: validation(*FIELD_ERRORS),
                    404: webhook,
                },
                (WEBHOOK_ID,),
                requestBody=UPDATE_BODY,
            ),
            "delete": _operation(
                owner,
                f"delete{noun}Webhook",
                "Delete a webhook endpoint",
                "write",
                {204: {"description": "Deleted with its delivery log; no body."}, 404: webhook},
                (WEBHOOK_ID,),
                description="Deliveries still waiting are not sent.",
            ),
        },
        owner.prefix + "/{webhook_id}/rotate-secret": {
            "post": _operation(
                owner,
                f"rotate{noun}WebhookSecret",
                "Give a webhook endpoint a new secret",
                "write",
                {
                    200: json_data(
                        "The endpoint, with its new secret (shown this once).", ref("WebhookWithSecret")
                    ),
                    404: webhook,
                },
                (WEBHOOK_ID,),
                description="The previous secret keeps signing beside the new one for 24 hours "
                "(`secret_rotated_until`), so receivers can switch without losing a delivery. No body.",
            )
        },
        owner.prefix + "/{webhook_id}/test": {
            "post": _operation(
                owner,
                f"test{noun}Webhook",
                "Send a test event to a webhook endpoint",
                "write",
                {
                    202: json_data("The queued delivery of a `webhook.test` event.", ref("WebhookDelivery")),
                    404: webhook,
                },
                (WEBHOOK_ID,),
                description="The event is sent at once by a background worker; follow it in the "
                "deliveries. No body.",
            )
        },
        owner.prefix + "/{webhook_id}/deliveries": {
            "get": _operation(
                owner,
                f"list{noun}WebhookDeliveries",
                "The deliveries of a webhook endpoint, newest first",
                "read",
                {
                    200: {
                        "description": "A page of deliveries, each with its attempts.",
                        "content": {"application/json": {"schema": DELIVERIES}},
                    },
                    400: validation(
                        f"The limit field must be between 1 and {MAX_DELIVERIES_PAGE}.",
                        "The limit field must be an integer.",
                        f"The before field must be a delivery id (1 to {MAX_ID}).",
                    ),
                    404: webhook,
                },
                (
                    WEBHOOK_ID,
                    query(
                        "limit",
                        {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_DELIVERIES_PAGE,
                            "default": DELIVERIES_PAGE,
                        },
                        "At most this many deliveries.",
                    ),
                    query(
                        "before",
                        {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                        "Keyset paging: only deliveries with a smaller id (pass `pagination.next_before`).",
                    ),
                ),
                description="The log keeps 30 days.",
            )
        },
        owner.prefix + "/{webhook_id}/deliveries/{delivery_id}": {
            "get": _operation(
                owner,
                f"get{noun}WebhookDelivery",
                "One delivery with its attempts",
                "read",
                {200: json_data("The delivery.", ref("WebhookDelivery")), 404: delivery},
                (WEBHOOK_ID, DELIVERY_ID),
            )
        },
        owner.prefix + "/{webhook_id}/deliveries/{delivery_id}/resend": {
            "post": _operation(
                owner,
                f"resend{noun}WebhookDelivery",
                "Send a delivery again",
                "write",
                {
                    202: json_data("The delivery, queued again.", ref("WebhookDelivery")),
                    400: validation("The delivery is being sent right now; try again in a moment."),
                    404: delivery,
                },
                (WEBHOOK_ID, DELIVERY_ID),
                description="At once, with the same `webhook-id` and body, whatever its status. No body.",
            )
        },
    }


def webhook_paths() -> dict[str, dict[str, Operation]]:
    paths: dict[str, dict[str, Operation]] = {}
    for owner in OWNERS:
        paths |= _owner_paths(owner)
    return paths
