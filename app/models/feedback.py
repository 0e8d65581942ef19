"""Feedback threads and what hangs off them: senders, replies, tags, attachments, form opens."""

from typing import TYPE_CHECKING, Any

from tortoise import fields
from tortoise.models import Model

if TYPE_CHECKING:
    from app.models.accounts import User
    from app.models.applications import Application

SENTIMENTS = ("positive", "neutral", "negative")
REPLY_TYPES = ("reply", "note")


class Member(Model):
    """A sender of feedback, unique per application and e-mail address."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="members", on_delete=fields.CASCADE
    )
    email = fields.CharField(max_length=254)
    name = fields.CharField(max_length=200, default="")
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "members"
        unique_together = (("application_id", "email"),)


class Feedback(Model):
    """A feedback thread: one submitted message and the conversation that follows it."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="threads", on_delete=fields.CASCADE
    )
    member: fields.ForeignKeyRelation["Member"] = fields.ForeignKeyField(
        "models.Member", related_name="threads", on_delete=fields.CASCADE
    )
    message = fields.TextField()
    sentiment = fields.CharField(max_length=8)
    sentiment_corrected = fields.BooleanField(default=False)
    archived = fields.BooleanField(default=False)
    nps = fields.SmallIntField(null=True)
    url = fields.TextField(null=True)
    language = fields.CharField(max_length=2, default="en")
    ip_address = fields.CharField(max_length=64, default="")
    user_agent = fields.TextField(default="")
    properties: Any = fields.JSONField(default=list)
    first_reply_time = fields.IntField(null=True)
    last_reply_at = fields.DatetimeField()
    # The agent the thread is assigned to (its application's creator or a member of its
    # organization when assigned); kept when that agent leaves, cleared when the user goes.
    assignee: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="assigned_threads", null=True, on_delete=fields.SET_NULL
    )
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "feedback"
        # The index that serves the inbox's Mine and Unassigned differs per database: migration
        # 0016 makes it.
        indexes = (
            ("application_id", "archived", "id"),
            ("application_id", "archived", "sentiment", "id"),
            ("application_id", "created_at"),
            ("member_id",),
        )


class Reply(Model):
    """A public reply or an internal note in a thread, from an agent or from the customer."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="replies", on_delete=fields.CASCADE
    )
    feedback: fields.ForeignKeyRelation["Feedback"] = fields.ForeignKeyField(
        "models.Feedback", related_name="replies", on_delete=fields.CASCADE
    )
    user: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="replies", null=True, on_delete=fields.SET_NULL
    )
    type = fields.CharField(max_length=8, default="reply")
    message = fields.TextField()
    from_agent = fields.BooleanField(default=True)
    email = fields.CharField(max_length=254)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "replies"
        # The replies list sorts by (created_at, id): with id in the index PostgreSQL reads the
        # first page straight off it instead of joining and sorting every reply of that day.
        # With a type it reads (application_id, type, created_at, id), which also counts them.
        indexes = (
            ("application_id", "created_at", "id"),
            ("application_id", "type", "created_at", "id"),
            ("feedback_id", "id"),
        )


class ReplyDay(Model):
    """How many replies and notes an application got on one UTC day, counted on write.

    The replies list by date reports this as its total instead of counting the day's replies.
    """

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="reply_days", on_delete=fields.CASCADE
    )
    day = fields.DateField()
    count = fields.IntField(default=0)

    class Meta:
        table = "reply_days"
        unique_together = (("application_id", "day"),)


class Tag(Model):
    """A tag of an application. Counts of open and archived threads are kept on write."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="tags", on_delete=fields.CASCADE
    )
    name = fields.CharField(max_length=64)
    color = fields.CharField(max_length=7)
    open_count = fields.IntField(default=0)
    archived_count = fields.IntField(default=0)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "tags"
        unique_together = (("application_id", "name"),)


class FeedbackTag(Model):
    """The link between a thread and one of its tags."""

    id = fields.IntField(primary_key=True)
    feedback: fields.ForeignKeyRelation["Feedback"] = fields.ForeignKeyField(
        "models.Feedback", related_name="tag_links", on_delete=fields.CASCADE
    )
    tag: fields.ForeignKeyRelation["Tag"] = fields.ForeignKeyField(
        "models.Tag", related_name="feedback_links", on_delete=fields.CASCADE
    )

    class Meta:
        table = "feedback_tags"
        unique_together = (("feedback_id", "tag_id"),)
        indexes = (("tag_id", "feedback_id"),)


class Attachment(Model):
    """A file uploaded through the capture API, whose bytes live under EARFUL_DATA_DIR.

    Ids are random (53 bits, safe in JavaScript): an upload is claimed by its id alone, so a
    sequential id let anyone with the public widget key take another visitor's upload.
    """

    id = fields.BigIntField(primary_key=True, generated=False)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="attachments", on_delete=fields.CASCADE
    )
    feedback: fields.ForeignKeyNullableRelation["Feedback"] = fields.ForeignKeyField(
        "models.Feedback", related_name="attachments", null=True, on_delete=fields.CASCADE
    )
    reply: fields.ForeignKeyNullableRelation["Reply"] = fields.ForeignKeyField(
        "models.Reply", related_name="attachments", null=True, on_delete=fields.CASCADE
    )
    name = fields.CharField(max_length=255)
    mime_type = fields.CharField(max_length=127)
    size = fields.IntField()
    storage_name = fields.CharField(max_length=80)
    token = fields.CharField(max_length=64)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "attachments"
        indexes = (
            ("feedback_id",),
            ("application_id", "feedback_id"),
            ("reply_id",),
            ("feedback_id", "reply_id", "created_at"),  # uploads never claimed, by age
        )


class UploadDay(Model):
    """Bytes an application took through uploads on one UTC day, counted on write.

    The daily upload quota reads this row instead of summing the day's files: the sum grew with
    every upload of the day. It counts bytes accepted, so a file deleted later still counts
    toward its day (as a metered quota does); e-mail attachments are not uploads and do not
    count. Housekeeping drops the rows of past days.
    """

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="upload_days", on_delete=fields.CASCADE
    )
    day = fields.DateField()
    bytes = fields.BigIntField(default=0)

    class Meta:
        table = "upload_days"
        unique_together = (("application_id", "day"),)


class FormOpen(Model):
    """One display of the feedback form, counted for the statistics of opens against submits."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="form_opens", on_delete=fields.CASCADE
    )
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "form_opens"
        indexes = (("application_id", "created_at"),)


OUTBOX_KINDS = ("reply", "notification", "digest", "receipt", "notice", "invitation")


class OutboundEmail(Model):
    """An e-mail waiting to be sent, or sent already (the outbox): a public reply to the
    customer (``reply``), a new-feedback notification or a digest to an agent, a receipt to the
    customer, a notice to administrators (a webhook endpoint disabled), an invitation to join an
    organization.

    Written in the transaction of the change it tells of; a worker sends it with retries. The
    Message-ID is fixed at creation, so a retry after a crash is recognisable as the same mail. A
    reply is composed from its reply at every attempt; the others keep their composed message in
    ``content``.
    """

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyNullableRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="outbound_emails", null=True, on_delete=fields.CASCADE
    )
    feedback: fields.ForeignKeyNullableRelation["Feedback"] = fields.ForeignKeyField(
        "models.Feedback", related_name="outbound_emails", null=True, on_delete=fields.CASCADE
    )
    reply: fields.ForeignKeyNullableRelation["Reply"] = fields.ForeignKeyField(
        "models.Reply", related_name="outbound_emails", null=True, on_delete=fields.CASCADE
    )
    # The agent an e-mail is for (notifications, digests); it goes with its user.
    user: fields.ForeignKeyNullableRelation["User"] = fields.ForeignKeyField(
        "models.User", related_name="outbound_emails", null=True, on_delete=fields.CASCADE
    )
    kind = fields.CharField(max_length=16, default="reply", db_default="reply")
    content = fields.TextField(default="", db_default="")
    to_address = fields.CharField(max_length=254)
    message_id = fields.CharField(max_length=255, unique=True)
    status = fields.CharField(max_length=8, default="pending")
    attempts = fields.IntField(default=0)
    next_attempt_at = fields.DatetimeField()
    last_error = fields.TextField(default="")
    sent_at = fields.DatetimeField(null=True)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "outbound_emails"
        # feedback_id: a thread's e-mails (the thread page's statuses, the thread's deletion);
        # reply_id: deleting a reply finds its e-mails without a scan;
        # (to_address, kind, created_at): at most one receipt per address and hour.
        # The due e-mails have a partial index of their own (migration 0021).
        indexes = (
            ("feedback_id",),
            ("reply_id",),
            ("user_id",),
            ("to_address", "kind", "created_at"),
        )


class InboundEmail(Model):
    """The Message-ID of every e-mail turned into a thread or a reply, so a redelivery is ignored."""

    id = fields.IntField(primary_key=True)
    message_id = fields.CharField(max_length=255, unique=True)
    feedback: fields.ForeignKeyRelation["Feedback"] = fields.ForeignKeyField(
        "models.Feedback", related_name="inbound_emails", on_delete=fields.CASCADE
    )
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "inbound_emails"
        indexes = (("feedback_id",),)


BLOCK_KINDS = ("email", "domain", "network")


class BlockedSender(Model):
    """An entry of an application's blocklist: an e-mail address, a domain (its subdomains too)
    or an IP network. Submits and e-mails from a blocked sender are answered as usual and
    dropped (app.services.blocklist)."""

    id = fields.IntField(primary_key=True)
    application: fields.ForeignKeyRelation["Application"] = fields.ForeignKeyField(
        "models.Application", related_name="blocked_senders", on_delete=fields.CASCADE
    )
    kind = fields.CharField(max_length=8)
    value = fields.CharField(max_length=254)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "blocked_senders"
        unique_together = (("application_id", "kind", "value"),)


class AuditEntry(Model):
    """A record of an erasure, an export of a person's data, a deletion of an application or a
    retention run: who, when, what and how many, and never whose data (no e-mail, no name), so
    the audit trail outlives what it records. Application and actor are plain ids, not foreign
    keys, for the same reason."""

    id = fields.IntField(primary_key=True)
    actor_id = fields.IntField(null=True)
    application_id = fields.IntField(null=True)
    action = fields.CharField(max_length=32)
    counts: Any = fields.JSONField(default=dict)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "audit_entries"
        indexes = (("actor_id", "created_at"), ("application_id", "created_at"))
