"""The management API's spam controls: an application's blocklist, and marking a thread as spam."""

from __future__ import annotations

from typing import Any

from app.openapi.management import (
    APPLICATION_ID,
    FEEDBACK_ID,
    INVALID_APPLICATION,
    INVALID_FEEDBACK,
    Operation,
    operation,
    validation,
)
from app.openapi.responses import json_data, path_id, text
from app.openapi.schemas import Schema
from app.services.blocklist import MAX_ENTRIES, MAX_VALUE_LENGTH

ENTRY_ID = path_id("entry_id", "The blocklist entry's id.")
ENTRY: Schema = {
    "type": "object",
    "required": ["id", "kind", "value", "created_at"],
    "properties": {
        "id": {"type": "integer"},
        "kind": {"type": "string", "enum": ["email", "domain", "network"]},
        "value": {
            "type": "string",
            "description": "Normalized: an address in lower case, a domain without `@` or `*.` (it blocks "
            "its subdomains too), a network in CIDR notation with its host bits cleared.",
        },
        "created_at": {"type": "integer", "description": "Unix timestamp."},
    },
}
ENTRY_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["value"],
                "properties": {
                    "value": {
                        "type": "string",
                        "maxLength": MAX_VALUE_LENGTH,
                        "description": "An e-mail address (`jane@example.com`), a domain (`example.com`, "
                        "`@example.com` or `*.example.com`) or an IP network (`203.0.113.0/24`, "
                        "`2001:db8::/32`; one address is a /32 or a /128). Networks wider than /8 (IPv4) "
                        "or /16 (IPv6) are refused.",
                    }
                },
            }
        }
    },
}
SPAM: Schema = {
    "type": "object",
    "required": ["deleted", "blocked"],
    "properties": {
        "deleted": {"type": "integer", "minimum": 0, "description": "Threads deleted (1)."},
        "blocked": ENTRY,
    },
}
BLOCKED_NOTE = (
    "A blocked sender is never told: a capture submit whose e-mail, domain (or a parent domain) or "
    "client address is listed gets the usual `201 Feedback sent!` and nothing is stored; a form "
    "open from a blocked network is answered as usual and not counted; an e-mail from a blocked "
    "address or domain is accepted and dropped. Uploads are not checked (an upload no submit claims "
    "is deleted). Other workers see a change within 2 seconds. Anyone who works the application's "
    "inbox may manage its blocklist."
)


def spam_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/applications/{application_id}/blocklist": {
            "get": operation(
                "listBlocklist",
                "List the application's blocklist",
                "read",
                {
                    200: json_data("The entries, newest first.", {"type": "array", "items": ENTRY}),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description=BLOCKED_NOTE,
            ),
            "post": operation(
                "addToBlocklist",
                "Block an e-mail address, a domain or an IP network",
                "write",
                {
                    200: json_data("The list had this entry already; nothing changed.", ENTRY),
                    201: json_data("The new entry.", ENTRY),
                    400: validation(
                        "The value field is required.",
                        "The value field must be an e-mail address (jane@example.com), a domain "
                        "(example.com) or an IP network (203.0.113.0/24).",
                        "The value field must not be a network wider than /8: it would block far too "
                        "many addresses.",
                        f"The blocklist must not have more than {MAX_ENTRIES} entries.",
                    ),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description=f"At most {MAX_ENTRIES} entries per application. Adding an entry the list "
                "has already (after normalization) answers 200 with it and changes nothing.",
                requestBody=ENTRY_BODY,
            ),
        },
        "/applications/{application_id}/blocklist/{entry_id}": {
            "delete": operation(
                "removeFromBlocklist",
                "Unblock an entry",
                "write",
                {
                    204: {"description": "Removed; no body."},
                    404: text(
                        "No application, or no entry of its blocklist, with these ids.",
                        "Invalid application",
                        "Invalid entry",
                    ),
                },
                (APPLICATION_ID, ENTRY_ID),
            )
        },
        "/applications/{application_id}/feedback/{feedback_id}/spam": {
            "post": operation(
                "markFeedbackAsSpam",
                "Mark a thread as spam: block its sender and delete it",
                "write",
                {
                    200: json_data("The thread was deleted; the entry that blocks its sender.", SPAM),
                    400: validation(f"The blocklist must not have more than {MAX_ENTRIES} entries."),
                    404: INVALID_FEEDBACK,
                },
                (APPLICATION_ID, FEEDBACK_ID),
                description="Blocks the sender's e-mail address (an entry the list had already is "
                "returned as it is) and deletes the thread with its replies, notes, tag links and "
                "files, in one transaction; no body is needed.",
            )
        },
    }
