"""Privacy requests: export or erase what the agent's applications hold about a person, and the
audit trail of such requests (the rules are :mod:`app.services.erasure`'s)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from quart import Blueprint, Response, current_app, request
from quart.typing import ResponseReturnValue

from app.errors import DomainError
from app.links import attachment_path
from app.repositories.attachments import AttachmentRow
from app.services import erasure
from app.services.storage import storage_for
from app.views.rendering import render_template
from app.views.security import agent_required, current_agent

blueprint = Blueprint("privacy", __name__)

ACTIONS = {
    erasure.ERASE: "Person erased",
    erasure.EXPORT: "Person's data exported",
    "application.delete": "Application deleted",
    "retention.run": "Retention",
}
NOT_CONFIRMED = "Type the same e-mail address twice to confirm."


async def _context(**extra: Any) -> dict[str, Any]:
    """Everything the page shows."""
    agent = current_agent()
    return {
        "applications": await erasure.administered_applications(agent),
        "entries": await erasure.recent_audit_entries(agent),
        "actions": ACTIONS,
        "counts_order": erasure.COUNTS,
        "export_error": None,
        "erase_error": None,
        "erased": None,
        "values": {},
        **extra,
    }


async def _page(status: int = 200, **extra: Any) -> tuple[str, int]:
    return await render_template("privacy/show.html", **await _context(**extra)), status


@blueprint.get("/privacy")
@agent_required
async def show_privacy() -> tuple[str, int]:
    """The two forms (export, erase) and the recent audit entries."""
    return await _page()


def _attachment_url(attachment: AttachmentRow) -> str:
    return str(current_app.config["EARFUL"].base_url) + attachment_path(attachment)


@blueprint.post("/privacy/export")
@agent_required
async def export_person() -> ResponseReturnValue:
    """The person's data as a JSON file to download (its name holds the date, not the address)."""
    form = await request.form
    values = {"export_email": form.get("email", ""), "export_application": form.get("application_id", "")}
    try:
        document = await erasure.export_person(
            current_agent(), form.get("email"), form.get("application_id"), attachment_url=_attachment_url
        )
    except DomainError as failure:
        return await _page(failure.status, export_error=str(failure), values=values)
    name = f"earful-person-{datetime.now(UTC).date().isoformat()}.json"
    return Response(
        json.dumps(document, ensure_ascii=False, indent=2),
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@blueprint.post("/privacy/erase")
@agent_required
async def erase_person() -> ResponseReturnValue:
    """Erase the person, once the address was typed twice; the page then shows what went."""
    form = await request.form
    email, again = form.get("email", ""), form.get("confirm_email", "")
    values = {"erase_email": email, "erase_application": form.get("application_id", "")}
    if email.strip() and email.strip().lower() != again.strip().lower():
        return await _page(422, erase_error=NOT_CONFIRMED, values=values)
    try:
        counts = await erasure.erase_person(
            current_agent(),
            email,
            form.get("application_id"),
            storage=storage_for(current_app.config["EARFUL"]),
        )
    except DomainError as failure:
        return await _page(failure.status, erase_error=str(failure), values=values)
    return await _page(erased=counts)
