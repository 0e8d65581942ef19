"""Users, their access tokens, organizations and memberships."""

from tortoise import fields
from tortoise.models import Model

PLANS = ("free", "team")


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
    user = fields.ForeignKeyField("models.User", related_name="tokens", on_delete=fields.CASCADE)
    name = fields.CharField(max_length=100, default="")
    token_hash = fields.CharField(max_length=64, unique=True)
    scopes = fields.CharField(max_length=64)
    created_at = fields.DatetimeField(auto_now_add=True)
    last_used_at = fields.DatetimeField(null=True)
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "access_tokens"

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())


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
    """The membership of a user in an organization."""

    id = fields.IntField(primary_key=True)
    organization = fields.ForeignKeyField(
        "models.Organization", related_name="memberships", on_delete=fields.CASCADE
    )
    user = fields.ForeignKeyField("models.User", related_name="memberships", on_delete=fields.CASCADE)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "memberships"
        unique_together = (("organization_id", "user_id"),)
        indexes = (("user_id", "organization_id"),)


class SignInFailure(Model):
    """A failed sign-in, kept for a while to rate-limit guessing per account and per address."""

    id = fields.IntField(primary_key=True)
    key = fields.CharField(max_length=300)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "sign_in_failures"
        indexes = (("key", "created_at"),)
