"""The domain error tree. Services raise these; each surface renders them its own way.

Messages are the English texts of the specification. The capture API translates them through
the message catalogs; the management API sends them as they are.
"""

from __future__ import annotations


class DomainError(Exception):
    """A rule of the domain refused the request."""

    status = 400

    def __init__(self, message: str, **params: object) -> None:
        super().__init__(message)
        self.message = message
        self.params = params

    def __str__(self) -> str:
        return self.message % self.params if self.params else self.message


class ValidationError(DomainError):
    """The input is missing or malformed."""

    status = 400


class NotFound(DomainError):
    """The thing does not exist, or the actor may not know that it does."""

    status = 404


class Forbidden(DomainError):
    """The actor is known but not allowed to do this."""

    status = 403


class PayloadTooLarge(DomainError):
    """The request or one of its files is over the size limit."""

    status = 413


class TooManyRequests(DomainError):
    """The caller is over a rate limit; ``retry_after`` is how many seconds to wait."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
