"""Personal access tokens of the management API: created with scopes, stored as a digest, revocable."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.repositories import accounts, applications
from app.repositories.accounts import TokenRow, UserRow
from app.services.applications import keep_read_with_caller
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


async def create_token(user: UserRow, scopes: Iterable[str], name: str = "") -> tuple[TokenRow, str]:
    """Create a token for ``user``; the raw token is returned once and never stored."""
    ordered = check_scopes(scopes)
    raw = TOKEN_PREFIX + random_token(32)
    token = await _insert_token(user.id, name.strip()[:100], sha256_hex(raw), " ".join(ordered))
    return token, raw


@transactional
async def _insert_token(user_id: int, name: str, token_hash: str, scopes: str) -> TokenRow:
    return await accounts.insert_token(user_id, name, token_hash, scopes, datetime.now(UTC))


@transactional
async def _mark_used(token_id: int, now: datetime) -> None:
    await accounts.mark_token_used(token_id, now)


async def authenticate_token(raw: str, application_id: int | None = None) -> TokenRow | None:
    """Return the live token (with its user) for a raw bearer token, else None. With the
    ``application_id`` of the request's path, that application is read in the same statement,
    for the request's :func:`~app.services.applications.get_application`.

    ``last_used_at`` is written at most once a minute per token, so that reads stay reads.
    """
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    if application_id is None:
        token = await accounts.live_token(sha256_hex(raw))
    else:
        found = await applications.live_token_and_application(sha256_hex(raw), application_id)
        if found is None:
            return None
        token, application = found
        keep_read_with_caller(token.user_id, application_id, application)
    if token is None:
        return None
    now = datetime.now(UTC)
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        await _mark_used(token.id, now)
        token.last_used_at = now
    return token


async def list_tokens(user: UserRow) -> list[TokenRow]:
    """List a user's tokens that are not revoked, newest first."""
    return await accounts.live_tokens_of(user.id)


@transactional
async def revoke_token(user: UserRow, token_id: int) -> None:
    """Revoke one of the user's tokens; it stops working at once."""
    if not await accounts.revoke_token(user.id, token_id, datetime.now(UTC)):
        raise NotFound("Invalid token")
