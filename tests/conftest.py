"""Shared fixtures: a migrated database per backend, the app, its test client, and API helpers.

Every test that takes ``db`` (directly or through ``client``) runs once on SQLite and once on
PostgreSQL; the PostgreSQL half is skipped unless ``EARFUL_TEST_POSTGRES_URL`` names a server
whose user may create databases. Each backend's database is built by the migrations, once per
session, and emptied after every test.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from quart import Quart
from quart.typing import TestClientProtocol
from tortoise import Tortoise, connections
from tortoise.backends.base.executor import EXECUTOR_CACHE
from tortoise.contrib.test import _topological_sort_models

from app import create_app
from app.config import CaptureLimits, Settings, sqlite_url
from app.db import close_database, open_database, transactional, upgrade_database
from app.models import Application, User
from app.private_files import make_private_dir
from app.services.deployment import use_settings
from app.services.invalidation import forget_all
from app.services.tag_labels import tag_labels
from app.services.thread_writer import known_tags
from app.workers import background_worker
from tests.compile_once import compile_once_per_session
from tests.factories import Api, make_application, make_token, make_user
from tests.openapi_check import CheckedClient
from tests.smtp_relay import Relay

pytest_plugins = ["tests.mail_fixtures", "tests.s3_fixtures"]

compile_once_per_session()

BASE_URL = "http://earful.test"
INTAKE_DOMAIN = "in.earful.test"
POSTGRES_ENV = "EARFUL_TEST_POSTGRES_URL"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _asyncpg_dsn(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


async def create_postgres_database(prefix: str) -> str:
    """A new, empty PostgreSQL database on the server of EARFUL_TEST_POSTGRES_URL; its URL.

    Skips the test when the variable is not set.
    """
    admin_url = os.environ.get(POSTGRES_ENV)
    if not admin_url:
        pytest.skip(f"PostgreSQL tests skipped: {POSTGRES_ENV} is not set")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(_asyncpg_dsn(admin_url))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return _with_database(admin_url, name)


async def drop_postgres_database(url: str) -> None:
    """Drop a database made by :func:`create_postgres_database`, connections and all."""
    admin = await asyncpg.connect(_asyncpg_dsn(os.environ[POSTGRES_ENV]))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path.lstrip("/")}" WITH (FORCE)')
    finally:
        await admin.close()


@asynccontextmanager
async def throwaway_postgres_database(prefix: str) -> AsyncIterator[str]:
    """A new, empty PostgreSQL database for the block, dropped afterwards (skips without a server)."""
    url = await create_postgres_database(prefix)
    try:
        yield url
    finally:
        await drop_postgres_database(url)


@pytest.fixture(scope="session")
async def migrated_databases() -> AsyncIterator[dict[str, str]]:
    """Each backend's database built by the migrations, by backend name: filled at first use,
    kept for the whole session, the PostgreSQL one dropped at its end.

    ``database_url`` is a parametrized session fixture, and pytest keeps one of its values at a
    time: it finalizes the SQLite value before a PostgreSQL test and makes it again after. Under
    ``--dist loadfile`` each file runs its SQLite half and then its PostgreSQL half, so a
    database made inside that fixture was migrated again for every file and backend (3-4 s
    each, a third of the suite's time); made here, it is migrated once per backend.
    """
    made: dict[str, str] = {}
    yield made
    if "postgres" in made:
        await drop_postgres_database(made["postgres"])


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
async def database_url(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    migrated_databases: dict[str, str],
) -> str:
    """A database built by the migrations, one per backend for the whole session."""
    backend: str = request.param
    if backend not in migrated_databases:
        if backend == "sqlite":
            url = sqlite_url(tmp_path_factory.mktemp("sqlite") / "earful.sqlite3")
        else:
            url = await create_postgres_database("earful_test")
        await upgrade_database(url)
        migrated_databases[backend] = url
    return migrated_databases[backend]


@pytest.fixture(scope="session")
async def orm(database_url: str) -> AsyncIterator[str]:
    """The ORM, open on the session's database of the current backend.

    Tortoise caches insert statements per connection name, whatever the dialect; a process that
    switches from SQLite to PostgreSQL (only this test session does) must drop that cache.
    """
    EXECUTOR_CACHE.clear()
    await open_database(database_url)
    yield database_url
    await close_database()


async def empty_database() -> None:
    """Delete every row, children first. On PostgreSQL this is ten times faster than TRUNCATE
    for tables this small; ids keep counting, so tests never assume them."""

    client = connections.get("default")
    analyzed = False
    if client.capabilities.dialect == "sqlite":
        _, found = await client.execute_query("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")
        analyzed = bool(found)

    @transactional
    async def delete_every_row() -> None:
        for model in _topological_sort_models(list(Tortoise.apps.get_models_iterable())):
            await model.all().delete()
        if analyzed:  # a test that seeded analyzed its rows: the next one plans with its own
            await connections.get("default").execute_query("DELETE FROM sqlite_stat1")

    await delete_every_row()
    if analyzed:
        await client.execute_script("ANALYZE sqlite_schema")  # the planner reads the statistics again
    forget_all()  # the capture API's applications and blocklists, the agents of applications
    known_tags.clear()
    tag_labels.clear()


@pytest.fixture
async def db(orm: str) -> AsyncIterator[str]:
    """An empty database for one test; yields its URL."""
    yield orm
    await empty_database()
    use_settings(PLAIN_DEPLOYMENT)


@pytest.fixture
def backend(db: str) -> str:
    """The name of the current database backend."""
    return "sqlite" if db.startswith("sqlite") else "postgres"


# The deployment a test's services see when it asks for no settings (no e-mail is sent).
PLAIN_DEPLOYMENT = Settings(
    "sqlite://:memory:", Path("/nonexistent"), BASE_URL, INTAKE_DOMAIN, "test-secret-key"
)


@pytest.fixture(scope="session", autouse=True)
def routes() -> None:
    """The app's routes, for the links that services write (webhook events, e-mails)."""
    create_app(PLAIN_DEPLOYMENT)


@pytest.fixture
def settings(db: str, tmp_path: Path) -> Settings:
    """The test deployment's settings, which the services use too (app.services.deployment); its
    data dir exists, as a served deployment's does."""
    make_private_dir(tmp_path / "data")
    value = Settings(
        database_url=db,
        data_dir=tmp_path / "data",
        base_url=BASE_URL,
        intake_domain=INTAKE_DOMAIN,
        secret_key="test-secret-key",
        # Tests submit far faster than people do; the rate-limit tests set their own limits.
        capture_limits=CaptureLimits(*(4 * (10**6,))),
    )
    use_settings(value)
    return value


@pytest.fixture
def hook_settings(settings: Settings) -> Settings:
    """The test settings with EARFUL_WEBHOOK_ALLOW_PRIVATE=1 (receivers listen on loopback)."""
    changed = dataclasses.replace(settings, webhook_allow_private=True)
    use_settings(changed)
    return changed


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Quart]:
    application = create_app(settings, manage_db=False)
    async with application.test_app():
        yield application


@pytest.fixture
def client(app: Quart) -> Iterator[TestClientProtocol]:
    """The test client; every answer from an address of the API document must match it."""
    app.test_client_class = CheckedClient
    checked = app.test_client()
    assert isinstance(checked, CheckedClient)
    yield checked
    assert not checked.violations.found, "answers that break /openapi.json:\n" + "\n".join(
        checked.violations.found
    )


@pytest.fixture
async def agent(db: str) -> User:
    """An agent on the free plan."""
    return await make_user(email="agent@example.com", name="Ann Agent")


@pytest.fixture
async def token(agent: User) -> str:
    """A read and write token of ``agent``."""
    return await make_token(agent)


@pytest.fixture
async def application(agent: User) -> Application:
    """An application owned by ``agent``."""
    return await make_application(agent)


@pytest.fixture
def api(client: TestClientProtocol) -> Api:
    """Calls the APIs through the test client, as any user (see tests.factories.Api)."""
    return Api(client)


@pytest.fixture
async def relay() -> AsyncIterator[Relay]:
    """A running SMTP relay on a free loopback port, keeping the mail Earful sends."""
    server = Relay()
    await server.start()
    yield server
    await server.stop()


class QueryCounter(logging.Handler):
    """Counts the SQL statements Tortoise sends (it logs each one at DEBUG), leaving out those
    of the app's background workers (the search indexer runs while a test app serves)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.statements: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if background_worker.get() is not None:
            return
        message = record.getMessage()
        if not message.startswith(("Created connection pool", "Closed connection pool")):
            self.statements.append(message)

    @property
    def count(self) -> int:
        return len(self.statements)


@pytest.fixture
def queries() -> Iterator[QueryCounter]:
    """Record the statements run while the test runs; reset with ``queries.statements.clear()``."""
    logger = logging.getLogger("tortoise.db_client")
    counter = QueryCounter()
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(counter)
    try:
        yield counter
    finally:
        logger.removeHandler(counter)
        logger.setLevel(previous)
