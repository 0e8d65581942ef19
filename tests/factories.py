"""Factories for test data, built through the services so that rules apply as in production."""

from __future__ import annotations

import itertools
import json as jsonlib
import re
from dataclasses import dataclass
from typing import Any

from quart.typing import TestClientProtocol
from quart.wrappers import Response

from app.models import Application, Feedback, Organization, Reply, User
from app.services.applications import create_application
from app.services.feedback import create_thread, parse_submission
from app.services.organizations import create_organization
from app.services.replies import create_agent_reply
from app.services.security import hash_password
from app.services.tokens import create_token

PASSWORD = "correct horse battery"
_PASSWORD_HASH = hash_password(PASSWORD)
_sequence = itertools.count(1)


async def make_user(email: str | None = None, name: str = "Agent Smith", plan: str = "free") -> User:
    """A user whose password is ``PASSWORD`` (hashed once per session, argon2 is slow on purpose)."""
    number = next(_sequence)
    return await User.create(
        email=email or f"agent{number}@example.com", name=name, password_hash=_PASSWORD_HASH, plan=plan
    )


async def make_token(user: User, *scopes: str, name: str = "test") -> str:
    """A raw bearer token for ``user`` (read and write unless scopes are given)."""
    _, raw = await create_token(user, scopes or ("read", "write"), name)
    return raw


async def make_organization(*members: User, name: str = "Acme", plan: str = "free") -> Organization:
    return await create_organization(name, members, plan)


async def make_application(owner: User, data_dir: Any = "/nonexistent", **fields: object) -> Application:
    """An application owned by ``owner``; ``fields`` are the create form's fields."""
    fields.setdefault("name", f"App {next(_sequence)}")
    return await create_application(owner, fields, None, data_dir)


async def make_thread(application: Application, **body: object) -> Feedback:
    """A thread submitted as the capture API would; ``body`` holds submit fields."""
    body.setdefault("email", f"customer{next(_sequence)}@example.org")
    body.setdefault("message", "The export button does nothing.")
    submission = parse_submission(body, "203.0.113.7", "pytest-factory/1.0")
    return await create_thread(application, submission)


async def make_reply(
    user: User,
    application: Application,
    thread: Feedback,
    message: str = "Thanks, we are on it.",
    type: str = "reply",
) -> Reply:
    return await create_agent_reply(user, application, thread, message, type)


@dataclass
class Api:
    """Thin helper over the test client: ``await api.get("/users/me", token)``."""

    client: TestClientProtocol

    @staticmethod
    def _headers(token: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    async def get(self, path: str, token: str | None = None, **kwargs: Any) -> Response:
        return await self.client.get(
            path, headers=self._headers(token, kwargs.pop("headers", None)), **kwargs
        )

    async def post(self, path: str, token: str | None = None, **kwargs: Any) -> Response:
        return await self.client.post(
            path, headers=self._headers(token, kwargs.pop("headers", None)), **kwargs
        )

    async def put(self, path: str, token: str | None = None, **kwargs: Any) -> Response:
        return await self.client.put(
            path, headers=self._headers(token, kwargs.pop("headers", None)), **kwargs
        )

    async def patch(self, path: str, token: str | None = None, **kwargs: Any) -> Response:
        return await self.client.patch(
            path, headers=self._headers(token, kwargs.pop("headers", None)), **kwargs
        )


async def body_json(response: Response) -> Any:
    """The response body parsed as JSON, after checking its content type."""
    assert response.mimetype == "application/json", response.mimetype
    return jsonlib.loads(await response.get_data(as_text=True))


async def body_text(response: Response) -> str:
    return await response.get_data(as_text=True)


async def csrf_of(client: TestClientProtocol, path: str = "/app/login") -> str:
    """The CSRF token of the client's session, read from a form on ``path``."""
    page = await (await client.get(path)).get_data(as_text=True)
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert match, f"no CSRF token on {path}"
    return match.group(1)


async def sign_in(client: TestClientProtocol, user: User) -> str:
    """Sign ``user`` in to the web app on ``client``; returns the session's CSRF token."""
    token = await csrf_of(client)
    response = await client.post(
        "/app/login", form={"email": user.email, "password": PASSWORD, "csrf_token": token}
    )
    assert response.status_code == 302, response.status_code
    return token
