"""Applications: the products whose users send feedback."""

from typing import TYPE_CHECKING

from tortoise import fields
from tortoise.models import Model

if TYPE_CHECKING:
    from app.models.accounts import Organization, User

PLATFORMS = ("javascript", "ios", "android", "api")


class Application(Model):
    """An application with its platform keys, intake address and reply-time statistics.

    ``first_reply_total`` and ``first_reply_count`` are kept up to date when a thread gets its
    first public reply (app.services.counters), so the average is read, never recomputed by
    scanning threads (ApplicationRow.average_first_reply_time).
    """

    id = fields.IntField(primary_key=True)
    owner: fields.ForeignKeyRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="applications", on_delete=fields.CASCADE
    )
    organization: fields.ForeignKeyNullableRelation["Organization"] = fields.ForeignKeyField(
        "models.Organization", related_name="applications", null=True, on_delete=fields.SET_NULL
    )
    name = fields.CharField(max_length=200)
    url = fields.CharField(max_length=2048, null=True)
    logo_name = fields.CharField(max_length=80, null=True)
    key_javascript = fields.CharField(max_length=64)
    key_ios = fields.CharField(max_length=64)
    key_android = fields.CharField(max_length=64)
    key_api = fields.CharField(max_length=64)
    intake_token = fields.CharField(max_length=32)
    uploads_enabled = fields.BooleanField(default=True)
    target_average_first_reply_time = fields.IntField(default=86400)
    # The capture API's switch and limits (per minute; null takes the deployment's default).
    capture_enabled = fields.BooleanField(default=True, db_default=True)
    submits_per_minute = fields.IntField(null=True)
    opens_per_minute = fields.IntField(null=True)
    uploads_per_minute = fields.IntField(null=True)
    submits_per_minute_total = fields.IntField(null=True)
    # Origins allowed to use the javascript key, one per line; empty for any origin.
    allowed_origins = fields.TextField(default="", db_default="")
    # Retention: threads older than this many days are deleted by the background worker (all of
    # them, or only archived ones); null keeps threads forever.
    retention_days = fields.IntField(null=True)
    retention_archived_only = fields.BooleanField(default=False, db_default=False)
    # A short acknowledgement e-mailed to the customer for each new thread (off by default).
    receipts_enabled = fields.BooleanField(default=False, db_default=False)
    first_reply_total = fields.BigIntField(default=0)
    first_reply_count = fields.IntField(default=0)
    open_threads = fields.IntField(default=0)
    archived_threads = fields.IntField(default=0)
    reply_count = fields.IntField(default=0)
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "applications"
        indexes = (("owner_id",), ("organization_id",))
