"""The SMTP receiver of ``earful smtp``: intake and reply addresses only, refused at RCPT otherwise.

The server runs on the caller's event loop (not in aiosmtpd's Controller thread), so its
handler shares the ORM's connections with the rest of the process.
"""

from __future__ import annotations

import asyncio
import logging

from aiosmtpd.smtp import SMTP, Envelope, Session

from app.config import Settings
from app.services.mail.intake import MAX_RECIPIENTS, MailRefused, receive_mail, resolve_recipients

logger = logging.getLogger("earful.smtp")

TEMPORARY_FAILURE = "451 4.3.0 Temporary failure, please try again later"


class IntakeHandler:
    """aiosmtpd hooks: check each recipient, then turn the message into threads or answers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]
    ) -> str:
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        try:
            known = await resolve_recipients([address], self.settings)
        except Exception:
            logger.exception("smtp: could not check recipient %r", address)
            return TEMPORARY_FAILURE
        if not known:
            return "550 5.1.1 No such recipient here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or envelope.content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        try:
            await receive_mail(raw, list(envelope.rcpt_tos), self.settings, envelope.mail_from or "")
        except MailRefused as error:
            return error.smtp_reply
        except Exception:
            logger.exception("smtp: could not take a message from %r", envelope.mail_from)
            return TEMPORARY_FAILURE
        return "250 2.0.0 Message accepted"


async def start_smtp_server(settings: Settings, host: str, port: int) -> asyncio.Server:
    """Listen for SMTP on ``host:port`` in the running event loop."""
    handler = IntakeHandler(settings)
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        lambda: SMTP(
            handler,
            hostname=settings.intake_domain,
            ident="Earful",
            data_size_limit=settings.max_request_bytes,
            enable_SMTPUTF8=True,
        ),
        host=host,
        port=port,
    )
