"""The management API's privacy requests: erase or export a person's data, and the audit trail."""

from __future__ import annotations

from typing import Any

from app.openapi.management import INVALID_APPLICATION, Operation, operation, validation
from app.openapi.responses import json_data, query, text
from app.openapi.schemas import ID, SENTIMENT, TIMESTAMP, URL, Schema, closed, nullable
from app.services.deletion import ADMINISTRATORS_ONLY
from app.services.erasure import COUNTS, ERASE, EXPORT, INVALID_EMAIL
from app.services.validation import MAX_ID

COUNT: Schema = {"type": "integer", "minimum": 0}
ERASED = closed(
    {name: COUNT for name in COUNTS},
    "What went: the applications that held something of the person, their sender rows, their threads "
    "(with every reply in them), their answers on other people's threads, the files of all these and "
    "the e-mails addressed to them.",
)
FILE = closed({"name": {"type": "string"}, "mime_type": {"type": "string"}, "size": COUNT, "url": URL})
FILES: Schema = {"type": "array", "items": FILE}
EXPORTED_THREAD = closed(
    {
        "id": ID,
        "message": {"type": "string"},
        "sentiment": SENTIMENT,
        "nps": nullable({"type": "integer", "minimum": 0, "maximum": 10}),
        "url": nullable({"type": "string"}),
        "properties": {"anyOf": [{"type": "object"}, {"type": "array"}]},
        "language": {"type": "string"},
        "ip_address": {"type": "string"},
        "user_agent": {"type": "string"},
        "archived": {"type": "boolean"},
        "created_at": TIMESTAMP,
        "tags": {"type": "array", "items": {"type": "string"}},
        "attachments": FILES,
        "replies": {
            "type": "array",
            "description": "Public replies: the agents' and the person's own answers (never internal notes).",
            "items": closed(
                {
                    "from_agent": {"type": "boolean"},
                    "message": {"type": "string"},
                    "created_at": TIMESTAMP,
                    "attachments": FILES,
                }
            ),
        },
    }
)
EXPORTED_APPLICATION = closed(
    {
        "id": ID,
        "name": {"type": "string"},
        "senders": {
            "type": "array",
            "items": closed(
                {
                    "email": {"type": "string"},
                    "name": {"type": "string"},
                    "created_at": TIMESTAMP,
                    "updated_at": TIMESTAMP,
                }
            ),
        },
        "threads": {"type": "array", "items": EXPORTED_THREAD},
        "answers": {
            "type": "array",
            "description": "The person's e-mailed answers on other people's threads.",
            "items": closed(
                {
                    "feedback_id": ID,
                    "message": {"type": "string"},
                    "created_at": TIMESTAMP,
                    "attachments": FILES,
                }
            ),
        },
        "emails": {
            "type": "array",
            "description": "E-mails addressed to the person (the outbox).",
            "items": closed(
                {
                    "feedback_id": ID,
                    "status": {"type": "string"},
                    "created_at": TIMESTAMP,
                    "sent_at": nullable(TIMESTAMP),
                }
            ),
        },
    }
)
EXPORTED = closed(
    {
        "email": {"type": "string"},
        "exported_at": TIMESTAMP,
        "applications": {
            "type": "array",
            "items": EXPORTED_APPLICATION,
            "description": "The applications in scope that hold something of the person.",
        },
    }
)
AUDIT_ENTRY = closed(
    {
        "id": ID,
        "action": {"type": "string", "examples": [ERASE, EXPORT, "application.delete", "retention.run"]},
        "application_id": nullable({**ID, "description": "Null when the action covered several."}),
        "actor_id": nullable({**ID, "description": "The user; null for the command line or Earful itself."}),
        "counts": {"type": "object", "additionalProperties": COUNT},
        "created_at": TIMESTAMP,
    },
    "Who did what, when, to how many rows: never whose data.",
)
FORBIDDEN = text(
    "The token lacks the scope, or the user is neither the named application's creator nor an owner "
    "of its organization.",
    "Insufficient scope",
    ADMINISTRATORS_ONLY,
)
QUERY_ERRORS: dict[int, Any] = {
    400: validation(
        "The email field is required.", INVALID_EMAIL, "The application id field must be an integer."
    ),
    403: FORBIDDEN,
    404: INVALID_APPLICATION,
}
BODY_ERRORS: dict[int, Any] = {
    **QUERY_ERRORS,
    400: validation(
        "The email field is required.",
        INVALID_EMAIL,
        "The application id field must be an integer.",
        "The request body must be a JSON object.",
    ),
}
SCOPE = (
    "The person is looked up by e-mail address (in any case) in the applications the user administers "
    "(those they created, and those of the organizations they own), or in the one given."
)
ERASE_BODY = {
    "required": True,
    "description": "JSON (a form with the same fields is accepted too).",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["email"],
                "properties": {
                    "email": {"type": "string", "description": "The person's e-mail address."},
                    "application_id": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_ID,
                        "description": "Only this application (else every one the user administers).",
                    },
                },
            }
        }
    },
}


def privacy_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/people/erase": {
            "post": operation(
                "erasePerson",
                "Erase a person's data",
                "write",
                {200: json_data("What was erased.", ERASED), **BODY_ERRORS},
                description=f"{SCOPE} Their sender record, threads (with every reply, note and file in "
                "them), answers on other people's threads and the e-mails addressed to them go for good; "
                "every count moves. Erasing someone who is not there erases nothing (zero counts). "
                "Leaves an audit entry without the address.",
                requestBody=ERASE_BODY,
            )
        },
        "/people/export": {
            "get": operation(
                "exportPerson",
                "Export a person's data",
                "read",
                {200: json_data("Everything held about the person.", EXPORTED), **QUERY_ERRORS},
                (
                    query("email", {"type": "string"}, "The person's e-mail address (required)."),
                    query(
                        "application_id",
                        {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                        "Only this application.",
                    ),
                ),
                description=f"{SCOPE} Leaves an audit entry without the address.",
            )
        },
        "/audit": {
            "get": operation(
                "listAuditEntries",
                "The audit trail",
                "read",
                {
                    200: json_data(
                        "The newest entries first (at most 50).", {"type": "array", "items": AUDIT_ENTRY}
                    )
                },
                description="Erasures, exports, deletions of applications and retention runs: the user's "
                "own, and those of the applications they administer.",
            )
        },
    }
