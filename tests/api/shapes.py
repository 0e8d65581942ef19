"""Field sets of the JSON objects, as the specification and contract §2 list them."""

# A reply inside a thread (contract §2).
REPLY_FIELDS = {
    "id",
    "type",
    "message",
    "email",
    "avatar",
    "attachments",
    "user",
    "reply_from_agent",
    "created_at",
}
