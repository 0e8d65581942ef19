"""Organizations and their members."""

from __future__ import annotations

from collections.abc import Iterable

from app.db import atomic
from app.errors import NotFound, ValidationError
from app.models import Membership, Organization, User
from app.services.plans import check_plan_name


async def organization_ids_of(user: User) -> list[int]:
    """Ids of the organizations the user belongs to."""
    return await Membership.filter(user_id=user.id).values_list("organization_id", flat=True)


async def list_organizations(user: User) -> list[Organization]:
    """Organizations the user belongs to, in creation order."""
    return await Organization.filter(memberships__user_id=user.id).order_by("id")


async def get_organization(user: User, organization_id: int) -> Organization:
    """One organization the user belongs to; any other id is 'Invalid organization'."""
    organization = await Organization.filter(id=organization_id, memberships__user_id=user.id).first()
    if organization is None:
        raise NotFound("Invalid organization")
    return organization


async def create_organization(name: str, members: Iterable[User] = (), plan: str = "free") -> Organization:
    """Create an organization with its first members, in one transaction."""
    name = name.strip()
    if not name:
        raise ValidationError("The name field is required.")
    check_plan_name(plan)
    people = list({user.id: user for user in members}.values())

    async def work() -> Organization:
        organization = await Organization.create(name=name[:200], plan=plan)
        if people:
            await Membership.bulk_create([Membership(organization=organization, user=u) for u in people])
        return organization

    return await atomic(work)


async def add_member(organization: Organization, user: User) -> None:
    """Add a user to an organization (adding a member twice changes nothing)."""
    await Membership.bulk_create([Membership(organization=organization, user=user)], ignore_conflicts=True)


async def remove_member(organization: Organization, user: User) -> None:
    """Remove a user from an organization."""
    await Membership.filter(organization_id=organization.id, user_id=user.id).delete()
