"""Paths of the routes that the APIs and the pages both link to, built by ``url_for`` from the
routes themselves: a thread's permalink, an attachment's capability path, an application's logo.
The APIs put ``EARFUL_BASE_URL`` before them; the pages use them as they are."""

from __future__ import annotations

from quart import url_for

from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow


def attachment_path(attachment: AttachmentRow) -> str:
    """The capability path of an attachment (the token in it is the permission to read it)."""
    return url_for(
        "files.attachment", attachment_id=attachment.id, token=attachment.token, name=attachment.name
    )


def logo_path(application: ApplicationRow) -> str | None:
    """The path of the application's logo, if it has one."""
    if not application.logo_name:
        return None
    return url_for("files.logo", application_id=application.id, name=application.logo_name)


def thread_path(application_id: int, feedback_id: int) -> str:
    """The thread's page in the agent web app (its permalink)."""
    return url_for("views.threads.show_thread", application_id=application_id, feedback_id=feedback_id)
