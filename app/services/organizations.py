"""Organizations and their members."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from tortoise.functions import Count
from tortoise.models import Model

from app.db import atomic
from app.errors import NotFound, ValidationError
from app.models import Application, Membership, Organization, User
from app.services.plans import check_plan_name
from app.services.validation import normalize_email


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


@dataclass(frozen=True)
class OrganizationSummary:
    """An organization with the sizes shown on its card."""

    organization: Organization
    member_count: int
    application_count: int


async def _counts_by_organization(model: type[Model], ids: list[int]) -> dict[int, int]:
    rows = (
        await model.filter(organization_id__in=ids)
        .annotate(total=Count("id"))
        .group_by("organization_id")
        .values_list("organization_id", "total")
    )
    return {organization_id: total for organization_id, total in rows}


async def summarize_organizations(user: User) -> list[OrganizationSummary]:
    """The user's organizations with member and application counts (three queries in all)."""
    organizations = await list_organizations(user)
    ids = [organization.id for organization in organizations]
    if not ids:
        return []
    members = await _counts_by_organization(Membership, ids)
    applications = await _counts_by_organization(Application, ids)
    return [OrganizationSummary(o, members.get(o.id, 0), applications.get(o.id, 0)) for o in organizations]


async def list_members(organization: Organization) -> list[User]:
    """The members of an organization, by name."""
    return await User.filter(memberships__organization_id=organization.id).order_by("name", "id")


async def organization_applications(organization: Organization) -> list[Application]:
    """The applications that belong to an organization, by name."""
    return await Application.filter(organization_id=organization.id).order_by("name", "id")


async def add_member_by_email(organization: Organization, email: str) -> User:
    """Add the Earful user with this address to the organization; returns that user."""
    address = normalize_email(email)
    user = await User.get_or_none(email=address) if address else None
    if user is None:
        raise ValidationError("No Earful user has the address %(email)s.", email=email.strip())
    await add_member(organization, user)
    return user


async def remove_member_keeping_one(organization: Organization, user_id: int) -> None:
    """Remove a member, refusing to leave the organization without members.

    Writes first (touching the organization locks its row on PostgreSQL and takes the write
    lock on SQLite), so two members leaving at once cannot both pass the check.
    """

    async def work() -> None:
        await Organization.filter(id=organization.id).update(updated_at=datetime.now(UTC))
        removed = await Membership.filter(organization_id=organization.id, user_id=user_id).delete()
        if removed and not await Membership.exists(organization_id=organization.id):
            raise ValidationError(
                "An organization needs at least one member: add someone else before leaving."
            )

    await atomic(work)
