"""Saved replies: who manages them where, what they may hold, and their placeholders."""

from __future__ import annotations

import pytest

from app.errors import Forbidden, NotFound, ValidationError
from app.models import SavedReply
from app.services import saved_replies
from app.services.organizations import add_member, remove_member
from app.services.saved_replies import (
    MAX_SAVED_REPLIES,
    MAX_TEXT,
    MAX_TITLE,
    application_scope,
    create_saved_reply,
    delete_saved_reply,
    fill,
    fill_for_thread,
    get_saved_reply,
    list_saved_replies,
    organization_replies_for,
    organization_scope,
    saved_replies_for,
    update_saved_reply,
)
from tests.factories import make_application, make_organization, make_saved_reply, make_thread, make_user


def test_placeholders_are_filled_with_the_sender_and_the_application():
    text = fill("Hi {name} ({email}), thanks for using {application}.", "Rita", "rita@example.org", "Shop")

    assert text == "Hi Rita (rita@example.org), thanks for using Shop."


def test_name_falls_back_to_the_address_when_the_sender_gave_none():
    assert fill("Hi {name}", "", "rita@example.org", "Shop") == "Hi rita@example.org"


def test_unknown_braces_are_left_as_typed():
    text = "{Name} {nom} {{name}} { name } {email {application"

    assert fill(text, "Rita", "r@example.org", "Shop") == "{Name} {nom} {Rita} { name } {email {application"


def test_values_are_text_and_are_not_filled_again():
    name = "<b>{email}</b> \\1 $1"

    assert fill("Hi {name}!", name, "r@example.org", "Shop") == "Hi <b>{email}</b> \\1 $1!"


async def test_any_agent_of_an_application_manages_its_saved_replies(db):
    owner, member = await make_user(), await make_user()
    organization = await make_organization(owner, member)
    application = await make_application(owner, organization_id=organization.id)
    scope = application_scope(application)

    saved = await create_saved_reply(member, scope, {"title": "  Refund \n policy ", "text": " Hi {name}\n"})
    changed = await update_saved_reply(scope, saved, {"text": "Hello {name}"})

    assert (changed.title, changed.text, changed.created_by_id) == (
        "Refund policy",
        "Hello {name}",
        member.id,
    )
    assert (changed.application_id, changed.organization_id) == (application.id, None)
    await delete_saved_reply(scope, changed)
    assert await list_saved_replies(scope) == []


async def test_organization_replies_are_read_by_members_and_managed_by_owners(db):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(owner, agent)
    saved = await make_saved_reply(owner, organization=organization, title="Welcome")
    as_agent = await organization_scope(agent, organization.id)

    assert [found.id for found in await list_saved_replies(as_agent)] == [saved.id]
    with pytest.raises(Forbidden):
        await create_saved_reply(agent, as_agent, {"title": "Mine", "text": "x"})
    with pytest.raises(Forbidden):
        await update_saved_reply(as_agent, saved, {"title": "Taken"})
    with pytest.raises(Forbidden):
        await delete_saved_reply(as_agent, saved)
    assert await SavedReply.filter(id=saved.id).values_list("title", flat=True) == ["Welcome"]


async def test_an_organization_the_user_is_not_in_does_not_exist_for_them(db):
    organization = await make_organization(await make_user())

    with pytest.raises(NotFound, match="Invalid organization"):
        await organization_scope(await make_user(), organization.id)


async def test_a_saved_reply_of_another_scope_is_not_found(db):
    owner = await make_user()
    organization = await make_organization(owner)
    application, other = await make_application(owner), await make_application(owner)
    of_other = await make_saved_reply(owner, other)
    of_organization = await make_saved_reply(owner, organization=organization)

    for saved in (of_other, of_organization):
        with pytest.raises(NotFound, match="Invalid saved reply"):
            await get_saved_reply(application_scope(application), saved.id)
    with pytest.raises(NotFound, match="Invalid saved reply"):
        await get_saved_reply(await organization_scope(owner, organization.id), of_other.id)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"text": "x"}, "The title field is required."),
        ({"title": "  ", "text": "x"}, "The title field is required."),
        ({"title": "x" * (MAX_TITLE + 1), "text": "x"}, f"must not be greater than {MAX_TITLE} characters"),
        ({"title": 5, "text": "x"}, "The title field must be a string."),
        ({"title": "x"}, "The text field is required."),
        ({"title": "x", "text": "x" * (MAX_TEXT + 1)}, f"must not be greater than {MAX_TEXT} characters"),
        ({"title": "x", "text": ["x"]}, "The text field must be a string."),
    ],
)
async def test_title_and_text_are_checked(db, data, message):
    owner = await make_user()
    scope = application_scope(await make_application(owner))

    with pytest.raises(ValidationError, match=message):
        await create_saved_reply(owner, scope, data)


async def test_an_application_holds_a_bounded_number_of_saved_replies(db, monkeypatch):
    monkeypatch.setattr(saved_replies, "MAX_SAVED_REPLIES", 2)
    owner = await make_user()
    application = await make_application(owner)
    for number in range(2):
        await make_saved_reply(owner, application, title=f"Reply {number}")

    with pytest.raises(ValidationError, match="more than 2 saved replies"):
        await make_saved_reply(owner, application)
    assert MAX_SAVED_REPLIES == 200


async def test_the_reply_box_offers_the_applications_and_its_organizations_replies_by_title(db):
    owner = await make_user()
    organization, elsewhere = await make_organization(owner), await make_organization(owner)
    application = await make_application(owner, organization_id=organization.id)
    await make_saved_reply(owner, application, title="beta")
    await make_saved_reply(owner, organization=organization, title="Alpha")
    await make_saved_reply(owner, organization=elsewhere, title="Elsewhere")
    await make_saved_reply(owner, await make_application(owner), title="Other application")

    assert [saved.title for saved in await saved_replies_for(application)] == ["Alpha", "beta"]


async def test_filling_for_a_thread_uses_its_sender_and_application(db):
    owner = await make_user()
    organization = await make_organization(owner)
    application = await make_application(owner, name="Shop", organization_id=organization.id)
    thread = await make_thread(application, email="rita@example.org", name="Rita <Reader>")
    saved = await make_saved_reply(
        owner, organization=organization, text="Hi {name}, {email} on {application}"
    )

    filled = await fill_for_thread(application, thread, saved.id)

    assert filled.text == "Hi Rita <Reader>, rita@example.org on Shop"
    assert filled.saved.id == saved.id


async def test_filling_refuses_a_saved_reply_the_application_does_not_offer(db):
    owner = await make_user()
    application = await make_application(owner)
    thread = await make_thread(application)
    foreign = await make_saved_reply(owner, await make_application(owner))
    of_unrelated_organization = await make_saved_reply(owner, organization=await make_organization(owner))

    for saved in (foreign, of_unrelated_organization):
        with pytest.raises(NotFound, match="Invalid saved reply"):
            await fill_for_thread(application, thread, saved.id)


async def test_a_member_who_leaves_loses_the_organizations_replies(db):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(owner)
    await add_member(organization, agent)
    await organization_scope(agent, organization.id)

    await remove_member(agent, organization, agent.id)

    with pytest.raises(NotFound):
        await organization_scope(agent, organization.id)


async def test_an_application_offers_its_organizations_replies_to_whoever_sees_it(db):
    creator, owner = await make_user(), await make_user()
    organization = await make_organization(owners=(creator, owner))
    application = await make_application(creator, organization_id=organization.id)
    await make_saved_reply(owner, organization=organization, title="Shared")
    await remove_member(creator, organization, creator.id)  # the creator still sees the application

    assert [saved.title for saved in await organization_replies_for(application)] == ["Shared"]
    assert [saved.title for saved in await saved_replies_for(application)] == ["Shared"]
