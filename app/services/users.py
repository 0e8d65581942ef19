"""Users: creation, look-up and authentication by password."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.repositories import accounts, applications
from app.repositories.accounts import EmailTaken, UserRow
from app.services.applications import keep_read_with_caller
from app.services.plans import check_plan_name
from app.services.security import hash_password, random_password, verify_password
from app.services.validation import normalize_email

FIRST_ADMIN_EMAIL = "admin@earful.local"
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1000  # what the sign-in form takes: a longer one could never sign in


def check_new_password(password: str) -> None:
    """Refuse a password that may not be chosen (the one rule for every way of setting one)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValidationError("The password field must be at least %(n)d characters.", n=MIN_PASSWORD_LENGTH)
    if len(password) > MAX_PASSWORD_LENGTH:
        raise ValidationError(
            "The password field must not be greater than %(n)d characters.", n=MAX_PASSWORD_LENGTH
        )


async def create_user(
    email: str, name: str, password: str | None = None, plan: str = "free"
) -> tuple[UserRow, str]:
    """Create a user; returns it with its password (generated when none is given)."""
    address = normalize_email(email)
    if address is None:
        raise ValidationError("The email field must be a valid email address.")
    name = name.strip()
    if not name:
        raise ValidationError("The name field is required.")
    if password is None:
        password = random_password()
    check_new_password(password)
    check_plan_name(plan)
    password_hash = hash_password(password)  # slow on purpose: outside the transaction
    try:
        user = await _insert_user(address, name[:200], password_hash, plan)
    except EmailTaken:
        raise ValidationError("The email has already been taken.") from None
    return user, password


@transactional
async def _insert_user(email: str, name: str, password_hash: str, plan: str) -> UserRow:
    return await accounts.insert_user(email, name, password_hash, datetime.now(UTC), plan)


async def user_in_session(
    user_id: int, session_version: int, application_id: int | None = None
) -> UserRow | None:
    """The user of a web session, while the session's version is still the user's (a sign-out
    or a password change anywhere ends every session). With the ``application_id`` of the page
    asked for, that application is read in the same statement, for the page's
    :func:`~app.services.applications.get_application`."""
    if application_id is None:
        return await accounts.user_in_session(user_id, session_version)
    found = await applications.user_in_session_and_application(user_id, session_version, application_id)
    if found is None:
        return None
    user, application = found
    keep_read_with_caller(user.id, application_id, application)
    return user


async def get_user_by_email(email: str) -> UserRow:
    """Find a user by e-mail address."""
    user = await accounts.user_by_email(email.strip().lower())
    if user is None:
        raise NotFound("Unknown user %(email)s", email=email)
    return user


@functools.cache
def _stand_in_hash() -> str:
    """The hash checked when no account has the address: an argon2 verification is slow on
    purpose, and answering an unknown address without one told which addresses have accounts."""
    return hash_password(random_password())


def warm_up() -> None:
    """Make the stand-in hash at start-up, so that the first unknown address costs no more."""
    _stand_in_hash()


async def authenticate_user(email: str, password: str) -> UserRow | None:
    """Return the user whose e-mail and password match, else None (in the same time either way)."""
    user = await accounts.user_by_email(email.strip().lower())
    if user is None:
        verify_password(_stand_in_hash(), password)
        return None
    if not verify_password(user.password_hash, password):
        return None
    return user


async def create_first_admin() -> tuple[UserRow, str] | None:
    """Create the admin account of a new installation; None when any user exists already."""
    if await accounts.any_user_exists():
        return None
    return await create_user(FIRST_ADMIN_EMAIL, "Admin")
