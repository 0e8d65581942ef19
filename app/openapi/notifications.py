"""The management API's notification settings: which e-mails the calling agent gets about an
application."""

from __future__ import annotations

from app.models import NOTIFICATION_MODES
from app.openapi.management import APPLICATION_ID, INVALID_APPLICATION, Operation, operation, validation
from app.openapi.responses import json_data
from app.openapi.schemas import Schema, closed

MODE: Schema = {
    "type": "string",
    "enum": list(NOTIFICATION_MODES),
    "description": "`instant`: an e-mail for every new thread; `digest`: one e-mail a day (at "
    "EARFUL_DIGEST_HOUR, UTC) with the day's counts and its negative threads first; `none`: no e-mail. "
    "Without a choice: `digest` for the application's administrators, `none` for its other agents. "
    "E-mails are sent only when the deployment sets EARFUL_SMTP_URL.",
}
SETTINGS = closed({"mode": MODE}, "The calling agent's e-mail about the application.")
NOTE = (
    "Each agent's own setting: no one sets another's. Every e-mail carries a link that sets it to "
    "`none` without signing in."
)


def notification_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/applications/{application_id}/notifications": {
            "get": operation(
                "getNotificationSettings",
                "The calling agent's notification settings for the application",
                "read",
                {
                    200: json_data("The agent's mode (their choice, else their role's default).", SETTINGS),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description=NOTE,
            ),
            "put": operation(
                "updateNotificationSettings",
                "Choose which e-mails the calling agent gets about the application",
                "write",
                {
                    200: json_data("The agent's mode, recorded.", SETTINGS),
                    400: validation(
                        "The mode field must be instant, digest or none.",
                        "The request body must be a JSON object.",
                    ),
                    404: INVALID_APPLICATION,
                },
                (APPLICATION_ID,),
                description=NOTE,
                requestBody={
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "required": ["mode"], "properties": {"mode": MODE}}
                        },
                        "application/x-www-form-urlencoded": {
                            "schema": {"type": "object", "required": ["mode"], "properties": {"mode": MODE}}
                        },
                    },
                },
            ),
        }
    }
