"""Invitations: made by owners, accepted once by the invited address, revoked, expired."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from app.db import atomic
from app.errors import Forbidden, NotFound, ValidationError
from app.models import Invitation, Membership, OutboundEmail, User
from app.services import assignment, invitations
from app.services.invitations import InvitationClosed
from app.services.mail.outbox import deliver_due
from app.services.security import sha256_hex, verify_password
from tests.factories import make_application, make_organization, make_user


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


async def roles(organization) -> dict[int, str]:
    return dict(await Membership.filter(organization_id=organization.id).values_list("user_id", "role"))


@pytest.fixture
async def owner(db):
    return await make_user(email="olga@example.com", name="Olga Owner")


@pytest.fixture
async def organization(owner):
    return await make_organization(owner, name="Acme")


async def test_an_invitation_stores_only_a_digest_of_its_link(settings, owner, organization):
    made = await invitations.invite(owner, organization, " Carl@Example.com ", "agent")

    token = token_of(made.url)
    assert made.url == f"{settings.base_url}/app/invitations/{token}"
    assert len(token) >= 40
    row = await Invitation.get(id=made.invitation.id)
    assert row.token_hash == sha256_hex(token)
    assert token not in str(await Invitation.all().values())
    assert (made.invitation.email, made.invitation.role, made.emailed) == ("carl@example.com", "agent", False)
    lifetime = made.invitation.expires_at - made.invitation.created_at
    assert lifetime == timedelta(days=7)
    assert made.invitation.invited_by is not None and made.invitation.invited_by.id == owner.id


async def test_nobody_joins_before_accepting(settings, owner, organization):
    carl = await make_user(email="carl@example.com")

    await invitations.invite(owner, organization, carl.email)

    assert await roles(organization) == {owner.id: "owner"}


async def test_the_invited_user_accepts_once_and_joins_with_the_role(settings, owner, organization):
    carl = await make_user(email="carl@example.com")
    made = await invitations.invite(owner, organization, carl.email, "owner")

    joined = await invitations.accept(carl, token_of(made.url))

    assert joined.id == organization.id
    assert await roles(organization) == {owner.id: "owner", carl.id: "owner"}
    row = await Invitation.get(id=made.invitation.id)
    assert row.accepted_at is not None and row.accepted_by_id == carl.id
    with pytest.raises(InvitationClosed, match="accepted already") as closed:
        await invitations.accept(carl, token_of(made.url))
    assert closed.value.status == 410


async def test_whoever_accepts_is_an_agent_of_the_organizations_applications_at_once(
    settings, owner, organization
):
    application = await make_application(owner, organization_id=organization.id)
    await assignment.agents(application)
    carl = await make_user(email="carl@example.com")
    joined = await invitations.invite(owner, organization, carl.email)
    newcomer = await invitations.invite(owner, organization, "dora@example.com")

    await invitations.accept(carl, token_of(joined.url))
    dora, _ = await invitations.accept_with_new_account(token_of(newcomer.url), "Dora", "a long passphrase 1")

    assert {carl.id, dora.id} <= {agent.id for agent in await assignment.agents(application)}


async def test_another_user_cannot_accept_someone_elses_invitation(settings, owner, organization):
    await make_user(email="carl@example.com")
    mallory = await make_user(email="mallory@example.com")
    made = await invitations.invite(owner, organization, "carl@example.com")

    with pytest.raises(Forbidden, match=re.escape("This invitation is for carl@example.com")):
        await invitations.accept(mallory, token_of(made.url))

    assert await roles(organization) == {owner.id: "owner"}
    assert (await Invitation.get(id=made.invitation.id)).accepted_at is None


async def test_a_new_person_accepts_with_a_name_and_a_password(settings, owner, organization):
    made = await invitations.invite(owner, organization, "newbie@example.com")

    user, joined = await invitations.accept_with_new_account(
        token_of(made.url), "  Nina New ", "a long password"
    )

    assert (user.email, user.name, joined.id) == ("newbie@example.com", "Nina New", organization.id)
    stored = await User.get(id=user.id)
    assert verify_password(stored.password_hash, "a long password")
    assert await roles(organization) == {owner.id: "owner", user.id: "agent"}
    with pytest.raises(InvitationClosed):
        await invitations.accept_with_new_account(token_of(made.url), "Again", "a long password")


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [
        ("", "a long password", "The name field is required."),
        ("Nina", "short", "at least 8 characters"),
    ],
)
async def test_a_new_account_needs_a_name_and_a_good_password(
    settings, owner, organization, name, password, message
):
    made = await invitations.invite(owner, organization, "newbie@example.com")

    with pytest.raises(ValidationError, match=message):
        await invitations.accept_with_new_account(token_of(made.url), name, password)

    assert not await User.exists(email="newbie@example.com")
    assert (await Invitation.get(id=made.invitation.id)).accepted_at is None


async def test_an_address_with_an_account_signs_in_instead_of_making_one(settings, owner, organization):
    await make_user(email="carl@example.com")
    made = await invitations.invite(owner, organization, "carl@example.com")

    with pytest.raises(ValidationError, match="sign in to accept"):
        await invitations.accept_with_new_account(token_of(made.url), "Carl", "a long password")

    assert await User.filter(email="carl@example.com").count() == 1


async def test_an_unknown_link_is_not_valid(settings):
    for token in ("", "nonsense", "x" * 43):
        with pytest.raises(NotFound, match=re.escape(invitations.INVALID_LINK)):
            await invitations.find(token)


async def test_a_revoked_link_says_so_and_no_longer_works(settings, owner, organization):
    carl = await make_user(email="carl@example.com")
    made = await invitations.invite(owner, organization, carl.email)

    await invitations.revoke(owner, organization, made.invitation.id)

    assert await invitations.list_pending(owner, organization) == []
    with pytest.raises(InvitationClosed, match="was revoked"):
        await invitations.accept(carl, token_of(made.url))
    with pytest.raises(NotFound, match="Invalid invitation"):
        await invitations.revoke(owner, organization, made.invitation.id)
    assert await roles(organization) == {owner.id: "owner"}


async def test_an_expired_link_says_so(settings, owner, organization):
    carl = await make_user(email="carl@example.com")
    made = await invitations.invite(owner, organization, carl.email)
    await atomic(
        lambda: Invitation.filter(id=made.invitation.id).update(
            expires_at=datetime.now(UTC) - timedelta(seconds=1)
        )
    )

    with pytest.raises(InvitationClosed, match="has expired"):
        await invitations.accept(carl, token_of(made.url))
    assert await invitations.list_pending(owner, organization) == []
    assert invitations.state_of(await invitations.find(token_of(made.url))) == "expired"


async def test_inviting_an_address_again_replaces_its_link(settings, owner, organization):
    carl = await make_user(email="carl@example.com")
    first = await invitations.invite(owner, organization, carl.email)

    second = await invitations.invite(owner, organization, "CARL@example.com", "owner")

    assert [i.id for i in await invitations.list_pending(owner, organization)] == [second.invitation.id]
    with pytest.raises(InvitationClosed, match="was revoked"):
        await invitations.accept(carl, token_of(first.url))
    await invitations.accept(carl, token_of(second.url))
    assert (await roles(organization))[carl.id] == "owner"


async def test_pending_invitations_are_listed_newest_first_without_the_others(settings, owner, organization):
    carl = await make_user(email="carl@example.com")
    accepted = await invitations.invite(owner, organization, carl.email)
    await invitations.accept(carl, token_of(accepted.url))
    revoked = await invitations.invite(owner, organization, "gone@example.com")
    await invitations.revoke(owner, organization, revoked.invitation.id)
    older = await invitations.invite(owner, organization, "one@example.com")
    newer = await invitations.invite(owner, organization, "two@example.com")

    listed = await invitations.list_pending(owner, organization)

    assert [i.id for i in listed] == [newer.invitation.id, older.invitation.id]


@pytest.mark.parametrize(
    ("email", "role", "message"),
    [
        ("not an address", "agent", "The email field must be a valid email address."),
        (None, "agent", "The email field must be a valid email address."),
        ("carl@example.com", "admin", "The selected role is invalid."),
        ("olga@example.com", "agent", "olga@example.com is a member of the organization already."),
    ],
)
async def test_invalid_invitations_are_refused(settings, owner, organization, email, role, message):
    with pytest.raises(ValidationError, match=message):
        await invitations.invite(owner, organization, email, role)

    assert not await Invitation.exists()


async def test_only_owners_invite_list_and_revoke(settings, owner):
    agent, stranger = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    made = await invitations.invite(owner, organization, "carl@example.com")

    with pytest.raises(Forbidden, match="Only an owner"):
        await invitations.invite(agent, organization, "dan@example.com")
    with pytest.raises(Forbidden, match="Only an owner"):
        await invitations.list_pending(agent, organization)
    with pytest.raises(Forbidden, match="Only an owner"):
        await invitations.revoke(agent, organization, made.invitation.id)
    with pytest.raises(NotFound, match="Invalid organization"):
        await invitations.invite(stranger, organization, "dan@example.com")
    with pytest.raises(NotFound, match="Invalid organization"):
        await invitations.revoke(stranger, organization, made.invitation.id)
    assert await Invitation.filter(revoked_at=None).count() == 1


async def test_another_organizations_invitation_cannot_be_revoked(settings, owner, organization):
    other_owner = await make_user()
    other = await make_organization(other_owner, name="Other")
    theirs = await invitations.invite(other_owner, other, "carl@example.com")

    with pytest.raises(NotFound, match="Invalid invitation"):
        await invitations.revoke(owner, organization, theirs.invitation.id)

    assert (await Invitation.get(id=theirs.invitation.id)).revoked_at is None


async def test_an_organization_has_a_bounded_number_of_pending_invitations(
    settings, owner, organization, monkeypatch
):
    monkeypatch.setattr(invitations, "MAX_PENDING", 2)
    await invitations.invite(owner, organization, "one@example.com")
    await invitations.invite(owner, organization, "two@example.com")

    with pytest.raises(ValidationError, match="2 pending invitations: revoke some first"):
        await invitations.invite(owner, organization, "three@example.com")
    again = await invitations.invite(owner, organization, "two@example.com")  # a replacement is no new one

    assert again.invitation.email == "two@example.com"


async def test_the_link_is_e_mailed_when_e_mail_goes_out(owner, organization, mail_settings, relay):
    made = await invitations.invite(owner, organization, "carl@example.com", "owner")

    assert made.emailed
    assert await deliver_due(mail_settings) == 1
    [message] = relay.messages
    assert message["To"].addresses[0].addr_spec == "carl@example.com"
    assert message["Subject"] == "Olga Owner invited you to Acme on Earful"
    assert message["Auto-Submitted"] == "auto-generated"
    text = message.get_body(("plain",)).get_content()
    assert made.url in text
    assert "as an owner" in text
    assert made.url in message.get_body(("html",)).get_content()
    assert (await OutboundEmail.get()).kind == "invitation"


async def test_no_e_mail_is_queued_without_e_mail(settings, owner, organization):
    made = await invitations.invite(owner, organization, "carl@example.com")

    assert not made.emailed
    assert not await OutboundEmail.exists()
