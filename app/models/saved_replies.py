"""Saved replies: answers agents insert into the reply box, kept per application or organization."""

from typing import TYPE_CHECKING

from tortoise import fields
from tortoise.models import Model

if TYPE_CHECKING:
    from app.models.accounts import Organization, User
    from app.models.applications import Application


class SavedReply(Model):
    """A titled answer agents insert into the reply box, with placeholders filled per thread.

    It belongs to an application, or to an organization for every application of it (exactly
    one of the two is set; app.services.saved_replies holds who may change which). The text
    keeps its placeholders ({name}, {email}, {application}): they are filled when inserted.
    """

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyNullableRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="saved_replies", null=True, on_delete=fields.CASCADE
    )
    organization: fields.ForeignKeyNullableRelation["Organization"] = fields.ForeignKeyField(
        "models.Organization", related_name="saved_replies", null=True, on_delete=fields.CASCADE
    )
    title = fields.CharField(max_length=100)
    text = fields.TextField()
    created_by: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="saved_replies", null=True, on_delete=fields.SET_NULL
    )
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "saved_replies"
        indexes = (("application_id", "title"), ("organization_id", "title"))
