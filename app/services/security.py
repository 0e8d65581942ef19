"""Password hashing, random secrets and constant-time comparison."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    """Hash a password with argon2id."""
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Check a password against its argon2 hash."""
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def random_token(nbytes: int = 32) -> str:
    """Return an unguessable URL-safe random string."""
    return secrets.token_urlsafe(nbytes)


def random_password() -> str:
    """Return a random password that people can still copy by hand."""
    return secrets.token_urlsafe(15)


def sha256_hex(value: str) -> str:
    """Digest a high-entropy secret (tokens) for storage and look-up."""
    return hashlib.sha256(value.encode()).hexdigest()


def secrets_match(given: str, expected: str) -> bool:
    """Compare two secrets in constant time."""
    return hmac.compare_digest(given.encode(), expected.encode())
