"""Users: creation, look-up and authentication by password."""

from __future__ import annotations

from tortoise.exceptions import IntegrityError

from app.errors import NotFound, ValidationError
from app.models import User
from app.services.security import hash_password, random_password, verify_password
from app.services.validation import normalize_email

FIRST_ADMIN_EMAIL = "admin@earful.local"
MIN_PASSWORD_LENGTH = 8


async def create_user(email: str, name: str, password: str | None = None) -> tuple[User, str]:
    """Create a user; returns it with its password (generated when none is given)."""
    address = normalize_email(email)
    if address is None:
        raise ValidationError("The email field must be a valid email address.")
    name = name.strip()
    if not name:
        raise ValidationError("The name field is required.")
    if password is None:
        password = random_password()
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValidationError("The password field must be at least %(n)d characters.", n=MIN_PASSWORD_LENGTH)
    try:
        user = await User.create(email=address, name=name[:200], password_hash=hash_password(password))
    except IntegrityError:
        raise ValidationError("The email has already been taken.") from None
    return user, password


async def get_user_by_email(email: str) -> User:
    """Find a user by e-mail address."""
    user = await User.get_or_none(email=email.strip().lower())
    if user is None:
        raise NotFound("Unknown user %(email)s", email=email)
    return user


async def authenticate_user(email: str, password: str) -> User | None:
    """Return the user whose e-mail and password match, else None."""
    user = await User.get_or_none(email=email.strip().lower())
    if user is None or not verify_password(user.password_hash, password):
        return None
    return user


async def create_first_admin() -> tuple[User, str] | None:
    """Create the admin account of a new installation; None when any user exists already."""
    if await User.exists():
        return None
    return await create_user(FIRST_ADMIN_EMAIL, "Admin")
