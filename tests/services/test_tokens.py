"""Personal access tokens: stored as a digest, scoped, revocable, their last use kept coarsely."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db import atomic
from app.errors import NotFound, ValidationError
from app.models import AccessToken
from app.services.applications import get_application
from app.services.tokens import authenticate_token, create_token, list_tokens, revoke_token
from tests.factories import make_application, make_user


async def test_token_is_stored_as_its_digest(db):
    user = await make_user()

    token, raw = await create_token(user, ["write", "read"], "ci")

    stored = await AccessToken.get(id=token.id)
    assert raw.startswith("ea_")
    assert stored.token_hash != raw and len(stored.token_hash) == 64
    assert stored.scopes == "read write"


async def test_a_token_authenticates_as_its_user_with_its_scopes(db):
    user = await make_user()
    _, raw = await create_token(user, ["read"])

    token = await authenticate_token(raw)

    assert token is not None and token.user == user
    assert token.scope_set == frozenset({"read"})


async def test_revoked_token_no_longer_authenticates(db):
    user = await make_user()
    token, raw = await create_token(user, ["read"])
    assert await authenticate_token(raw) is not None

    await revoke_token(user, token.id)

    assert await authenticate_token(raw) is None
    assert await list_tokens(user) == []


async def test_another_users_token_cannot_be_revoked(db):
    owner, other = await make_user(), await make_user()
    token, raw = await create_token(owner, ["read"])

    with pytest.raises(NotFound):
        await revoke_token(other, token.id)

    assert await authenticate_token(raw) is not None


async def test_token_needs_a_known_scope(db):
    user = await make_user()

    with pytest.raises(ValidationError):
        await create_token(user, ["admin"])
    with pytest.raises(ValidationError):
        await create_token(user, [])


@pytest.mark.parametrize("raw", ["", "ea_", "not-ours", "ea_" + "x" * 300])
async def test_malformed_tokens_authenticate_nobody(db, raw):
    assert await authenticate_token(raw) is None


async def test_last_use_is_written_at_most_once_a_minute(db):
    user = await make_user()
    token, raw = await create_token(user, ["read"])
    await authenticate_token(raw)
    first = (await AccessToken.get(id=token.id)).last_used_at
    assert first is not None

    await authenticate_token(raw)
    assert (await AccessToken.get(id=token.id)).last_used_at == first

    await atomic(
        lambda: AccessToken.filter(id=token.id).update(last_used_at=datetime.now(UTC) - timedelta(minutes=2))
    )
    await authenticate_token(raw)
    assert (await AccessToken.get(id=token.id)).last_used_at > first - timedelta(seconds=1)


async def test_a_token_read_with_an_application_hands_it_to_the_requests_first_look_up(db, queries):
    user = await make_user()
    application = await make_application(user)
    _, raw = await create_token(user, ["read"])
    await authenticate_token(raw)  # its last use written: the next check only reads

    queries.statements.clear()
    token = await authenticate_token(raw, application.id)
    found = await get_application(user, application.id)

    assert token is not None and token.user == user
    assert found == application
    assert queries.count == 1, queries.statements


async def test_an_application_the_tokens_user_does_not_see_is_not_handed_over(db):
    owner, stranger = await make_user(), await make_user()
    application = await make_application(owner)
    _, raw = await create_token(stranger, ["read"])

    token = await authenticate_token(raw, application.id)

    assert token is not None and token.user == stranger
    with pytest.raises(NotFound):
        await get_application(stranger, application.id)


async def test_a_revoked_token_reads_no_application(db):
    user = await make_user()
    application = await make_application(user)
    token, raw = await create_token(user, ["read"])
    await revoke_token(user, token.id)

    assert await authenticate_token(raw, application.id) is None
