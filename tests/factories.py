"""Factories for test data, built through the services so that rules apply as in production."""

from __future__ import annotations

import itertools
import json as jsonlib
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from quart.typing import TestClientProtocol
from quart.wrappers import Response

from app.config import DEFAULT_QUOTAS, Quotas, Settings
from app.db import transactional
from app.models import BlockedSender
from app.repositories import accounts, applications, threads
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.organizations import OrganizationRow
from app.repositories.replies import ReplyRow
from app.repositories.saved_replies import SavedReplyRow
from app.repositories.threads import ThreadRow
from app.repositories.webhooks import EndpointRow
from app.services.applications import create_application
from app.services.attachments import store_uploads
from app.services.blocklist import add_entry
from app.services.feedback import create_thread
from app.services.files import IncomingFile
from app.services.organizations import create_organization
from app.services.replies import add_customer_reply, create_agent_reply
from app.services.saved_replies import application_scope as saved_application_scope
from app.services.saved_replies import create_saved_reply
from app.services.saved_replies import organization_scope as saved_organization_scope
from app.services.storage import LocalStorage
from app.services.submissions import parse_submission
from app.services.tokens import create_token
from app.services.webhooks.endpoints import application_scope, create_endpoint

PASSWORD = "correct horse battery"
# argon2 reads a hash's cost from the hash itself, so the users made here carry a cheap argon2id
# hash: signing one in costs a test 1 ms instead of 160 (most page tests sign in). What the app
# hashes itself keeps its full cost (tests/services/test_security.py).
_PASSWORD_HASH = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash(PASSWORD)
_sequence = itertools.count(1)


async def make_user(email: str | None = None, name: str = "Agent Smith", plan: str = "free") -> UserRow:
    """A user whose password is ``PASSWORD`` (hashed once per session, argon2 is slow on purpose)."""
    number = next(_sequence)
    return await _insert_user(email or f"agent{number}@example.com", name, plan)


@transactional
async def _insert_user(email: str, name: str, plan: str) -> UserRow:
    return await accounts.insert_user(email, name, _PASSWORD_HASH, datetime.now(UTC), plan)


async def make_token(user: UserRow, *scopes: str, name: str = "test") -> str:
    """A raw bearer token for ``user`` (read and write unless scopes are given)."""
    _, raw = await create_token(user, scopes or ("read", "write"), name)
    return raw


async def make_organization(
    *members: UserRow, name: str = "Acme", plan: str = "free", owners: tuple[UserRow, ...] = ()
) -> OrganizationRow:
    """An organization of ``owners`` and ``members``; without owners, the first member owns it."""
    return await create_organization(name, members, plan, owners=owners)


async def make_application(owner: UserRow, **fields: object) -> ApplicationRow:
    """An application owned by ``owner``; ``fields`` are the create form's fields."""
    fields.setdefault("name", f"App {next(_sequence)}")
    return await create_application(owner, fields, None, LocalStorage(Path("/nonexistent")))


async def make_upload(
    application: ApplicationRow, name: str = "steps.txt", content: bytes = b"steps to reproduce"
) -> int:
    """An upload of the application (in a folder of its own), not yet attached; its id."""
    folder = LocalStorage(Path(tempfile.mkdtemp(prefix="earful-uploads-")))
    [upload] = await store_uploads(folder, application, [IncomingFile(name, content)], 10**6)
    return upload


async def make_thread(application: ApplicationRow, **body: object) -> ThreadRow:
    """A thread submitted as the capture API would; ``body`` holds submit fields."""
    body.setdefault("email", f"customer{next(_sequence)}@example.org")
    body.setdefault("message", "The export button does nothing.")
    quotas = body.pop("quotas", DEFAULT_QUOTAS)
    assert isinstance(quotas, Quotas)
    submission = parse_submission(body, "203.0.113.7", "pytest-factory/1.0", quotas)
    return await create_thread(application, submission, quotas)


async def block(application: ApplicationRow, *values: str) -> None:
    """Put entries on the application's blocklist, as a user types them."""
    for value in values:
        await add_entry(application, value)


@transactional
async def fill_blocklist(application: ApplicationRow, count: int) -> None:
    """``count`` network entries (10.x.y.0/24) on the application's blocklist, at once."""
    await BlockedSender.bulk_create(
        [
            BlockedSender(application_id=application.id, kind="network", value=f"10.{n >> 8}.{n & 255}.0/24")
            for n in range(count)
        ]
    )


async def application_row(application_id: int) -> ApplicationRow:
    """An application as the services read it, after a test changed it."""
    application = await applications.application_by_id(application_id)
    assert application is not None, application_id
    return application


async def thread_row(feedback_id: int) -> ThreadRow:
    """A thread as the services read it (with its sender), after a test changed it."""
    thread = await threads.thread_anywhere(feedback_id)
    assert thread is not None, feedback_id
    return thread


async def make_reply(
    user: UserRow,
    application: ApplicationRow,
    thread: ThreadRow,
    message: str = "Thanks, we are on it.",
    type: str = "reply",
) -> ReplyRow:
    return await create_agent_reply(user, application, thread, message, type)


async def make_customer_reply(
    application: ApplicationRow,
    thread: ThreadRow,
    email: str,
    message: str = "It happens again.",
    attachment_ids: tuple[int, ...] = (),
) -> ReplyRow:
    """An answer e-mailed by a customer (``email``) to a thread, as the intake writes it."""
    return await add_customer_reply(application, thread, email, message, attachment_ids)


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

    async def delete(self, path: str, token: str | None = None, **kwargs: Any) -> Response:
        return await self.client.delete(
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


async def sign_in(client: TestClientProtocol, user: UserRow) -> str:
    """Sign ``user`` in to the web app on ``client``; returns the signed-in session's CSRF token
    (sign-in starts a new session: the token of the sign-in form is no longer valid)."""
    response = await client.post(
        "/app/login", form={"email": user.email, "password": PASSWORD, "csrf_token": await csrf_of(client)}
    )
    assert response.status_code == 302, response.status_code
    return await csrf_of(client, "/app/account")


async def make_webhook(
    owner: UserRow, application: ApplicationRow, url: str, settings: Settings, **fields: object
) -> tuple[EndpointRow, str]:
    """An endpoint of the application (created by ``owner``, an administrator) and its secret."""
    scope = await application_scope(owner, application)
    return await create_endpoint(owner, scope, {"url": url, **fields}, settings)


async def make_saved_reply(
    user: UserRow,
    application: ApplicationRow | None = None,
    organization: OrganizationRow | None = None,
    title: str = "Thanks",
    text: str = "Hi {name}, thanks for writing to {application}.",
) -> SavedReplyRow:
    """A saved reply of the application, or of the organization (``user`` must own it)."""
    if application is not None:
        scope = saved_application_scope(application)
    else:
        assert organization is not None
        scope = await saved_organization_scope(user, organization.id)
    return await create_saved_reply(user, scope, {"title": title, "text": text})
