"""Tortoise models, one module per aggregate, re-exported here for the ORM and the services."""

from tortoise.models import Model

from app.models.accounts import PLANS, AccessToken, Membership, Organization, SignInFailure, User
from app.models.applications import PLATFORMS, Application
from app.models.datetimes import speed_up_datetime_fields
from app.models.feedback import (
    REPLY_TYPES,
    SENTIMENTS,
    Attachment,
    Feedback,
    FeedbackTag,
    FormOpen,
    InboundEmail,
    Member,
    OutboundEmail,
    Reply,
    ReplyDay,
    Tag,
)

__all__ = [
    "PLANS",
    "PLATFORMS",
    "REPLY_TYPES",
    "SENTIMENTS",
    "AccessToken",
    "Application",
    "Attachment",
    "Feedback",
    "FeedbackTag",
    "FormOpen",
    "InboundEmail",
    "Member",
    "Membership",
    "Organization",
    "OutboundEmail",
    "Reply",
    "ReplyDay",
    "SignInFailure",
    "Tag",
    "User",
]

speed_up_datetime_fields(
    value for value in list(globals().values()) if isinstance(value, type) and issubclass(value, Model)
)
