"""Building blocks of the operations: plain-text answers, JSON answers and parameters.

The APIs answer errors as ``text/plain`` bodies (seed §7). Where the body is one of a known set
it is an ``enum`` of the exact texts, translated ones included for the capture API; validation
errors, whose text names the field and the rule, are described and given as examples instead.
"""

from __future__ import annotations

from typing import Any

from app.i18n import LANGUAGES, translate
from app.openapi.schemas import Schema, envelope
from app.services.validation import MAX_ID

Response = dict[str, Any]


def text(description: str, *bodies: str, examples: tuple[str, ...] = (), **headers: Schema) -> Response:
    """A text/plain answer: exactly one of ``bodies`` when given, else any text like ``examples``."""
    schema: Schema = {"type": "string"}
    if bodies:
        schema["enum"] = list(dict.fromkeys(bodies))
    if examples:
        schema["examples"] = list(examples)
    response: Response = {"description": description, "content": {"text/plain": {"schema": schema}}}
    if headers:
        response["headers"] = {
            name.replace("_", "-"): {"schema": header, "required": True} for name, header in headers.items()
        }
    return response


def translated(description: str, *messages: str, exact: bool = True) -> Response:
    """A capture API text answer: one of ``messages`` in any language it answers in (``exact``),
    or texts like them. ``x-english`` keeps the English texts apart for the README's table."""
    bodies = tuple(dict.fromkeys(translate(m, language) for m in messages for language in LANGUAGES))
    response = text(description, *bodies) if exact else text(description, examples=bodies)
    response["content"]["text/plain"]["schema"]["x-english"] = list(messages)
    return response


def json_data(description: str, schema: Schema, paginated: bool = False) -> Response:
    """A management API success: ``{"data": ...}``."""
    return {
        "description": description,
        "content": {"application/json": {"schema": envelope(schema, paginated)}},
    }


def query(name: str, schema: Schema, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def path_id(name: str, description: str, maximum: int = MAX_ID) -> dict[str, Any]:
    """A numeric path id; anything else names nothing and answers the operation's 404."""
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1, "maximum": maximum},
        "description": description,
    }


UNAUTHENTICATED = text(
    "The bearer token is missing, malformed, unknown or revoked.",
    "Unauthenticated",
    WWW_Authenticate={"type": "string", "enum": ["Bearer"]},
)
INSUFFICIENT_SCOPE = text("The token lacks the operation's scope.", "Insufficient scope")
BODY_TOO_LARGE = text("The request body is over the size limit.", "Request Entity Too Large")
LENGTH_REQUIRED = text("The body was sent chunked; send it with a Content-Length.", "Length required")
