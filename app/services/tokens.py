"""Personal access tokens of the management API: created with scopes, stored as a digest, revocable."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from app.db import execute, from_row, select_columns, set_related
from app.errors import NotFound, ValidationError
from app.models import AccessToken, User
from app.services.security import random_token, sha256_hex

SCOPES = ("read", "write")
TOKEN_PREFIX = "ea_"
LAST_USED_RESOLUTION = timedelta(minutes=1)


def check_scopes(scopes: Iterable[str]) -> list[str]:
    """Validate and order a set of scope names."""
    chosen = set(scopes)
    if not chosen:
        raise ValidationError("The scope field is required.")
    unknown = chosen - set(SCOPES)
    if unknown:
        raise ValidationError("The selected scope %(scope)s is invalid.", scope=sorted(unknown)[0])
    return [scope for scope in SCOPES if scope in chosen]


async def create_token(user: User, scopes: Iterable[str], name: str = "") -> tuple[AccessToken, str]:
    """Create a token for ``user``; the raw token is returned once and never stored."""
    ordered = check_scopes(scopes)
    raw = TOKEN_PREFIX + random_token(32)
    token = await AccessToken.create(
        user=user, name=name.strip()[:100], token_hash=sha256_hex(raw), scopes=" ".join(ordered)
    )
    return token, raw


async def authenticate_token(raw: str) -> AccessToken | None:
    """Return the live token (with its user) for a raw bearer token, else None.

    ``last_used_at`` is written at most once a minute per token, so that reads stay reads.
    """
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    rows = await execute(
        f"SELECT {select_columns(AccessToken, 't')}, {select_columns(User, 'u')} FROM access_tokens t "
        "JOIN users u ON u.id = t.user_id WHERE t.token_hash = {} AND t.revoked_at IS NULL",
        [sha256_hex(raw)],
    )
    if not rows:
        return None
    token = from_row(AccessToken, rows[0], "t")
    set_related(token, "user", from_row(User, rows[0], "u"))
    now = datetime.now(UTC)
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        await AccessToken.filter(id=token.id).update(last_used_at=now)
        token.last_used_at = now
    return token


async def list_tokens(user: User) -> list[AccessToken]:
    """List a user's tokens that are not revoked, newest first."""
    return await AccessToken.filter(user_id=user.id, revoked_at=None).order_by("-id")


async def revoke_token(user: User, token_id: int) -> None:
    """Revoke one of the user's tokens; it stops working at once."""
    if not await AccessToken.filter(id=token_id, user_id=user.id, revoked_at=None).update(
        revoked_at=datetime.now(UTC)
    ):
        raise NotFound("Invalid token")
