"""Organizations, their memberships and the members' roles."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from app.repositories.accounts import USER_COLUMNS, UserRow, user_of
from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    moment,
    parameters,
    read_moment,
    select,
    select_one,
)


@dataclass(slots=True)
class OrganizationRow:
    """A team that shares applications and whose plan applies to them."""

    id: int
    name: str
    plan: str
    created_at: datetime
    updated_at: datetime


@dataclass(slots=True)
class MembershipRow:
    """One of a user's memberships, with its organization."""

    id: int
    organization_id: int
    user_id: int
    role: str
    organization: OrganizationRow


@dataclass(slots=True)
class MemberRow:
    """One member of an organization, with the user."""

    id: int
    organization_id: int
    user_id: int
    role: str
    user: UserRow


ORGANIZATION_COLUMNS = ("id", "name", "plan", "created_at", "updated_at")
MEMBERSHIP_COLUMNS = ("id", "organization_id", "user_id", "role")


def organization_of(row: Row, alias: str = "o") -> OrganizationRow:
    return OrganizationRow(
        id=row[f"{alias}.id"],
        name=row[f"{alias}.name"],
        plan=row[f"{alias}.plan"],
        created_at=read_moment(row[f"{alias}.created_at"]),
        updated_at=read_moment(row[f"{alias}.updated_at"]),
    )


def _membership_of(row: Row) -> MembershipRow:
    return MembershipRow(
        row["m.id"], row["m.organization_id"], row["m.user_id"], row["m.role"], organization_of(row)
    )


def _member_of(row: Row) -> MemberRow:
    return MemberRow(row["m.id"], row["m.organization_id"], row["m.user_id"], row["m.role"], user_of(row))


async def organization_by_id(organization_id: int) -> OrganizationRow | None:
    row = await select_one(
        f"SELECT {columns('o', ORGANIZATION_COLUMNS)} FROM organizations o WHERE o.id = {{}}",
        [organization_id],
    )
    return None if row is None else organization_of(row)


async def insert_organization(name: str, plan: str, now: datetime) -> OrganizationRow:
    rows = await change_returning(
        "INSERT INTO organizations (name, plan, created_at, updated_at) VALUES ({}, {}, {}, {}) RETURNING id",
        [name, plan, moment(now), moment(now)],
    )
    return OrganizationRow(rows[0]["id"], name, plan, now, now)


async def insert_memberships(organization_id: int, roles: Sequence[tuple[int, str]], now: datetime) -> None:
    """Make users members with their roles; a user who is a member already keeps their role."""
    if not roles:
        return
    suffix = " ON CONFLICT (organization_id, user_id) DO NOTHING"
    groups = ", ".join("({}, {}, {}, {})" for _ in roles)
    values: list[object] = []
    for user_id, role in roles:
        values += [organization_id, user_id, role, moment(now)]
    await change(
        f"INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES {groups}{suffix}",
        values,
    )


async def touch_organization(organization_id: int, now: datetime) -> None:
    """Write the organization's row: the lock that serializes changes to its members."""
    await change("UPDATE organizations SET updated_at = {} WHERE id = {}", [moment(now), organization_id])


async def role_of(user_id: int, organization_id: int) -> str | None:
    row = await select_one(
        "SELECT role FROM memberships WHERE organization_id = {} AND user_id = {}", [organization_id, user_id]
    )
    return None if row is None else str(row["role"])


_MEMBERSHIPS_WITH_ORGANIZATIONS = (
    f"SELECT {columns('m', MEMBERSHIP_COLUMNS)}, {columns('o', ORGANIZATION_COLUMNS)} "
    "FROM memberships m JOIN organizations o ON o.id = m.organization_id"
)


async def memberships_of(user_id: int) -> list[MembershipRow]:
    """The user's memberships with their organizations, in the organizations' creation order."""
    rows = await select(
        _MEMBERSHIPS_WITH_ORGANIZATIONS + " WHERE m.user_id = {} ORDER BY m.organization_id", [user_id]
    )
    return [_membership_of(row) for row in rows]


async def membership(user_id: int, organization_id: int) -> MembershipRow | None:
    """The user's membership of one organization, with the organization."""
    row = await select_one(
        _MEMBERSHIPS_WITH_ORGANIZATIONS + " WHERE m.user_id = {} AND m.organization_id = {}",
        [user_id, organization_id],
    )
    return None if row is None else _membership_of(row)


async def members(organization_id: int) -> list[MemberRow]:
    """The memberships of an organization with their users, by the users' names."""
    rows = await select(
        f"SELECT {columns('m', MEMBERSHIP_COLUMNS)}, {columns('u', USER_COLUMNS)} FROM memberships m "
        "JOIN users u ON u.id = m.user_id WHERE m.organization_id = {} ORDER BY u.name, u.id",
        [organization_id],
    )
    return [_member_of(row) for row in rows]


async def member(organization_id: int, user_id: int) -> MemberRow | None:
    """One membership with its user."""
    row = await select_one(
        f"SELECT {columns('m', MEMBERSHIP_COLUMNS)}, {columns('u', USER_COLUMNS)} FROM memberships m "
        "JOIN users u ON u.id = m.user_id WHERE m.organization_id = {} AND m.user_id = {}",
        [organization_id, user_id],
    )
    return None if row is None else _member_of(row)


async def member_with_email(organization_id: int, email: str) -> bool:
    """Whether the user with this (normalized) address is a member of the organization."""
    row = await select_one(
        "SELECT 1 AS one FROM memberships m JOIN users u ON u.id = m.user_id "
        "WHERE m.organization_id = {} AND u.email = {}",
        [organization_id, email],
    )
    return row is not None


async def other_owner_exists(organization_id: int, membership_id: int) -> bool:
    row = await select_one(
        "SELECT 1 AS one FROM memberships WHERE organization_id = {} AND role = 'owner' AND id <> {} LIMIT 1",
        [organization_id, membership_id],
    )
    return row is not None


async def delete_membership(membership_id: int) -> None:
    await change("DELETE FROM memberships WHERE id = {}", [membership_id])


async def set_role(membership_id: int, role: str) -> None:
    await change("UPDATE memberships SET role = {} WHERE id = {}", [role, membership_id])


async def counts_by_organization(
    table: Literal["memberships", "applications"], organization_ids: list[int]
) -> dict[int, int]:
    """How many members or applications each organization has."""
    if not organization_ids:
        return {}
    rows = await select(
        f"SELECT organization_id, COUNT(*) AS total FROM {table} "
        f"WHERE organization_id IN ({parameters(len(organization_ids))}) GROUP BY organization_id",
        organization_ids,
    )
    return {row["organization_id"]: int(row["total"]) for row in rows}


async def set_organization_plan(organization_id: int, plan: str) -> bool:
    return await change("UPDATE organizations SET plan = {} WHERE id = {}", [plan, organization_id]) > 0
