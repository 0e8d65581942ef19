"""Invitations to join an organization: written, listed, found by their token's digest, spent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.repositories.accounts import USER_COLUMNS, UserRow, optional_user_of
from app.repositories.organizations import ORGANIZATION_COLUMNS, OrganizationRow, organization_of
from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    moment,
    read_moment,
    read_optional_moment,
    select,
    select_one,
)


@dataclass(slots=True)
class InvitationRow:
    """An invitation, with its organization and the owner who sent it when read with them."""

    id: int
    organization_id: int
    email: str
    role: str
    invited_by_id: int | None
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None
    accepted_by_id: int | None
    revoked_at: datetime | None
    organization: OrganizationRow | None = None
    invited_by: UserRow | None = None

    def pending(self, now: datetime) -> bool:
        """Whether the link still works: neither accepted, revoked nor expired."""
        return self.accepted_at is None and self.revoked_at is None and now < self.expires_at


INVITATION_COLUMNS = (
    "id", "organization_id", "email", "role", "invited_by_id", "created_at", "expires_at", "accepted_at",
    "accepted_by_id", "revoked_at",
)  # fmt: skip
SELECT_INVITATIONS = (
    f"SELECT {columns('i', INVITATION_COLUMNS)}, {columns('o', ORGANIZATION_COLUMNS)}, "
    f"{columns('u', USER_COLUMNS)} FROM invitations i JOIN organizations o ON o.id = i.organization_id "
    "LEFT JOIN users u ON u.id = i.invited_by_id"
)
# Pending: not accepted, not revoked, not expired (the expiry is a parameter: now).
PENDING = "i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > {}"


def invitation_of(row: Row) -> InvitationRow:
    return InvitationRow(
        id=row["i.id"],
        organization_id=row["i.organization_id"],
        email=row["i.email"],
        role=row["i.role"],
        invited_by_id=row["i.invited_by_id"],
        created_at=read_moment(row["i.created_at"]),
        expires_at=read_moment(row["i.expires_at"]),
        accepted_at=read_optional_moment(row["i.accepted_at"]),
        accepted_by_id=row["i.accepted_by_id"],
        revoked_at=read_optional_moment(row["i.revoked_at"]),
        organization=organization_of(row),
        invited_by=optional_user_of(row),
    )


async def insert_invitation(
    organization_id: int,
    email: str,
    role: str,
    token_hash: str,
    invited_by_id: int,
    now: datetime,
    expires_at: datetime,
) -> int:
    """A new invitation; its id."""
    rows = await change_returning(
        "INSERT INTO invitations (organization_id, email, role, token_hash, invited_by_id, created_at, "
        "expires_at) VALUES ({}, {}, {}, {}, {}, {}, {}) RETURNING id",
        [organization_id, email, role, token_hash, invited_by_id, moment(now), moment(expires_at)],
    )
    return int(rows[0]["id"])


async def invitation_by_id(organization_id: int, invitation_id: int) -> InvitationRow | None:
    """One invitation of an organization, whatever became of it."""
    row = await select_one(
        SELECT_INVITATIONS + " WHERE i.id = {} AND i.organization_id = {}", [invitation_id, organization_id]
    )
    return None if row is None else invitation_of(row)


async def invitation_by_token_hash(token_hash: str) -> InvitationRow | None:
    """The invitation whose link's token has this digest, whatever became of it."""
    row = await select_one(SELECT_INVITATIONS + " WHERE i.token_hash = {}", [token_hash])
    return None if row is None else invitation_of(row)


async def pending_of_organization(organization_id: int, now: datetime) -> list[InvitationRow]:
    """The organization's pending invitations, newest first."""
    rows = await select(
        SELECT_INVITATIONS + f" WHERE i.organization_id = {{}} AND {PENDING} ORDER BY i.id DESC",
        [organization_id, moment(now)],
    )
    return [invitation_of(row) for row in rows]


async def count_pending(organization_id: int, now: datetime, most: int) -> int:
    """How many invitations of the organization are pending, counting no further than ``most``."""
    row = await select_one(
        "SELECT COUNT(*) AS found FROM (SELECT 1 FROM invitations i "
        f"WHERE i.organization_id = {{}} AND {PENDING} LIMIT {{}}) pending",
        [organization_id, moment(now), most],
    )
    return int(row["found"]) if row else 0


async def revoke_pending_for(organization_id: int, email: str, now: datetime) -> int:
    """Revoke the organization's pending invitations of one address; how many."""
    return await change(
        "UPDATE invitations SET revoked_at = {} WHERE organization_id = {} AND email = {} "
        "AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > {}",
        [moment(now), organization_id, email, moment(now)],
    )


async def revoke(organization_id: int, invitation_id: int, now: datetime) -> bool:
    """Revoke one pending invitation; False when it is not pending (or not the organization's)."""
    return (
        await change(
            "UPDATE invitations SET revoked_at = {} WHERE id = {} AND organization_id = {} "
            "AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > {}",
            [moment(now), invitation_id, organization_id, moment(now)],
        )
        > 0
    )


async def mark_accepted(invitation_id: int, user_id: int, now: datetime) -> bool:
    """Spend a pending invitation for a user; False when it was not pending any more (accepted
    at the same moment, revoked or expired), so a link works once."""
    return (
        await change(
            "UPDATE invitations SET accepted_at = {}, accepted_by_id = {} WHERE id = {} "
            "AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > {}",
            [moment(now), user_id, invitation_id, moment(now)],
        )
        > 0
    )
