"""The addresses of the e-mail channel: intake addresses, signed reply addresses, Message-IDs.

A reply address names a thread and carries an HMAC of that name, keyed by the deployment's
secret key, so only Earful can make one: ``reply+<thread id>.<signature>@<intake domain>``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from app.repositories import applications, threads
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.services.security import secrets_match

SIGNATURE_LENGTH = 20  # hex characters: 80 bits, and every guess costs an SMTP transaction
_INTAKE = re.compile(r"feedback-(\d{1,10})-([A-Za-z0-9]{1,32})")
_REPLY = re.compile(rf"reply\+(\d{{1,10}})\.([0-9a-f]{{{SIGNATURE_LENGTH}}})")


@dataclass(frozen=True)
class Recipient:
    """Where an accepted e-mail goes: a new thread of ``application``, or an answer in ``thread``."""

    application: ApplicationRow
    thread: ThreadRow | None = None

    @property
    def key(self) -> str:
        """Names the target in the dedupe key of an inbound e-mail."""
        return f"reply-{self.thread.id}" if self.thread else f"feedback-{self.application.id}"


def _signature(thread_id: int, secret_key: str) -> str:
    digest = hmac.new(secret_key.encode(), f"earful-reply:{thread_id}".encode(), hashlib.sha256)
    return digest.hexdigest()[:SIGNATURE_LENGTH]


def reply_address(thread_id: int, secret_key: str, intake_domain: str) -> str:
    """The signed address whose mail is appended to the thread as the customer's answer."""
    return f"reply+{thread_id}.{_signature(thread_id, secret_key)}@{intake_domain}"


def thread_message_id(thread_id: int, intake_domain: str) -> str:
    """The stable Message-ID standing for a thread that did not come by e-mail."""
    return f"<thread-{thread_id}@{intake_domain}>"


def outbound_message_id(key: str, intake_domain: str) -> str:
    """The Message-ID of an outbox row, from the key fixed when the row was written."""
    return f"<{key}@{intake_domain}>"


def _split(address: str, intake_domain: str) -> str | None:
    """The local part of an address of the intake domain, else None."""
    local, at, domain = address.strip().strip("<>").rpartition("@")
    if not at or domain.lower().rstrip(".") != intake_domain.lower():
        return None
    return local


async def resolve_recipient(address: str, secret_key: str, intake_domain: str) -> Recipient | None:
    """The target of an envelope recipient, or None for an unknown, forged or foreign address."""
    local = _split(address, intake_domain)
    if local is None:
        return None
    if match := _INTAKE.fullmatch(local.lower()):
        application = await applications.application_by_id(int(match.group(1)))
        if application is None or not secrets_match(match.group(2), application.intake_token.lower()):
            return None
        return Recipient(application)
    if match := _REPLY.fullmatch(local.lower()):
        thread_id = int(match.group(1))
        if not secrets_match(match.group(2), _signature(thread_id, secret_key)):
            return None
        thread = await threads.thread_anywhere(thread_id)
        owner = await applications.application_by_id(thread.application_id) if thread else None
        if thread is None or owner is None:
            return None
        return Recipient(owner, thread)
    return None
