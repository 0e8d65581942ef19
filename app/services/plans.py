"""Plans and what they include. A plan belongs to an organization or to a user."""

from __future__ import annotations

from app.errors import NotFound, ValidationError
from app.models import PLANS, Application, Organization, User

PLANS_WITH_NOTES = frozenset({"team"})


async def plan_of_application(application: Application) -> str:
    """Return the application's plan: its organization's, else its owner's."""
    if application.organization_id is not None:
        plan = await Organization.filter(id=application.organization_id).values_list("plan", flat=True)
    else:
        plan = await User.filter(id=application.owner_id).values_list("plan", flat=True)
    return plan[0] if plan else "free"


async def includes_internal_notes(application: Application) -> bool:
    """Tell whether the application's plan includes internal notes."""
    return await plan_of_application(application) in PLANS_WITH_NOTES


def check_plan_name(plan: str) -> str:
    """Validate a plan name."""
    if plan not in PLANS:
        raise ValidationError(
            "Unknown plan %(plan)s; choose one of: %(plans)s.", plan=plan, plans=", ".join(PLANS)
        )
    return plan


async def set_organization_plan(organization_id: int, plan: str) -> None:
    """Put an organization on a plan."""
    check_plan_name(plan)
    if not await Organization.filter(id=organization_id).update(plan=plan):
        raise NotFound("Invalid organization")


async def set_user_plan(email: str, plan: str) -> None:
    """Put a user's own applications on a plan."""
    check_plan_name(plan)
    if not await User.filter(email=email.strip().lower()).update(plan=plan):
        raise NotFound("Unknown user %(email)s", email=email)
