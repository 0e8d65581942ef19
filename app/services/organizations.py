"""Organizations, their members and the members' roles.

A member is an ``owner`` or an ``agent``. Owners manage the organization: they invite members
(:mod:`app.services.invitations`: nobody joins without accepting), remove others, change roles
and decide which applications belong to it (:func:`check_can_move_application`). Agents work
the inbox of its applications, like owners do: the settings, keys, replies and tags of those
applications stay open to every member. Any member may leave, except the last owner, who cannot
be removed or demoted either; an organization that has members always keeps an owner.

Every change to the members runs in one transaction that first writes the organization's row:
that locks the row on PostgreSQL (on SQLite the writers' queue already orders the changes), so
the role checks that follow read what the concurrent changes committed (two owners leaving at
once cannot both pass the last-owner check, a member demoted a moment ago cannot still add
someone). Once it has committed, the organization's applications are dropped from every
worker's caches (:func:`members_changed`): who may be assigned a thread is kept there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from app.db import transactional
from app.errors import Forbidden, NotFound, ValidationError
from app.models import AGENT, OWNER, ROLES
from app.repositories import applications, organizations
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.organizations import MemberRow, MembershipRow, OrganizationRow
from app.services.invalidation import application_changed
from app.services.plans import check_plan_name

OWNERS_ONLY = "Only an owner of the organization can do this."
LAST_OWNER = "An organization needs an owner: make another member an owner first."


async def list_memberships(user: UserRow) -> list[MembershipRow]:
    """The user's memberships with their organizations, in the organizations' creation order."""
    return await organizations.memberships_of(user.id)


async def get_membership(user: UserRow, organization_id: int) -> MembershipRow:
    """The user's membership of one organization, with the organization.

    An organization the user does not belong to is 'Invalid organization', like one that does not
    exist.
    """
    membership = await organizations.membership(user.id, organization_id)
    if membership is None:
        raise NotFound("Invalid organization")
    return membership


async def get_organization(user: UserRow, organization_id: int) -> OrganizationRow:
    """One organization the user belongs to; any other id is 'Invalid organization'."""
    return (await get_membership(user, organization_id)).organization


async def role_of(user_id: int, organization_id: int) -> str | None:
    """The user's role in the organization, None when the user is not a member."""
    return await organizations.role_of(user_id, organization_id)


async def check_owner(user: UserRow, organization_id: int) -> None:
    """Refuse unless the user is an owner of the organization (a non-member does not learn of it)."""
    role = await role_of(user.id, organization_id)
    if role is None:
        raise NotFound("Invalid organization")
    if role != OWNER:
        raise Forbidden(OWNERS_ONLY)


async def check_can_move_application(user: UserRow, from_id: int | None, to_id: int | None) -> None:
    """Refuse to move an application between organizations unless the user owns both ends.

    Putting an application into an organization shares it with every member, and taking it out
    takes it from them: both are decisions of the organizations' owners. An organization the user
    does not belong to is 'Invalid organization' when it is the destination; the one the
    application leaves is known to whoever sees the application, so not owning it is 403.
    """
    if to_id is not None:
        await check_owner(user, to_id)
    if from_id is not None and await role_of(user.id, from_id) != OWNER:
        raise Forbidden(OWNERS_ONLY)


def check_role_name(role: str) -> str:
    """Validate a role name."""
    if role not in ROLES:
        raise ValidationError("The selected role is invalid.")
    return role


async def create_organization(
    name: str, members: Iterable[UserRow] = (), plan: str = "free", owners: Iterable[UserRow] = ()
) -> OrganizationRow:
    """Create an organization with its first members, in one transaction.

    ``owners`` become its owners and the other ``members`` its agents; without owners, the first
    member is the owner, so that an organization created with members always has one
    (``earful org create --member A --member B`` makes A its owner and B an agent).
    """
    name = name.strip()
    if not name:
        raise ValidationError("The name field is required.")
    check_plan_name(plan)
    owners, members = list(owners), list(members)
    people = list({user.id: user for user in [*owners, *members]})
    owner_ids = {user.id for user in owners} or set(people[:1])
    return await _insert_organization(
        name[:200], plan, [(u, OWNER if u in owner_ids else AGENT) for u in people]
    )


@transactional
async def _insert_organization(name: str, plan: str, roles: list[tuple[int, str]]) -> OrganizationRow:
    now = datetime.now(UTC)
    organization = await organizations.insert_organization(name, plan, now)
    await organizations.insert_memberships(organization.id, roles, now)
    return organization


async def add_member(organization: OrganizationRow, user: UserRow, role: str = AGENT) -> None:
    """Add a user to an organization, whoever asks: no permission check here (the command line
    and the tests). People join through the surfaces only by accepting an invitation
    (:mod:`app.services.invitations`).

    Adding a member twice changes nothing, their role included.
    """
    check_role_name(role)
    await transactional(organizations.insert_memberships)(
        organization.id, [(user.id, role)], datetime.now(UTC)
    )
    await members_changed(organization.id)


async def remove_member(actor: UserRow, organization: OrganizationRow, user_id: int) -> None:
    """Remove a member: owners remove anyone, any member may leave; never the last owner."""
    await _remove_member(actor, organization, user_id)
    await members_changed(organization.id)


async def members_changed(organization_id: int) -> None:
    """Call after the commit of a change to an organization's members: its applications'
    agents are read again, here at once and with Redis in every worker
    (app.services.assignment)."""
    for application in await applications.applications_of_organization(organization_id):
        await application_changed(application.id)


@transactional
async def _remove_member(actor: UserRow, organization: OrganizationRow, user_id: int) -> None:
    await organizations.touch_organization(organization.id, datetime.now(UTC))
    if user_id != actor.id:
        await check_owner(actor, organization.id)
    target = await organizations.member(organization.id, user_id)
    if target is None:
        return
    if target.role == OWNER and not await organizations.other_owner_exists(organization.id, target.id):
        raise ValidationError(LAST_OWNER)
    await organizations.delete_membership(target.id)


@transactional
async def change_role(actor: UserRow, organization: OrganizationRow, user_id: int, role: str) -> UserRow:
    """Make a member an owner or an agent; owners only, and never demote the last owner.

    Returns the member.
    """
    check_role_name(role)
    await organizations.touch_organization(organization.id, datetime.now(UTC))
    await check_owner(actor, organization.id)
    target = await organizations.member(organization.id, user_id)
    if target is None:
        raise ValidationError("That user is not a member of the organization.")
    if (
        target.role == OWNER
        and role != OWNER
        and not await organizations.other_owner_exists(organization.id, target.id)
    ):
        raise ValidationError(LAST_OWNER)
    if target.role != role:
        await organizations.set_role(target.id, role)
    return target.user


@dataclass(frozen=True)
class OrganizationSummary:
    """An organization with the sizes shown on its card and the user's role there."""

    organization: OrganizationRow
    role: str
    member_count: int
    application_count: int


async def summarize_organizations(user: UserRow) -> list[OrganizationSummary]:
    """The user's organizations with their role, member and application counts (three queries)."""
    memberships = await list_memberships(user)
    ids = [membership.organization_id for membership in memberships]
    if not ids:
        return []
    members = await organizations.counts_by_organization("memberships", ids)
    owned = await organizations.counts_by_organization("applications", ids)
    return [
        OrganizationSummary(
            m.organization, m.role, members.get(m.organization_id, 0), owned.get(m.organization_id, 0)
        )
        for m in memberships
    ]


async def list_members(organization: OrganizationRow) -> list[MemberRow]:
    """The memberships of an organization with their users, by the users' names."""
    return await organizations.members(organization.id)


async def organization_applications(organization: OrganizationRow) -> list[ApplicationRow]:
    """The applications that belong to an organization, by name."""
    return await applications.applications_of_organization(organization.id)
