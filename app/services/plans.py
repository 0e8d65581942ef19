"""Plans and what they include. A plan belongs to an organization or to a user."""

from __future__ import annotations

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.models import PLANS
from app.repositories import accounts, applications, organizations
from app.repositories.applications import ApplicationRow

PLANS_WITH_NOTES = frozenset({"team"})


async def plan_of_application(application: ApplicationRow) -> str:
    """Return the application's plan: its organization's, else its owner's."""
    plan = await applications.plan_of_application(application.organization_id, application.owner_id)
    return plan_or_free(plan)


def plan_or_free(plan: str | None) -> str:
    """A plan found, or "free" when its organization or user is gone."""
    return plan or "free"


async def includes_internal_notes(application: ApplicationRow) -> bool:
    """Tell whether the application's plan includes internal notes."""
    return notes_included(await plan_of_application(application))


def notes_included(plan: str) -> bool:
    """Tell whether a plan includes internal notes."""
    return plan in PLANS_WITH_NOTES


def check_plan_name(plan: str) -> str:
    """Validate a plan name."""
    if plan not in PLANS:
        raise ValidationError(
            "Unknown plan %(plan)s; choose one of: %(plans)s.", plan=plan, plans=", ".join(PLANS)
        )
    return plan


@transactional
async def set_organization_plan(organization_id: int, plan: str) -> None:
    """Put an organization on a plan."""
    check_plan_name(plan)
    if not await organizations.set_organization_plan(organization_id, plan):
        raise NotFound("Invalid organization")


@transactional
async def set_user_plan(email: str, plan: str) -> None:
    """Put a user's own applications on a plan."""
    check_plan_name(plan)
    if not await accounts.set_user_plan(email.strip().lower(), plan):
        raise NotFound("Unknown user %(email)s", email=email)
