"""Applications: visibility, creation and update, keys, and capture authentication."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import UTC, datetime

from app.db import transactional, units_begun
from app.errors import Forbidden, NotFound, ValidationError
from app.i18n import N_
from app.models import PLATFORMS
from app.repositories import applications, organizations
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.organizations import OrganizationRow
from app.services import storage as stored
from app.services.capture_settings import clean_capture_fields, origin_allowed
from app.services.files import EXTENSIONS, IMAGE_TYPES, IncomingFile, new_file_name, sniff_mime_type
from app.services.invalidation import CACHE_SECONDS, ApplicationCache, application_changed
from app.services.organizations import check_can_move_application
from app.services.security import random_token, secrets_match
from app.services.storage import Storage, StoredFile, logo_key
from app.services.validation import MAX_ID, is_http_url, parse_bool, parse_int

MAX_LOGO_BYTES = 2 * 1024 * 1024
MAX_TARGET_SECONDS = 365 * 86400


async def list_applications(user: UserRow) -> list[ApplicationRow]:
    """Every application the user may see (its own, and its organizations'), oldest first."""
    return await applications.visible_applications(user.id)


# The application that the check of the request's caller read in the same statement
# (app.services.tokens, app.services.users): its user's and its own id, what was found (None:
# not one the user sees) and units_begun() then.
_read_with_caller: ContextVar[tuple[int, int, ApplicationRow | None, int] | None] = ContextVar(
    "earful_application_read_with_caller", default=None
)


def keep_read_with_caller(user_id: int, application_id: int, application: ApplicationRow | None) -> None:
    """Keep the application that the caller's check found (or did not find) for ``user_id`` in
    the same statement, for the running request's first :func:`get_application`: every request
    on an application reads both, and on PostgreSQL each statement is a round trip."""
    _read_with_caller.set((user_id, application_id, application, units_begun()))


async def get_application(user: UserRow, application_id: int) -> ApplicationRow:
    """One application the user may see; any other id is 'Invalid application'.

    The first call of a request takes what the caller's check read with it
    (:func:`keep_read_with_caller`), unless the request has begun a transaction since, which
    may have changed the application; every other call reads it again."""
    kept = _read_with_caller.get()
    if kept is not None:
        _read_with_caller.set(None)
    if kept is not None and kept[:2] == (user.id, application_id) and kept[3] == units_begun():
        application = kept[2]
    else:
        application = await applications.visible_application(user.id, application_id)
    if application is None:
        raise NotFound("Invalid application")
    return application


def application_keys(application: ApplicationRow, intake_domain: str) -> dict[str, str]:
    """The platform keys and the e-mail intake address of an application."""
    keys = {platform: getattr(application, f"key_{platform}") for platform in PLATFORMS}
    keys["email"] = intake_address(application, intake_domain)
    return keys


def intake_address(application: ApplicationRow, intake_domain: str) -> str:
    """The address that turns e-mail into threads of this application."""
    return f"feedback-{application.id}-{application.intake_token}@{intake_domain}"


def _new_keys() -> dict[str, str]:
    return {f"key_{platform}": random_token(24) for platform in PLATFORMS}


async def _check_organization(user: UserRow, value: object, current: int | None) -> int | None:
    """The organization the application is to belong to; moving it there is for owners."""
    organization_id: int | None = None
    if value is not None and value != "":
        organization_id = parse_int(value)
        if organization_id is None:
            raise ValidationError("The organization id field must be an integer.")
        if not 1 <= organization_id <= MAX_ID:
            raise NotFound("Invalid organization")
    if organization_id != current:
        await check_can_move_application(user, current, organization_id)
    return organization_id


def _clean_switches(data: Mapping[str, object]) -> dict[str, bool]:
    """The on/off settings that were sent: uploads and receipts."""
    switches: dict[str, bool] = {}
    for name in ("uploads_enabled", "receipts_enabled"):
        if name in data:
            enabled = parse_bool(data[name])
            if enabled is None:
                raise ValidationError(
                    "The %(name)s field must be true or false.", name=name.replace("_", " ")
                )
            switches[name] = enabled
    return switches


async def _clean_fields(
    user: UserRow, data: Mapping[str, object], current: ApplicationRow | None
) -> dict[str, object]:
    """Validate the application fields that were sent (to ``current``, or to a new application
    when it is None); only those are returned."""
    creating = current is None
    fields: dict[str, object] = {}
    if "name" in data or creating:
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise ValidationError("The name field must be a string.")
        name = (name or "").strip()
        if not name:
            raise ValidationError("The name field is required.")
        if len(name) > 200:
            raise ValidationError("The name field must not be greater than 200 characters.")
        fields["name"] = name
    if "url" in data:
        url = data["url"]
        if url is not None and not isinstance(url, str):
            raise ValidationError("The url field must be a valid URL.")
        url = (url or "").strip()
        if url and not is_http_url(url):
            raise ValidationError("The url field must be a valid URL.")
        fields["url"] = url or None
    fields.update(_clean_switches(data))
    if "target_average_first_reply_time" in data:
        target = parse_int(data["target_average_first_reply_time"])
        if target is None:
            raise ValidationError("The target average first reply time field must be an integer.")
        if not 0 <= target <= MAX_TARGET_SECONDS:
            raise ValidationError(
                "The target average first reply time field must be between 0 and %(max)d.",
                max=MAX_TARGET_SECONDS,
            )
        fields["target_average_first_reply_time"] = target
    fields.update(clean_capture_fields(data))
    # Imported here: retention deletes through app.services.deletion, which imports this module.
    from app.services.retention import check_may_change, clean_retention_fields

    if current is not None:
        await check_may_change(user, current, data)
    fields.update(clean_retention_fields(data))
    if "organization_id" in data:
        fields["organization_id"] = await _check_organization(
            user, data["organization_id"], current.organization_id if current else None
        )
    return fields


def _check_logo(logo: IncomingFile) -> str:
    if len(logo.content) > MAX_LOGO_BYTES:
        raise ValidationError("The logo field must not be greater than 2048 kilobytes.")
    # Judged by the bytes alone: a logo is served as an image, whatever its name claims.
    mime_type = sniff_mime_type(logo.content, "")
    if mime_type not in IMAGE_TYPES:
        raise ValidationError("The logo field must be an image (PNG, JPEG, GIF or WebP).")
    return mime_type


async def create_application(
    user: UserRow, data: Mapping[str, object], logo: IncomingFile | None, storage: Storage
) -> ApplicationRow:
    """Create an application owned by ``user`` with fresh keys and intake address, its logo
    included, in one transaction (the logo's file goes when the transaction fails)."""
    mime_type = _check_logo(logo) if logo else None
    written: list[str] = []

    @transactional
    async def insert() -> ApplicationRow:
        fields = await _clean_fields(user, data, None)
        now = datetime.now(UTC)
        application = await applications.insert_application(
            user.id, _new_keys(), secrets.token_hex(6), fields, now
        )
        if logo and mime_type:
            # The id comes with the row, so the logo is stored inside the transaction: keep it
            # to a short write to disk or a bucket, as it was (a logo is 2 MiB at most).
            application.logo_name = new_file_name(EXTENSIONS[mime_type])
            written.append(logo_key(application.id, application.logo_name))
            await storage.put(written[-1], logo.content, mime_type)
            await applications.update_settings(application.id, {"logo_name": application.logo_name}, now)
        return application

    try:
        return await insert()
    except BaseException:
        await stored.remove(storage, written)
        raise


async def update_application(
    user: UserRow,
    application: ApplicationRow,
    data: Mapping[str, object],
    logo: IncomingFile | None,
    storage: Storage,
) -> ApplicationRow:
    """Change the fields that were sent; the others keep their value. A request that sends none
    is refused, as an empty PATCH of a thread is: it is a client's mistake, not a read.

    One transaction; a new logo's file goes when it fails, the old one when it succeeds.
    """
    mime_type = _check_logo(logo) if logo else None
    logo_name = new_file_name(EXTENSIONS[mime_type]) if mime_type else None
    written: list[str] = []

    @transactional
    async def update() -> None:
        fields = await _clean_fields(user, data, application)
        if not fields and not logo:
            raise ValidationError("Nothing sent to update")
        if logo_name:
            fields["logo_name"] = logo_name
        await applications.update_settings(application.id, fields, datetime.now(UTC))

    old_logo = application.logo_name
    try:
        if logo and mime_type and logo_name:  # stored first: the transaction stays short
            written.append(logo_key(application.id, logo_name))
            await storage.put(written[-1], logo.content, mime_type)
        await update()
    except BaseException:
        await stored.remove(storage, written)
        raise
    await application_changed(application.id)
    if logo and old_logo:
        await stored.remove(storage, [logo_key(application.id, old_logo)])
    updated = await applications.application_by_id(application.id)
    assert updated is not None  # it was just written
    return updated


async def rotate_key(application: ApplicationRow, platform: str) -> str:
    """Replace one platform key; the old one stops working at once in this worker, and in the
    others at once with Redis, else within ``CAPTURE_CACHE_SECONDS``."""
    if platform not in PLATFORMS:
        raise ValidationError("The selected platform is invalid.")
    key = random_token(24)
    await transactional(applications.set_key)(application.id, platform, key)
    await application_changed(application.id)
    setattr(application, f"key_{platform}", key)
    return key


# The capture API keeps an application for two seconds (app.services.invalidation: a change
# applies at once in the worker that made it, and with Redis in every worker of every host).
CAPTURE_CACHE_SECONDS = CACHE_SECONDS
_capture_cache: ApplicationCache[ApplicationRow] = ApplicationCache(applications.application_by_id)


def forget_capture_cache() -> None:
    """Drop every cached application (when the database underneath changes, as in the tests)."""
    _capture_cache.clear()


async def authenticate_capture(
    application_id: int, key: str | None, missing: str, origin: str | None = None
) -> ApplicationRow:
    """The application of a capture request, checked in the contract's order: exists, key, the
    application's capture switch, then (for the javascript key only) the request's ``Origin``.

    Every platform key is compared, in constant time, whatever matched before.
    """
    application = await _capture_cache.get(application_id)
    if application is None:
        raise NotFound(missing)
    given = key or ""
    matches = {p: secrets_match(given, getattr(application, f"key_{p}")) for p in PLATFORMS}
    if not key or not any(matches.values()):
        raise Forbidden(N_("Not authorized"))
    if not application.capture_enabled:
        raise Forbidden(N_("Capture disabled"))
    # The javascript key is public (it sits in the customer's page); the list of origins keeps
    # other sites from posting with it. The server keys are secret and come from no browser.
    if matches["javascript"] and not origin_allowed(application.allowed_origins, origin):
        raise Forbidden(N_("Origin not allowed"))
    return application


async def list_applications_with_organizations(user: UserRow) -> list[ApplicationRow]:
    """Every application the user may see, oldest first, with its organization."""
    return await applications.visible_applications_with_organizations(user.id)


async def organization_of(application: ApplicationRow) -> OrganizationRow | None:
    """The organization the application belongs to, if any."""
    if application.organization_id is None:
        return None
    return await organizations.organization_by_id(application.organization_id)


async def open_logo(application_id: int, name: str, storage: Storage) -> StoredFile:
    """The application's current logo, ready to send (older logos are not served); 'Not found'
    for any other name, or when its file is missing."""
    found = (
        await storage.open(logo_key(application_id, name)) if await has_logo(application_id, name) else None
    )
    if found is None:
        raise NotFound("Not found")
    return found


async def has_logo(application_id: int, name: str) -> bool:
    """Whether ``name`` is the application's current logo (older logos are not served)."""
    return await applications.has_logo(application_id, name)


async def applications_for_recompute(application_id: int | None = None) -> list[ApplicationRow]:
    """Every application (or the one with this id), oldest first: for commands that go through
    all of them."""
    return await applications.applications_by_id(application_id)
