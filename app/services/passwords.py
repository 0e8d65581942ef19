"""Passwords: changing one (with the current one), setting one (the command line), and resetting
one through a link sent by e-mail.

Every change of a password also ends every session of the user (the session version goes up, in
the same transaction), so a stolen session does not outlive the password it was signed in with.
The rule a new password must meet is :func:`app.services.users.check_new_password`.

Reset links. A link carries ``<user id>.<issued at>.<signature>``: an HMAC, keyed by the
deployment's secret key, over the user id, the time it was issued and the user's current
password hash, session version and e-mail address. Nothing is stored: the link is refused after
an hour (``RESET_LINK_LIFETIME``), and once it has been used, because using it changes the
password hash (and the session version) that its signature covers; the reset itself updates the
row only while both are still what the link was checked against, so two uses at once set one
password. For the same reason a link dies when the password changes or the user signs out
anywhere before using it, and a newer link does not kill an older one until either is used.

Reset e-mails go to accounts only; whoever asks gets the same answer either way (the web app
sends in the background, so neither the answer nor its timing tells whether an account exists).
At most ``RESET_MAILS_PER_HOUR`` e-mails go to one account in an hour, so the form cannot be used
to flood someone's mailbox; requests over the limit are dropped silently.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid, parseaddr

from app.config import Settings
from app.db import transactional
from app.errors import ValidationError
from app.repositories import accounts
from app.repositories.accounts import UserRow
from app.services.mail import headers
from app.services.mail.outbox import DeliveryError, SmtpRelay, send
from app.services.security import hash_password, secrets_match
from app.services.signin import sign_in
from app.services.users import check_new_password
from app.services.validation import normalize_email

logger = logging.getLogger("earful.passwords")

RESET_LINK_LIFETIME = timedelta(hours=1)
RESET_MAILS_PER_HOUR = 3
RESET_SUBJECT = "Reset your Earful password"
_SIGNATURE_LENGTH = 32  # hex characters: 128 bits
_RESET_TOKEN = re.compile(rf"(\d{{1,10}})\.(\d{{1,12}})\.([0-9a-f]{{{_SIGNATURE_LENGTH}}})")
_CLOCK_SKEW = 60  # seconds a link may seem to come from the future (another server's clock)


class InvalidResetLink(ValidationError):
    """A reset link that is forged, expired or already used (one answer for all three)."""

    def __init__(self) -> None:
        super().__init__("This link has expired or was already used. Ask for a new one.")


async def _replace_password(user: UserRow, password: str, *, unless_changed: bool) -> UserRow | None:
    """Store a new password and end every session of the user, in one transaction.

    With ``unless_changed``, only while the user's password hash and session version are still
    those of ``user`` (else None): the caller checked something against them.
    """
    check_new_password(password)
    password_hash = hash_password(password)  # argon2 is slow on purpose: outside the transaction
    return await _store_password(user, password_hash, unless_changed)


@transactional
async def _store_password(user: UserRow, password_hash: str, unless_changed: bool) -> UserRow | None:
    changed = await accounts.replace_password(
        user.id, password_hash, datetime.now(UTC), unless_changed_from=user if unless_changed else None
    )
    return await accounts.user_by_id(user.id) if changed else None


async def change_password(user: UserRow, current: str, new: str, address: str) -> UserRow:
    """Change the user's password, given the current one; returns the user with the new session
    version (the caller keeps its own session with it; every other session has ended).

    The current password is checked as a sign-in from ``address`` is, throttles included: a
    stolen session must not become a way to guess the password at full speed.
    """
    check_new_password(new)  # before the check of the current one: a refusal here costs no attempt
    try:
        await sign_in(user.email, current, address)  # TooManyAttempts (429) goes through as it is
    except ValidationError:
        raise ValidationError("Your current password is wrong.") from None
    changed = await _replace_password(user, new, unless_changed=True)
    if changed is None:  # changed elsewhere since it was read: the password checked is not current
        raise ValidationError("Your current password is wrong.")
    return changed


async def set_password(user: UserRow, password: str) -> UserRow:
    """Set the user's password without the current one (an administrator's command)."""
    changed = await _replace_password(user, password, unless_changed=False)
    assert changed is not None  # unconditional: only a deleted user would miss, and it was just read
    return changed


def _reset_signature(user: UserRow, secret_key: str, issued_at: int) -> str:
    state = f"{user.session_version}:{user.email}:{user.password_hash}"
    material = f"earful-password-reset:{user.id}:{issued_at}:{state}"
    return hmac.new(secret_key.encode(), material.encode(), hashlib.sha256).hexdigest()[:_SIGNATURE_LENGTH]


def reset_token(user: UserRow, secret_key: str, issued_at: int | None = None) -> str:
    """The token of a reset link for the user's current password, issued now (or at ``issued_at``,
    a Unix time)."""
    issued = int(time.time()) if issued_at is None else issued_at
    return f"{user.id}.{issued}.{_reset_signature(user, secret_key, issued)}"


async def user_of_reset_token(token: str, secret_key: str) -> UserRow:
    """The user a reset link was made for; :class:`InvalidResetLink` when it is forged, older than
    an hour, or no longer matches the user's password (used)."""
    match = _RESET_TOKEN.fullmatch(token)
    if match is None:
        raise InvalidResetLink
    user_id, issued_at = int(match.group(1)), int(match.group(2))
    user = await accounts.user_by_id(user_id) if user_id < 2**31 else None
    if user is None or not secrets_match(match.group(3), _reset_signature(user, secret_key, issued_at)):
        raise InvalidResetLink
    age = time.time() - issued_at
    if not -_CLOCK_SKEW <= age <= RESET_LINK_LIFETIME.total_seconds():
        raise InvalidResetLink
    return user


async def reset_password(token: str, password: str, secret_key: str) -> UserRow:
    """Set a new password through a reset link; the link is spent, every session ends."""
    user = await user_of_reset_token(token, secret_key)
    changed = await _replace_password(user, password, unless_changed=True)
    if changed is None:  # another use of the same link got there first
        raise InvalidResetLink
    return changed


@transactional
async def _may_mail(user: UserRow, now: datetime) -> bool:
    """Count a reset e-mail to the user, unless there were enough in the last hour."""
    await accounts.drop_reset_requests_before(now - timedelta(hours=1))
    if await accounts.reset_requests_of(user.id) >= RESET_MAILS_PER_HOUR:
        return False
    await accounts.record_reset_request(user.id, now)
    return True


def reset_message(user: UserRow, settings: Settings, link: str, now: datetime) -> EmailMessage:
    """The e-mail with a reset link: plain text, To the bare address (no name in any header)."""
    message = EmailMessage()
    sender_name, sender_address = parseaddr(settings.mail_sender)
    message["From"] = headers.mailbox(sender_name, sender_address)
    message["To"] = headers.mailbox("", user.email)
    message["Subject"] = RESET_SUBJECT
    message["Date"] = format_datetime(now)
    message["Message-ID"] = make_msgid("password-reset", domain=settings.intake_domain)
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(
        "Someone asked to reset the password of the Earful account of this address.\n\n"
        "To choose a new password, open this link within an hour (it works once):\n\n"
        f"{link}\n\n"
        "If you did not ask for it, ignore this e-mail: your password stays as it is.\n",
        # 7bit keeps the link on one line in the raw e-mail (quoted-printable would break it).
        cte="7bit" if link.isascii() else "quoted-printable",
    )
    return message


async def send_reset_link(
    email: str, settings: Settings, link_prefix: str, now: datetime | None = None
) -> bool:
    """E-mail a reset link (``link_prefix`` + token) to the account of ``email``, if there is one
    and it has not had enough of them this hour; True when the relay took the e-mail.

    Failures are logged, never raised: nobody waits for the answer.
    """
    if not settings.smtp_url:
        raise ValueError("EARFUL_SMTP_URL is not set")
    address = normalize_email(email)
    user = await accounts.user_by_email(address) if address else None
    if user is None:
        return False
    moment = now or datetime.now(UTC)
    if not await _may_mail(user, moment):
        logger.info("password reset: no e-mail to user %s, %d sent this hour", user.id, RESET_MAILS_PER_HOUR)
        return False
    link = link_prefix + reset_token(user, settings.secret_key, int(moment.timestamp()))
    message = reset_message(user, settings, link, moment)
    try:
        await send(
            message, SmtpRelay.from_url(settings.smtp_url), parseaddr(settings.mail_sender)[1], user.email
        )
    except DeliveryError as error:
        logger.warning("password reset: e-mail to user %s not delivered: %s", user.id, error)
        return False
    return True
