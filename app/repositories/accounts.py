"""Users, their access tokens, sign-in throttles and password reset requests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError

from app.repositories.sql import (
    Row,
    change,
    change_returning,
    column_keys,
    columns,
    moment,
    read_moment,
    read_optional_moment,
    select,
    select_one,
)


class EmailTaken(Exception):
    """Another user has this e-mail address."""


@dataclass(slots=True)
class UserRow:
    """A user: an agent or admin of the web app and the management API."""

    id: int
    email: str
    name: str
    password_hash: str
    plan: str
    session_version: int
    created_at: datetime
    updated_at: datetime


@dataclass(slots=True)
class AgentRow:
    """The agent beside a reply: who wrote it, as a reply shows it, without the account's
    secrets and dates (a page of replies reads fifty of them, and a hash has no business in a
    list read)."""

    id: int
    email: str
    name: str


@dataclass(slots=True)
class TokenRow:
    """A personal access token (its digest only), with its user when read for a request."""

    id: int
    user_id: int
    name: str
    token_hash: str
    scopes: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    user: UserRow | None = None

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())


USER_COLUMNS = ("id", "email", "name", "password_hash", "plan", "session_version", "created_at", "updated_at")
TOKEN_COLUMNS = ("id", "user_id", "name", "token_hash", "scopes", "created_at", "last_used_at", "revoked_at")
AGENT_COLUMNS = ("id", "email", "name")
SELECT_USERS = f"SELECT {columns('u', USER_COLUMNS)} FROM users u"


def user_of(row: Row, alias: str = "u") -> UserRow:
    """The user whose columns a row holds under ``alias``."""
    key = column_keys(alias, USER_COLUMNS)
    return UserRow(
        id=row[key["id"]],
        email=row[key["email"]],
        name=row[key["name"]],
        password_hash=row[key["password_hash"]],
        plan=row[key["plan"]],
        session_version=row[key["session_version"]],
        created_at=read_moment(row[key["created_at"]]),
        updated_at=read_moment(row[key["updated_at"]]),
    )


def optional_user_of(row: Row, alias: str = "u") -> UserRow | None:
    """:func:`user_of` for the outer side of a join: None where the row has no user."""
    return None if row[column_keys(alias, USER_COLUMNS)["id"]] is None else user_of(row, alias)


def optional_agent_of(row: Row, alias: str = "u") -> AgentRow | None:
    """The agent whose AGENT_COLUMNS a row holds under ``alias``; None where it has none (the
    outer side of a join)."""
    key = column_keys(alias, AGENT_COLUMNS)
    agent_id = row[key["id"]]
    return None if agent_id is None else AgentRow(agent_id, row[key["email"]], row[key["name"]])


def agent_of(row: Row, alias: str = "u") -> AgentRow:
    """The agent whose AGENT_COLUMNS a row holds under ``alias``."""
    agent = optional_agent_of(row, alias)
    if agent is None:
        raise LookupError("the row holds no agent")
    return agent


def agent_of_user(user: UserRow) -> AgentRow:
    """A user as a reply shows its agent."""
    return AgentRow(user.id, user.email, user.name)


def token_of(row: Row) -> TokenRow:
    return TokenRow(
        id=row["t.id"],
        user_id=row["t.user_id"],
        name=row["t.name"],
        token_hash=row["t.token_hash"],
        scopes=row["t.scopes"],
        created_at=read_moment(row["t.created_at"]),
        last_used_at=read_optional_moment(row["t.last_used_at"]),
        revoked_at=read_optional_moment(row["t.revoked_at"]),
    )


# Users ---------------------------------------------------------------------------------------


async def user_by_id(user_id: int) -> UserRow | None:
    row = await select_one(SELECT_USERS + " WHERE u.id = {}", [user_id])
    return None if row is None else user_of(row)


async def users_by_ids(user_ids: list[int]) -> list[UserRow]:
    """The users with these ids (those that exist), by name."""
    if not user_ids:
        return []
    marks = ", ".join("{}" for _ in user_ids)
    rows = await select(SELECT_USERS + f" WHERE u.id IN ({marks}) ORDER BY u.name, u.id", user_ids)
    return [user_of(row) for row in rows]


async def user_by_email(email: str) -> UserRow | None:
    """The user with this (normalized) address."""
    row = await select_one(SELECT_USERS + " WHERE u.email = {}", [email])
    return None if row is None else user_of(row)


# The user ``u`` of a web session, while the session's version is the user's.
SESSION_CONDITION = "u.id = {} AND u.session_version = {}"


async def user_in_session(user_id: int, session_version: int) -> UserRow | None:
    """The user of a web session, if the session's version is still the user's."""
    row = await select_one(f"{SELECT_USERS} WHERE {SESSION_CONDITION}", [user_id, session_version])
    return None if row is None else user_of(row)


async def users_by_email(emails: list[str]) -> list[UserRow]:
    if not emails:
        return []
    marks = ", ".join("{}" for _ in emails)
    return [user_of(row) for row in await select(SELECT_USERS + f" WHERE u.email IN ({marks})", emails)]


async def any_user_exists() -> bool:
    return await select_one("SELECT 1 AS one FROM users LIMIT 1") is not None


async def insert_user(
    email: str, name: str, password_hash: str, now: datetime, plan: str = "free"
) -> UserRow:
    """A new user; :class:`EmailTaken` when the address has one already."""
    try:
        rows = await change_returning(
            "INSERT INTO users (email, name, password_hash, plan, session_version, created_at, updated_at) "
            "VALUES ({}, {}, {}, {}, 1, {}, {}) RETURNING id",
            [email, name, password_hash, plan, moment(now), moment(now)],
        )
    except IntegrityError:
        raise EmailTaken(email) from None
    return UserRow(rows[0]["id"], email, name, password_hash, plan, 1, now, now)


async def replace_password(
    user_id: int, password_hash: str, now: datetime, unless_changed_from: UserRow | None = None
) -> bool:
    """Store a new password hash and end every session of the user (the session version goes up).

    With ``unless_changed_from``, only while the user's hash and session version are still that
    row's; False when they are not (or the user is gone).
    """
    template = (
        "UPDATE users SET password_hash = {}, session_version = session_version + 1, updated_at = {} "
        "WHERE id = {}"
    )
    values: list[object] = [password_hash, moment(now), user_id]
    if unless_changed_from is not None:
        template += " AND password_hash = {} AND session_version = {}"
        values += [unless_changed_from.password_hash, unless_changed_from.session_version]
    return await change(template, values) > 0


async def end_sessions(user_id: int) -> None:
    """Every session of the user ends (sign-out signs out everywhere)."""
    await change("UPDATE users SET session_version = session_version + 1 WHERE id = {}", [user_id])


def plan_of_user_query(user_id: int) -> tuple[str, list[object]]:
    """The statement that reads a user's plan; :func:`plan_of_rows` reads its one row or none."""
    return "SELECT plan FROM users WHERE id = {}", [user_id]


def plan_of_rows(rows: Sequence[Row]) -> str | None:
    """The plan a plan's statement found, or None when it found no row."""
    return str(rows[0]["plan"]) if rows else None


async def set_user_plan(email: str, plan: str) -> bool:
    """Put the user with this address on a plan; False when there is none."""
    return await change("UPDATE users SET plan = {} WHERE email = {}", [plan, email]) > 0


# Tokens --------------------------------------------------------------------------------------


async def insert_token(user_id: int, name: str, token_hash: str, scopes: str, now: datetime) -> TokenRow:
    rows = await change_returning(
        "INSERT INTO access_tokens (user_id, name, token_hash, scopes, created_at) "
        "VALUES ({}, {}, {}, {}, {}) RETURNING id",
        [user_id, name, token_hash, scopes, moment(now)],
    )
    return TokenRow(rows[0]["id"], user_id, name, token_hash, scopes, now, None, None)


# A live token (one not revoked) by its digest, with its user: the columns, the tables and the
# condition, which app.repositories.applications joins with an application.
TOKEN_WITH_USER_COLUMNS = f"{columns('t', TOKEN_COLUMNS)}, {columns('u', USER_COLUMNS)}"
TOKEN_WITH_USER_TABLES = "access_tokens t JOIN users u ON u.id = t.user_id"
LIVE_TOKEN_CONDITION = "t.token_hash = {} AND t.revoked_at IS NULL"


def token_with_user_of(row: Row) -> TokenRow:
    """A token and its user from a row of TOKEN_WITH_USER_COLUMNS."""
    token = token_of(row)
    token.user = user_of(row)
    return token


_LIVE_TOKEN = f"SELECT {TOKEN_WITH_USER_COLUMNS} FROM {TOKEN_WITH_USER_TABLES} WHERE {LIVE_TOKEN_CONDITION}"


async def live_token(token_hash: str) -> TokenRow | None:
    """The token with this digest that is not revoked, with its user."""
    row = await select_one(_LIVE_TOKEN, [token_hash])
    return None if row is None else token_with_user_of(row)


async def mark_token_used(token_id: int, now: datetime) -> None:
    await change("UPDATE access_tokens SET last_used_at = {} WHERE id = {}", [moment(now), token_id])


async def live_tokens_of(user_id: int) -> list[TokenRow]:
    """The user's tokens that are not revoked, newest first."""
    rows = await select(
        f"SELECT {columns('t', TOKEN_COLUMNS)} FROM access_tokens t "
        "WHERE t.user_id = {} AND t.revoked_at IS NULL ORDER BY t.id DESC",
        [user_id],
    )
    return [token_of(row) for row in rows]


async def revoke_token(user_id: int, token_id: int, now: datetime) -> bool:
    """Revoke one of the user's live tokens; False when the user has no such token."""
    return (
        await change(
            "UPDATE access_tokens SET revoked_at = {} WHERE id = {} AND user_id = {} AND revoked_at IS NULL",
            [moment(now), token_id, user_id],
        )
        > 0
    )


# Sign-in throttles ---------------------------------------------------------------------------

# One statement takes a slot: a new window starts when the last one is over; otherwise the
# attempt is admitted while under the limit, or (spaced throttles) when the last admitted one
# is far enough back. SET expressions see the row as it was, so every CASE tests the same state.
_EXPIRED = "t.window_started_at < {}"
_ROOM = "t.admitted < {} OR t.last_admitted_at < {}"
_TAKE = (
    "INSERT INTO sign_in_throttles AS t (key, window_started_at, admitted, last_admitted_at, last_refused) "
    "VALUES ({}, {}, 1, {}, FALSE) ON CONFLICT (key) DO UPDATE SET "
    f"admitted = CASE WHEN {_EXPIRED} THEN 1 WHEN {_ROOM} THEN t.admitted + 1 ELSE t.admitted END, "
    f"last_admitted_at = CASE WHEN {_EXPIRED} OR {_ROOM} THEN {{}} ELSE t.last_admitted_at END, "
    f"last_refused = NOT ({_EXPIRED} OR {_ROOM}), "
    f"window_started_at = CASE WHEN {_EXPIRED} THEN {{}} ELSE t.window_started_at END "
    "RETURNING last_refused"
)


async def take_throttle_slot(
    key: str, limit: int, now: datetime, since: datetime, spaced_before: datetime
) -> bool:
    """Take a slot of the throttle ``key``: admitted while fewer than ``limit`` were admitted since
    ``since`` (then a new window starts), or when the last admitted one is older than
    ``spaced_before``. False when refused."""
    expired = [moment(since)]
    room = [limit, moment(spaced_before)]
    at = moment(now)
    values = [key, at, at, *expired, *room, *expired, *room, at, *expired, *room, *expired, at]
    rows = await change_returning(_TAKE, values)
    return not rows[0]["last_refused"]


async def forget_throttle(key: str) -> None:
    await change("DELETE FROM sign_in_throttles WHERE key = {}", [key])


async def give_back_slots(keys: list[str]) -> None:
    """One admitted attempt less on each throttle (a successful sign-in does not count)."""
    marks = ", ".join("{}" for _ in keys)
    await change(
        f"UPDATE sign_in_throttles SET admitted = admitted - 1 WHERE key IN ({marks}) AND admitted > 0", keys
    )


async def drop_throttles_before(since: datetime) -> None:
    """Forget the throttles whose window ended."""
    await change("DELETE FROM sign_in_throttles WHERE window_started_at < {}", [moment(since)])


async def throttle_keys() -> list[str]:
    return [str(row["key"]) for row in await select("SELECT key FROM sign_in_throttles ORDER BY key")]


# Password reset requests ---------------------------------------------------------------------


async def drop_reset_requests_before(since: datetime) -> None:
    await change("DELETE FROM password_reset_requests WHERE created_at < {}", [moment(since)])


async def reset_requests_of(user_id: int) -> int:
    row = await select_one(
        "SELECT COUNT(*) AS total FROM password_reset_requests WHERE user_id = {}", [user_id]
    )
    return int(row["total"]) if row else 0


async def record_reset_request(user_id: int, now: datetime) -> None:
    await change(
        "INSERT INTO password_reset_requests (user_id, created_at) VALUES ({}, {})", [user_id, moment(now)]
    )
