"""Bearer-token authentication and scopes of every management endpoint."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pytest

from app.models import AccessToken, Application
from app.services.tokens import create_token, revoke_token
from tests.factories import (
    Api,
    body_json,
    body_text,
    make_application,
    make_organization,
    make_thread,
    make_token,
    make_user,
)


@dataclass(frozen=True)
class Endpoint:
    """A management endpoint, its scope and a request body it accepts."""

    method: str
    path: str
    scope: str
    body: dict[str, Any] | None = None

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


ENDPOINTS = [
    Endpoint("GET", "/users/me", "read"),
    Endpoint("GET", "/applications", "read"),
    Endpoint("POST", "/applications", "write", {"form": {"name": "New app"}}),
    Endpoint("GET", "/applications/{application}", "read"),
    Endpoint("POST", "/applications/{application}", "write", {"form": {"name": "Renamed"}}),
    Endpoint("PUT", "/applications/{application}", "write", {"form": {"name": "Renamed"}}),
    Endpoint("GET", "/applications/{application}/feedback", "read"),
    Endpoint("GET", "/applications/{application}/feedback/{thread}", "read"),
    Endpoint("PATCH", "/applications/{application}/feedback/{thread}", "write", {"json": {"archived": True}}),
    Endpoint(
        "POST", "/applications/{application}/feedback/{thread}/replies", "write", {"json": {"message": "Hi"}}
    ),
    Endpoint("GET", "/applications/{application}/tags", "read"),
    Endpoint("GET", "/applications/{application}/replies", "read"),
    Endpoint("GET", "/organizations", "read"),
    Endpoint("GET", "/organizations/{organization}", "read"),
]

every_endpoint = pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)


@dataclass
class World:
    """A user with an organization, an application of it and a thread, so every path exists."""

    user: Any
    ids: dict[str, int]

    def path(self, endpoint: Endpoint) -> str:
        return endpoint.path.format(**self.ids)


@pytest.fixture
async def world(db: str) -> World:
    user = await make_user()
    organization = await make_organization(user)
    application = await make_application(user, organization_id=organization.id)
    thread = await make_thread(application)
    return World(
        user=user, ids={"organization": organization.id, "application": application.id, "thread": thread.id}
    )


async def call(api: Api, world: World, endpoint: Endpoint, headers: dict[str, str] | None = None):
    """Send the endpoint's request with exactly the given headers (no token added)."""
    request = getattr(api.client, endpoint.method.lower())
    return await request(world.path(endpoint), headers=headers or {}, **(endpoint.body or {}))


async def assert_unauthenticated(response) -> None:
    assert response.status_code == 401
    assert response.mimetype == "text/plain"
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert await body_text(response) == "Unauthenticated"


def other_scope(scope: str) -> str:
    return "write" if scope == "read" else "read"


@every_endpoint
async def test_token_with_the_endpoints_scope_is_accepted(api, world, endpoint):
    token = await make_token(world.user, endpoint.scope)

    response = await call(api, world, endpoint, {"Authorization": f"Bearer {token}"})

    assert response.status_code == 200
    assert "data" in await body_json(response)


@every_endpoint
async def test_request_without_authorization_header_is_unauthenticated(api, world, endpoint):
    response = await call(api, world, endpoint)

    await assert_unauthenticated(response)


@every_endpoint
@pytest.mark.parametrize(
    "header",
    ["Basic dXNlcjpwYXNz", "Basic {token}", "{token}", "Token {token}", "Bearer", "Bearer ", "Bearer    "],
)
async def test_malformed_authorization_header_is_unauthenticated(api, world, endpoint, header):
    token = await make_token(world.user)

    response = await call(api, world, endpoint, {"Authorization": header.format(token=token)})

    await assert_unauthenticated(response)


@every_endpoint
@pytest.mark.parametrize("unknown", ["ea_thisTokenWasNeverIssuedToAnyone0000000000", "not-a-token"])
async def test_unknown_token_is_unauthenticated(api, world, endpoint, unknown):
    await make_token(world.user)

    response = await call(api, world, endpoint, {"Authorization": f"Bearer {unknown}"})

    await assert_unauthenticated(response)


@every_endpoint
async def test_revoked_token_is_unauthenticated(api, world, endpoint):
    token, raw = await create_token(world.user, ["read", "write"])
    await revoke_token(world.user, token.id)

    response = await call(api, world, endpoint, {"Authorization": f"Bearer {raw}"})

    await assert_unauthenticated(response)


@every_endpoint
async def test_token_without_the_endpoints_scope_gets_insufficient_scope(api, world, endpoint):
    token = await make_token(world.user, other_scope(endpoint.scope))

    response = await call(api, world, endpoint, {"Authorization": f"Bearer {token}"})

    assert response.status_code == 403
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Insufficient scope"


async def test_write_refused_for_scope_changes_nothing(api, world):
    token = await make_token(world.user, "read")
    before = await Application.get(id=world.ids["application"])

    created = await api.post("/applications", token, form={"name": "Sneaky"})
    updated = await api.put(f"/applications/{before.id}", token, form={"name": "Sneaky"})

    assert (created.status_code, updated.status_code) == (403, 403)
    assert await Application.all().values_list("name", flat=True) == [before.name]


async def test_bearer_token_of_another_user_acts_as_that_user(api, world):
    stranger = await make_user(email="stranger@example.com", name="Stranger")
    token = await make_token(stranger, "read")

    response = await api.get("/users/me", token)

    assert (await body_json(response))["data"]["email"] == "stranger@example.com"


async def test_api_ignores_a_session_cookie(app, api, world):
    session = app.session_interface.get_signing_serializer(app).dumps(
        {"user_id": world.user.id, "_user_id": str(world.user.id)}
    )

    response = await api.get("/users/me", headers={"Cookie": f"session={session}"})

    await assert_unauthenticated(response)


@pytest.mark.parametrize("cookie", ["token", "access_token", "Authorization"])
async def test_api_ignores_a_token_sent_as_cookie(api, world, cookie):
    token = await make_token(world.user)

    response = await api.get("/users/me", headers={"Cookie": f"{cookie}={token}"})

    await assert_unauthenticated(response)


async def test_tokens_start_with_the_ea_prefix(world):
    token = await make_token(world.user)

    assert token.startswith("ea_")


async def test_tokens_are_stored_only_as_sha256_digests(world):
    raw = await make_token(world.user)

    rows = await AccessToken.all().values()

    assert [row["token_hash"] for row in rows] == [hashlib.sha256(raw.encode()).hexdigest()]
    assert all(raw not in str(value) for row in rows for value in row.values())


async def test_last_used_at_is_set_after_the_token_is_used(api, world):
    token = await make_token(world.user, "read")
    assert await AccessToken.all().values_list("last_used_at", flat=True) == [None]

    response = await api.get("/users/me", token)

    assert response.status_code == 200
    [last_used_at] = await AccessToken.all().values_list("last_used_at", flat=True)
    assert last_used_at is not None
