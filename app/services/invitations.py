"""Invitations: nobody joins an organization without accepting.

An owner invites an e-mail address (whether or not it has an Earful account) with a role. The
invitation is a link with an unguessable token (256 random bits); only the token's SHA-256
digest is stored, so the link cannot be read back from the database or shown twice. When
EARFUL_SMTP_URL is set the link is e-mailed to the address through the outbox, in the
invitation's transaction; otherwise the owner copies it from the answer that made it (the web
app shows it once, the API returns it once).

The link works once, for ``LIFETIME`` (7 days), until an owner revokes it. Inviting an address
again replaces its pending invitation (the older link stops working), so a lost link is
replaced by inviting again. An organization has at most ``MAX_PENDING`` pending invitations.

Accepting: a person with an account signs in with the invited address and accepts (signed in
as another address, the link does not work for them); a new person chooses a name and a
password on the link's page, which creates the account, and is signed in. Either way the
membership and the spent invitation are written in one transaction, which first writes the
organization's row, as every change to the members does (see
:mod:`app.services.organizations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.config import Settings
from app.db import transactional
from app.errors import DomainError, Forbidden, NotFound, ValidationError
from app.links import invitation_path
from app.models import AGENT
from app.repositories import accounts, invitations, organizations
from app.repositories.accounts import EmailTaken, UserRow
from app.repositories.invitations import InvitationRow
from app.repositories.organizations import OrganizationRow
from app.services import notifications
from app.services.deployment import current_settings
from app.services.organizations import check_owner, check_role_name, members_changed
from app.services.security import hash_password, random_token, sha256_hex
from app.services.users import check_new_password
from app.services.validation import normalize_email

LIFETIME = timedelta(days=7)
MAX_PENDING = 100
INVALID_INVITATION = "Invalid invitation"
INVALID_LINK = "This invitation link is not valid."


class InvitationClosed(DomainError):
    """An invitation's link that worked once: accepted, revoked or expired (410 Gone)."""

    status = 410


@dataclass(frozen=True)
class NewInvitation:
    """An invitation just made, with its link (shown this once) and whether it was e-mailed."""

    invitation: InvitationRow
    url: str
    emailed: bool


def invitation_url(settings: Settings, token: str) -> str:
    """The link of an invitation, on the deployment's public address."""
    return settings.base_url + invitation_path(token)


def state_of(invitation: InvitationRow, now: datetime | None = None) -> str:
    """``pending``, ``accepted``, ``revoked`` or ``expired``."""
    if invitation.accepted_at is not None:
        return "accepted"
    if invitation.revoked_at is not None:
        return "revoked"
    return "pending" if invitation.pending(now or datetime.now(UTC)) else "expired"


def check_email(value: object) -> str:
    """The invited address, normalized, or the management API's validation error."""
    address = normalize_email(value) if isinstance(value, str) else None
    if address is None:
        raise ValidationError("The email field must be a valid email address.")
    return address


async def invite(
    actor: UserRow, organization: OrganizationRow, email: object, role: object = AGENT
) -> NewInvitation:
    """Invite an address to the organization with a role (owners only); the link is e-mailed
    when e-mail goes out. An address that has a pending invitation gets a new one instead."""
    address = check_email(email)
    chosen = check_role_name(role if isinstance(role, str) else "")
    token = random_token(32)
    settings = current_settings()
    url = invitation_url(settings, token)
    invitation_id = await _write_invitation(actor, organization, address, chosen, sha256_hex(token), url)
    invitation = await invitations.invitation_by_id(organization.id, invitation_id)
    assert invitation is not None  # committed just now
    return NewInvitation(invitation, url, settings.smtp_url is not None)


@transactional
async def _write_invitation(
    actor: UserRow, organization: OrganizationRow, email: str, role: str, token_hash: str, url: str
) -> int:
    now = datetime.now(UTC)
    await organizations.touch_organization(organization.id, now)
    await check_owner(actor, organization.id)
    if await organizations.member_with_email(organization.id, email):
        raise ValidationError("%(email)s is a member of the organization already.", email=email)
    await invitations.revoke_pending_for(organization.id, email, now)
    if await invitations.count_pending(organization.id, now, MAX_PENDING) >= MAX_PENDING:
        raise ValidationError(
            "The organization has %(max)d pending invitations: revoke some first.", max=MAX_PENDING
        )
    invitation_id = await invitations.insert_invitation(
        organization.id, email, role, token_hash, actor.id, now, now + LIFETIME
    )
    await notifications.queue_invitation(organization, actor, email, role, url, now + LIFETIME, now)
    return invitation_id


async def list_pending(actor: UserRow, organization: OrganizationRow) -> list[InvitationRow]:
    """The organization's pending invitations, newest first (owners only)."""
    await check_owner(actor, organization.id)
    return await invitations.pending_of_organization(organization.id, datetime.now(UTC))


@transactional
async def revoke(actor: UserRow, organization: OrganizationRow, invitation_id: int) -> None:
    """Revoke a pending invitation (owners only): its link stops working. One that is not
    pending (accepted, revoked, expired) or not the organization's is 'Invalid invitation'."""
    now = datetime.now(UTC)
    await organizations.touch_organization(organization.id, now)
    await check_owner(actor, organization.id)
    if not await invitations.revoke(organization.id, invitation_id, now):
        raise NotFound(INVALID_INVITATION)


# Accepting --------------------------------------------------------------------------------------


async def find(token: str) -> InvitationRow:
    """The invitation of a link, whatever became of it; a token that names none is not valid."""
    found = await invitations.invitation_by_token_hash(sha256_hex(token)) if token else None
    if found is None:
        raise NotFound(INVALID_LINK)
    return found


def check_open(invitation: InvitationRow, now: datetime | None = None) -> None:
    """Refuse a link that was accepted, revoked or has expired, saying which."""
    state = state_of(invitation, now)
    if state == "accepted":
        raise InvitationClosed("This invitation was accepted already.")
    if state == "revoked":
        raise InvitationClosed("This invitation was revoked. Ask an owner of the organization for a new one.")
    if state == "expired":
        raise InvitationClosed("This invitation has expired. Ask an owner of the organization for a new one.")


def check_addressee(user: UserRow, invitation: InvitationRow) -> None:
    """Only the invited address accepts: signed in as another one, the link does not work."""
    if user.email != invitation.email:
        raise Forbidden(
            "This invitation is for %(email)s. Sign in with that address to accept it.",
            email=invitation.email,
        )


async def account_exists(invitation: InvitationRow) -> bool:
    """Whether the invited address has an Earful account (it signs in to accept)."""
    return await accounts.user_by_email(invitation.email) is not None


async def accept(user: UserRow, token: str) -> OrganizationRow:
    """Accept an invitation as the signed-in user, who must have the invited address; returns
    the organization joined. A member already keeps their role."""
    invitation = await find(token)
    check_open(invitation)
    check_addressee(user, invitation)
    await _join(invitation, user)
    await members_changed(invitation.organization_id)
    assert invitation.organization is not None
    return invitation.organization


async def accept_with_new_account(token: str, name: object, password: str) -> tuple[UserRow, OrganizationRow]:
    """Accept an invitation by creating the invited address's account with a name and a
    password; returns the new user (to sign in) and the organization joined."""
    invitation = await find(token)
    check_open(invitation)
    if await account_exists(invitation):
        raise ValidationError("An account with this address exists already: sign in to accept.")
    chosen = name.strip() if isinstance(name, str) else ""
    if not chosen:
        raise ValidationError("The name field is required.")
    check_new_password(password)
    password_hash = hash_password(password)  # argon2 is slow on purpose: outside the transaction
    user = await _create_and_join(invitation, chosen[:200], password_hash)
    await members_changed(invitation.organization_id)
    assert invitation.organization is not None
    return user, invitation.organization


@transactional
async def _join(invitation: InvitationRow, user: UserRow) -> None:
    now = datetime.now(UTC)
    await organizations.touch_organization(invitation.organization_id, now)
    if not await invitations.mark_accepted(invitation.id, user.id, now):
        await _refuse_spent(invitation)
    await organizations.insert_memberships(invitation.organization_id, [(user.id, invitation.role)], now)


@transactional
async def _create_and_join(invitation: InvitationRow, name: str, password_hash: str) -> UserRow:
    now = datetime.now(UTC)
    await organizations.touch_organization(invitation.organization_id, now)
    try:
        user = await accounts.insert_user(invitation.email, name, password_hash, now)
    except EmailTaken:
        raise ValidationError("An account with this address exists already: sign in to accept.") from None
    if not await invitations.mark_accepted(invitation.id, user.id, now):
        await _refuse_spent(invitation)
    await organizations.insert_memberships(invitation.organization_id, [(user.id, invitation.role)], now)
    return user


async def _refuse_spent(invitation: InvitationRow) -> None:
    """The invitation stopped being pending since it was read: say what became of it."""
    again = await invitations.invitation_by_id(invitation.organization_id, invitation.id)
    if again is not None:
        check_open(again)
    raise InvitationClosed("This invitation has expired. Ask an owner of the organization for a new one.")
