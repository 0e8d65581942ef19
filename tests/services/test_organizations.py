"""Roles in organizations: who creates, removes, promotes and demotes, and the last owner."""

from __future__ import annotations

import asyncio
import re

import pytest

from app.errors import DomainError, Forbidden, NotFound, ValidationError
from app.models import Membership, Organization, User
from app.services.organizations import (
    LAST_OWNER,
    OWNERS_ONLY,
    add_member,
    change_role,
    check_can_move_application,
    create_organization,
    remove_member,
)
from tests.factories import make_organization, make_user


async def roles(organization: Organization) -> dict[str, str]:
    """Each member's e-mail address and role."""
    rows = await Membership.filter(organization_id=organization.id).values_list("user__email", "role")
    return dict(rows)


@pytest.fixture
async def ann(db: str) -> User:
    return await make_user(email="ann@example.com", name="Ann")


@pytest.fixture
async def bob(db: str) -> User:
    return await make_user(email="bob@example.com", name="Bob")


@pytest.fixture
async def cid(db: str) -> User:
    return await make_user(email="cid@example.com", name="Cid")


# Creating


async def test_creating_makes_the_first_member_the_owner_and_the_others_agents(ann, bob, cid):
    organization = await create_organization("Acme", [ann, bob, cid])

    assert await roles(organization) == {
        "ann@example.com": "owner",
        "bob@example.com": "agent",
        "cid@example.com": "agent",
    }


async def test_creating_with_owners_makes_them_owners_and_the_members_agents(ann, bob, cid):
    organization = await create_organization("Acme", [bob], owners=[ann, cid])

    assert await roles(organization) == {
        "ann@example.com": "owner",
        "bob@example.com": "agent",
        "cid@example.com": "owner",
    }


async def test_a_user_named_as_owner_and_member_is_an_owner_once(ann, bob):
    organization = await create_organization("Acme", [bob, ann], owners=[ann])

    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "agent"}


# Adding members (the surfaces invite instead: tests/services/test_invitations.py)


async def test_adding_a_member_makes_them_an_agent(ann, bob):
    organization = await make_organization(ann)

    await add_member(organization, bob)

    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "agent"}


async def test_adding_an_owner_again_keeps_their_role(ann):
    organization = await make_organization(ann)

    await add_member(organization, ann)

    assert await roles(organization) == {"ann@example.com": "owner"}


# Removing members and leaving


async def test_an_owner_removes_another_member(ann, bob):
    organization = await make_organization(ann, bob)

    await remove_member(ann, organization, bob.id)

    assert await roles(organization) == {"ann@example.com": "owner"}


async def test_an_owner_removes_another_owner(ann, bob):
    organization = await make_organization(owners=(ann, bob))

    await remove_member(ann, organization, bob.id)

    assert await roles(organization) == {"ann@example.com": "owner"}


async def test_an_agent_cannot_remove_another_member(ann, bob, cid):
    organization = await make_organization(ann, bob, cid)

    for target in (ann, cid):
        with pytest.raises(Forbidden, match=re.escape(OWNERS_ONLY)):
            await remove_member(bob, organization, target.id)

    assert set(await roles(organization)) == {ann.email, bob.email, cid.email}


async def test_an_agent_may_leave(ann, bob):
    organization = await make_organization(ann, bob)

    await remove_member(bob, organization, bob.id)

    assert await roles(organization) == {"ann@example.com": "owner"}


async def test_an_owner_may_leave_when_another_owner_remains(ann, bob):
    organization = await make_organization(owners=(ann, bob))

    await remove_member(ann, organization, ann.id)

    assert await roles(organization) == {"bob@example.com": "owner"}


async def test_the_last_owner_cannot_leave(ann, bob):
    organization = await make_organization(ann, bob)

    with pytest.raises(ValidationError, match=re.escape(LAST_OWNER)):
        await remove_member(ann, organization, ann.id)

    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "agent"}


async def test_the_only_member_cannot_leave(ann):
    organization = await make_organization(ann)

    with pytest.raises(ValidationError, match=re.escape(LAST_OWNER)):
        await remove_member(ann, organization, ann.id)

    assert await roles(organization) == {"ann@example.com": "owner"}


async def test_a_non_member_cannot_remove_a_member(ann, bob):
    organization = await make_organization(ann)

    with pytest.raises(NotFound, match="Invalid organization"):
        await remove_member(bob, organization, ann.id)

    assert await roles(organization) == {"ann@example.com": "owner"}


# Roles


async def test_an_owner_promotes_an_agent(ann, bob):
    organization = await make_organization(ann, bob)

    promoted = await change_role(ann, organization, bob.id, "owner")

    assert promoted.id == bob.id
    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "owner"}


async def test_an_owner_demotes_another_owner(ann, bob):
    organization = await make_organization(owners=(ann, bob))

    await change_role(ann, organization, bob.id, "agent")

    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "agent"}


async def test_an_owner_may_step_down_when_another_owner_remains(ann, bob):
    organization = await make_organization(owners=(ann, bob))

    await change_role(ann, organization, ann.id, "agent")

    assert await roles(organization) == {"ann@example.com": "agent", "bob@example.com": "owner"}


async def test_the_last_owner_cannot_be_demoted(ann, bob):
    organization = await make_organization(ann, bob)

    with pytest.raises(ValidationError, match=re.escape(LAST_OWNER)):
        await change_role(ann, organization, ann.id, "agent")

    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "agent"}


async def test_an_agent_cannot_change_roles_not_even_their_own(ann, bob, cid):
    organization = await make_organization(ann, bob, cid)

    for target, role in ((bob, "owner"), (cid, "owner"), (ann, "agent")):
        with pytest.raises(Forbidden, match=re.escape(OWNERS_ONLY)):
            await change_role(bob, organization, target.id, role)

    assert await roles(organization) == {
        "ann@example.com": "owner",
        "bob@example.com": "agent",
        "cid@example.com": "agent",
    }


@pytest.mark.parametrize("role", ["admin", "", "Owner"])
async def test_an_unknown_role_is_refused(ann, bob, role):
    organization = await make_organization(ann, bob)

    with pytest.raises(ValidationError, match=r"The selected role is invalid\."):
        await change_role(ann, organization, bob.id, role)

    assert await roles(organization) == {"ann@example.com": "owner", "bob@example.com": "agent"}


async def test_the_role_of_a_non_member_cannot_change(ann, bob):
    organization = await make_organization(ann)

    with pytest.raises(ValidationError, match="not a member"):
        await change_role(ann, organization, bob.id, "owner")

    assert await roles(organization) == {"ann@example.com": "owner"}


async def test_a_non_member_cannot_change_roles(ann, bob):
    organization = await make_organization(ann)

    with pytest.raises(NotFound, match="Invalid organization"):
        await change_role(bob, organization, bob.id, "owner")

    assert await roles(organization) == {"ann@example.com": "owner"}


# Races: the organization's row is written first, so concurrent changes queue behind each other.


async def _together(*changes) -> list[BaseException | None]:
    results = await asyncio.gather(*changes, return_exceptions=True)
    return [result if isinstance(result, BaseException) else None for result in results]


async def test_two_owners_leaving_at_once_leave_one_owner(ann, bob):
    for attempt in range(5):
        organization = await make_organization(owners=(ann, bob), name=f"Race {attempt}")

        failures = await _together(
            remove_member(ann, organization, ann.id), remove_member(bob, organization, bob.id)
        )

        assert sum(isinstance(failure, DomainError) for failure in failures) == 1, failures
        assert list((await roles(organization)).values()) == ["owner"]


async def test_two_owners_stepping_down_at_once_leave_one_owner(ann, bob):
    for attempt in range(5):
        organization = await make_organization(owners=(ann, bob), name=f"Race {attempt}")

        failures = await _together(
            change_role(ann, organization, ann.id, "agent"), change_role(bob, organization, bob.id, "agent")
        )

        assert sum(isinstance(failure, DomainError) for failure in failures) == 1, failures
        assert sorted((await roles(organization)).values()) == ["agent", "owner"]


# Moving applications


async def test_moving_an_application_takes_an_owner_at_both_ends(ann, bob):
    first = await make_organization(ann, bob, name="First")
    second = await make_organization(bob, ann, name="Second")

    await check_can_move_application(ann, None, first.id)
    with pytest.raises(Forbidden, match=re.escape(OWNERS_ONLY)):
        await check_can_move_application(ann, None, second.id)
    with pytest.raises(Forbidden, match=re.escape(OWNERS_ONLY)):
        await check_can_move_application(ann, first.id, second.id)
    with pytest.raises(Forbidden, match=re.escape(OWNERS_ONLY)):
        await check_can_move_application(ann, second.id, None)
    with pytest.raises(Forbidden, match=re.escape(OWNERS_ONLY)):
        await check_can_move_application(ann, second.id, first.id)


async def test_moving_an_application_into_a_foreign_organization_is_invalid_organization(ann, bob):
    foreign = await make_organization(bob)

    with pytest.raises(NotFound, match="Invalid organization"):
        await check_can_move_application(ann, None, foreign.id)
