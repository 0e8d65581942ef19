"""Signing in with e-mail and password, throttled so that guessing is slow and nobody is locked out.

Every attempt first takes a slot, atomically and before the password is checked, from three
throttles, each counted over a fixed window of 15 minutes:

- **account and address**: 5 attempts, then that address is refused for that account until
  the window ends. This is the lock a guesser hits; others are not affected by it.
- **address**: 30 attempts across all accounts (one address spraying many accounts).
- **account**: after 10 attempts from anywhere, one attempt every 5 seconds. A guesser with
  many addresses gets ~180 tries an hour instead of thousands, and the owner of the account is
  slowed, never locked out (``admin@earful.local`` included).

A slot is taken with one upsert per throttle, inside one transaction; when any throttle
refuses, the transaction rolls back and nothing is counted. Parallel attempts therefore check
at most the limit (they used to be counted before and recorded after the check, so 40 at once
were all checked). A successful sign-in gives its slots back. The client's address is read
through ``EARFUL_TRUSTED_PROXIES`` (app.proxies), so users behind one reverse proxy do not
share one bucket.

An unknown e-mail address costs the same argon2 verification as a known one
(app.services.users.authenticate_user), so timing does not tell which addresses have accounts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.db import transactional
from app.errors import DomainError, ValidationError
from app.repositories import accounts
from app.repositories.accounts import UserRow
from app.services.users import authenticate_user

WINDOW = timedelta(minutes=15)


@dataclass(frozen=True)
class Throttle:
    """``limit`` attempts per window; then refused, or when ``spacing`` is set one per ``spacing``."""

    kind: str
    limit: int
    spacing: timedelta | None = None


PAIR = Throttle("pair", 5)
ADDRESS = Throttle("address", 30)
ACCOUNT = Throttle("account", 10, spacing=timedelta(seconds=5))


class TooManyAttempts(DomainError):
    """Too many sign-in attempts lately for this account, this address, or both."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _key(throttle: Throttle, *values: str) -> str:
    # Addresses and e-mails are kept as digests: the table says nothing about who tried.
    digest = hashlib.sha256("\n".join(value.strip().lower() for value in values).encode()).hexdigest()
    return f"{throttle.kind}:{digest}"


def _keys(email: str, address: str) -> list[tuple[Throttle, str]]:
    return [
        (PAIR, _key(PAIR, email, address)),
        (ADDRESS, _key(ADDRESS, address)),
        (ACCOUNT, _key(ACCOUNT, email)),
    ]


NEVER = datetime(1970, 1, 1, tzinfo=UTC)  # a throttle without spacing: no attempt is that old


async def admit_attempt(email: str, address: str, now: datetime | None = None) -> None:
    """Take a slot of every throttle for this attempt, or raise ``TooManyAttempts`` (and count
    nothing)."""
    moment = now or datetime.now(UTC)

    @transactional
    async def take_every_slot() -> None:
        for throttle, key in _keys(email, address):
            spaced_before = moment - throttle.spacing if throttle.spacing else NEVER
            if not await accounts.take_throttle_slot(
                key, throttle.limit, moment, moment - WINDOW, spaced_before
            ):
                if throttle.spacing:
                    raise TooManyAttempts(
                        "Too many sign-in attempts for this account. Wait a few seconds and try again.",
                        retry_after=int(throttle.spacing.total_seconds()),
                    )
                raise TooManyAttempts(
                    "Too many failed sign-ins. Try again in 15 minutes.",
                    retry_after=int(WINDOW.total_seconds()),
                )

    await take_every_slot()


@transactional
async def _give_back(email: str, address: str, now: datetime) -> None:
    """A successful sign-in does not count: its slots go back, and old windows are dropped."""
    pair, address_key, account = (key for _, key in _keys(email, address))
    await accounts.forget_throttle(pair)
    await accounts.give_back_slots([address_key, account])
    await accounts.drop_throttles_before(now - WINDOW)


async def sign_in(email: str, password: str, address: str) -> UserRow:
    """Return the user whose credentials match, or raise; every attempt is throttled first."""
    now = datetime.now(UTC)
    await admit_attempt(email, address, now)
    user = await authenticate_user(email, password)
    if user is None:
        raise ValidationError("Wrong e-mail address or password.")
    await _give_back(email, address, now)
    return user


@transactional
async def end_sessions(user: UserRow) -> None:
    """Invalidate every session of the user (sign-out signs out everywhere)."""
    await accounts.end_sessions(user.id)
