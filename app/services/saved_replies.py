"""Saved replies: who may manage them, what they may hold, and their placeholders.

A saved reply belongs to an application or to an organization. An application's saved replies
are managed by every agent who sees the application (its creator and the members of its
organization), as its replies and tags are: they are the team's shared answers, and nothing
in them reaches a customer until an agent sends it. An organization's saved replies are offered
in the reply box of every application of the organization, to every member; only its owners
create, change and delete them, since they speak for the whole organization. A member who is
not an owner gets 403 for those changes; anyone else is told the organization does not exist.

The text keeps its placeholders; :func:`fill` replaces ``{name}``, ``{email}`` and
``{application}`` with the thread's sender and the application's name when the reply is
inserted. Any other text in braces is left as typed, and the values are text (the customer's
name is data, never markup: surfaces escape it like any text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from app.db import transactional
from app.errors import Forbidden, NotFound, ValidationError
from app.models import OWNER
from app.repositories import saved_replies, threads
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.saved_replies import SavedReplyRow
from app.repositories.threads import ThreadRow
from app.services.organizations import OWNERS_ONLY, role_of
from app.services.replies import MAX_REPLY_LENGTH

MAX_TITLE = 100
MAX_TEXT = MAX_REPLY_LENGTH
MAX_SAVED_REPLIES = 200  # per application and per organization
INVALID_SAVED_REPLY = "Invalid saved reply"
PLACEHOLDERS = ("name", "email", "application")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@dataclass(frozen=True)
class Scope:
    """Where saved replies live, as one user sees them: an application, or an organization.

    ``may_manage``: whether that user may create, change and delete them there.
    """

    application: ApplicationRow | None = None
    organization_id: int | None = None
    may_manage: bool = True


def application_scope(application: ApplicationRow) -> Scope:
    """An application's saved replies, for any agent who sees the application (look it up as
    the user with :func:`app.services.applications.get_application`)."""
    return Scope(application=application)


async def organization_scope(user: UserRow, organization_id: int) -> Scope:
    """An organization's saved replies: every member reads them, owners manage them; anyone
    else gets 'Invalid organization'."""
    role = await role_of(user.id, organization_id)
    if role is None:
        raise NotFound("Invalid organization")
    return Scope(organization_id=organization_id, may_manage=role == OWNER)


def _check_manager(scope: Scope) -> None:
    if not scope.may_manage:
        raise Forbidden(OWNERS_ONLY)


def _owner(scope: Scope) -> tuple[int | None, int | None]:
    """The (application id, organization id) pair a scope's rows carry."""
    if scope.application is not None:
        return scope.application.id, None
    return None, scope.organization_id


async def list_saved_replies(scope: Scope) -> list[SavedReplyRow]:
    """The scope's saved replies, by title."""
    if scope.application is not None:
        return await saved_replies.saved_replies_of_application(scope.application.id)
    assert scope.organization_id is not None
    return await saved_replies.saved_replies_of_organization(scope.organization_id)


async def get_saved_reply(scope: Scope, saved_reply_id: int) -> SavedReplyRow:
    """One saved reply of the scope; any other id is 'Invalid saved reply'."""
    found = await saved_replies.saved_reply_by_id(saved_reply_id)
    if found is None or (found.application_id, found.organization_id) != _owner(scope):
        raise NotFound(INVALID_SAVED_REPLY)
    return found


def _text_field(data: Mapping[str, object], name: str, maximum: int) -> str:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise ValidationError("The %(name)s field must be a string.", name=name)
    text = (value or "").strip()
    if not text:
        raise ValidationError("The %(name)s field is required.", name=name)
    if len(text) > maximum:
        raise ValidationError(
            "The %(name)s field must not be greater than %(max)d characters.", name=name, max=maximum
        )
    return text


def clean_title(data: Mapping[str, object]) -> str:
    """The title: required, at most MAX_TITLE characters, on one line (whitespace collapsed)."""
    return " ".join(_text_field(data, "title", MAX_TITLE).split())


def clean_text(data: Mapping[str, object]) -> str:
    """The text: required, at most MAX_TEXT characters, kept as typed (placeholders included)."""
    return _text_field(data, "text", MAX_TEXT)


async def create_saved_reply(user: UserRow, scope: Scope, data: Mapping[str, object]) -> SavedReplyRow:
    """A new saved reply of the scope, from ``title`` and ``text``; at most MAX_SAVED_REPLIES
    in one application or organization."""
    _check_manager(scope)
    title, text = clean_title(data), clean_text(data)
    return await _insert(user, scope, title, text)


@transactional
async def _insert(user: UserRow, scope: Scope, title: str, text: str) -> SavedReplyRow:
    application_id, organization_id = _owner(scope)
    if await saved_replies.count_saved_replies(application_id, organization_id) >= MAX_SAVED_REPLIES:
        raise ValidationError(
            "There must not be more than %(max)d saved replies here.", max=MAX_SAVED_REPLIES
        )
    new_id = await saved_replies.insert_saved_reply(
        application_id, organization_id, title, text, user.id, datetime.now(UTC)
    )
    found = await saved_replies.saved_reply_by_id(new_id)
    assert found is not None  # written just now
    return found


async def update_saved_reply(scope: Scope, saved: SavedReplyRow, data: Mapping[str, object]) -> SavedReplyRow:
    """Change the ``title`` and/or ``text`` sent; the other keeps its value."""
    _check_manager(scope)
    title = clean_title(data) if "title" in data else saved.title
    text = clean_text(data) if "text" in data else saved.text
    return await _update(saved, title, text)


@transactional
async def _update(saved: SavedReplyRow, title: str, text: str) -> SavedReplyRow:
    await saved_replies.update_saved_reply(saved.id, title, text, datetime.now(UTC))
    found = await saved_replies.saved_reply_by_id(saved.id)
    if found is None:  # deleted meanwhile
        raise NotFound(INVALID_SAVED_REPLY)
    return found


async def delete_saved_reply(scope: Scope, saved: SavedReplyRow) -> None:
    """Delete a saved reply (replies sent with its text keep it)."""
    _check_manager(scope)
    await _delete(saved.id)


@transactional
async def _delete(saved_reply_id: int) -> None:
    await saved_replies.delete_saved_reply(saved_reply_id)


async def saved_replies_for(application: ApplicationRow) -> list[SavedReplyRow]:
    """The saved replies the reply box of an application offers: its own and its
    organization's, by title."""
    return await saved_replies.saved_replies_for(application.id, application.organization_id)


async def organization_replies_for(application: ApplicationRow) -> list[SavedReplyRow]:
    """The saved replies the application's organization offers in its reply box, by title: for
    whoever sees the application, member of the organization or not (its creator may not be)."""
    if application.organization_id is None:
        return []
    return await saved_replies.saved_replies_of_organization(application.organization_id)


async def saved_reply_for(application: ApplicationRow, saved_reply_id: int) -> SavedReplyRow:
    """One saved reply the application's reply box offers; any other id is 'Invalid saved reply'."""
    found = await saved_replies.saved_reply_by_id(saved_reply_id)
    if found is None or not (
        found.application_id == application.id
        or (found.organization_id is not None and found.organization_id == application.organization_id)
    ):
        raise NotFound(INVALID_SAVED_REPLY)
    return found


def fill(text: str, name: str, email: str, application_name: str) -> str:
    """``text`` with its placeholders filled, in one pass: a value that holds a placeholder
    (a customer named "{email}") stays as it is. ``{name}`` is the sender's name, or their
    address when the thread has no name."""
    values = {"name": name or email, "email": email, "application": application_name}
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)


@dataclass(frozen=True)
class FilledReply:
    """A saved reply and its text filled for one thread."""

    saved: SavedReplyRow
    text: str


async def fill_for_thread(application: ApplicationRow, thread: ThreadRow, saved_reply_id: int) -> FilledReply:
    """A saved reply the thread's application offers, filled with the thread's sender and the
    application (look the application and the thread up as the user first)."""
    saved = await saved_reply_for(application, saved_reply_id)
    sender = thread.member or await threads.sender_by_id(thread.member_id)
    assert sender is not None  # a thread's sender exists (foreign key)
    return FilledReply(saved, fill(saved.text, sender.name, sender.email, application.name))
