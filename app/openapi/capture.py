"""The capture API (seed §4.2) and the other addresses Earful serves outside the web app: the
widget's script, the e-mail intake's HTTP endpoint, avatars, attachments and logos."""

from __future__ import annotations

from typing import Any

from app.i18n import LANGUAGES, N_
from app.openapi.responses import path_id, query, text, translated
from app.openapi.schemas import SENTIMENT, Schema
from app.services.attachments import MAX_ATTACHMENT_ID

Operation = dict[str, Any]

CAPTURE_KEY_NOTE = (
    "The application key goes in the `key` query parameter (any of the application's platform "
    "keys). Every answer carries `Access-Control-Allow-Origin: *`, and an `OPTIONS` preflight "
    "to the same path answers 204. Answers are in the submitted `language`."
)
APPLICATION_ID = path_id("application_id", "The application's id.")
LANGUAGE = query(
    "language",
    {"type": "string", "enum": list(LANGUAGES)},
    "Language of the answer's text (submit also reads it from the body); English by default.",
)
NOT_AUTHORIZED = translated(
    "The key is missing or wrong, the application's capture is switched off, or the javascript key "
    "was used from an origin the application does not allow.",
    N_("Not authorized"),
    N_("Capture disabled"),
    N_("Origin not allowed"),
)
TOO_MANY_REQUESTS = {
    **translated(
        "Over the application's rate limit for the caller's address, or its ceiling for all "
        "addresses together (submits). Retry-After says how many seconds to wait.",
        N_("Too many requests, try again later"),
    ),
    "headers": {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 1},
            "required": True,
            "description": "Seconds until the request would be accepted again.",
        }
    },
}
TOO_LARGE = translated("The request is over the size limit.", N_("Request too large"), N_("File too large"))

SUBMISSION: Schema = {
    "type": "object",
    "required": ["email", "message"],
    "properties": {
        "email": {"type": "string", "description": "The sender's address; required and valid."},
        "message": {
            "type": "string",
            "minLength": 3,
            "maxLength": 20000,
            "description": "At least 3 characters after trimming white space.",
        },
        "name": {"type": "string", "maxLength": 200},
        "ip": {"type": "string", "description": "The end user's IP address, when a server posts for them."},
        "sentiment": {**SENTIMENT, "description": "Skips the automatic analysis."},
        "url": {"type": "string", "maxLength": 2048, "description": "The page the feedback comes from."},
        "tags": {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}],
            "description": "A list, a JSON-encoded list or a comma-separated string of tag names "
            "(10 at most, of 50 characters at most, by default). An application with 1,000 tags "
            "gets no new one: new names are left out, the feedback is kept.",
        },
        "properties": {
            "description": "Extra metadata: a JSON value, or a JSON-encoded string of one.",
        },
        "attachments": {
            "type": "array",
            "items": {"type": "integer"},
            "description": "Ids from the upload endpoint, of this application, not yet used.",
        },
        "nps": {"type": "integer", "minimum": 0, "maximum": 10},
        "language": {"type": "string", "enum": list(LANGUAGES), "description": "Language of the answer."},
        "honeypot": {
            "type": "string",
            "description": "The widget's hidden field, which people never see: a submit where it is not "
            "empty is a bot's, answered 201 as usual and not stored. Never stored. Leave it out.",
        },
        "fill_time_ms": {
            "type": "integer",
            "minimum": 0,
            "description": "Milliseconds the form was shown before it was sent (the widget sends it): "
            "under `EARFUL_MIN_FILL_SECONDS` (2 s by default), or not a whole number, is a bot's, "
            "answered 201 as usual and not stored. Never stored. A client that sends neither field is "
            "not judged.",
        },
    },
}
SUBMISSION_FORM: Schema = {
    "type": "object",
    "required": ["email", "message"],
    "properties": {
        name: {"type": "string", **({"description": field["description"]} if "description" in field else {})}
        for name, field in SUBMISSION["properties"].items()
    },
}


def capture(operation_id: str, summary: str, responses: dict[int, Any], **extra: Any) -> Operation:
    return {
        "operationId": operation_id,
        "summary": summary,
        "description": CAPTURE_KEY_NOTE,
        "tags": ["Capture API"],
        "security": [{"captureKey": []}],
        "parameters": [APPLICATION_ID, LANGUAGE],
        "responses": {**responses, 403: NOT_AUTHORIZED, 429: TOO_MANY_REQUESTS},
        **extra,
    }


def capture_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/applications/{application_id}/open": {
            "post": capture(
                "openForm",
                "Count that the feedback form was shown",
                {
                    201: translated("Counted (from a blocked network: not counted, same answer).", N_("OK")),
                    404: translated("Unknown application.", N_("Invalid application")),
                },
            )
        },
        "/applications/{application_id}/upload": {
            "post": capture(
                "uploadAttachments",
                "Upload files to attach to a later submit",
                {
                    201: {
                        "description": "The new attachments' ids, in the order of the files.",
                        "content": {
                            "application/json": {"schema": {"type": "array", "items": {"type": "integer"}}}
                        },
                    },
                    400: translated(
                        "Uploads are off for the application, no file was sent, or more files than "
                        "`EARFUL_MAX_FILES_PER_UPLOAD`.",
                        N_("Uploads not enabled"),
                        N_("No files found"),
                        N_("Too many files"),
                    ),
                    404: translated("Unknown application.", N_("Invalid application")),
                    413: translated(
                        "The request or a file is over the size limit, or the files would take the "
                        "application's uploads of the UTC day past `EARFUL_MAX_UPLOAD_BYTES_PER_DAY`.",
                        N_("Request too large"),
                        N_("File too large"),
                        N_("Upload quota exceeded for today"),
                    ),
                },
                requestBody={
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "minProperties": 1,
                                "additionalProperties": {"type": "string", "format": "binary"},
                                "description": "Any number of file fields, whatever their names.",
                            }
                        }
                    },
                },
            )
        },
        "/applications/{application_id}/submit": {
            "post": capture(
                "submitFeedback",
                "Submit feedback: creates a thread",
                {
                    201: translated(
                        "The thread was created; or the submit was dropped, with this same answer, "
                        "because its e-mail, domain or address is on the application's blocklist, or "
                        "its `honeypot` or `fill_time_ms` shows a bot.",
                        N_("Feedback sent!"),
                    ),
                    400: translated(
                        "A field is missing or invalid, or over a quota: more tags than "
                        "`EARFUL_MAX_TAGS_PER_SUBMIT`, a tag longer than `EARFUL_MAX_TAG_LENGTH`, "
                        "more attachments than `EARFUL_MAX_FILES_PER_THREAD`, properties over "
                        "`EARFUL_MAX_PROPERTIES_BYTES`.",
                        N_("Your email address is required"),
                        N_("Invalid email address"),
                        N_("Your message is required"),
                        N_("Your message is too short"),
                        N_("Too many tags"),
                        N_("Tag name too long"),
                        N_("Too many files"),
                        N_("Properties too large"),
                        exact=False,
                    ),
                    404: translated("Unknown application.", N_("Application not found")),
                    413: TOO_LARGE,
                },
                requestBody={
                    "required": True,
                    "description": "JSON (also accepted when labelled text/plain, as widgets send it to "
                    "spare the CORS preflight), or a form with the same fields as strings.",
                    "content": {
                        "application/json": {"schema": SUBMISSION},
                        "application/x-www-form-urlencoded": {"schema": SUBMISSION_FORM},
                        "multipart/form-data": {"schema": SUBMISSION_FORM},
                    },
                },
            )
        },
    }


def file(operation_id: str, summary: str, media: str, parameters: list[dict[str, Any]]) -> Operation:
    return {
        "operationId": operation_id,
        "summary": summary,
        "tags": ["Files"],
        "security": [],
        "parameters": parameters,
        "responses": {
            200: {
                "description": "The file.",
                "content": {media: {"schema": {"type": "string", "format": "binary"}}},
            },
            404: text("No such file.", "Not found"),
        },
    }


def path_text(name: str, description: str, pattern: str | None = None) -> dict[str, Any]:
    schema: Schema = {"type": "string", "minLength": 1}
    if pattern:
        schema["pattern"] = pattern
    return {"name": name, "in": "path", "required": True, "schema": schema, "description": description}


def other_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/widget.js": {
            "get": {
                "operationId": "getWidgetScript",
                "summary": "The embeddable feedback widget",
                "tags": ["Widget"],
                "security": [],
                "responses": {
                    200: {
                        "description": "The script; cached 5 minutes and revalidated with its ETag.",
                        "content": {"application/javascript": {"schema": {"type": "string"}}},
                    },
                    304: {"description": "Unchanged since the ETag sent in If-None-Match."},
                },
            }
        },
        "/inbound/email": {
            "post": {
                "operationId": "receiveEmail",
                "summary": "Take one raw e-mail from the deployment's mail server",
                "description": "Authorized by `EARFUL_INBOUND_SECRET` as a bearer token; the whole "
                "endpoint answers 404 while no secret is configured. Envelope recipients go in "
                "`X-Earful-Recipient` headers, else the message's own headers are read.",
                "tags": ["E-mail intake"],
                "security": [{"inboundSecret": []}],
                "requestBody": {
                    "required": True,
                    "description": "The raw RFC 5322 message, whatever its Content-Type "
                    "(`message/rfc822`, `application/octet-stream`...).",
                    "content": {
                        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                    },
                },
                "responses": {
                    202: text("Stored as a thread or a reply.", "Accepted"),
                    400: text("Empty or unreadable message.", examples=("Empty message",)),
                    403: text("Wrong secret.", "Forbidden"),
                    404: text(
                        "No secret configured, or no application has this address.", examples=("Not Found",)
                    ),
                    413: text("The message is over the size limit.", "Request Entity Too Large"),
                },
            }
        },
        "/avatars/{digest}.svg": {
            "get": file(
                "getAvatar",
                "A sender's avatar (initials on a colour derived from the address)",
                "image/svg+xml",
                [
                    path_text("digest", "Hex digest naming the colour.", "^[0-9a-f]{1,64}$"),
                    query("i", {"type": "string"}, "The initials to draw."),
                ],
            )
        },
        "/files/attachments/{attachment_id}/{token}/{name}": {
            "get": file(
                "getAttachment",
                "An attachment, by its capability address",
                "*/*",
                [
                    path_id("attachment_id", "The attachment's id.", MAX_ATTACHMENT_ID),
                    path_text("token", "The unguessable part of the address."),
                    path_text("name", "The file's name (may hold slashes)."),
                ],
            )
        },
        "/files/logos/{application_id}/{name}": {
            "get": file(
                "getLogo",
                "An application's logo",
                "image/*",
                [
                    path_id("application_id", "The application's id."),
                    path_text("name", "The logo's file name."),
                ],
            )
        },
    }
