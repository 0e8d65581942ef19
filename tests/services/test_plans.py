"""Plans: an application's is its organization's, else its owner's; only team includes notes."""

from __future__ import annotations

import pytest

from app.errors import NotFound, ValidationError
from app.services.plans import (
    includes_internal_notes,
    plan_of_application,
    set_organization_plan,
    set_user_plan,
)
from tests.factories import application_row, make_application, make_organization, make_user


async def test_a_personal_application_has_its_owners_plan(db):
    owner = await make_user(plan="team")
    application = await make_application(owner)

    assert await plan_of_application(application) == "team"
    assert await includes_internal_notes(application)


async def test_an_organizations_application_has_the_organizations_plan(db):
    owner = await make_user(plan="team")
    organization = await make_organization(owner, plan="free")
    application = await make_application(owner, organization_id=organization.id)

    assert await plan_of_application(application) == "free"
    assert not await includes_internal_notes(application)


async def test_plans_are_changed_for_users_and_organizations(db):
    owner = await make_user()
    organization = await make_organization(owner)
    personal = await make_application(owner)
    shared = await make_application(owner, organization_id=organization.id)

    await set_user_plan(owner.email.upper(), "team")
    await set_organization_plan(organization.id, "team")

    assert await plan_of_application(await application_row(personal.id)) == "team"
    assert await plan_of_application(await application_row(shared.id)) == "team"


async def test_unknown_plans_and_owners_are_refused(db):
    with pytest.raises(ValidationError, match="Unknown plan"):
        await set_user_plan("nobody@example.com", "gold")
    with pytest.raises(NotFound):
        await set_user_plan("nobody@example.com", "team")
    with pytest.raises(NotFound):
        await set_organization_plan(999_999, "team")
