"""The management API's operations (seed §4.1 and what Earful adds), as OpenAPI path items."""

from __future__ import annotations

from typing import Any

from app.openapi.responses import (
    INSUFFICIENT_SCOPE,
    UNAUTHENTICATED,
    json_data,
    path_id,
    query,
    text,
)
from app.openapi.schemas import SENTIMENT, Schema, list_of, ref
from app.services.capture_settings import LIMIT_FIELDS as CAPTURE_LIMITS
from app.services.deletion import ADMINISTRATORS_ONLY
from app.services.organizations import OWNERS_ONLY
from app.services.retention import MAX_DAYS as MAX_RETENTION_DAYS
from app.services.thread_filters import MAX_QUERY_LENGTH, MAX_TIMESTAMP
from app.services.validation import MAX_ID

Operation = dict[str, Any]

APPLICATION_ID = path_id("application_id", "The application's id.")
FEEDBACK_ID = path_id("feedback_id", "The thread's id.")
ORGANIZATION_ID = path_id("organization_id", "The organization's id.")

INVALID_APPLICATION = text("No application with this id that the user may see.", "Invalid application")
INVALID_FEEDBACK = text(
    "No application, or no thread of it, with these ids.", "Invalid application", "Invalid feedback"
)
BOOLEAN_TEXT: Schema = {"type": "string", "enum": ["true", "false", "1", "0"]}
TIMESTAMP_QUERY: Schema = {"type": "integer", "minimum": 0, "maximum": MAX_TIMESTAMP}
THREAD_FILTERS = (
    query("archived", BOOLEAN_TEXT, "`true` or `1`: the archived threads; else those not archived."),
    query("sentiment", SENTIMENT, "Only threads with this sentiment."),
    query("tag", {"type": "string"}, "Only threads with this tag (by name)."),
    query(
        "q",
        {"type": "string", "maxLength": MAX_QUERY_LENGTH},
        "Text in the message, the sender's e-mail or name (the inbox's search).",
    ),
    query("since", TIMESTAMP_QUERY, "Only threads created at or after this timestamp."),
    query("until", TIMESTAMP_QUERY, "Only threads created before this timestamp."),
    query("replied", BOOLEAN_TEXT, "Whether an agent has replied publicly."),
    query("nps_min", {"type": "integer", "minimum": 0, "maximum": 10}, "NPS rating at least this."),
    query("nps_max", {"type": "integer", "minimum": 0, "maximum": 10}, "NPS rating at most this."),
    query(
        "assignee",
        {"type": "string", "pattern": "^(me|none|[1-9][0-9]{0,9})$"},
        "`me`: the threads assigned to the calling user; `none`: those assigned to nobody; a user id: "
        "those assigned to that user.",
    ),
    query(
        "before",
        {"type": "integer", "minimum": 1, "maximum": MAX_ID},
        "Keyset paging: only threads with a smaller id (pass `pagination.next_before`).",
    ),
)
LIMIT = query(
    "limit", {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}, "At most this many items."
)
OFFSET = query(
    "offset", {"type": "integer", "minimum": 0, "maximum": 2**31 - 1, "default": 0}, "Skip this many items."
)


def operation(
    operation_id: str,
    summary: str,
    scope: str,
    responses: dict[int, Any],
    parameters: tuple[dict[str, Any], ...] = (),
    description: str = "",
    **extra: Any,
) -> Operation:
    """A bearer-token operation; the 401 and 403 every one of them can answer are added."""
    result: Operation = {
        "operationId": operation_id,
        "summary": summary,
        "description": (description + "\n\n" if description else "") + f"Scope: `{scope}`.",
        "tags": ["Management API"],
        "security": [{"bearer": [scope]}],
        "responses": {
            **responses,
            401: UNAUTHENTICATED,
            403: responses.get(403, INSUFFICIENT_SCOPE),
        },
    }
    if parameters:
        result["parameters"] = list(parameters)
    result.update(extra)
    return result


def validation(*examples: str) -> dict[str, Any]:
    return text(
        "The input breaks a rule; the text names the field and the rule, in the seed's style.",
        examples=examples,
    )


APPLICATION_FIELDS: Schema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 200, "description": "Required on create."},
        "url": {"type": "string", "description": "An http(s) URL; empty clears it."},
        "organization_id": {
            "type": "string",
            "pattern": "^[0-9]*$",
            "description": "An organization the user belongs to; empty for none.",
        },
        "uploads_enabled": {**BOOLEAN_TEXT, "description": "Default true."},
        "target_average_first_reply_time": {
            "type": "string",
            "pattern": "^[0-9]+$",
            "description": "Seconds; default 86400.",
        },
        "capture_enabled": {**BOOLEAN_TEXT, "description": "Default true; false refuses capture requests."},
        **{
            name: {
                "type": "string",
                "pattern": "^[0-9]*$",
                "description": "Requests per minute, 1 to 1000000; empty for the default.",
            }
            for name in CAPTURE_LIMITS
        },
        "allowed_origins": {
            "type": "string",
            "description": "Origins allowed to use the javascript key, separated by new lines, commas "
            "or spaces (`https://shop.example.com`); empty for any origin.",
        },
        "retention_days": {
            "type": "string",
            "pattern": "^[0-9]*$",
            "description": f"Threads older than this many days (1 to {MAX_RETENTION_DAYS}) are deleted "
            "automatically; empty keeps them forever. Administrators only.",
        },
        "retention_archived_only": {
            **BOOLEAN_TEXT,
            "description": "Default false; true deletes only archived threads. Administrators only.",
        },
        "receipts_enabled": {
            **BOOLEAN_TEXT,
            "description": "Default false; true e-mails the customer a short receipt for each new thread "
            "(in the submit's language, at most one an hour per address; needs EARFUL_SMTP_URL).",
        },
    },
}
APPLICATION_BODY: dict[str, Any] = {
    "description": "Form fields (urlencoded or multipart, multipart to send a `logo`), or the same as JSON. "
    "An update is partial: fields not sent keep their value.",
    "required": False,
    "content": {
        "application/x-www-form-urlencoded": {"schema": APPLICATION_FIELDS},
        "multipart/form-data": {
            "schema": {
                **APPLICATION_FIELDS,
                "properties": {
                    **APPLICATION_FIELDS["properties"],
                    "logo": {
                        "type": "string",
                        "format": "binary",
                        "description": "PNG, JPEG, GIF or WebP, at most 2048 KB.",
                    },
                },
            }
        },
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 200},
                    "url": {"type": ["string", "null"]},
                    "organization_id": {"type": ["integer", "null"]},
                    "uploads_enabled": {"type": "boolean"},
                    "target_average_first_reply_time": {"type": "integer", "minimum": 0},
                    "capture_enabled": {"type": "boolean"},
                    **{name: {"type": ["integer", "null"], "minimum": 1} for name in CAPTURE_LIMITS},
                    "allowed_origins": {
                        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]
                    },
                    "retention_days": {
                        "type": ["integer", "null"],
                        "minimum": 1,
                        "maximum": MAX_RETENTION_DAYS,
                    },
                    "retention_archived_only": {"type": "boolean"},
                    "receipts_enabled": {"type": "boolean"},
                },
            }
        },
    },
}
CREATE_APPLICATION_BODY = {
    **APPLICATION_BODY,
    "required": True,
    "content": {
        media: {"schema": {**content["schema"], "required": ["name"]}}
        for media, content in APPLICATION_BODY["content"].items()
    },
}
APPLICATION_ERRORS = {
    400: validation(
        "The name field is required.",
        "The url field must be a valid URL.",
        "The logo field must be an image (PNG, JPEG, GIF or WebP).",
        f"The retention days field must be between 1 and {MAX_RETENTION_DAYS}.",
        "The uploads enabled field must be true or false.",
        "The receipts enabled field must be true or false.",
    ),
    403: text(
        "The token lacks the scope, or only an owner of the organization may do this.",
        "Insufficient scope",
        OWNERS_ONLY,
    ),
    404: text(
        "An unknown application, or an organization the user does not belong to.",
        "Invalid application",
        "Invalid organization",
    ),
}
UPDATE_APPLICATION_ERRORS = {
    **APPLICATION_ERRORS,
    403: text(
        "The token lacks the scope, only an owner of the organization may move the application, or "
        "only its administrators (its creator, an owner of its organization) may change its retention.",
        "Insufficient scope",
        OWNERS_ONLY,
        ADMINISTRATORS_ONLY,
    ),
}
REPLY_BODY = {
    "required": True,
    "description": "JSON (a form with the same fields is accepted too).",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["message"],
                "properties": {
                    "message": {"type": "string", "description": "Sent as the authenticated user."},
                    "type": {"type": "string", "enum": ["reply", "note"], "default": "reply"},
                },
            }
        }
    },
}
THREAD_CHANGE_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "archived": {"type": "boolean", "description": "true archives, false unarchives."},
                    "sentiment": {**SENTIMENT, "description": "An agent's correction (added by Earful)."},
                    "assignee_id": {
                        "type": ["integer", "null"],
                        "minimum": 1,
                        "maximum": MAX_ID,
                        "description": "Assign the thread to this agent of the application (its creator or "
                        "a member of its organization), or to nobody with null (added by Earful). The "
                        "assignee is e-mailed when their notification mode for the application is "
                        "`instant`, unless they assigned it to themselves.",
                    },
                },
            }
        }
    },
}


def management_paths() -> dict[str, dict[str, Operation]]:
    thread = ref("Thread")
    return {
        "/users/me": {
            "get": operation(
                "getCurrentUser", "The authenticated user", "read", {200: json_data("The user.", ref("User"))}
            )
        },
        "/organizations": {
            "get": operation(
                "listOrganizations",
                "Organizations the user belongs to",
                "read",
                {200: json_data("The organizations.", list_of("Organization"))},
            )
        },
        "/organizations/{organization_id}": {
            "get": operation(
                "getOrganization",
                "One organization of the user",
                "read",
                {
                    200: json_data("The organization.", ref("Organization")),
                    404: text("Unknown, or the user is not a member.", "Invalid organization"),
                },
                (ORGANIZATION_ID,),
            )
        },
        "/applications": {
            "get": operation(
                "listApplications",
                "Applications the user can see",
                "read",
                {
                    200: json_data(
                        "Own applications and those of the user's organizations.", list_of("Application")
                    )
                },
            ),
            "post": operation(
                "createApplication",
                "Create an application",
                "write",
                {200: json_data("The new application.", ref("Application")), **APPLICATION_ERRORS},
                requestBody=CREATE_APPLICATION_BODY,
            ),
        },
        "/applications/{application_id}": {
            "get": operation(
                "getApplication",
                "One application",
                "read",
                {200: json_data("The application.", ref("Application")), 404: INVALID_APPLICATION},
                (APPLICATION_ID,),
            ),
            **{
                method: operation(
                    f"{verb}Application",
                    "Update an application" + (" (same as POST)" if method == "put" else ""),
                    "write",
                    {
                        200: json_data("The updated application.", ref("Application")),
                        **UPDATE_APPLICATION_ERRORS,
                    },
                    (APPLICATION_ID,),
                    requestBody=APPLICATION_BODY,
                )
                for method, verb in (("post", "update"), ("put", "replace"))
            },
        },
        "/applications/{application_id}/tags": {
            "get": operation(
                "listTags",
                "The application's tags with their counts",
                "read",
                {200: json_data("The tags, by name.", list_of("Tag")), 404: INVALID_APPLICATION},
                (APPLICATION_ID,),
            )
        },
        "/applications/{application_id}/feedback": {
            "get": operation(
                "listFeedback",
                "The application's threads, newest first",
                "read",
                {
                    200: json_data("A page of threads.", list_of("Thread"), paginated=True),
                    400: validation(
                        "The archived field must be true or false.",
                        "The sentiment field must be one of positive, neutral, negative.",
                        "The nps_min field must be between 0 and 10.",
                        "The assignee field must be me, none or a user id.",
                    ),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID, *THREAD_FILTERS, LIMIT, OFFSET),
            )
        },
        "/applications/{application_id}/feedback/export": {
            "get": operation(
                "exportFeedback",
                "Export the threads matching the list's filters, as CSV or JSON Lines",
                "read",
                {
                    200: {
                        "description": "Streamed as it is read, newest thread first. CSV (UTF-8, header "
                        "row) has ISO 8601 UTC dates, tags joined by `, `, properties as JSON text, and "
                        "any cell starting with `=`, `+`, `-`, `@`, a tab or CR prefixed with `'` "
                        "(formula injection). JSON Lines has one object per thread with the API's types.",
                        "headers": {
                            "Content-Disposition": {
                                "schema": {"type": "string"},
                                "description": "attachment; filename=earful-application-<id>-<date>.<format>",
                            }
                        },
                        "content": {
                            "text/csv": {"schema": {"type": "string"}},
                            "application/x-ndjson": {"schema": {"type": "string"}},
                        },
                    },
                    400: validation(
                        "The format field must be csv or jsonl.", "The bom field must be true or false."
                    ),
                    404: INVALID_APPLICATION,
                },
                (
                    APPLICATION_ID,
                    query(
                        "format",
                        {"type": "string", "enum": ["csv", "jsonl"], "default": "csv"},
                        "The file's format.",
                    ),
                    query("bom", BOOLEAN_TEXT, "CSV only: start with a UTF-8 byte order mark (older Excel)."),
                    *THREAD_FILTERS,
                ),
                description="Columns: id, email, name, message, sentiment, sentiment_set_by_agent, nps, "
                "tags, url, properties, language, reply_count, first_reply_time, archived, created_at. "
                "The filters are the feedback list's.",
            )
        },
        "/applications/{application_id}/feedback/{feedback_id}": {
            "get": operation(
                "getFeedback",
                "One thread with its replies",
                "read",
                {200: json_data("The thread.", thread), 404: INVALID_FEEDBACK},
                (APPLICATION_ID, FEEDBACK_ID),
            ),
            "patch": operation(
                "updateFeedback",
                "Archive, unarchive, correct the sentiment of or assign a thread",
                "write",
                {
                    200: json_data("The updated thread.", thread),
                    400: validation(
                        "Nothing sent to update",
                        "The archived field must be true or false.",
                        "The selected sentiment is invalid.",
                        "The assignee must be an agent of the application.",
                        "The assignee id field must be a user id or null.",
                    ),
                    404: INVALID_FEEDBACK,
                    500: text("The change could not be saved.", "Could not update feedback"),
                },
                (APPLICATION_ID, FEEDBACK_ID),
                requestBody=THREAD_CHANGE_BODY,
            ),
        },
        "/applications/{application_id}/feedback/{feedback_id}/replies": {
            "post": operation(
                "createReply",
                "Reply to a thread, or add an internal note",
                "write",
                {
                    200: json_data("The thread with the new reply.", thread),
                    400: validation("The message field is required.", "The selected type is invalid."),
                    403: text(
                        "The token lacks the scope, or the plan has no internal notes.",
                        "Insufficient scope",
                        "Your plan does not include internal notes",
                    ),
                    404: INVALID_FEEDBACK,
                },
                (APPLICATION_ID, FEEDBACK_ID),
                description="A public reply is e-mailed to the sender; a note is seen by agents only.",
                requestBody=REPLY_BODY,
            )
        },
        "/applications/{application_id}/replies": {
            "get": operation(
                "listReplies",
                "The application's replies and notes, newest first",
                "read",
                {
                    200: json_data("A page of replies.", list_of("ListedReply"), paginated=True),
                    400: validation(
                        "The date field must match the format Y-m-d.", "The type field must be reply or note."
                    ),
                    404: INVALID_FEEDBACK,
                },
                (
                    APPLICATION_ID,
                    query(
                        "date",
                        {"type": "string", "format": "date"},
                        "Only replies created on this UTC date (Y-m-d).",
                    ),
                    query(
                        "type", {"type": "string", "enum": ["reply", "note"]}, "Only replies, or only notes."
                    ),
                    query(
                        "feedback_id",
                        {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                        "Only the replies of this thread (404 `Invalid feedback` for another).",
                    ),
                    LIMIT,
                    OFFSET,
                ),
            )
        },
    }
