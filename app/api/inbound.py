"""Raw RFC 5322 e-mail posted by an MTA (Postfix pipe, a mail webhook), turned into threads and replies.

``POST /inbound/email`` with ``Authorization: Bearer <EARFUL_INBOUND_SECRET>`` and the message as
the body. The envelope recipients go in ``X-Earful-Recipient`` headers (one per header or comma
separated); without them the message's own Delivered-To, X-Original-To, To and Cc are used.
Answers are text/plain: 202 accepted, 400 unreadable mail, 404 unknown recipient; 404 for the
whole endpoint while no secret is configured, 403 with a wrong one.
"""

from __future__ import annotations

from quart import Blueprint, Response, request

from app.api.common import settings, text_response
from app.services.mail.intake import header_recipients, receive_mail
from app.services.security import secrets_match

blueprint = Blueprint("inbound", __name__)


def _authorized(secret: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and secrets_match(given.strip(), secret)


@blueprint.post("/inbound/email")
async def receive_email() -> Response:
    """Take one raw e-mail from the deployment's MTA."""
    secret = settings().inbound_secret
    if not secret:
        return text_response("Not Found", 404)
    if not _authorized(secret):
        return text_response("Forbidden", 403)
    raw = await request.get_data(as_text=False)
    assert isinstance(raw, bytes)  # as_text=False
    recipients = [
        address.strip()
        for value in request.headers.getlist("X-Earful-Recipient")
        for address in value.split(",")
        if address.strip()
    ]
    if not raw.strip():
        return text_response("Empty message", 400)
    sender = request.headers.get("X-Earful-Sender")
    await receive_mail(raw, recipients or header_recipients(raw), settings(), sender)
    return text_response("Accepted", 202)
