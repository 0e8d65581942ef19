"""Users, their access tokens, organizations, memberships and notification settings."""

from typing import TYPE_CHECKING

from tortoise import fields
from tortoise.models import Model

if TYPE_CHECKING:
    from app.models.applications import Application

PLANS = ("free", "team")
OWNER = "owner"
AGENT = "agent"
ROLES = (OWNER, AGENT)


class User(Model):
    """An agent or admin who signs in to the web app and calls the management API."""

    id = fields.IntField(primary_key=True)
    email = fields.CharField(max_length=254, unique=True)
    name = fields.CharField(max_length=200)
    password_hash = fields.CharField(max_length=255)
    plan = fields.CharField(max_length=16, default="free")
    session_version = fields.IntField(default=1)
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "users"


class AccessToken(Model):
    """A personal access token for the management API, stored as its SHA-256 digest only."""

    id = fields.IntField(primary_key=True)
    user: fields.ForeignKeyRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="tokens", on_delete=fields.CASCADE
    )
    name = fields.CharField(max_length=100, default="")
    token_hash = fields.CharField(max_length=64, unique=True)
    scopes = fields.CharField(max_length=64)
    created_at = fields.DatetimeField(auto_now_add=True)
    last_used_at = fields.DatetimeField(null=True)
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "access_tokens"


class Organization(Model):
    """A team that shares applications and whose plan applies to them."""

    id = fields.IntField(primary_key=True)
    name = fields.CharField(max_length=200)
    plan = fields.CharField(max_length=16, default="free")
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "organizations"


class Membership(Model):
    """The membership of a user in an organization.

    ``role`` is what the user may do there: an owner manages the members, their roles and which
    applications belong to the organization; an agent works the inbox of its applications
    (``app.services.organizations`` holds the rules).
    """

    id = fields.IntField(primary_key=True)
    organization: fields.ForeignKeyRelation["Organization"] = fields.ForeignKeyField(
        "models.Organization", related_name="memberships", on_delete=fields.CASCADE
    )
    user: fields.ForeignKeyRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="memberships", on_delete=fields.CASCADE
    )
    role = fields.CharField(max_length=16, default=AGENT, db_default=AGENT)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "memberships"
        unique_together = (("organization_id", "user_id"),)
        indexes = (("user_id", "organization_id"),)


class Invitation(Model):
    """An invitation to join an organization with a role, accepted through a link sent to one address.

    Only the SHA-256 digest of the link's token is stored. An invitation is pending until it is
    accepted, revoked by an owner or past ``expires_at``; the link's page says which
    (app.services.invitations holds the rules).
    """

    id = fields.IntField(primary_key=True)
    organization: fields.ForeignKeyRelation["Organization"] = fields.ForeignKeyField(
        "models.Organization", related_name="invitations", on_delete=fields.CASCADE
    )
    email = fields.CharField(max_length=254)
    role = fields.CharField(max_length=16, default=AGENT)
    token_hash = fields.CharField(max_length=64, unique=True)
    invited_by: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="invitations_sent", null=True, on_delete=fields.SET_NULL
    )
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    accepted_at = fields.DatetimeField(null=True)
    accepted_by: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="invitations_accepted", null=True, on_delete=fields.SET_NULL
    )
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "invitations"
        indexes = (("organization_id", "email"),)


class SignInThrottle(Model):
    """Sign-in attempts admitted in the current window for one key (an account, an address or both).

    Keys are digests, so the table says nothing about who tried. A row is taken with one
    atomic upsert before the password is checked (app.services.signin).
    """

    id = fields.IntField(primary_key=True)
    key = fields.CharField(max_length=80, unique=True)
    window_started_at = fields.DatetimeField()
    admitted = fields.IntField(default=0)
    last_admitted_at = fields.DatetimeField()
    last_refused = fields.BooleanField(default=False)

    class Meta:
        table = "sign_in_throttles"
        indexes = (("window_started_at",),)


class PasswordResetRequest(Model):
    """A password reset e-mail sent to a user, kept for an hour to limit how many are sent."""

    id = fields.IntField(primary_key=True)
    user: fields.ForeignKeyRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="password_reset_requests", on_delete=fields.CASCADE
    )
    created_at = fields.DatetimeField()

    class Meta:
        table = "password_reset_requests"
        indexes = (("user_id", "created_at"),)


NOTIFICATION_MODES = ("instant", "digest", "none")


class NotificationSetting(Model):
    """How an agent hears of an application's new feedback by e-mail: every new thread
    (``instant``), a daily digest, or nothing. Without a row the agent's default applies
    (app.services.notifications: the digest for administrators, nothing for the others)."""

    id = fields.IntField(primary_key=True)
    user: fields.ForeignKeyRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="notification_settings", on_delete=fields.CASCADE
    )
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="notification_settings", on_delete=fields.CASCADE
    )
    mode = fields.CharField(max_length=8)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "notification_settings"
        unique_together = (("user_id", "application_id"),)
        indexes = (("application_id", "mode"),)
