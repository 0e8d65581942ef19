"""Applications: who sees them, their settings and keys, and the counters kept on them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from app.models import PLATFORMS
from app.repositories.accounts import (
    AGENT_COLUMNS,
    LIVE_TOKEN_CONDITION,
    SESSION_CONDITION,
    TOKEN_WITH_USER_COLUMNS,
    TOKEN_WITH_USER_TABLES,
    USER_COLUMNS,
    AgentRow,
    TokenRow,
    UserRow,
    agent_of,
    plan_of_rows,
    plan_of_user_query,
    token_with_user_of,
    user_of,
)
from app.repositories.organizations import ORGANIZATION_COLUMNS, OrganizationRow, organization_of
from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    moment,
    read_moment,
    select,
    select_one,
)


@dataclass(slots=True)
class ApplicationRow:
    """An application with its platform keys, intake address and reply-time statistics."""

    id: int
    owner_id: int
    organization_id: int | None
    name: str
    url: str | None
    logo_name: str | None
    key_javascript: str
    key_ios: str
    key_android: str
    key_api: str
    intake_token: str
    uploads_enabled: bool
    target_average_first_reply_time: int
    capture_enabled: bool
    submits_per_minute: int | None
    opens_per_minute: int | None
    uploads_per_minute: int | None
    submits_per_minute_total: int | None
    allowed_origins: tuple[str, ...]
    first_reply_total: int
    first_reply_count: int
    open_threads: int
    archived_threads: int
    reply_count: int
    created_at: datetime
    updated_at: datetime
    retention_days: int | None = None  # threads older than this are deleted; None: kept forever
    retention_archived_only: bool = False
    receipts_enabled: bool = False  # a receipt e-mailed to the customer for each new thread
    organization: OrganizationRow | None = None

    @property
    def average_first_reply_time(self) -> int:
        if not self.first_reply_count:
            return 0
        return round(self.first_reply_total / self.first_reply_count)


APPLICATION_COLUMNS = (
    "id", "owner_id", "organization_id", "name", "url", "logo_name", "key_javascript", "key_ios",
    "key_android", "key_api", "intake_token", "uploads_enabled", "target_average_first_reply_time",
    "capture_enabled", "submits_per_minute", "opens_per_minute", "uploads_per_minute",
    "submits_per_minute_total", "allowed_origins", "first_reply_total", "first_reply_count", "open_threads",
    "archived_threads", "reply_count",
    "created_at", "updated_at", "retention_days", "retention_archived_only", "receipts_enabled",
)  # fmt: skip
# What a settings change may write (the service validates the values).
SETTINGS = frozenset(
    {
        "name", "url", "logo_name", "organization_id", "uploads_enabled", "target_average_first_reply_time",
        "capture_enabled", "submits_per_minute", "opens_per_minute", "uploads_per_minute",
        "submits_per_minute_total", "allowed_origins", "retention_days", "retention_archived_only",
        "receipts_enabled",
    }
)  # fmt: skip
COUNTERS = frozenset(
    {"open_threads", "archived_threads", "reply_count", "first_reply_total", "first_reply_count"}
)
SELECT_APPLICATIONS = f"SELECT {columns('a', APPLICATION_COLUMNS)} FROM applications a"


def visible_to(user: str) -> str:
    """The condition that the user ``user`` (an expression: a parameter, a column) sees the
    application ``a``: its owner, and the members of its organization."""
    return (
        f"(a.owner_id = {user} OR a.organization_id IN "
        f"(SELECT m.organization_id FROM memberships m WHERE m.user_id = {user}))"
    )


# Who sees an application, for a user id given twice as parameters.
VISIBLE = visible_to("{}")
# The application ``a`` of the id given as a parameter, joined when the user ``u`` sees it.
_VISIBLE_APPLICATION_JOIN = f"LEFT JOIN applications a ON a.id = {{}} AND {visible_to('u.id')}"
_LIVE_TOKEN_AND_APPLICATION = (
    f"SELECT {TOKEN_WITH_USER_COLUMNS}, {columns('a', APPLICATION_COLUMNS)} "
    f"FROM {TOKEN_WITH_USER_TABLES} {_VISIBLE_APPLICATION_JOIN} WHERE {LIVE_TOKEN_CONDITION}"
)
_USER_IN_SESSION_AND_APPLICATION = (
    f"SELECT {columns('u', USER_COLUMNS)}, {columns('a', APPLICATION_COLUMNS)} FROM users u "
    f"{_VISIBLE_APPLICATION_JOIN} WHERE {SESSION_CONDITION}"
)


def application_of(row: Row) -> ApplicationRow:
    return ApplicationRow(
        id=row["a.id"],
        owner_id=row["a.owner_id"],
        organization_id=row["a.organization_id"],
        name=row["a.name"],
        url=row["a.url"],
        logo_name=row["a.logo_name"],
        key_javascript=row["a.key_javascript"],
        key_ios=row["a.key_ios"],
        key_android=row["a.key_android"],
        key_api=row["a.key_api"],
        intake_token=row["a.intake_token"],
        uploads_enabled=bool(row["a.uploads_enabled"]),
        target_average_first_reply_time=row["a.target_average_first_reply_time"],
        capture_enabled=bool(row["a.capture_enabled"]),
        submits_per_minute=row["a.submits_per_minute"],
        opens_per_minute=row["a.opens_per_minute"],
        uploads_per_minute=row["a.uploads_per_minute"],
        submits_per_minute_total=row["a.submits_per_minute_total"],
        allowed_origins=tuple((row["a.allowed_origins"] or "").split()),
        first_reply_total=row["a.first_reply_total"],
        first_reply_count=row["a.first_reply_count"],
        open_threads=row["a.open_threads"],
        archived_threads=row["a.archived_threads"],
        reply_count=row["a.reply_count"],
        created_at=read_moment(row["a.created_at"]),
        updated_at=read_moment(row["a.updated_at"]),
        retention_days=row["a.retention_days"],
        retention_archived_only=bool(row["a.retention_archived_only"]),
        receipts_enabled=bool(row["a.receipts_enabled"]),
    )


async def visible_applications(user_id: int) -> list[ApplicationRow]:
    """Every application the user may see, oldest first."""
    rows = await select(f"{SELECT_APPLICATIONS} WHERE {VISIBLE} ORDER BY a.id", [user_id, user_id])
    return [application_of(row) for row in rows]


async def visible_applications_with_organizations(user_id: int) -> list[ApplicationRow]:
    """:func:`visible_applications`, each with its organization."""
    rows = await select(
        f"SELECT {columns('a', APPLICATION_COLUMNS)}, {columns('o', ORGANIZATION_COLUMNS)} "
        "FROM applications a LEFT JOIN organizations o ON o.id = a.organization_id "
        f"WHERE {VISIBLE} ORDER BY a.id",
        [user_id, user_id],
    )
    found = []
    for row in rows:
        application = application_of(row)
        application.organization = None if row["o.id"] is None else organization_of(row)
        found.append(application)
    return found


async def live_token_and_application(
    token_hash: str, application_id: int
) -> tuple[TokenRow, ApplicationRow | None] | None:
    """:func:`app.repositories.accounts.live_token`, and in the same statement the application
    if the token's user sees it: an API request on an application reads both anyway, and on
    PostgreSQL a statement is a round trip. None when there is no such live token."""
    row = await select_one(_LIVE_TOKEN_AND_APPLICATION, [application_id, token_hash])
    if row is None:
        return None
    return token_with_user_of(row), _joined_application(row)


async def user_in_session_and_application(
    user_id: int, session_version: int, application_id: int
) -> tuple[UserRow, ApplicationRow | None] | None:
    """:func:`app.repositories.accounts.user_in_session`, and in the same statement the
    application if that user sees it (a page of an application reads both). None when the
    session's version is not the user's any more."""
    row = await select_one(_USER_IN_SESSION_AND_APPLICATION, [application_id, user_id, session_version])
    if row is None:
        return None
    return user_of(row), _joined_application(row)


def _joined_application(row: Row) -> ApplicationRow | None:
    """The application of _VISIBLE_APPLICATION_JOIN, None when it joined no row."""
    return None if row["a.id"] is None else application_of(row)


async def visible_application(user_id: int, application_id: int) -> ApplicationRow | None:
    """One application, if the user may see it."""
    row = await select_one(
        f"{SELECT_APPLICATIONS} WHERE a.id = {{}} AND {VISIBLE}", [application_id, user_id, user_id]
    )
    return None if row is None else application_of(row)


async def application_by_id(application_id: int) -> ApplicationRow | None:
    """One application, whoever asks (the capture API, e-mail intake, the command line)."""
    row = await select_one(f"{SELECT_APPLICATIONS} WHERE a.id = {{}}", [application_id])
    return None if row is None else application_of(row)


async def applications_by_id(application_id: int | None = None) -> list[ApplicationRow]:
    """Every application (or the one with this id), oldest first."""
    if application_id is None:
        rows = await select(f"{SELECT_APPLICATIONS} ORDER BY a.id")
    else:
        rows = await select(f"{SELECT_APPLICATIONS} WHERE a.id = {{}}", [application_id])
    return [application_of(row) for row in rows]


async def applications_of_organization(organization_id: int) -> list[ApplicationRow]:
    """The applications that belong to an organization, by name."""
    rows = await select(
        f"{SELECT_APPLICATIONS} WHERE a.organization_id = {{}} ORDER BY a.name, a.id", [organization_id]
    )
    return [application_of(row) for row in rows]


# The users who work an application: its creator and the members of its organization.
_AGENT_IDS = (
    "SELECT a.owner_id FROM applications a WHERE a.id = {} UNION SELECT m.user_id FROM memberships m "
    "JOIN applications a ON a.organization_id = m.organization_id WHERE a.id = {}"
)


async def agents_of_application(application_id: int) -> list[AgentRow]:
    """The agents of an application (its creator and its organization's members), by name: as
    the pickers show them, without their accounts' secrets and dates."""
    rows = await select(
        f"SELECT {columns('u', AGENT_COLUMNS)} FROM users u WHERE u.id IN ({_AGENT_IDS}) "
        "ORDER BY u.name, u.id",
        [application_id, application_id],
    )
    return [agent_of(row) for row in rows]


def plan_of_application_query(organization_id: int | None, owner_id: int) -> tuple[str, list[object]]:
    """The statement of :func:`plan_of_application` (the thread page reads it with the thread:
    app.repositories.thread_parts); :func:`~app.repositories.accounts.plan_of_rows` reads its
    rows."""
    if organization_id is not None:
        return "SELECT plan FROM organizations WHERE id = {}", [organization_id]
    return plan_of_user_query(owner_id)


async def plan_of_application(organization_id: int | None, owner_id: int) -> str | None:
    """The plan an application is on: its organization's, else its owner's (None when that
    organization or user is gone)."""
    return plan_of_rows(await select(*plan_of_application_query(organization_id, owner_id)))


async def agent_of_application(application_id: int, user_id: int) -> UserRow | None:
    """The user, if they are an agent of the application (its creator or a member of its
    organization)."""
    row = await select_one(
        f"SELECT {columns('u', USER_COLUMNS)} FROM users u WHERE u.id = {{}} AND u.id IN ({_AGENT_IDS})",
        [user_id, application_id, application_id],
    )
    return None if row is None else user_of(row)


async def has_logo(application_id: int, logo_name: str) -> bool:
    row = await select_one(
        "SELECT 1 AS one FROM applications WHERE id = {} AND logo_name = {}", [application_id, logo_name]
    )
    return row is not None


async def insert_application(
    owner_id: int, keys: Mapping[str, str], intake_token: str, settings: Mapping[str, object], now: datetime
) -> ApplicationRow:
    """A new application with its keys and the given settings (the others take their defaults)."""
    unknown = set(settings) - SETTINGS
    if unknown:
        raise ValueError(f"not application settings: {sorted(unknown)}")
    values: dict[str, object] = {
        "owner_id": owner_id,
        "intake_token": intake_token,
        "uploads_enabled": True,
        "target_average_first_reply_time": 86400,
        "capture_enabled": True,
        "allowed_origins": "",
        **dict.fromkeys(sorted(COUNTERS), 0),
        **keys,
        **settings,
        "created_at": moment(now),
        "updated_at": moment(now),
    }
    rows = await change_returning(
        f"INSERT INTO applications ({', '.join(values)}) "
        f"VALUES ({', '.join('{}' for _ in values)}) RETURNING id",
        list(values.values()),
    )
    created = await select_one(f"{SELECT_APPLICATIONS} WHERE a.id = {{}}", [rows[0]["id"]])
    assert created is not None  # read inside the transaction that wrote it
    return application_of(created)


async def update_settings(application_id: int, settings: Mapping[str, object], now: datetime) -> None:
    """Write changed settings (names from SETTINGS)."""
    unknown = set(settings) - SETTINGS
    if unknown:
        raise ValueError(f"not application settings: {sorted(unknown)}")
    assignments = ", ".join(f"{name} = {{}}" for name in settings)
    await change(
        f"UPDATE applications SET {assignments}, updated_at = {{}} WHERE id = {{}}",
        [*settings.values(), moment(now), application_id],
    )


async def set_key(application_id: int, platform: str, key: str) -> None:
    """Replace one platform key."""
    if platform not in PLATFORMS:
        raise ValueError(f"not a platform: {platform!r}")
    await change(f"UPDATE applications SET key_{platform} = {{}} WHERE id = {{}}", [key, application_id])


async def add_to_counters(application_id: int, **deltas: int) -> None:
    """Move an application's counters (names from COUNTERS) by the given amounts."""
    unknown = set(deltas) - COUNTERS
    if unknown:
        raise ValueError(f"not application counters: {sorted(unknown)}")
    moved = {name: delta for name, delta in deltas.items() if delta}
    if not moved:
        return
    assignments = ", ".join(f"{name} = {name} + {{}}" for name in moved)
    await change(f"UPDATE applications SET {assignments} WHERE id = {{}}", [*moved.values(), application_id])
