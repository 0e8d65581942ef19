"""Applications: who sees them, how they are created and changed (one transaction, files
included), and how the capture API authenticates against them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import Forbidden, NotFound, ValidationError
from app.models import Application
from app.services import applications
from app.services.files import IncomingFile
from app.services.storage import LocalStorage, logo_key
from tests.factories import make_application, make_organization, make_user

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


async def test_an_application_is_seen_by_its_owner_and_its_organizations_members(db):
    owner, member, stranger = await make_user(), await make_user(), await make_user()
    organization = await make_organization(owner, member)
    shared = await make_application(owner, organization_id=organization.id)
    own = await make_application(owner)

    assert [a.id for a in await applications.list_applications(owner)] == [shared.id, own.id]
    assert [a.id for a in await applications.list_applications(member)] == [shared.id]
    assert await applications.list_applications(stranger) == []
    with pytest.raises(NotFound, match="Invalid application"):
        await applications.get_application(stranger, shared.id)


async def test_a_new_application_has_four_distinct_keys_and_an_intake_address(db):
    application = await make_application(await make_user())

    keys = applications.application_keys(application, "in.example.org")

    assert len({keys[p] for p in ("javascript", "ios", "android", "api")}) == 4
    assert keys["email"] == f"feedback-{application.id}-{application.intake_token}@in.example.org"


async def test_creating_with_a_logo_writes_the_row_and_the_file_together(db, storage):
    owner = await make_user()

    created = await applications.create_application(
        owner, {"name": "Acme"}, IncomingFile("l.png", PNG), storage
    )

    assert created.logo_name is not None
    assert await storage.read(logo_key(created.id, created.logo_name)) == PNG
    assert (await Application.get(id=created.id)).logo_name == created.logo_name


async def test_a_refused_creation_leaves_no_row_and_no_file(db, storage):
    owner, stranger = await make_user(), await make_user()
    organization = await make_organization(stranger)

    with pytest.raises(NotFound, match="Invalid organization"):
        await applications.create_application(
            owner, {"name": "Acme", "organization_id": organization.id}, IncomingFile("l.png", PNG), storage
        )

    assert await Application.all().count() == 0
    assert await storage.keys("logos") == []


async def test_a_new_logo_replaces_the_old_one_and_its_file(db, storage):
    owner = await make_user()
    created = await applications.create_application(
        owner, {"name": "Acme"}, IncomingFile("l.png", PNG), storage
    )

    updated = await applications.update_application(
        owner, created, {}, IncomingFile("m.png", PNG + b"2"), storage
    )

    assert await storage.keys("logos") == [logo_key(created.id, updated.logo_name)]
    assert await storage.read(logo_key(created.id, updated.logo_name)) == PNG + b"2"
    with pytest.raises(NotFound):
        await applications.open_logo(created.id, created.logo_name, storage)
    assert (await applications.open_logo(created.id, updated.logo_name, storage)).size == len(PNG) + 1


async def test_a_refused_update_keeps_the_old_logo_and_stores_no_new_one(db, storage):
    owner = await make_user()
    created = await applications.create_application(
        owner, {"name": "Acme"}, IncomingFile("l.png", PNG), storage
    )

    with pytest.raises(ValidationError):
        await applications.update_application(
            owner, created, {"name": ""}, IncomingFile("m.png", PNG + b"2"), storage
        )

    assert await storage.keys("logos") == [logo_key(created.id, created.logo_name)]
    assert (await Application.get(id=created.id)).logo_name == created.logo_name


async def test_a_logo_whose_file_is_missing_is_not_found(db, storage):
    owner = await make_user()
    created = await applications.create_application(
        owner, {"name": "Acme"}, IncomingFile("l.png", PNG), storage
    )
    await storage.delete([logo_key(created.id, created.logo_name)])

    with pytest.raises(NotFound):
        await applications.open_logo(created.id, created.logo_name, storage)


async def test_an_update_changes_only_what_was_sent(db, tmp_path: Path):
    owner = await make_user()
    application = await make_application(owner, url="https://acme.example")

    updated = await applications.update_application(
        owner, application, {"name": "Renamed"}, None, LocalStorage(tmp_path)
    )

    assert (updated.name, updated.url) == ("Renamed", "https://acme.example")


async def test_an_update_that_sends_nothing_is_refused(db, tmp_path: Path):
    owner = await make_user()
    application = await make_application(owner)

    with pytest.raises(ValidationError, match="Nothing sent to update"):
        await applications.update_application(
            owner, application, {"unknown": 1}, None, LocalStorage(tmp_path)
        )


async def test_an_agent_cannot_move_the_organizations_application_out(db, tmp_path: Path):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)

    with pytest.raises(Forbidden):
        await applications.update_application(
            agent, application, {"organization_id": ""}, None, LocalStorage(tmp_path)
        )

    assert (await Application.get(id=application.id)).organization_id == organization.id


async def test_a_rotated_key_stops_working_at_once(db):
    application = await make_application(await make_user())
    old = application.key_javascript
    await applications.authenticate_capture(application.id, old, "Invalid application")

    new = await applications.rotate_key(application, "javascript")

    with pytest.raises(Forbidden):
        await applications.authenticate_capture(application.id, old, "Invalid application")
    assert (
        await applications.authenticate_capture(application.id, new, "Invalid application")
    ).id == application.id


@pytest.mark.parametrize("key", [None, "", "wrong"])
async def test_capture_needs_one_of_the_keys(db, key):
    application = await make_application(await make_user())

    with pytest.raises(Forbidden, match="Not authorized"):
        await applications.authenticate_capture(application.id, key, "Invalid application")


async def test_capture_of_an_unknown_application_says_the_given_message(db):
    with pytest.raises(NotFound, match="Application not found"):
        await applications.authenticate_capture(999_999, "key", "Application not found")


async def test_an_application_read_with_the_caller_is_handed_over_once(db, queries):
    user = await make_user()
    application = await make_application(user)
    applications.keep_read_with_caller(user.id, application.id, application)

    queries.statements.clear()
    assert await applications.get_application(user, application.id) == application
    assert queries.count == 0
    assert await applications.get_application(user, application.id) == application
    assert queries.count == 1


async def test_a_transaction_since_the_callers_read_makes_the_application_read_again(db, tmp_path: Path):
    user = await make_user()
    application = await make_application(user)
    applications.keep_read_with_caller(user.id, application.id, application)

    storage = LocalStorage(tmp_path)
    await applications.update_application(user, application, {"name": "Renamed"}, None, storage)

    assert (await applications.get_application(user, application.id)).name == "Renamed"


async def test_an_application_read_for_another_caller_or_id_is_not_handed_over(db):
    owner, other = await make_user(), await make_user()
    mine, theirs = await make_application(owner), await make_application(other)
    applications.keep_read_with_caller(owner.id, mine.id, mine)

    with pytest.raises(NotFound):
        await applications.get_application(owner, theirs.id)
    applications.keep_read_with_caller(owner.id, mine.id, mine)
    with pytest.raises(NotFound):
        await applications.get_application(other, mine.id)
