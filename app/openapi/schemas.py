"""JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of the resources the APIs answer with.

Each mirrors a function of :mod:`app.representations`; ``tests/api/test_openapi_conformance.py``
validates the suite's own answers against them, so a field added there without being added
here fails a test. Fields are required when the serializer always writes them (it does, for
every field), and no schema allows extra properties, so a client generated from the document
sees every field and nothing it does not know.
"""

from __future__ import annotations

from typing import Any

from app.models import DELIVERY_STATUSES, EVENT_TYPES, FORMATS, PLATFORMS, SENTIMENTS

Schema = dict[str, Any]

TIMESTAMP: Schema = {"type": "integer", "description": "Seconds since the Unix epoch (UTC)."}
ID: Schema = {"type": "integer", "minimum": 1}
URL: Schema = {"type": "string", "format": "uri"}


def ref(name: str) -> Schema:
    """A reference to one of :data:`COMPONENTS`."""
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null (OpenAPI 3.1 spells it with a type list)."""
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    return {**schema, "type": [schema["type"], "null"]}


def closed(properties: dict[str, Schema], description: str = "") -> Schema:
    """An object with exactly these properties, all of them always present."""
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if description:
        schema["description"] = description
    return schema


SENTIMENT: Schema = {"type": "string", "enum": list(SENTIMENTS)}

USER = closed(
    {"id": ID, "email": {"type": "string"}, "name": {"type": "string"}}, "An Earful user (an agent)."
)

ORGANIZATION = closed(
    {
        "id": ID,
        "name": {"type": "string"},
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
        "role": {
            "type": "string",
            "enum": ["owner", "agent"],
            "description": "The authenticated user's role in the organization (added by Earful).",
        },
    }
)

INVITATION = closed(
    {
        "id": ID,
        "organization_id": ID,
        "email": {"type": "string", "description": "The invited address (lower case)."},
        "role": {"type": "string", "enum": ["owner", "agent"], "description": "The role it joins with."},
        "invited_by": nullable(ref("User")),
        "created_at": TIMESTAMP,
        "expires_at": {**TIMESTAMP, "description": "The link stops working then (7 days after)."},
    },
    "A pending invitation to join an organization.",
)
INVITATION_WITH_LINK: Schema = {
    **INVITATION,
    "properties": {
        **INVITATION["properties"],
        "url": {
            **URL,
            "description": "The link that accepts it, in the web app; shown in this answer only (only "
            "a digest of its token is stored). Works once, until `expires_at`.",
        },
        "emailed": {
            "type": "boolean",
            "description": "Whether the link was e-mailed to the address (when EARFUL_SMTP_URL is set).",
        },
    },
    "required": [*INVITATION["required"], "url", "emailed"],
    "description": "A new invitation with its link (the answer of a create).",
}

APPLICATION_KEYS = closed(
    {
        **{
            platform: {"type": "string", "description": f"Capture API key for the {platform} platform."}
            for platform in PLATFORMS
        },
        "email": {
            "type": "string",
            "description": "E-mail intake address: feedback-<application_id>-<random>@<intake_domain>.",
        },
    }
)


def _per_minute(what: str, default: int) -> Schema:
    return nullable(
        {"type": "integer", "minimum": 1, "description": f"{what}; null for the default ({default})."}
    )


APPLICATION = closed(
    {
        "id": ID,
        "organization_id": nullable({**ID, "description": "Owning organization; null when none."}),
        "name": {"type": "string"},
        "url": nullable({"type": "string"}),
        "logo": nullable({**URL, "description": "Address of the logo image (added by Earful)."}),
        "average_first_reply_time": {
            "type": "integer",
            "minimum": 0,
            "description": "Mean seconds to the first public agent reply, over threads with one; 0 if none.",
        },
        "target_average_first_reply_time": {"type": "integer", "minimum": 0, "description": "Seconds."},
        "uploads_enabled": {"type": "boolean", "description": "Whether the capture API accepts uploads."},
        "capture_enabled": {
            "type": "boolean",
            "description": "Whether the capture API takes requests at all (403 `Capture disabled` when off).",
        },
        "submits_per_minute": _per_minute("Submits per minute from one address", 10),
        "opens_per_minute": _per_minute("Opens per minute from one address", 60),
        "uploads_per_minute": _per_minute("Uploads per minute from one address", 20),
        "submits_per_minute_total": _per_minute("Submits per minute from all addresses together", 600),
        "allowed_origins": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Origins whose pages may use the javascript key; empty for any origin.",
        },
        "retention_days": nullable(
            {
                "type": "integer",
                "minimum": 1,
                "description": "Threads created more than this many days ago are deleted automatically; "
                "null keeps them forever.",
            }
        ),
        "retention_archived_only": {
            "type": "boolean",
            "description": "Whether retention deletes only archived threads.",
        },
        "receipts_enabled": {
            "type": "boolean",
            "description": "Whether the customer is e-mailed a receipt for each new thread.",
        },
        "keys": ref("ApplicationKeys"),
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    }
)

ATTACHMENT = closed(
    {
        "id": ID,
        "name": {"type": "string"},
        "mime_type": {"type": "string"},
        "size": {"type": "integer", "minimum": 0, "description": "Bytes."},
        "url": {**URL, "description": "Unguessable capability address of the file."},
    }
)

MEMBER = closed(
    {
        "id": ID,
        "email": {"type": "string"},
        "name": {"type": "string"},
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    "The sender of a thread.",
)

_REPLY_FIELDS: dict[str, Schema] = {
    "id": ID,
    "type": {"type": "string", "enum": ["reply", "note"], "description": "`note`: internal, agents only."},
    "message": {"type": "string"},
    "email": {"type": "string"},
    "avatar": URL,
    "attachments": {"type": "array", "items": ref("Attachment")},
    "user": nullable(ref("User")),
    "reply_from_agent": {"type": "boolean", "description": "False for the customer's answers (by e-mail)."},
    "created_at": TIMESTAMP,
}

REPLY = closed(_REPLY_FIELDS, "A reply inside a thread; `user` is null for the customer's answers.")

THREAD_SUMMARY = closed(
    {
        "id": ID,
        "email": {"type": "string"},
        "message": {"type": "string", "description": "At most 200 characters, shortened with an ellipsis."},
        "sentiment": SENTIMENT,
        "archived": {"type": "boolean"},
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    }
)

LISTED_REPLY = closed(
    {**_REPLY_FIELDS, "feedback_id": ID, "feedback": ref("ThreadSummary")},
    "A reply as the application replies list shows it.",
)

THREAD = closed(
    {
        "id": ID,
        "application_id": ID,
        "email": {"type": "string", "description": "The sender's address."},
        "name": {"type": "string", "description": "The sender's name; may be empty."},
        "avatar": URL,
        "message": {"type": "string"},
        "permalink": {**URL, "description": "The thread's page in the agent web app."},
        "sentiment": SENTIMENT,
        "member": ref("Member"),
        "attachments": {"type": "array", "items": ref("Attachment")},
        "is_anonymous": {"type": "boolean"},
        "can_reply": {"type": "boolean"},
        "archived": {"type": "boolean"},
        "first_reply_time": nullable(
            {"type": "integer", "description": "Seconds from creation to the first public agent reply."}
        ),
        "last_reply_time": TIMESTAMP,
        "ip_address": {"type": "string"},
        "user_agent": {"type": "string"},
        "properties": {
            "anyOf": [{"type": "object", "additionalProperties": True}, {"type": "array", "items": {}}],
            "description": "The JSON value submitted as `properties`; `[]` when none was.",
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "nps": nullable({"type": "integer", "minimum": 0, "maximum": 10}),
        "url": nullable({"type": "string"}),
        "language": {"type": "string"},
        "assignee": {
            "anyOf": [ref("User"), {"type": "null"}],
            "description": "The agent the thread is assigned to, or null (added by Earful). An agent who "
            "left the organization stays assigned until someone assigns the thread again.",
        },
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
        "replies": {"type": "array", "items": ref("Reply")},
    },
    "A feedback thread, oldest reply first.",
)

TAG = closed(
    {
        "id": ID,
        "name": {"type": "string"},
        "color": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"},
        "feedback_count": {"type": "integer", "minimum": 0, "description": "Threads not archived."},
        "archived_feedback_count": {"type": "integer", "minimum": 0},
        "total_feedback_count": {"type": "integer", "minimum": 0},
    }
)

PAGINATION: Schema = {
    **closed(
        {
            "total": {"type": "integer", "minimum": 0, "description": "Every match, not only this page."},
            "limit": {"type": "integer", "minimum": 1},
            "offset": {"type": "integer", "minimum": 0},
        }
    ),
    "properties": {
        "total": {"type": "integer", "minimum": 0, "description": "Every match, not only this page."},
        "limit": {"type": "integer", "minimum": 1},
        "offset": {"type": "integer", "minimum": 0},
        "total_exact": {
            "type": "boolean",
            "description": "Feedback list with filters or `before` only: false when counting "
            "stopped at 10,000 matches, so `total` is a lower bound.",
        },
        "next_before": {
            "type": ["integer", "null"],
            "description": "Feedback list with filters or `before` only: the `before` of the next "
            "(older) page; null on the last page.",
        },
    },
}

WEBHOOK = closed(
    {
        "id": ID,
        "application_id": nullable(
            {**ID, "description": "The application whose events it hears; null for an organization's."}
        ),
        "organization_id": nullable(
            {
                **ID,
                "description": "The organization whose applications' events it hears; null for an "
                "application's.",
            }
        ),
        "url": {**URL, "description": "Where deliveries are posted (http or https, a public address)."},
        "description": {"type": "string"},
        "events": {
            "type": "array",
            "items": {"type": "string", "enum": list(EVENT_TYPES)},
            "description": "The event types it receives.",
        },
        "include_notes": {
            "type": "boolean",
            "description": "Whether `reply.created` is sent for internal notes too.",
        },
        "format": {
            "type": "string",
            "enum": list(FORMATS),
            "description": "`standard`: the event's JSON, signed by the Standard Webhooks scheme; `slack`: "
            "a Slack-compatible message (Slack, Mattermost, Rocket.Chat, Discord's /slack URLs).",
        },
        "enabled": {"type": "boolean"},
        "disabled_reason": {
            "type": "string",
            "description": "Why Earful disabled it (after five days of failed deliveries); empty otherwise.",
        },
        "failing_since": nullable(
            {**TIMESTAMP, "description": "Since when every attempt has failed; null after a success."}
        ),
        "secret_rotated_until": nullable(
            {
                **TIMESTAMP,
                "description": "After a rotation: when the previous secret stops signing beside the new "
                "one; null when only one secret signs.",
            }
        ),
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    "A URL that receives events. Its secret is never shown, except when it is made.",
)
SECRET: Schema = {
    "type": "string",
    "pattern": "^whsec_[A-Za-z0-9+/]{43}=$",
    "description": "The signing secret (Standard Webhooks: `whsec_` and 32 bytes in base64). Shown this "
    "once: store it now.",
}
WEBHOOK_WITH_SECRET: Schema = {
    **WEBHOOK,
    "properties": {**WEBHOOK["properties"], "secret": SECRET},
    "required": [*WEBHOOK["required"], "secret"],
    "description": "A webhook endpoint with its new secret (the answer of a create or a rotation).",
}
EVENT_TYPE: Schema = {"type": "string", "enum": [*EVENT_TYPES, "webhook.test"]}
WEBHOOK_ATTEMPT = closed(
    {
        "attempted_at": TIMESTAMP,
        "duration_ms": {"type": "integer", "minimum": 0},
        "status_code": nullable(
            {"type": "integer", "description": "The receiver's HTTP status; null when none came."}
        ),
        "error": {"type": "string", "description": "Why the attempt failed; empty after a 2xx answer."},
        "request_headers": {
            "type": "string",
            "description": "The headers sent, one `Name: value` per line (the signature left out).",
        },
        "response_headers": {"type": "string", "description": "`Name: value` lines, at most 4 KB."},
        "response_body": {"type": "string", "description": "The first 4 KB of the answer."},
    },
    "One try of a delivery.",
)
WEBHOOK_DELIVERY = closed(
    {
        "id": ID,
        "webhook_id": ID,
        "event_id": ID,
        "event_type": EVENT_TYPE,
        "message_id": {
            "type": "string",
            "description": "The `webhook-id` header: the same at every attempt, so receivers can drop "
            "repeats.",
        },
        "status": {
            "type": "string",
            "enum": list(DELIVERY_STATUSES),
            "description": "`pending`: waiting for its (next) attempt; `sending`: an attempt is under way; "
            "`delivered`: a 2xx came back; `failed`: every retry was spent, or the endpoint is disabled.",
        },
        "attempts": {"type": "integer", "minimum": 0},
        "next_attempt_at": nullable(
            {
                **TIMESTAMP,
                "description": "When the next attempt is due (pending), or when a stalled one is tried "
                "again (sending); null once delivered or failed.",
            }
        ),
        "last_status_code": nullable({"type": "integer"}),
        "last_error": {"type": "string"},
        "delivered_at": nullable(TIMESTAMP),
        "created_at": TIMESTAMP,
        "payload": {
            "type": "object",
            "required": ["type", "timestamp", "data"],
            "properties": {
                "type": EVENT_TYPE,
                "timestamp": {"type": "string", "format": "date-time"},
                "data": {
                    "type": "object",
                    "description": "`feedback.*`: the thread as `getFeedback` shows it; `reply.created`: "
                    "the reply as `listReplies` shows it; `webhook.test`: `endpoint_id` and `message`.",
                },
            },
            "description": "The event's body, as a `standard` endpoint receives it.",
        },
        "attempt_log": {"type": "array", "items": ref("WebhookAttempt"), "description": "Oldest first."},
    },
    "One event for one endpoint, and every attempt to deliver it (kept 30 days).",
)
KEYSET_PAGINATION = closed(
    {
        "limit": {"type": "integer", "minimum": 1},
        "next_before": {
            "type": ["integer", "null"],
            "description": "The `before` of the next (older) page; null on the last page.",
        },
    }
)
SAVED_REPLY = closed(
    {
        "id": ID,
        "application_id": nullable(
            {**ID, "description": "The application it belongs to; null for an organization's."}
        ),
        "organization_id": nullable(
            {
                **ID,
                "description": "The organization it belongs to (offered in all its applications); null "
                "for an application's.",
            }
        ),
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "text": {
            "type": "string",
            "minLength": 1,
            "description": "As typed, with its placeholders `{name}`, `{email}` and `{application}`.",
        },
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    "An answer agents insert into the reply box.",
)
FILLED_SAVED_REPLY = closed(
    {
        "id": ID,
        "feedback_id": ID,
        "title": {"type": "string"},
        "text": {
            "type": "string",
            "description": "The text with `{name}` (the sender's name, or their address when the thread "
            "has none), `{email}` and `{application}` filled; any other braces as typed.",
        },
    },
    "A saved reply's text filled for one thread: what to send as the reply.",
)

COMPONENTS: dict[str, Schema] = {
    "User": USER,
    "Organization": ORGANIZATION,
    "Invitation": INVITATION,
    "InvitationWithLink": INVITATION_WITH_LINK,
    "ApplicationKeys": APPLICATION_KEYS,
    "Application": APPLICATION,
    "Attachment": ATTACHMENT,
    "Member": MEMBER,
    "Reply": REPLY,
    "ThreadSummary": THREAD_SUMMARY,
    "ListedReply": LISTED_REPLY,
    "Thread": THREAD,
    "Tag": TAG,
    "Pagination": PAGINATION,
    "Webhook": WEBHOOK,
    "WebhookWithSecret": WEBHOOK_WITH_SECRET,
    "WebhookDelivery": WEBHOOK_DELIVERY,
    "WebhookAttempt": WEBHOOK_ATTEMPT,
    "KeysetPagination": KEYSET_PAGINATION,
    "SavedReply": SAVED_REPLY,
    "FilledSavedReply": FILLED_SAVED_REPLY,
}


def envelope(schema: Schema, paginated: bool = False) -> Schema:
    """The management API's ``{"data": ...}`` wrapper, with ``pagination`` on the lists that page."""
    properties: dict[str, Schema] = {"data": schema}
    if paginated:
        properties["pagination"] = ref("Pagination")
    return closed(properties)


def list_of(name: str) -> Schema:
    return {"type": "array", "items": ref(name)}
