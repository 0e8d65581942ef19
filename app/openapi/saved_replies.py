"""The management API's saved replies, under both owners: an application's (managed by any of its
agents) and an organization's (read by its members, managed by its owners), and a saved reply
filled for one thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.openapi.management import (
    APPLICATION_ID,
    FEEDBACK_ID,
    ORGANIZATION_ID,
    Operation,
    operation,
    validation,
)
from app.openapi.responses import INSUFFICIENT_SCOPE, json_data, path_id, text
from app.openapi.schemas import Schema, list_of, ref
from app.services.organizations import OWNERS_ONLY
from app.services.saved_replies import INVALID_SAVED_REPLY, MAX_SAVED_REPLIES, MAX_TEXT, MAX_TITLE

TAG = "Saved replies"
SAVED_REPLY_ID = path_id("saved_reply_id", "The saved reply's id.")
PLACEHOLDERS = (
    "The text may hold placeholders, filled when the reply is inserted for a thread: `{name}` (the "
    "sender's name, or their address when the thread has none), `{email}` and `{application}` (the "
    "application's name). Any other text in braces stays as typed."
)
FIELDS: dict[str, Schema] = {
    "title": {
        "type": "string",
        "maxLength": MAX_TITLE,
        "description": f"Required on create; at most {MAX_TITLE} characters, on one line (whitespace is "
        "collapsed).",
    },
    "text": {
        "type": "string",
        "maxLength": MAX_TEXT,
        "description": f"Required on create; at most {MAX_TEXT} characters. {PLACEHOLDERS}",
    },
}
CREATE_BODY: dict[str, Any] = {
    "required": True,
    "description": "JSON (a form with the same fields is accepted too).",
    "content": {
        "application/json": {
            "schema": {"type": "object", "required": ["title", "text"], "properties": FIELDS}
        }
    },
}
UPDATE_BODY: dict[str, Any] = {
    "required": True,
    "description": "JSON (a form with the same fields is accepted too): the fields sent change, the other "
    "keeps its value; an empty object changes nothing.",
    "content": {"application/json": {"schema": {"type": "object", "properties": FIELDS}}},
}
FIELD_ERRORS = (
    "The title field is required.",
    f"The title field must not be greater than {MAX_TITLE} characters.",
    "The title field must be a string.",
    "The text field is required.",
    f"The text field must not be greater than {MAX_TEXT} characters.",
    "The text field must be a string.",
    "The request body must be a JSON object.",
)


@dataclass(frozen=True)
class Owner:
    """Where saved replies live, as the document names and describes it."""

    prefix: str
    noun: str  # in operation ids: Application, Organization
    parameter: dict[str, Any]
    missing: str  # the 404 text of an unknown (or unseen) owner
    unseen: str
    readers: str  # who may read them
    managers: str  # who may change them
    forbidden: dict[str, Any]  # the 403 of the changing operations


OWNERS = (
    Owner(
        "/applications/{application_id}/saved-replies",
        "Application",
        APPLICATION_ID,
        "Invalid application",
        "No application with this id that the user may see",
        "every agent of the application",
        "every agent of the application",
        INSUFFICIENT_SCOPE,
    ),
    Owner(
        "/organizations/{organization_id}/saved-replies",
        "Organization",
        ORGANIZATION_ID,
        "Invalid organization",
        "No organization with this id that the user belongs to",
        "every member of the organization; they are offered in the reply box of its applications",
        "the organization's owners",
        text("The token lacks the scope, or the user is not an owner.", "Insufficient scope", OWNERS_ONLY),
    ),
)


def _not_found(owner: Owner, item: bool = False) -> dict[str, Any]:
    if not item:
        return text(f"{owner.unseen}.", owner.missing)
    return text(f"{owner.unseen}, or no saved reply of it with this id.", owner.missing, INVALID_SAVED_REPLY)


def _operation(
    owner: Owner,
    operation_id: str,
    summary: str,
    scope: str,
    responses: dict[int, Any],
    parameters: tuple[dict[str, Any], ...] = (),
    **extra: Any,
) -> Operation:
    """A saved reply operation of ``owner``: who may call it, its 403 and its tag."""
    changing = scope == "write"
    who = owner.managers if changing else owner.readers
    result = operation(
        operation_id,
        summary,
        scope,
        {**responses, 403: owner.forbidden if changing else INSUFFICIENT_SCOPE},
        (owner.parameter, *parameters),
        description=f"For {who}.",
        **extra,
    )
    result["tags"] = [TAG]
    return result


def _owner_paths(owner: Owner) -> dict[str, dict[str, Operation]]:
    noun = owner.noun
    item = _not_found(owner, item=True)
    return {
        owner.prefix: {
            "get": _operation(
                owner,
                f"list{noun}SavedReplies",
                "List the saved replies",
                "read",
                {
                    200: json_data("The saved replies, by title.", list_of("SavedReply")),
                    404: _not_found(owner),
                },
            ),
            "post": _operation(
                owner,
                f"create{noun}SavedReply",
                "Create a saved reply",
                "write",
                {
                    201: json_data("The saved reply.", ref("SavedReply")),
                    400: validation(
                        *FIELD_ERRORS, f"There must not be more than {MAX_SAVED_REPLIES} saved replies here."
                    ),
                    404: _not_found(owner),
                },
                requestBody=CREATE_BODY,
            ),
        },
        owner.prefix + "/{saved_reply_id}": {
            "get": _operation(
                owner,
                f"get{noun}SavedReply",
                "One saved reply",
                "read",
                {200: json_data("The saved reply, its placeholders as typed.", ref("SavedReply")), 404: item},
                (SAVED_REPLY_ID,),
            ),
            "patch": _operation(
                owner,
                f"update{noun}SavedReply",
                "Change a saved reply",
                "write",
                {
                    200: json_data("The saved reply, changed.", ref("SavedReply")),
                    400: validation(*FIELD_ERRORS),
                    404: item,
                },
                (SAVED_REPLY_ID,),
                requestBody=UPDATE_BODY,
            ),
            "delete": _operation(
                owner,
                f"delete{noun}SavedReply",
                "Delete a saved reply",
                "write",
                {204: {"description": "Deleted; no body. Replies sent with its text keep it."}, 404: item},
                (SAVED_REPLY_ID,),
            ),
        },
    }


def _fill_path() -> dict[str, dict[str, Operation]]:
    fill = operation(
        "fillSavedReply",
        "A saved reply filled for a thread",
        "read",
        {
            200: json_data("The text to send as the reply.", ref("FilledSavedReply")),
            404: text(
                "No application, no thread of it, or no saved reply it offers (its own or its "
                "organization's) with these ids.",
                "Invalid application",
                "Invalid feedback",
                INVALID_SAVED_REPLY,
            ),
        },
        (APPLICATION_ID, FEEDBACK_ID, SAVED_REPLY_ID),
        description="A saved reply of the application or of its organization, with its placeholders "
        "filled: `{name}` with the thread's sender's name (their address when the thread has none), "
        "`{email}` with their address and `{application}` with the application's name; any other text "
        "in braces as typed. Nothing is sent: post the text as a reply.",
    )
    fill["tags"] = [TAG]
    return {
        "/applications/{application_id}/feedback/{feedback_id}/saved-replies/{saved_reply_id}": {"get": fill}
    }


def saved_reply_paths() -> dict[str, dict[str, Operation]]:
    paths: dict[str, dict[str, Operation]] = _fill_path()
    for owner in OWNERS:
        paths |= _owner_paths(owner)
    return paths
