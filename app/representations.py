"""JSON representations of the resources, with the field names and types of the specification:
what the management API answers, and the ``data`` of the webhook events (written by the
services, so this module imports no web framework)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from app.config import Settings
from app.links import attachment_path, logo_path, thread_path
from app.repositories.accounts import AgentRow, UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow
from app.repositories.invitations import InvitationRow
from app.repositories.organizations import OrganizationRow
from app.repositories.replies import ReplyRow
from app.repositories.saved_replies import SavedReplyRow
from app.repositories.tags import TagRow
from app.repositories.threads import SenderRow, ThreadRow
from app.repositories.webhooks import AttemptRow, DeliveryRow, EndpointRow
from app.services.applications import application_keys
from app.services.avatars import avatar_url

if TYPE_CHECKING:
    from app.services.thread_details import ThreadDetails

SUMMARY_LENGTH = 200


def encode_json(payload: Any) -> bytes:
    """A JSON document as the APIs send it: compact UTF-8, encoded by orjson (a list of fifty
    threads takes it a tenth of the standard library's time, which was a tenth of the list's CPU).
    A key that is not a string (an id) is written as one; orjson's option for that doubles the
    time of every document (60 against 31 us for a list of fifty threads), so it is only used for
    a document refused without it. What orjson refuses even so (a string with a lone surrogate,
    an integer past 64 bits) is encoded by the standard library, so no answer fails for its
    encoding."""
    for option in (0, orjson.OPT_NON_STR_KEYS):
        try:
            return orjson.dumps(payload, option=option)
        except orjson.JSONEncodeError:
            continue
    return json.dumps(payload, separators=(",", ":")).encode()


def timestamp(value: datetime | None) -> int | None:
    """Seconds since the Unix epoch."""
    return None if value is None else int(value.timestamp())


def _absolute(settings: Settings, path: str | None) -> str | None:
    return None if path is None else settings.base_url + path


def user_json(user: UserRow | AgentRow) -> dict[str, Any]:
    return {"id": user.id, "email": user.email, "name": user.name}


def organization_json(organization: OrganizationRow, role: str) -> dict[str, Any]:
    """An organization as its member sees it; ``role`` is that member's (owner or agent)."""
    return {
        "id": organization.id,
        "name": organization.name,
        "created_at": timestamp(organization.created_at),
        "updated_at": timestamp(organization.updated_at),
        "role": role,
    }


def invitation_json(invitation: InvitationRow) -> dict[str, Any]:
    """A pending invitation as the organization's owners see it (never its link: only the answer
    that makes one carries it)."""
    return {
        "id": invitation.id,
        "organization_id": invitation.organization_id,
        "email": invitation.email,
        "role": invitation.role,
        "invited_by": user_json(invitation.invited_by) if invitation.invited_by is not None else None,
        "created_at": timestamp(invitation.created_at),
        "expires_at": timestamp(invitation.expires_at),
    }


def application_json(application: ApplicationRow, settings: Settings) -> dict[str, Any]:
    return {
        "id": application.id,
        "organization_id": application.organization_id,
        "name": application.name,
        "url": application.url,
        "logo": _absolute(settings, logo_path(application)),
        "average_first_reply_time": application.average_first_reply_time,
        "target_average_first_reply_time": application.target_average_first_reply_time,
        "uploads_enabled": application.uploads_enabled,
        "capture_enabled": application.capture_enabled,
        "submits_per_minute": application.submits_per_minute,
        "opens_per_minute": application.opens_per_minute,
        "uploads_per_minute": application.uploads_per_minute,
        "submits_per_minute_total": application.submits_per_minute_total,
        "allowed_origins": list(application.allowed_origins),
        "retention_days": application.retention_days,
        "retention_archived_only": application.retention_archived_only,
        "receipts_enabled": application.receipts_enabled,
        "keys": application_keys(application, settings.intake_domain),
        "created_at": timestamp(application.created_at),
        "updated_at": timestamp(application.updated_at),
    }


def attachment_json(attachment: AttachmentRow, settings: Settings) -> dict[str, Any]:
    return {
        "id": attachment.id,
        "name": attachment.name,
        "mime_type": attachment.mime_type,
        "size": attachment.size,
        "url": settings.base_url + attachment_path(attachment),
    }


def member_json(member: SenderRow) -> dict[str, Any]:
    return {
        "id": member.id,
        "email": member.email,
        "name": member.name,
        "created_at": timestamp(member.created_at),
        "updated_at": timestamp(member.updated_at),
    }


def permalink(settings: Settings, application_id: int, feedback_id: int) -> str:
    """The thread's page in the agent web app."""
    return settings.base_url + thread_path(application_id, feedback_id)


class Sender(Protocol):
    """A thread's sender as a reply's author is told from it: a SenderRow, or the sender's
    address and name on a :class:`~app.repositories.replies.ReplyThread`."""

    @property
    def email(self) -> str: ...

    @property
    def name(self) -> str: ...


def _reply_author(reply: ReplyRow, member: Sender | None) -> tuple[str, str]:
    if reply.from_agent and reply.user is not None:
        return reply.user.email, reply.user.name
    return reply.email, member.name if member is not None and member.email == reply.email else ""


def reply_json(
    reply: ReplyRow, attachments: list[AttachmentRow], settings: Settings, member: Sender | None
) -> dict[str, Any]:
    """A reply as it appears inside a thread."""
    email, name = _reply_author(reply, member)
    return {
        "id": reply.id,
        "type": reply.type,
        "message": reply.message,
        "email": email,
        "avatar": avatar_url(settings.base_url, settings.secret_key, email, name),
        "attachments": [attachment_json(a, settings) for a in attachments],
        "user": user_json(reply.user) if reply.from_agent and reply.user is not None else None,
        "reply_from_agent": reply.from_agent,
        "created_at": timestamp(reply.created_at),
    }


def thread_json(details: ThreadDetails, settings: Settings) -> dict[str, Any]:
    thread: ThreadRow = details.thread
    member = thread.sender
    return {
        "id": thread.id,
        "application_id": thread.application_id,
        "email": member.email,
        "name": member.name,
        "avatar": avatar_url(settings.base_url, settings.secret_key, member.email, member.name),
        "message": thread.message,
        "permalink": permalink(settings, thread.application_id, thread.id),
        "sentiment": thread.sentiment,
        "member": member_json(member),
        "attachments": [attachment_json(a, settings) for a in details.attachments],
        "is_anonymous": False,
        "can_reply": True,
        "archived": thread.archived,
        "first_reply_time": thread.first_reply_time,
        "last_reply_time": timestamp(thread.last_reply_at),
        "ip_address": thread.ip_address,
        "user_agent": thread.user_agent,
        "properties": thread.properties,
        "tags": [tag.name for tag in details.tags],
        "nps": thread.nps,
        "url": thread.url,
        "language": thread.language,
        "assignee": None if thread.assignee is None else user_json(thread.assignee),
        "created_at": timestamp(thread.created_at),
        "updated_at": timestamp(thread.updated_at),
        "replies": [
            reply_json(reply, details.reply_attachments.get(reply.id, []), settings, member)
            for reply in details.replies
        ],
    }


def summary_reads() -> int:
    """How many of a text's first characters its summary depends on: cut from those alone, any
    text is summarized as it is whole, so a list need not read more of a long message."""
    return SUMMARY_LENGTH + 1


def _summary(text: str) -> str:
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "…"


def listed_reply_json(
    reply: ReplyRow, attachments: list[AttachmentRow], settings: Settings
) -> dict[str, Any]:
    """A reply as the application replies list shows it, with a summary of its thread."""
    thread = reply.thread
    body = reply_json(reply, attachments, settings, thread)
    body["feedback_id"] = thread.id
    body["feedback"] = {
        "id": thread.id,
        "email": thread.email,
        "message": _summary(thread.message),
        "sentiment": thread.sentiment,
        "archived": thread.archived,
        "created_at": timestamp(thread.created_at),
        "updated_at": timestamp(thread.updated_at),
    }
    return body


def tag_json(tag: TagRow) -> dict[str, Any]:
    return {
        "id": tag.id,
        "name": tag.name,
        "color": tag.color,
        "feedback_count": tag.open_count,
        "archived_feedback_count": tag.archived_count,
        "total_feedback_count": tag.open_count + tag.archived_count,
    }


def webhook_json(endpoint: EndpointRow, now: datetime | None = None) -> dict[str, Any]:
    """A webhook endpoint, without its secret (shown only by the answers that make one)."""
    moment = now or datetime.now(UTC)
    rotating = len(endpoint.secrets(moment)) > 1
    return {
        "id": endpoint.id,
        "application_id": endpoint.application_id,
        "organization_id": endpoint.organization_id,
        "url": endpoint.url,
        "description": endpoint.description,
        "events": list(endpoint.events),
        "include_notes": endpoint.include_notes,
        "format": endpoint.format,
        "enabled": endpoint.enabled,
        "disabled_reason": endpoint.disabled_reason,
        "failing_since": timestamp(endpoint.failing_since),
        "secret_rotated_until": timestamp(endpoint.previous_secret_expires_at) if rotating else None,
        "created_at": timestamp(endpoint.created_at),
        "updated_at": timestamp(endpoint.updated_at),
    }


def attempt_json(attempt: AttemptRow) -> dict[str, Any]:
    """One try of a delivery, as its log keeps it (headers as ``Name: value`` lines)."""
    return {
        "attempted_at": timestamp(attempt.attempted_at),
        "duration_ms": attempt.duration_ms,
        "status_code": attempt.status_code,
        "error": attempt.error,
        "request_headers": attempt.request_headers,
        "response_headers": attempt.response_headers,
        "response_body": attempt.response_body,
    }


def delivery_json(delivery: DeliveryRow, attempts: Sequence[AttemptRow]) -> dict[str, Any]:
    """A delivery of an event to an endpoint, with the event's body and every attempt."""
    waiting = delivery.status in ("pending", "sending")
    return {
        "id": delivery.id,
        "webhook_id": delivery.endpoint_id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type,
        "message_id": delivery.message_id,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "next_attempt_at": timestamp(delivery.next_attempt_at) if waiting else None,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "delivered_at": timestamp(delivery.delivered_at),
        "created_at": timestamp(delivery.created_at),
        "payload": json.loads(delivery.payload),
        "attempt_log": [attempt_json(attempt) for attempt in attempts],
    }


def saved_reply_json(saved: SavedReplyRow) -> dict[str, Any]:
    """A saved reply, its placeholders as typed."""
    return {
        "id": saved.id,
        "application_id": saved.application_id,
        "organization_id": saved.organization_id,
        "title": saved.title,
        "text": saved.text,
        "created_at": timestamp(saved.created_at),
        "updated_at": timestamp(saved.updated_at),
    }


def filled_reply_json(saved: SavedReplyRow, text: str, feedback_id: int) -> dict[str, Any]:
    """A saved reply's text filled for one thread, ready to send as a reply."""
    return {"id": saved.id, "feedback_id": feedback_id, "title": saved.title, "text": text}
