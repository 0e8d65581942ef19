"""Plans and what they include. A plan belongs to an organization or to a user."""

from __future__ import annotations

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.models import PLANS
from app.repositories import accounts, organizations
from app.repositories.applications import ApplicationRow

PLANS_WITH_NOTES = frozenset({"team"})


async def plan_of_application(application: ApplicationRow) -> str:
    """Return the application's plan: its organization's, else its owner's."""
    if application.organization_id is not None:
        plan = await organizations.plan_of_organization(application.organization_id)
    else:
        plan = await accounts.plan_of_user(application.owner_id)
    return plan or "free"


async def includes_internal_notes(application: ApplicationRow) -> bool:
    """Tell whether the application's plan includes internal notes."""
    return await plan_of_application(application) in PLANS_WITH_NOTES


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
