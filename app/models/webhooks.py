"""Webhooks: the endpoints that receive events, the events written with their changes, and the
deliveries (the durable queue the background worker sends from) with every attempt's log."""

from typing import TYPE_CHECKING

from tortoise import fields
from tortoise.models import Model

if TYPE_CHECKING:
    from app.models.accounts import Organization, User
    from app.models.applications import Application

EVENT_TYPES = ("feedback.created", "feedback.updated", "feedback.deleted", "reply.created")
FORMATS = ("standard", "slack")
DELIVERY_STATUSES = ("pending", "sending", "delivered", "failed")


class WebhookEndpoint(Model):
    """A URL that receives an application's events, or those of every application of an
    organization (exactly one of the two is set). The secret signs every delivery; after a
    rotation the previous one signs beside it until ``previous_secret_expires_at``."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyNullableRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="webhook_endpoints", null=True, on_delete=fields.CASCADE
    )
    organization: fields.ForeignKeyNullableRelation["Organization"] = fields.ForeignKeyField(
        "models.Organization", related_name="webhook_endpoints", null=True, on_delete=fields.CASCADE
    )
    url = fields.CharField(max_length=2048)
    description = fields.CharField(max_length=200, default="")
    events = fields.CharField(max_length=200, default="")  # space-separated EVENT_TYPES
    include_notes = fields.BooleanField(default=False)
    format = fields.CharField(max_length=8, default="standard")
    enabled = fields.BooleanField(default=True)
    secret = fields.CharField(max_length=64)
    previous_secret = fields.CharField(max_length=64, null=True)
    previous_secret_expires_at = fields.DatetimeField(null=True)
    # Since when every attempt failed (None after a success); five days of it disable the endpoint.
    failing_since = fields.DatetimeField(null=True)
    disabled_reason = fields.CharField(max_length=200, default="")
    created_by: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="webhook_endpoints", null=True, on_delete=fields.SET_NULL
    )
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "webhook_endpoints"
        indexes = (("application_id",), ("organization_id",))


class WebhookEvent(Model):
    """An event as it was when its change committed: the body of a standard delivery.

    Application and thread are plain ids, not foreign keys: an event outlives the thread it
    announces (``feedback.deleted``), and an organization's endpoints still get the events of an
    application deleted meanwhile.
    """

    id = fields.IntField(primary_key=True)
    application_id = fields.IntField(null=True)
    feedback_id = fields.IntField(null=True)
    type = fields.CharField(max_length=32)
    payload = fields.TextField()
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "webhook_events"
        indexes = (("feedback_id",), ("created_at",))


class WebhookDelivery(Model):
    """One event for one endpoint: the queue row the worker claims, retries and finally marks
    delivered or failed. ``message_id`` is the ``webhook-id`` header, the same at every attempt."""

    id = fields.IntField(primary_key=True)
    endpoint: fields.ForeignKeyRelation[WebhookEndpoint] = fields.ForeignKeyField(
        "models.WebhookEndpoint", related_name="deliveries", on_delete=fields.CASCADE
    )
    event: fields.ForeignKeyRelation[WebhookEvent] = fields.ForeignKeyField(
        "models.WebhookEvent", related_name="deliveries", on_delete=fields.CASCADE
    )
    message_id = fields.CharField(max_length=40, unique=True)
    status = fields.CharField(max_length=10, default="pending")
    attempts = fields.IntField(default=0)
    next_attempt_at = fields.DatetimeField()
    last_status_code = fields.IntField(null=True)
    last_error = fields.TextField(default="")
    delivered_at = fields.DatetimeField(null=True)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "webhook_deliveries"
        indexes = (("status", "next_attempt_at"), ("endpoint_id", "id"), ("event_id",))


class WebhookAttempt(Model):
    """One try of a delivery: when, how long, what was sent and what came back (truncated)."""

    id = fields.IntField(primary_key=True)
    delivery: fields.ForeignKeyRelation[WebhookDelivery] = fields.ForeignKeyField(
        "models.WebhookDelivery", related_name="attempt_log", on_delete=fields.CASCADE
    )
    attempted_at = fields.DatetimeField()
    duration_ms = fields.IntField()
    status_code = fields.IntField(null=True)
    error = fields.TextField(default="")
    request_headers = fields.TextField(default="")
    response_headers = fields.TextField(default="")
    response_body = fields.TextField(default="")

    class Meta:
        table = "webhook_attempts"
        indexes = (("delivery_id", "id"),)
