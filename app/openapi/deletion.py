"""The management API's deletions: a thread, a selection of threads, a tag, an application."""

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
from app.services.deletion import ADMINISTRATORS_ONLY, MAX_SELECTED
from app.services.validation import MAX_ID

TAG_ID = path_id("tag_id", "The tag's id.")
DELETED: dict[str, Any] = {"description": "Deleted; no body."}
ADMINISTRATORS = text(
    "The token lacks the scope, or the user is neither the application's creator nor an owner of "
    "its organization.",
    "Insufficient scope",
    ADMINISTRATORS_ONLY,
)
SELECTION_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["feedback_ids"],
                "properties": {
                    "feedback_ids": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_SELECTED,
                        "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                        "description": f"Ids of the application's threads, at most {MAX_SELECTED} "
                        "(duplicates count once). Ids of other threads are ignored.",
                    }
                },
            }
        }
    },
}
DELETED_COUNT = {
    "type": "object",
    "required": ["deleted"],
    "properties": {"deleted": {"type": "integer", "minimum": 0, "description": "Threads deleted."}},
}


def deletion_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/applications/{application_id}": {
            "delete": operation(
                "deleteApplication",
                "Delete an application with everything under it",
                "write",
                {
                    204: DELETED,
                    403: ADMINISTRATORS,
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description="Its threads, replies, notes, senders, tags, files and keys go for good; "
                "the widget's key stops working. For the application's creator and the owners of its "
                "organization. The DELETE is the confirmation (the web app asks for the name instead).",
            )
        },
        "/applications/{application_id}/tags/{tag_id}": {
            "delete": operation(
                "deleteTag",
                "Delete a tag",
                "write",
                {
                    204: DELETED,
                    403: ADMINISTRATORS,
                    404: text(
                        "No application, or no tag of it, with these ids.",
                        "Invalid application",
                        "Invalid tag",
                    ),
                },
                (APPLICATION_ID, TAG_ID),
                description="Its threads lose the tag; nothing else changes. For the application's "
                "creator and the owners of its organization.",
            )
        },
        "/applications/{application_id}/feedback/{feedback_id}": {
            "delete": operation(
                "deleteFeedback",
                "Delete a thread",
                "write",
                {204: DELETED, 404: INVALID_FEEDBACK},
                (APPLICATION_ID, FEEDBACK_ID),
                description="With its replies, notes, tag links and attachments; every count moves.",
            )
        },
        "/applications/{application_id}/feedback/delete": {
            "post": operation(
                "deleteFeedbackSelection",
                "Delete several threads at once",
                "write",
                {
                    200: json_data("How many threads were deleted.", DELETED_COUNT),
                    400: validation(
                        "The feedback ids field is required.",
                        "The feedback ids field must hold thread ids.",
                        "Select at least one thread.",
                        f"Select at most {MAX_SELECTED} threads at once.",
                        "The request body must be a JSON object.",
                    ),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description="In one transaction. Ids that are not the application's threads (another "
                "application's, or already deleted) are ignored, so sending the same ids twice is "
                "harmless: the answer counts what this request deleted.",
                requestBody=SELECTION_BODY,
            )
        },
    }
