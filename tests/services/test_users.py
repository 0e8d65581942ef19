"""Users: created with a hashed password, found by address, authenticated in the same time
whether or not the address has an account."""

from __future__ import annotations

import pytest

from app.errors import NotFound, ValidationError
from app.models import User
from app.services.applications import get_application
from app.services.users import (
    MAX_PASSWORD_LENGTH,
    authenticate_user,
    create_first_admin,
    create_user,
    get_user_by_email,
    user_in_session,
)
from tests.factories import make_application, make_organization, make_user


async def test_password_is_stored_as_an_argon2id_hash(db):
    user, _ = await create_user("Ann@Example.com", "Ann", "a long passphrase")

    stored = await User.get(id=user.id)

    assert stored.password_hash.startswith("$argon2id$")
    assert "a long passphrase" not in stored.password_hash
    assert stored.email == "ann@example.com"


async def test_a_generated_password_is_returned_once_and_works(db):
    user, password = await create_user("ann@example.com", "Ann")

    assert len(password) >= 16
    assert (await authenticate_user(user.email, password)) == user


async def test_user_signs_in_with_the_right_password_only(db):
    await create_user("ann@example.com", "Ann", "a long passphrase")

    assert await authenticate_user("ANN@example.com", "a long passphrase") is not None
    assert await authenticate_user("ann@example.com", "a wrong passphrase") is None
    assert await authenticate_user("nobody@example.com", "a long passphrase") is None


async def test_duplicate_email_is_rejected(db):
    await create_user("ann@example.com", "Ann", "a long passphrase")

    with pytest.raises(ValidationError, match="already been taken"):
        await create_user("ann@example.com", "Other Ann", "a long passphrase")

    assert await User.filter(email="ann@example.com").count() == 1


@pytest.mark.parametrize(
    ("email", "name", "password", "message"),
    [
        ("not an address", "Ann", "a long passphrase", "valid email"),
        ("ann@example.com", "  ", "a long passphrase", "name field is required"),
        ("ann@example.com", "Ann", "short", "at least 8"),
        ("ann@example.com", "Ann", "x" * (MAX_PASSWORD_LENGTH + 1), "not be greater"),
    ],
)
async def test_invalid_users_are_refused_and_nothing_is_written(db, email, name, password, message):
    with pytest.raises(ValidationError, match=message):
        await create_user(email, name, password)

    assert await User.all().count() == 0


async def test_first_admin_is_created_once(db):
    first = await create_first_admin()
    second = await create_first_admin()

    assert first is not None
    assert first[0].email == "admin@earful.local"
    assert len(first[1]) >= 16
    assert second is None


async def test_an_unknown_address_is_not_found(db):
    with pytest.raises(NotFound):
        await get_user_by_email("nobody@example.com")


async def test_a_session_is_the_users_only_while_its_version_is_current(db):
    user = await make_user()

    assert await user_in_session(user.id, user.session_version) == user
    assert await user_in_session(user.id, user.session_version + 1) is None


async def test_a_session_read_with_an_application_hands_it_to_the_pages_first_look_up(db, queries):
    owner, member, stranger = await make_user(), await make_user(), await make_user()
    organization = await make_organization(owner, member)
    application = await make_application(owner, organization_id=organization.id)

    queries.statements.clear()
    found = await user_in_session(member.id, member.session_version, application.id)
    seen = await get_application(member, application.id)

    assert (found, seen) == (member, application)
    assert queries.count == 1, queries.statements
    assert await user_in_session(stranger.id, stranger.session_version, application.id) == stranger
    with pytest.raises(NotFound):
        await get_application(stranger, application.id)


async def test_an_ended_session_reads_no_application(db):
    user = await make_user()
    application = await make_application(user)

    assert await user_in_session(user.id, user.session_version + 1, application.id) is None
