"""Users and tokens: secrets are stored only as hashes, and tokens die when revoked."""

from __future__ import annotations

import pytest

from app.errors import ValidationError
from app.models import AccessToken, User
from app.services.tokens import authenticate_token, create_token, revoke_token
from app.services.users import authenticate_user, create_first_admin, create_user
from tests.factories import make_user


async def test_password_is_stored_as_an_argon2id_hash(db):
    user, _ = await create_user("Ann@Example.com", "Ann", "a long passphrase")

    stored = await User.get(id=user.id)

    assert stored.password_hash.startswith("$argon2id$")
    assert "a long passphrase" not in stored.password_hash
    assert stored.email == "ann@example.com"


async def test_user_signs_in_with_the_right_password_only(db):
    await create_user("ann@example.com", "Ann", "a long passphrase")

    assert await authenticate_user("ANN@example.com", "a long passphrase") is not None
    assert await authenticate_user("ann@example.com", "a wrong passphrase") is None
    assert await authenticate_user("nobody@example.com", "a long passphrase") is None


async def test_duplicate_email_is_rejected(db):
    await create_user("ann@example.com", "Ann", "a long passphrase")

    with pytest.raises(ValidationError, match="already been taken"):
        await create_user("ann@example.com", "Other Ann", "a long passphrase")


async def test_short_password_is_rejected(db):
    with pytest.raises(ValidationError, match="at least 8"):
        await create_user("ann@example.com", "Ann", "short")


async def test_first_admin_is_created_once(db):
    first = await create_first_admin()
    second = await create_first_admin()

    assert first is not None
    assert first[0].email == "admin@earful.local"
    assert len(first[1]) >= 16
    assert second is None


async def test_token_is_stored_as_its_digest(db):
    user = await make_user()

    token, raw = await create_token(user, ["write", "read"], "ci")

    stored = await AccessToken.get(id=token.id)
    assert raw.startswith("ea_")
    assert stored.token_hash != raw and len(stored.token_hash) == 64
    assert stored.scopes == "read write"


async def test_revoked_token_no_longer_authenticates(db):
    user = await make_user()
    token, raw = await create_token(user, ["read"])
    assert await authenticate_token(raw) is not None

    await revoke_token(user, token.id)

    assert await authenticate_token(raw) is None


async def test_token_needs_a_known_scope(db):
    user = await make_user()

    with pytest.raises(ValidationError):
        await create_token(user, ["admin"])
    with pytest.raises(ValidationError):
        await create_token(user, [])
