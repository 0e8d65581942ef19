"""The management API's bulk actions on an application's threads."""

from __future__ import annotations

from typing import Any

from app.openapi.management import (
    APPLICATION_ID,
    INVALID_APPLICATION,
    THREAD_FILTERS,
    Operation,
    operation,
    validation,
)
from app.openapi.responses import json_data
from app.openapi.schemas import Schema, closed
from app.services.assignment import INVALID_ASSIGNEE, NOT_AN_AGENT
from app.services.bulk import ACTIONS, BATCH, MAX_BY_FILTER, MAX_SELECTED
from app.services.validation import MAX_ID

SCALAR: Schema = {"type": ["string", "integer", "boolean", "null"]}
FILTERS: Schema = {
    "type": "object",
    "additionalProperties": False,
    "description": "The feedback list's filters, named as its query parameters, with the same values "
    '(as JSON `true`, `5` or `"5"` alike; null is no filter). Every thread they match is selected, '
    "newest first, from `before` when it is given.",
    "properties": {
        "archived": {**SCALAR, "description": "`true`: the archived threads; else those not archived."},
        **{
            parameter["name"]: {**SCALAR, "description": parameter["description"]}
            for parameter in THREAD_FILTERS
            if parameter["name"] != "archived"
        },
    },
}
BULK_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["action"],
                "properties": {
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "feedback_ids": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_SELECTED,
                        "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                        "description": f"Ids of the application's threads, at most {MAX_SELECTED}; ids of "
                        "other threads are ignored. Send this or `filters`.",
                    },
                    "filters": FILTERS,
                    "tag": {"type": "string", "description": "The tag to add (`tag`) or remove (`untag`)."},
                    "assignee_id": {
                        "type": ["integer", "null"],
                        "minimum": 1,
                        "maximum": MAX_ID,
                        "description": "`assign`: the agent of the application to assign to, or null for "
                        "nobody (required).",
                    },
                },
            }
        }
    },
}
OUTCOME = closed(
    {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "selected": {
            "type": "integer",
            "minimum": 0,
            "description": "Threads of the application that the selection named (ids of other threads "
            "are not counted).",
        },
        "changed": {
            "type": "integer",
            "minimum": 0,
            "description": "Threads the action changed (one archived already is selected, not changed).",
        },
        "next_before": {
            "type": ["integer", "null"],
            "description": f"By filter, at most {MAX_BY_FILTER} threads are read per request: when more "
            "matched, send the same filters with this `before` to go on; null when every match was read.",
        },
    },
    "What a bulk action did.",
)


def bulk_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/applications/{application_id}/feedback/bulk": {
            "post": operation(
                "bulkFeedback",
                "Archive, unarchive, tag, untag, assign, mark as spam or delete many threads",
                "write",
                {
                    200: json_data("What was done.", OUTCOME),
                    400: validation(
                        f"The action field must be one of {', '.join(ACTIONS)}.",
                        "Send either feedback_ids or filters.",
                        "The feedback ids field must hold thread ids.",
                        f"Select at most {MAX_SELECTED} threads at once.",
                        "The filters field must be an object of the feedback list's filters.",
                        "The sentiment field must be one of positive, neutral, negative.",
                        "Enter a tag name.",
                        "The assignee id field is required.",
                        INVALID_ASSIGNEE,
                        NOT_AN_AGENT,
                        "The request body must be a JSON object.",
                    ),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description=f"Threads are chosen by id (`feedback_ids`) or by the feedback list's filters "
                f"(`filters`: every match, not a page). They are changed {BATCH} at a time, each batch in "
                "one transaction with every count it moves, and each changed thread announces its webhook "
                "event (`feedback.updated`; `feedback.deleted` for `spam` and `delete`). `spam` also "
                "blocks each sender's address. A refusal in a later batch (a full blocklist) leaves the "
                "earlier batches done. Every agent of the application may do this.",
                requestBody=BULK_BODY,
            )
        }
    }
