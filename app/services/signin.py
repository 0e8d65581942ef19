"""Signing in with e-mail and password, rate-limited per account and per address."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from app.errors import DomainError, ValidationError
from app.models import SignInFailure, User
from app.services.users import authenticate_user

WINDOW = timedelta(minutes=15)
MAX_FAILURES_PER_ACCOUNT = 5
MAX_FAILURES_PER_ADDRESS = 20


class TooManyAttempts(DomainError):
    """Too many failed sign-ins lately for this account or this address."""

    status = 429


def _key(kind: str, value: str) -> str:
    # Addresses and e-mails are kept as digests: the table says nothing about who tried.
    return kind + ":" + hashlib.sha256(value.strip().lower().encode()).hexdigest()


async def sign_in(email: str, password: str, address: str) -> User:
    """Return the user whose credentials match, or raise; failures count toward the limits."""
    account_key, address_key = _key("account", email), _key("address", address)
    since = datetime.now(UTC) - WINDOW
    if (
        await SignInFailure.filter(key=account_key, created_at__gte=since).count() >= MAX_FAILURES_PER_ACCOUNT
        or await SignInFailure.filter(key=address_key, created_at__gte=since).count()
        >= MAX_FAILURES_PER_ADDRESS
    ):
        raise TooManyAttempts("Too many failed sign-ins. Try again in 15 minutes.")
    user = await authenticate_user(email, password)
    if user is None:
        await SignInFailure.bulk_create([SignInFailure(key=account_key), SignInFailure(key=address_key)])
        raise ValidationError("Wrong e-mail address or password.")
    await SignInFailure.filter(key=account_key).delete()
    await SignInFailure.filter(created_at__lt=since).delete()
    return user


async def end_sessions(user: User) -> None:
    """Invalidate every session of the user (sign-out signs out everywhere)."""
    from tortoise.expressions import F

    await User.filter(id=user.id).update(session_version=F("session_version") + 1)
